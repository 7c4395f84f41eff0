import type { AddressInfo } from 'node:net'
import type { FastifyInstance, FastifyServerOptions } from 'fastify'
import { Changes, reportingClock, reportingControl, reportRequests } from '../shared/changes.js'
import { createClock, type Clock } from '../shared/clock.js'
import { StartupError } from '../shared/startup-error.js'
import { buildOrbApp } from './app.js'
import { OrbControl } from './control.js'
import { orbDashboardView } from './dashboard-view.js'
import { OrbFaults, type OrbFault } from './faults.js'
import type { OrbRoute } from './route.js'
import { createOrbServices, type OrbServices } from './services.js'
import type { OrbStore } from './store.js'
import { closeApp } from '../shared/http-server.js'
import { checkWorld, defaultWorld, loadWorldFile, type World } from './world.js'
import type { WireTap } from '../shared/tap.js'

/** How to start a fake Orb. */
export interface OrbMockOptions {
  /** A world (checked), or the path of a world file; default: the demo world in fixtures/. */
  world?: World | string
  /** Port on `host`; 0 picks a free one. Default 8787. */
  port?: number
  /** Address to bind. Default 127.0.0.1. */
  host?: string
  /** `off` switches every throttle off, for load tests. Default `on` (ORB-031, ORB-A03). */
  rateLimit?: 'on' | 'off'
  clock?: Clock
  logger?: FastifyServerOptions['logger']
  /**
   * Test hook: routes served beside the spec's, through the same pipeline; each must be an operation of the spec.
   * For a test or a prototype of an extension; the spec's routes never need it, and nothing here uses it yet.
   */
  extraRoutes?: readonly OrbRoute[]
  /** Deliberate faults, only for the conformance suite's self-test (faults.ts). */
  faults?: readonly OrbFault[]
  /** The bot suite's view of the wire (src/shared/tap.ts): every request and reply, and the wire's faults. */
  tap?: WireTap
}

/** A running fake Orb. */
export interface OrbMock {
  /** For example `http://127.0.0.1:8787`. Bots call `${url}/api/bot/v1/...`. */
  readonly url: string
  readonly port: number
  readonly app: FastifyInstance
  readonly store: OrbStore
  /** The fake's services (the store among them): events, interactions, webhooks, voice, music. */
  readonly services: OrbServices
  /** What a community's members and admins, and the developer console, can do (the control server's /control/orb). */
  readonly control: OrbControl
  /** Told whenever the fake's state may have changed (DASH-D01): the dashboard's stream watches it. */
  readonly changes: Changes
  /** The fake's part of a dashboard frame: the state route's answer, with the channels, commands, logs, throttles. */
  dashboard(): Record<string, unknown>
  close(): Promise<void>
}

/** Starts the fake Orb on loopback HTTP with a seeded world: its services, its server and its control, made here. */
export async function startOrbMock (options: OrbMockOptions = {}): Promise<OrbMock> {
  const world = typeof options.world === 'string'
    ? loadWorldFile(options.world)
    : options.world === undefined ? defaultWorld() : checkWorld(structuredClone(options.world))
  const ownClock = options.clock === undefined
  const clock = options.clock ?? createClock('real')
  const changes = new Changes()
  // The services' timers report their firing (DASH-D01), and so do webhook attempts when they finish.
  const services = createOrbServices(world, reportingClock(clock, changes), new OrbFaults(options.faults), changes)
  const { store } = services
  const app = buildOrbApp({
    ...services,
    rateLimit: options.rateLimit ?? 'on',
    logger: options.logger ?? false,
    extraRoutes: options.extraRoutes,
    tap: options.tap
  })
  reportRequests(app, changes)
  const host = options.host ?? '127.0.0.1'
  const wanted = options.port ?? 8787
  try {
    await app.listen({ port: wanted, host })
  } catch (err) {
    await app.close()
    if (ownClock) clock.dispose()
    const code = (err as { code?: string }).code
    if (code === 'EADDRINUSE') throw new StartupError('ORBTEST_PORT_IN_USE', `port ${wanted} on ${host} is in use; pick another with --orb-port (0 picks a free one)`)
    throw new StartupError('ORBTEST_ORB_LISTEN', `the fake Orb could not listen on ${host}:${wanted}: ${(err as Error).message}`)
  }
  const port = (app.server.address() as AddressInfo).port
  const control = reportingControl(new OrbControl(services, world), changes, ['state', 'deliveries', 'onMemberMessage'])
  let closing: Promise<void> | undefined
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    port,
    app,
    store,
    services,
    control,
    changes,
    dashboard: () => ({ ...control.state(), ...orbDashboardView(services) }),
    close () {
      // Held polls are answered and deliveries aborted first; a request still reading its body is cut (closeApp).
      // Once: a client suite closes its fake before judging, then again on its way out.
      closing ??= (async () => {
        store.dispose()
        await closeApp(app)
        if (ownClock) clock.dispose()
      })()
      return closing
    }
  }
}

export { OrbStore } from './store.js'
export { createOrbServices, type OrbServices } from './services.js'
export { OrbControl } from './control.js'
export { orbDashboardView, type OrbDashboardView } from './dashboard-view.js'
export type { CommandInvocation, InstallSpec, MemberPost, NewApp, VoiceChange } from './control-inputs.js'
export { checkWorld, defaultWorld, loadWorldFile, WorldError, type World } from './world.js'
export { ORB_ERRORS, OrbError, type OrbErrorName } from './errors.js'
export { ORB_FAULTS, type OrbFault } from './faults.js'
export { ORB_PIPELINE } from './pipeline.js'
export type { WireTap, TapExchange, TapHead, WirePlan } from '../shared/tap.js'
/** @deprecated The fake Orb's control throws the shared ControlError; this old name is an alias of it. */
export { ControlError as OrbControlError } from '../shared/control-error.js'
