import type { AddressInfo } from 'node:net'
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify'
import { ClockNotVirtualError, type Clock } from '../shared/clock.js'
import { answerClientError, closeApp, createFakeServer, inviteBody, NO_ROUTE_SCHEMAS } from '../shared/http-server.js'
import { packageVersion } from '../shared/paths.js'
import { StartupError } from '../shared/startup-error.js'
import type { OrbMock } from '../orb-mock/index.js'
import type { OrbtileMock } from '../orbtile-mock/index.js'
import { ControlError, rawControlBadRequest, sendControlError } from './errors.js'
import { checkControlRequest, isLoopbackName } from './guard.js'
import { dashboardRoutes } from './dashboard/routes.js'
import type { DashboardHub } from './dashboard/hub.js'
import { bodyReader, loadControlDocument, type OpenApiDocument, registerMethodNotAllowed } from './openapi.js'
import { clockRoutes } from './routes/clock.js'
import type { ControlRouteContext } from './routes/context.js'
import { orbRoutes } from './routes/orb.js'
import { orbtileRoutes } from './routes/orbtile.js'

export { CONTROL_OPENAPI_FILE } from './openapi.js'

/** Options of startControlServer. */
export interface ControlServerOptions {
  /** Loopback port; 0 picks a free one. Default 8788. */
  port?: number
  /** Loopback address to bind. Default 127.0.0.1. */
  host?: string
  /** The clock every fake shares. */
  clock: Clock
  orbtile?: OrbtileMock
  orb?: OrbMock
  logger?: FastifyServerOptions['logger']
  /** `orbtest up --judge`: the client rules' verdicts so far (`GET /control/judge`). */
  judge?: () => unknown
}

/** A running control server. */
export interface ControlServer {
  /** The server's base URL, for example `http://127.0.0.1:8788`. */
  readonly url: string
  readonly port: number
  readonly app: FastifyInstance
  /** Every `METHOD /path` this server answers (405 answers aside), in OpenAPI path syntax. */
  readonly operations: readonly string[]
  /** The dashboard's live feed (its open streams, the frames built). */
  readonly dashboard: DashboardHub
  close(): Promise<void>
}

/**
 * Starts the control server: loopback HTTP only, foreign Host and Origin refused, every route described by the
 * OpenAPI document in the repo and every request body validated against that document's schemas. The routes of
 * each fake live in routes/ (orbtile.ts, orb.ts, clock.ts); this builds the server and the parts they share.
 */
export async function startControlServer (options: ControlServerOptions): Promise<ControlServer> {
  const document = loadControlDocument()
  // The port is known once the server listens; the Origin check reads it then, request by request.
  const own = { host: options.host ?? '127.0.0.1', port: 0 }
  const app = createControlApp(options.logger, () => own)
  const operations = recordOperations(app)
  const dashboard = registerControlRoutes(app, document, options, operations)
  if (!isLoopbackName(own.host)) {
    throw new StartupError('ORBTEST_CONTROL_NOT_LOOPBACK', `the control server listens on loopback only, not ${own.host}`)
  }
  own.port = await listenOnLoopback(app, own.host, options.port ?? 8788)
  return {
    url: `http://${own.host.includes(':') ? `[${own.host}]` : own.host}:${own.port}`,
    port: own.port,
    app,
    operations,
    dashboard,
    close: async () => { await closeApp(app) }
  }
}

/** The fastify instance with the control API's hardening, body parser, request guard and error answers. */
function createControlApp (
  logger: FastifyServerOptions['logger'],
  own: () => { host: string, port: number }
): FastifyInstance {
  const app = Fastify({
    logger: logger ?? false,
    exposeHeadRoutes: false,
    schemaController: NO_ROUTE_SCHEMAS,
    // The same hardening as the fakes: every answer in the control API's JSON, even for bytes no route sees.
    serverFactory: (handler) => createFakeServer(handler, rawControlBadRequest),
    clientErrorHandler: (err, socket) => answerClientError(err, socket, rawControlBadRequest),
    frameworkErrors: (_err, _request, reply) => {
      sendControlError(reply, new ControlError('bad_request', 'the request target is not a valid URL'))
    }
  })
  // An empty JSON body is no body: a client that always sends Content-Type must still be able to POST a tap.
  app.removeContentTypeParser('application/json')
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    if (body === '') {
      done(null, undefined)
      return
    }
    try {
      done(null, JSON.parse(body as string))
    } catch {
      done(new ControlError('bad_request', 'the body is not valid JSON'), undefined)
    }
  })
  app.addHook('onRequest', async (request, reply) => {
    checkControlRequest(request, own)
    inviteBody(request.raw, reply.raw)
  })
  app.setNotFoundHandler(() => {
    throw new ControlError('not_found', 'no such control route; see GET /control/openapi.json')
  })
  app.setErrorHandler((err, request, reply) => {
    const answer = toControlError(err)
    if (answer === undefined) {
      request.log.error({ err }, 'control: unexpected fault')
      return sendControlError(reply, new ControlError('internal', 'unexpected fault; see the log'))
    }
    return sendControlError(reply, answer)
  })
  return app
}

