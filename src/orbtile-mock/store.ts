import type { Clock } from '../shared/clock.js'
import { TokenBuckets } from '../shared/token-bucket.js'
import { Adapters, type AdapterSnapshot, type AdaptersOptions } from './adapters.js'
import { newToken } from './discovery.js'
import type { ProcessCheck } from './sessions/process-table.js'
import { Sessions } from './sessions/registry.js'
import type { SessionsSnapshot } from './sessions/snapshot.js'
import { LIMITS } from './spec.js'
import { NO_FAULTS, type Faults } from './faults.js'

/**
 * Everything one fake Orbtile holds, in one object created by its factory (no module-level state). The routes
 * read and change it; the control API reads it through `snapshot()` and changes it through the methods here.
 */
export class OrbtileStore {
  readonly clock: Clock
  readonly version: string
  /** OT-026, OT-A20: per-adapter and shared request buckets. */
  readonly buckets: TokenBuckets
  /** Registrations, leases and the user's settings per adapter id. */
  readonly adapters: Adapters
  /** Sessions, requests and events of every adapter. */
  readonly sessions: Sessions
  /** OT-001, OT-A03: the user's Adapter API switch. */
  apiEnabled = true
  #token = newToken()
  #restarts = 0
  #tokenRegenerations = 0
  readonly #startedAt: number

  /** Deliberate faults (none, unless the conformance self-test asks for some). */
  readonly faults: Faults

  constructor (clock: Clock, version: string, adapterOptions: Omit<AdaptersOptions, 'maxAdapters' | 'faults'>, ownsProcess: ProcessCheck, faults: Faults = NO_FAULTS) {
    this.clock = clock
    this.version = version
    this.faults = faults
    this.buckets = new TokenBuckets({ burst: LIMITS.burst + (faults.has('burst-off-by-one') ? 1 : 0), perSecond: LIMITS.requestsPerSecond }, clock)
    this.adapters = new Adapters(clock, { ...adapterOptions, maxAdapters: LIMITS.maxAdapters, faults })
    this.sessions = new Sessions(clock, this.adapters, ownsProcess, faults)
    this.#startedAt = clock.now()
  }

  /** The discovery token (OT-013, OT-A04). */
  get token (): string {
    return this.#token
  }

  /** The token's bytes, kept beside it: the bearer check on every request compares against them. */
  get tokenBytes (): Buffer {
    if (this.#tokenBytes === undefined || this.#tokenBytesOf !== this.#token) {
      this.#tokenBytes = Buffer.from(this.#token, 'utf8')
      this.#tokenBytesOf = this.#token
    }
    return this.#tokenBytes
  }

  #tokenBytes: Buffer | undefined
  #tokenBytesOf: string | undefined

  /** OT-023, OT-A04: a new discovery token, and every lease ends. The caller rewrites the discovery file. */
  regenerateToken (): void {
    this.#token = newToken()
    this.#tokenRegenerations++
    this.adapters.endAllLeases('token_regenerated')
  }

  /** OT-023: as if Orbtile restarted: a new token, and nothing held over from the last run but the user's settings. */
  restart (): void {
    this.#token = newToken()
    this.adapters.endAllLeases('restart')
    this.buckets.clear()
    this.#restarts++
  }

  /** Back to the state of a fresh start, keeping the token, so clients need not re-read the discovery file. */
  reset (): void {
    this.apiEnabled = true
    this.buckets.clear()
    this.adapters.clear()
    this.sessions.clear()
    this.#restarts = 0
    this.#tokenRegenerations = 0
  }

  /** A JSON snapshot of what the fake holds; secrets (tokens) are never part of it. */
  snapshot (): OrbtileSnapshot {
    return {
      startedAt: new Date(this.#startedAt).toISOString(),
      restarts: this.#restarts,
      tokenRegenerations: this.#tokenRegenerations,
      rateLimitBuckets: this.buckets.snapshot(),
      adapters: this.adapters.snapshot().map((adapter) => ({ ...adapter, ...this.sessions.snapshotOf(adapter.id) }))
    }
  }

  /** One adapter with its sessions, requests and events; undefined for an id the fake has never seen. */
  adapterSnapshot (id: string): (AdapterSnapshot & SessionsSnapshot) | undefined {
    const adapter = this.adapters.snapshotOf(id)
    return adapter === undefined ? undefined : { ...adapter, ...this.sessions.snapshotOf(id) }
  }
}

/** The store part of `GET /control/orbtile/state`. */
export interface OrbtileSnapshot {
  startedAt: string
  restarts: number
  tokenRegenerations: number
  rateLimitBuckets: Array<{ key: string, tokens: number }>
  adapters: Array<AdapterSnapshot & SessionsSnapshot>
}
