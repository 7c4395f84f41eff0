import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { clockState, type Clock } from '../../shared/clock.js'
import type { Changes } from '../../shared/changes.js'
// Types only: `orbtest orbtile` must not load the fake Orb, nor `orbtest orb` the fake Orbtile (each fake's handle
// builds its own part of a frame).
import type { OrbMock } from '../../orb-mock/index.js'
import type { OrbtileMock } from '../../orbtile-mock/index.js'
import { ControlError } from '../errors.js'
import { dashboardAssets, type Asset } from './assets.js'
import { DashboardHub, MAX_STREAMS } from './hub.js'

/** What the dashboard draws from. */
export interface DashboardSources {
  clock: Clock
  orbtile?: OrbtileMock | undefined
  orb?: OrbMock | undefined
  judge?: (() => unknown) | undefined
}

/** One frame of the dashboard: everything the page draws, as JSON (GET /control/dashboard, the stream's events). */
export function dashboardFrame ({ clock, orbtile, orb, judge }: DashboardSources): string {
  return JSON.stringify({
    clock: clockState(clock),
    orbtile: orbtile === undefined ? null : orbtile.dashboard(),
    orb: orb === undefined ? null : orb.dashboard(),
    judge: judge === undefined ? null : judge()
  })
}

/**
 * The dashboard (docs/dashboard.md): the page at `/`, its files under /dashboard/, and its data under /control/
 * like every other read. The page acts only through the control API's own routes, so the guard's Host, Origin and
 * content-type rules (DASH-D04) hold for it as for any caller.
 */
export function dashboardRoutes (app: FastifyInstance, sources: DashboardSources): DashboardHub {
  const changes: Changes[] = []
  if (sources.orbtile !== undefined) changes.push(sources.orbtile.changes)
  if (sources.orb !== undefined) changes.push(sources.orb.changes)
  const hub = new DashboardHub(changes, () => dashboardFrame(sources))
  app.addHook('preClose', (done) => {
    hub.close()
    done()
  })

  app.get('/', async (request, reply) => {
    const { page, csp } = dashboardAssets()
    reply.header('content-security-policy', csp)
      .header('x-frame-options', 'DENY')
      .header('referrer-policy', 'no-referrer')
    return send(request, reply, page)
  })
  app.get('/dashboard/:file', async (request, reply) => {
    const found = dashboardAssets().files.get((request.params as { file: string }).file)
    if (found === undefined) throw new ControlError('not_found', 'no such dashboard file')
    return send(request, reply, found)
  })
  app.get('/dashboard/vendor/:file', async (request, reply) => {
    const found = dashboardAssets().vendor.get((request.params as { file: string }).file)
    if (found === undefined) throw new ControlError('not_found', 'no such dashboard module')
    return send(request, reply, found)
  })
  app.get('/control/dashboard', async (_request, reply) => reply.type('application/json').send(dashboardFrame(sources)))
  app.get('/control/dashboard/stream', async (_request, reply) => {
    if (hub.streams >= MAX_STREAMS) {
      throw new ControlError('conflict', `${MAX_STREAMS} dashboard streams are open already; close a tab`)
    }
    reply.hijack()
    hub.open(reply.raw)
  })
  return hub
}

// Files are revalidated on every load (no-cache with an ETag): a rebuilt package is seen at once, and an unchanged
// one costs a 304.
function send (request: FastifyRequest, reply: FastifyReply, file: Asset): FastifyReply {
  reply.header('cache-control', 'no-cache').header('etag', file.etag).header('x-content-type-options', 'nosniff')
  if (request.headers['if-none-match'] === file.etag) return reply.code(304).send()
  return reply.type(file.type).send(file.body)
}
