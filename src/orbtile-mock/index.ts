import { unlinkSync } from 'node:fs'
import type { Server } from 'node:http'
import { resolve } from 'node:path'
import type { FastifyInstance } from 'fastify'
import { advanceClock, clockState, createClock, type Clock, type ClockState } from '../shared/clock.js'
import { checkAdapterId } from './adapter-id.js'
import type { AdapterSnapshot, UserChange } from './adapters.js'
import { buildOrbtileApp } from './app.js'
import { discoveryContents, removeDiscoveryFile, resolveDiscoveryPath, writeDiscoveryFile } from './discovery.js'
import { resolveOrbtileOptions, type OrbtileMockOptions } from './options.js'
import { defaultSocketPath, listenPrivately, makeSocketPrivate, prepareSocketPath } from './socket.js'
import { BASE_PATH } from './spec.js'
import { anyProcess, realProcessCheck } from './sessions/process-table.js'
import type { Sessions } from './sessions/registry.js'
import type { SessionsSnapshot } from './sessions/snapshot.js'
import { startupFault } from '../shared/startup-error.js'
import { OrbtileStore, type OrbtileSnapshot } from './store.js'
import { Faults } from './faults.js'

export type { OrbtileMockOptions } from './options.js'
export type { OrbtileRoute } from './app.js'
export type { AdapterSnapshot, UserChange } from './adapters.js'
import { UserActionError } from './sessions/registry.js'
export { UserActionError }
export type { ProcessCheck } from './sessions/process-table.js'

/** `PUT /control/orbtile/api`: the user's switch, and whether the socket is open at all (OT-A03). */
export interface ApiSwitch {
  enabled: boolean
  /** Defaults to true when enabling; when disabling, false closes the socket and removes the discovery file. */
  listening?: boolean
}

/** Where the fake can be reached, as the discovery file tells an adapter. */
export interface OrbtileEndpoint {
  discoveryPath: string
  socketPath: string
  basePath: string
}

/** The user's side of a fake Orbtile: what the control server exposes, as a typed in-process API. */
export interface OrbtileControl {
  state(): OrbtileState
  /** Forgets an adapter id the fake no longer serves (no live lease, no sessions): its user settings and registration. */
  forget(id: string): { forgotten: true }
  setApi(change: ApiSwitch): Promise<OrbtileState['api']>
  regenerateToken(): OrbtileEndpoint
  restart(): Promise<OrbtileEndpoint>
  reset(): Promise<void>
  /** One adapter as the state snapshot shows it; undefined for an id the fake has never seen. */
  adapter(id: string): (AdapterSnapshot & SessionsSnapshot) | undefined
  /** OT-A26: the user changes an adapter's settings (allow or disable, keypad switch, hue override, anchorAttention). */
  setUser(id: string, change: UserChange): AdapterSnapshot & SessionsSnapshot
  /** The user taps a session's key (OT-055, OT-144): a tap event if the adapter wants one, and what opens. */
  tap(adapterId: string, sessionId: string): ReturnType<Sessions['tap']>
  /** The user decides an approval (`{decision}`) or answers a question (`{picks}`) on the keypad (OT-145, OT-146). */
  decide(adapterId: string, requestId: string, answer: { decision?: 'allow' | 'deny', picks?: number[][] }): ReturnType<Sessions['decide']>
  /** OT-068: the re-encoded icon the app would draw, as PNG bytes. */
  icon(id: string, size: 28 | 56): Buffer | undefined
  /** The fake's clock. */
  clock(): ClockState
  /** Moves a virtual clock forward, firing what falls due; a real clock throws ClockNotVirtualError. */
  advance(ms: number): Promise<ClockState>
}

export interface OrbtileState extends OrbtileSnapshot {
  api: { enabled: boolean, listening: boolean }
  discovery: OrbtileEndpoint
  clock: ClockState
}

/** A running fake Orbtile. */
export interface OrbtileMock extends OrbtileEndpoint {
  /** The discovery token, for in-process tests; adapters read it from the discovery file. */
  readonly token: string
  readonly clock: Clock
  readonly control: OrbtileControl
  readonly app: FastifyInstance<Server>
  close(): Promise<void>
}

/**
 * Starts a fake Orbtile: binds the Unix socket (0600, in a private folder), then writes the discovery file
 * atomically (0600), unless started with the API off (OT-001, OT-A03), in which case neither exists until the
 * API is switched on.
 */
