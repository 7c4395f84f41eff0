import type { AddressInfo } from 'node:net'
import type { FastifyInstance, FastifyServerOptions } from 'fastify'
import { createClock, type Clock } from '../shared/clock.js'
import { StartupError } from '../shared/startup-error.js'
import { buildOrbApp } from './app.js'
import { OrbControl } from './control.js'
import type { OrbRoute } from './route.js'
import { OrbStore } from './store.js'
import { OrbFaults, type OrbFault } from './faults.js'
import { checkWorld, defaultWorld, loadWorldFile, type World } from './world.js'

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
  /** Routes served beside the spec's, through the same auth and validation. */
  extraRoutes?: readonly OrbRoute[]
  /** Deliberate faults, only for the conformance suite's self-test (faults.ts). */
  faults?: readonly OrbFault[]
}

export interface OrbMock {
  /** For example `http://127.0.0.1:8787`. Bots call `${url}/api/bot/v1/...`. */
  readonly url: string
  readonly port: number
  readonly app: FastifyInstance
  readonly store: OrbStore
  /** What a community's members and admins, and the developer console, can do (the control server's /control/orb). */
  readonly control: OrbControl
  close(): Promise<void>
}

/** Starts the fake Orb on loopback HTTP with a seeded world. */
export async function startOrbMock (options: OrbMockOptions = {}): Promise<OrbMock> {
  const world = typeof options.world === 'string'
    ? loadWorldFile(options.world)
    : options.world === undefined ? defaultWorld() : checkWorld(structuredClone(options.world))
  const ownClock = options.clock === undefined
  const clock = options.clock ?? createClock('real')
  const store = new OrbStore(world, clock, new OrbFaults(options.faults))
  const app = buildOrbApp({ store, rateLimit: options.rateLimit ?? 'on', logger: options.logger ?? false, extraRoutes: options.extraRoutes })
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
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    port,
    app,
    store,
    control: new OrbControl(store, world),
    close: async () => {
      // Held polls are answered and deliveries aborted first: app.close() waits for every open request.
      store.dispose()
      await app.close()
      if (ownClock) clock.dispose()
    }
  }
}

export { OrbStore } from './store.js'
export { OrbControl, OrbControlError, type NewApp, type CommandInvocation, type InstallSpec, type MemberPost, type VoiceChange } from './control.js'
export { checkWorld, defaultWorld, loadWorldFile, WorldError, type World } from './world.js'
export { OrbError } from './errors.js'
export { ORB_FAULTS, type OrbFault } from './faults.js'
