import type { Server } from 'node:http'
import { resolve } from 'node:path'
import type { FastifyInstance } from 'fastify'
import { Changes, reportingClock, reportingControl, reportRequests } from '../shared/changes.js'
import { createClock, type Clock } from '../shared/clock.js'
import { SecretComparer } from '../shared/secrets.js'
import { TokenBuckets } from '../shared/token-bucket.js'
import { BASE_PATH, LIMITS } from '../spec/orbtile.js'
import { Adapters } from './adapters.js'
import { buildOrbtileApp } from './app.js'
import { OrbtileControl } from './control.js'
import { resolveDiscoveryPath } from './discovery.js'
import { Faults } from './faults.js'
import { OrbtileListener, type OrbtileEndpoint } from './listener.js'
import { resolveOrbtileOptions, type OrbtileMockOptions } from './options.js'
import { anyProcess, realProcessCheck } from './sessions/process-table.js'
import { Sessions } from './sessions/registry.js'
import { defaultSocketPath } from './socket.js'
import { OrbtileStore } from './store.js'
import { hueWheel, type HueWheel } from './dashboard-view.js'
import type { OrbtileState } from './control.js'

export type { OrbtileMockOptions } from './options.js'
export type { OrbtileRoute } from './app.js'
export type { AdapterSnapshot, UserChange } from './adapters.js'
export type { ProcessCheck } from './sessions/process-table.js'
export type { OrbtileEndpoint } from './listener.js'
export type { OrbtileTap, TapExchange, TapHead, WirePlan } from './tap.js'
export { OrbtileControl, type AdapterState, type ApiSwitch, type OrbtileState } from './control.js'

/** A running fake Orbtile. */
export interface OrbtileMock extends OrbtileEndpoint {
  /** The discovery token, for in-process tests; adapters read it from the discovery file. */
  readonly token: string
  readonly clock: Clock
  /** What the user (and the app's life: restarts, new tokens) can do to the fake: /control/orbtile in-process. */
  readonly control: OrbtileControl
  readonly app: FastifyInstance<Server>
  /** Told whenever the fake's state may have changed (DASH-D01): the dashboard's stream watches it. */
  readonly changes: Changes
  /** The fake's part of a dashboard frame: the state route's answer, and the hue wheel's arcs. */
  dashboard(): OrbtileState & { wheel: HueWheel }
  close(): Promise<void>
}

/**
 * Starts a fake Orbtile: binds the Unix socket (0600, in a private folder), then writes the discovery file
 * atomically (0600), unless started with the API off (OT-001, OT-A03), in which case neither exists until the
 * API is switched on. Every service of the fake is made here, for this fake alone: many can run in one process.
 */
export async function startOrbtileMock (input: OrbtileMockOptions = {}): Promise<OrbtileMock> {
  const options = resolveOrbtileOptions(input)
  const given = options.clock ?? createClock(options.clockMode)
  const ownsClock = options.clock === undefined
  const changes = new Changes()
  // The services' timers report their firing (DASH-D01); the handle keeps the clock as given, to be advanced.
  const clock = reportingClock(given, changes)
  const pidCheck = options.pidCheck === 'off'
    ? anyProcess
    : typeof options.pidCheck === 'function' ? options.pidCheck : realProcessCheck

  const faults = new Faults(options.faults)
  const secrets = new SecretComparer()
  // OT-026, OT-A20: the spec's burst and refill rate.
  const burst = LIMITS.burst + (faults.has('burst-off-by-one') ? 1 : 0)
  const buckets = new TokenBuckets({ burst, perSecond: LIMITS.requestsPerSecond }, clock)
  const adapters = new Adapters(clock, {
    autoAllow: options.autoAllow,
    silenceMs: options.leaseSilenceMs,
    maxAdapters: LIMITS.maxAdapters,
    faults,
    secrets
  })
  const sessions = new Sessions(clock, adapters, pidCheck, faults)
  const store = new OrbtileStore({ clock, version: options.version, buckets, adapters, sessions, faults, secrets })

  // OT-A04: the file holds an absolute socketPath, whatever directory the fake was started from.
  const endpoint: OrbtileEndpoint = {
    discoveryPath: resolve(resolveDiscoveryPath(options.discoveryPath)),
    socketPath: resolve(options.socketPath ?? defaultSocketPath()),
    basePath: BASE_PATH
  }
  const { rateLimit, logger, extraRoutes, tap } = options
  const app = buildOrbtileApp({ store, rateLimit, logger, extraRoutes, ...(tap === undefined ? {} : { tap }) })
  reportRequests(app, changes)
  await app.ready()
  const listener = new OrbtileListener(app.server, endpoint, () => store.token, options.socketPath === undefined)
  const control = reportingControl(new OrbtileControl(store, listener, given, endpoint), changes,
    ['state', 'adapter', 'icon', 'clock'])

  if (options.apiEnabled) {
    try {
      await listener.open()
    } catch (err) {
      await app.close()
      if (ownsClock) clock.dispose()
      throw err
    }
  } else {
    store.apiEnabled = false
  }

  let closing: Promise<void> | undefined
  return {
    ...endpoint,
    get token () { return store.token },
    clock: given,
    control,
    app,
    changes,
    dashboard: () => ({ ...control.state(), wheel: hueWheel() }),
    close () {
      closing ??= (async () => {
        await listener.close()
        await app.close()
        if (ownsClock) clock.dispose()
      })()
      return closing
    }
  }
}
export { hueWheel, type HueArc, type HueWheel } from './dashboard-view.js'
