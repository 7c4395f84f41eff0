import { advanceClock, clockState, type Clock, type ClockState } from '../shared/clock.js'
import { ControlError } from '../shared/control-error.js'
import { checkAdapterId } from './adapter-id.js'
import type { AdapterSnapshot, UserChange } from './adapters.js'
import { OrbtileError } from './errors.js'
import type { OrbtileEndpoint, OrbtileListener } from './listener.js'
import type { Sessions } from './sessions/registry.js'
import type { SessionsSnapshot } from './sessions/snapshot.js'
import type { OrbtileSnapshot, OrbtileStore } from './store.js'

/** `PUT /control/orbtile/api`: the user's switch, and whether the socket is open at all (OT-A03). */
export interface ApiSwitch {
  enabled: boolean
  /** Defaults to true when enabling; when disabling, false closes the socket and removes the discovery file. */
  listening?: boolean
}

/** `GET /control/orbtile/state`: the store's snapshot, the API switch, where the fake is, and its clock. */
export interface OrbtileState extends OrbtileSnapshot {
  api: { enabled: boolean, listening: boolean }
  discovery: OrbtileEndpoint
  clock: ClockState
}

/** One adapter as the control API shows it: its registry record with its sessions, requests and events. */
export type AdapterState = AdapterSnapshot & SessionsSnapshot

/**
 * What the user's hands do to a fake Orbtile (Settings > Agents, the keypad), and what the app's life does to it
 * (restart, a new token): the control server's `/control/orbtile/...` routes call these, and in-process tests can
 * call them directly. A refused action throws ControlError, with the code the control API answers with.
 */
export class OrbtileControl {
  readonly #store: OrbtileStore
  readonly #listener: OrbtileListener
  readonly #clock: Clock
  readonly #endpoint: OrbtileEndpoint

  constructor (store: OrbtileStore, listener: OrbtileListener, clock: Clock, endpoint: OrbtileEndpoint) {
    this.#store = store
    this.#listener = listener
    this.#clock = clock
    this.#endpoint = endpoint
  }

  /** Everything the fake holds, never a token. */
  state (): OrbtileState {
    return {
      api: { enabled: this.#store.apiEnabled, listening: this.#listener.listening },
      discovery: { ...this.#endpoint },
      clock: clockState(this.#clock),
      ...this.#store.snapshot()
    }
  }

  /** OT-A03: turning the API on always opens the socket; turning it off keeps it open (503) unless asked not to. */
  async setApi ({ enabled, listening }: ApiSwitch): Promise<OrbtileState['api']> {
    this.#store.apiEnabled = enabled
    if (enabled || listening === true) await this.#listener.open()
    else if (listening === false) await this.#listener.shut()
    return this.state().api
  }

  /** OT-023, OT-A04: a new discovery token (every lease ends); the discovery file is rewritten. */
  regenerateToken (): OrbtileEndpoint {
    this.#store.regenerateToken()
    this.#listener.tokenChanged()
    return { ...this.#endpoint }
  }

  /**
   * OT-023: as if the app restarted: a new token, leases and connections gone, the user's settings kept. With a
   * `socketPath`, the app comes back on that socket, and the discovery file says so (OT-002, OT-005).
   */
  async restart (options: { socketPath?: string } = {}): Promise<OrbtileEndpoint> {
    this.#store.restart()
    if (options.socketPath === undefined) {
      this.#listener.dropConnections()
      this.#listener.tokenChanged()
    } else {
      await this.#listener.moveTo(options.socketPath)
    }
    return { ...this.#endpoint }
  }

  /** OT-A08: the adapter's lease ends as if it had been silent for the whole window; its sessions go with it. */
  endLease (id: string): void {
    if (this.#store.adapters.get(id)?.lease == null) throw new ControlError('conflict', `${id} has no live lease`)
    this.#store.adapters.endLease(id, 'silence')
  }

  /** Back to a fresh start (the token kept), listening again. */
  async reset (): Promise<void> {
    this.#store.reset()
    await this.#listener.open()
  }

  /** One adapter as the state snapshot shows it; undefined for an id the fake has never seen. */
  adapter (id: string): AdapterState | undefined {
    return this.#store.adapterSnapshot(id)
  }

  /** Forgets an adapter id the fake no longer serves (no lease, no sessions): its user settings and registration. */
  forget (id: string): { forgotten: true } {
    const { adapters, sessions } = this.#store
    const record = adapters.get(id)
    if (record === undefined) throw new ControlError('not_found', `the fake has never seen adapter ${id}`)
    if (record.lease !== null) throw new ControlError('conflict', `${id} has a live lease; unregister it first`)
    if (sessions.holds(id)) throw new ControlError('conflict', `${id} still has sessions; they must end first`)
    adapters.forget(id)
    return { forgotten: true }
  }

  /** OT-A26: the user changes an adapter's settings (allow or disable, keypad, hue override, anchorAttention). */
  setUser (id: string, change: UserChange): AdapterState {
    try {
      checkAdapterId(id)
    } catch (err) {
      // The protocol's id rules (OT-042..044), answered as the control API's bad_request.
      if (err instanceof OrbtileError) throw new ControlError('bad_request', err.message)
      throw err
    }
    this.#store.adapters.setUser(id, change)
    return this.#store.adapterSnapshot(id)!
  }

  /** The user taps a session's key (OT-055, OT-144): a tap event if the adapter wants one, and what opens. */
  tap (adapterId: string, sessionId: string): ReturnType<Sessions['tap']> {
    return this.#store.sessions.tap(adapterId, sessionId)
  }

  /** The user decides an approval (`{decision}`) or answers a question (`{picks}`) on the keypad (OT-145, OT-146). */
  decide (adapterId: string, requestId: string, answer: { decision?: 'allow' | 'deny', picks?: number[][] }):
  ReturnType<Sessions['decide']> {
    return this.#store.sessions.decide(adapterId, requestId, answer)
  }

  /** OT-068: the re-encoded icon the app would draw, as PNG bytes; undefined when the adapter has none. */
  icon (id: string, size: 28 | 56): Buffer | undefined {
    const images = this.#store.adapters.get(id)?.iconImages
    return images == null ? undefined : size === 28 ? images.png28 : images.png56
  }

  /** The fake's clock. */
  clock (): ClockState {
    return clockState(this.#clock)
  }

  /** Moves a virtual clock forward, firing what falls due; a real clock throws ClockNotVirtualError. */
  advance (ms: number): Promise<ClockState> {
    return advanceClock(this.#clock, ms)
  }
}