export async function startOrbtileMock (input: OrbtileMockOptions = {}): Promise<OrbtileMock> {
  const options = resolveOrbtileOptions(input)
  const clock = options.clock ?? createClock(options.clockMode)
  const ownsClock = options.clock === undefined
  const pidCheck = options.pidCheck === 'off' ? anyProcess : typeof options.pidCheck === 'function' ? options.pidCheck : realProcessCheck
  const store = new OrbtileStore(clock, options.version, { autoAllow: options.autoAllow, silenceMs: options.leaseSilenceMs }, pidCheck, new Faults(options.faults))
  // OT-A04: the file holds an absolute socketPath, whatever directory the fake was started from.
  const discoveryPath = resolve(resolveDiscoveryPath(options.discoveryPath))
  const socketPath = resolve(options.socketPath ?? defaultSocketPath())
  const endpoint: OrbtileEndpoint = { discoveryPath, socketPath, basePath: BASE_PATH }
  const app = buildOrbtileApp({ store, rateLimit: options.rateLimit, logger: options.logger, extraRoutes: options.extraRoutes })
  await app.ready()
  const server = app.server
  let listening = false

  const writeDiscovery = (): void => writeDiscoveryFile(discoveryPath, discoveryContents(socketPath, store.token))

  // Binds the socket, then writes the discovery file; if any step fails, nothing is left behind.
  async function open (): Promise<void> {
    if (listening) return
    await prepareSocketPath(socketPath, options.socketPath === undefined)
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject)
        listenPrivately(() => server.listen({ path: socketPath }, () => {
          server.off('error', reject)
          resolve()
        }))
      })
    } catch (err) {
      throw startupFault(`cannot listen on ${socketPath}`, err)
    }
    try {
      makeSocketPrivate(socketPath)
      writeDiscovery()
    } catch (err) {
      await new Promise<void>((resolve) => server.close(() => resolve()))
      try { unlinkSync(socketPath) } catch {}
      throw startupFault(`cannot write the discovery file ${discoveryPath}`, err)
    }
    listening = true
  }

  async function shut (): Promise<void> {
    if (!listening) return
    listening = false
    // Discovery goes first: a client that finds no file never tries the closing socket.
    removeDiscoveryFile(discoveryPath, socketPath)
    const closed = new Promise<void>((resolve) => server.close(() => resolve()))
    server.closeAllConnections()
    await closed
  }

  if (options.apiEnabled) {
    try {
      await open()
    } catch (err) {
      await app.close()
      if (ownsClock) clock.dispose()
      throw err
    }
  } else {
    store.apiEnabled = false
  }

  const state = (): OrbtileState => ({
    api: { enabled: store.apiEnabled, listening },
    discovery: { ...endpoint },
    clock: clockState(clock),
    ...store.snapshot()
  })

  const control: OrbtileControl = {
    state,
    async setApi ({ enabled, listening: wantListening }) {
      store.apiEnabled = enabled
      // OT-A03: turning the API on always opens the socket; turning it off keeps it open (503) unless asked not to.
      if (enabled || wantListening === true) await open()
      else if (wantListening === false) await shut()
      return state().api
    },
    regenerateToken () {
      store.regenerateToken()
      if (listening) writeDiscovery()
      return { ...endpoint }
    },
    async restart () {
      store.restart()
      // Connections do not survive a restart of the app.
      server.closeAllConnections()
      if (listening) writeDiscovery()
      return { ...endpoint }
    },
    async reset () {
      store.reset()
      await open()
    },
    adapter: (id) => store.adapterSnapshot(id),
    forget: (id) => {
      if (store.adapters.get(id) === undefined) throw new UserActionError('not_found', `the fake has never seen adapter ${id}`)
      if (store.adapters.get(id)!.lease !== null) throw new UserActionError('conflict', `${id} has a live lease; unregister it first`)
      if (store.sessions.holds(id)) throw new UserActionError('conflict', `${id} still has sessions; they must end first`)
      store.adapters.forget(id)
      return { forgotten: true }
    },
    setUser: (id, change) => {
      checkAdapterId(id)
      store.adapters.setUser(id, change)
      return store.adapterSnapshot(id)!
    },
    tap: (adapterId, sessionId) => store.sessions.tap(adapterId, sessionId),
    decide: (adapterId, requestId, answer) => store.sessions.decide(adapterId, requestId, answer),
    icon: (id, size) => {
      const images = store.adapters.get(id)?.iconImages
      return images == null ? undefined : size === 28 ? images.png28 : images.png56
    },
    clock: () => clockState(clock),
    advance: (ms) => advanceClock(clock, ms)
  }

  let closing: Promise<void> | undefined
  return {
    ...endpoint,
    get token () { return store.token },
    clock,
    control,
    app,
    close () {
      closing ??= (async () => {
        await shut()
        await app.close()
        if (ownsClock) clock.dispose()
      })()
      return closing
    }
  }
}