/** Every `METHOD /path` registered from now on (405 answers aside), in OpenAPI path syntax. */
function recordOperations (app: FastifyInstance): string[] {
  const operations: string[] = []
  app.addHook('onRoute', (route) => {
    if (route.handler.name === 'methodNotAllowed') return
    for (const method of [route.method].flat()) operations.push(`${method} ${route.url.replace(/:(\w+)/g, '{$1}')}`)
  })
  return operations
}

/** The control API's routes: the document, the index, each fake's routes, the clock, the dashboard, judge, reset. */
function registerControlRoutes (
  app: FastifyInstance,
  document: OpenApiDocument,
  options: ControlServerOptions,
  operations: readonly string[]
): DashboardHub {
  const { clock, orbtile, orb } = options
  const ctx: ControlRouteContext = { clock, orbtile, orb, body: bodyReader(document) }
  app.get('/control/openapi.json', async () => document)
  // The URL the banner prints: what this server is and what it serves, for a person or a script finding its way.
  app.get('/control', async () => ({
    name: 'orbtest control',
    version: packageVersion(),
    fakes: { orbtile: orbtile !== undefined, orb: orb !== undefined },
    clock: clock.mode,
    openapi: '/control/openapi.json',
    operations: [...operations].sort()
  }))
  orbtileRoutes(app, ctx)
  orbRoutes(app, ctx)
  clockRoutes(app, ctx)
  const dashboard = dashboardRoutes(app, { clock, orbtile, orb, judge: options.judge })
  // What the control server changes itself (the clock, a reset) reaches the dashboard as the fakes' changes do.
  app.addHook('onResponse', (request, _reply, done) => {
    if (request.method !== 'GET') dashboard.nudge()
    done()
  })
  app.get('/control/judge', async () => {
    if (options.judge === undefined) throw new ControlError('not_found', 'orbtest was not started with --judge FILE')
    return options.judge()
  })
  app.post('/control/reset', async () => {
    if (orbtile !== undefined) await orbtile.control.reset()
    orb?.control.reset()
    return { reset: true }
  })
  registerMethodNotAllowed(app, document)
  return dashboard
}

/** Listens on host:wanted and answers the port bound; a busy port or another failure is a StartupError. */
async function listenOnLoopback (app: FastifyInstance, host: string, wanted: number): Promise<number> {
  try {
    await app.listen({ port: wanted, host })
  } catch (err) {
    await app.close()
    const code = (err as { code?: string }).code
    if (code === 'EADDRINUSE') {
      throw new StartupError('ORBTEST_PORT_IN_USE',
        `port ${wanted} on ${host} is in use; pick another with --control-port (0 picks a free one)`)
    }
    throw new StartupError('ORBTEST_CONTROL_LISTEN',
      `the control server could not listen on ${host}:${wanted}: ${(err as Error).message}`)
  }
  return (app.server.address() as AddressInfo).port
}

/**
 * What a thrown error answers with: a ControlError as it is (the fakes' control objects throw these), a real clock
 * asked to advance as clock_not_virtual, a request fastify could not read as bad_request; undefined for a fault.
 */
function toControlError (err: unknown): ControlError | undefined {
  if (err instanceof ControlError) return err
  if (err instanceof ClockNotVirtualError) return new ControlError('clock_not_virtual', err.message)
  if ((err as { code?: string }).code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
    return new ControlError('payload_too_large', 'the body is over the control server\'s limit of 1 MiB')
  }
  const status = (err as { statusCode?: number }).statusCode
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return new ControlError('bad_request', 'the request could not be read; send a JSON body')
  }
  return undefined
}
