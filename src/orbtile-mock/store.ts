import type { Clock } from '../shared/clock.js'
import { newSecret, type Secret, type SecretComparer } from '../shared/secrets.js'
import type { TokenBuckets } from '../shared/token-bucket.js'
import type { Adapters, AdapterSnapshot } from './adapters.js'
import type { Faults } from './faults.js'
import type { Sessions } from './sessions/registry.js'
import type { SessionsSnapshot } from './sessions/snapshot.js'

/** The services one fake Orbtile is made of, each constructed by its factory (startOrbtileMock). */
export interface OrbtileServices {
  clock: Clock
  /** The `version` string `GET /info` reports (OT-A29). */
  version: string
  /** OT-026, OT-A20: per-adapter and shared request buckets. */
  buckets: TokenBuckets
  /** Registrations, leases and the user's settings per adapter id. */
  adapters: Adapters
  /** Sessions, requests and events of every adapter. */
  sessions: Sessions
  /** Deliberate faults (none, unless the conformance self-test asks for some). */
  faults: Faults
  /** The constant-time comparer the bearer and lease checks share. */
  secrets: SecretComparer
}

/**
 * Everything one fake Orbtile holds, in one object created by its factory (no module-level state). The routes
 * read and change it; the control object reads it through `snapshot()` and changes it through the methods here.
 */
export class OrbtileStore implements OrbtileServices {
  readonly clock: Clock
  readonly version: string
  readonly buckets: TokenBuckets
  readonly adapters: Adapters
  readonly sessions: Sessions
  readonly faults: Faults
  readonly secrets: SecretComparer
  /** OT-001, OT-A03: the user's Adapter API switch. */
  apiEnabled = true
  #token: Secret = newSecret()
  #restarts = 0
  #tokenRegenerations = 0
  readonly #startedAt: number

  constructor (services: OrbtileServices) {
    this.clock = services.clock
    this.version = services.version
    this.buckets = services.buckets
    this.adapters = services.adapters
    this.sessions = services.sessions
    this.faults = services.faults
    this.secrets = services.secrets
    this.#startedAt = this.clock.now()
  }

  /** The discovery token (OT-013, OT-A04). */
  get token (): string {
    return this.#token.text
  }

  /** The token's bytes, kept beside it: the bearer check on every request compares against them. */
  get tokenBytes (): Buffer {
    return this.#token.bytes
  }

  /** OT-023, OT-A04: a new discovery token, and every lease ends. The caller rewrites the discovery file. */
  regenerateToken (): void {
    this.#token = newSecret()
    this.#tokenRegenerations++
    this.adapters.endAllLeases('token_regenerated')
  }

  /** OT-023: as if Orbtile restarted: a new token, and nothing held over from the last run but the user's settings. */
  restart (): void {
    this.#token = newSecret()
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
