import type { Clock, TimerHandle } from '../shared/clock.js'
import { newSecret, type SecretComparer } from '../shared/secrets.js'
import {
  newRecord, type AdapterRecord, type Lease, type LeaseEndReason, type RegistrationReply
} from './adapter-record.js'
import { snapshotAdapter, type AdapterSnapshot } from './adapter-snapshot.js'
import { errors } from './errors.js'
import type { Faults } from './faults.js'
import { effectivePalette, pushWarnings } from './palette/effective.js'
import type { Registration, RegistrationRead } from './registration.js'
import { applyUserChange, approvalOf, type UserChange, type UserSettings } from './user-settings.js'

export type { AdapterRecord, LeaseEndReason, RegistrationReply } from './adapter-record.js'
export type { Approval, UserChange, UserSettings } from './user-settings.js'
export type { AdapterSnapshot } from './adapter-snapshot.js'

/** What the rest of the fake hears from the adapter registry. */
export interface AdapterListener {
  leaseStarted?(id: string): void
  leaseEnded?(id: string, reason: LeaseEndReason): void
  /** After a registration commits; `previous` is the registration it replaced under the same lease, if any. */
  registered?(id: string, registration: Registration, previous: Registration | null): void
  userChanged?(id: string, user: UserSettings, before: UserSettings): void
}

/** The header that carries an adapter's lease token (OT-019). */
export const ADAPTER_TOKEN_HEADER = 'X-Orbtile-Adapter-Token'

/** What one fake's adapter registry is made with. */
export interface AdaptersOptions {
  /** `--auto-allow`: an adapter the user never decided on is allowed at its first registration. */
  autoAllow: boolean
  /** OT-A08: a lease ends after this long without a request on any of its routes. */
  silenceMs: number
  /** OT-028: live leases at most. */
  maxAdapters: number
  /** Deliberate faults (faults.ts). */
  faults: Faults
  /** The fake's constant-time comparer, shared with the bearer check (OT-020). */
  secrets: SecretComparer
}

/**
 * Every adapter id the fake knows: the user's settings, the last registration, and the live lease with its token.
 * The lease is the ownership of the id's routes (OT-018..023); it ends on unregister, silence, token
 * regeneration, restart, and its end is announced to listeners (sessions and events, which hang off the lease).
 */
export class Adapters {
  readonly #records = new Map<string, AdapterRecord>()
  readonly #clock: Clock
  readonly #options: AdaptersOptions
  readonly #listeners: AdapterListener[] = []
  readonly #queues = new Map<string, Promise<unknown>>()
  // OT-A08: the silence window also covers the adapter's longest session TTL; sessions tell us what that is.
  #longestTtlMs: (id: string) => number = () => 0

  constructor (clock: Clock, options: AdaptersOptions) {
    this.#clock = clock
    this.#options = options
  }

  /**
   * Runs registry changes of one adapter id one after another, in arrival order. A registration that decodes an
   * icon yields to the event loop; without this a later PUT, or a DELETE, could commit before it and be undone.
   */
  serial<T> (id: string, change: () => T | Promise<T>): Promise<T> {
    const previous = this.#queues.get(id) ?? Promise.resolve()
    const run = previous.then(change, change)
    const tail = run.then(() => undefined, () => undefined)
    this.#queues.set(id, tail)
    tail.then(() => { if (this.#queues.get(id) === tail) this.#queues.delete(id) })
    return run
  }

  /** Subscribes to lease starts and ends, registrations and the user's changes (sessions and events hang off them). */
  listen (listener: AdapterListener): void {
    this.#listeners.push(listener)
  }

  /** Lets the silence window stretch to the adapter's longest session TTL (OT-A08). */
  setLongestTtl (longestTtlMs: (id: string) => number): void {
    this.#longestTtlMs = longestTtlMs
  }

  /** OT-A08: `max(the configured window, the largest ttlSeconds among the adapter's sessions)`. */
  silenceWindow (id: string): number {
    return Math.max(this.#options.silenceMs, this.#longestTtlMs(id))
  }

  /** Deliberate faults (faults.ts), for the routes that check ids before any record exists. */
  get faults (): Faults {
    return this.#options.faults
  }

  get (id: string): AdapterRecord | undefined {
    return this.#records.get(id)
  }

  liveLeases (): number {
    let n = 0
    for (const record of this.#records.values()) if (record.lease !== null) n++
    return n
  }

  /**
   * OT-021, OT-A06 (OT-A02 step 9) for `PUT /adapters/{id}`: while a lease is live, only its token may
   * re-register. Without a live lease anything goes, and a stale token is ignored.
   */
  checkReRegistration (id: string, token: string | undefined): void {
    this.#endIfSilent(id)
    const lease = this.#records.get(id)?.lease
    if (lease != null) this.#checkToken(lease, token)
  }

  /**
   * OT-020, OT-152, OT-A06 (OT-A02 step 9) for every other adapter route: the id must hold a live lease, and the
   * request must carry its token. Counts as activity for the lease (OT-A08).
   */
  requireLease (id: string, token: string | undefined): AdapterRecord {
    const now = this.#clock.now()
    this.#endIfSilent(id, now)
    const record = this.#records.get(id)
    if (record?.lease == null) {
      throw errors.adapterNotRegistered(`no live registration for ${id}; register with PUT first`)
    }
    this.#checkToken(record.lease, token)
    record.lease.lastActivity = now
    return record
  }

  /**
   * Commits a registration (OT-041, OT-A09): starts a lease unless one is live (OT-028: at most maxAdapters live),
   * replaces the whole registration (omitted fields back to defaults; icon cleared unless sent), snapshots the
   * keypad switch, and builds the reply.
   */
  register (id: string, read: RegistrationRead): RegistrationReply {
    const existing = this.#records.get(id)
    if (existing?.lease == null && this.liveLeases() >= this.#options.maxAdapters) {
      throw errors.limitExceeded(`${this.#options.maxAdapters} adapters already hold live registrations`)
    }
    const record = existing ?? this.#create(id)
    const now = this.#clock.now()
    if (record.user.approval === 'awaiting_user' && this.#options.autoAllow) record.user.approval = 'allowed'
    const started = record.lease === null
    if (record.lease === null) {
      // OT-018: a new lease token, made as the discovery token is.
      const timer = this.#watchSilence(id, this.silenceWindow(id))
      record.lease = { token: newSecret(), startedAt: now, lastActivity: now, timer }
    } else {
      record.lease.lastActivity = now
    }
    const previous = record.registration
    const { registration } = read
    record.registration = registration
    // OT-063, OT-A14: a registration without icon.png clears the custom icon; a refused one never reaches here.
    record.iconImages = read.iconImages
    const capabilities = registration.capabilities
    record.keypadDecisions = record.user.keypad &&
      (capabilities.includes('approvals') || capabilities.includes('questions'))
    const { faults } = this.#options
    record.palette = effectivePalette(registration, record.user, faults)
    const pushed = pushWarnings(registration, record.user, faults)
    record.warnings = [...read.warnings, ...pushed, ...record.palette.generated.notes]
    for (const listener of this.#listeners) {
      if (started) listener.leaseStarted?.(id)
      listener.registered?.(id, registration, started ? null : previous)
    }
    return {
      adapter: { id, palette: record.palette.echo, resolvedBaseHue: record.palette.resolvedBaseHue },
      // OT-060, OT-A09: a reason only when not enabled.
      ...approvalOf(record.user),
      keypadDecisions: record.keypadDecisions,
      warnings: record.warnings,
      adapterToken: record.lease.token.text
    }
  }

  /** OT-A07: `DELETE /adapters/{id}` ends the lease; the user's approval stays. */
  unregister (id: string, token: string | undefined): void {
    this.requireLease(id, token)
    this.endLease(id, 'unregistered')
  }

  /** Ends one lease: its token stops working and its slot frees (OT-023). */
  endLease (id: string, reason: LeaseEndReason): void {
    const record = this.#records.get(id)
    if (record?.lease == null) return
    this.#clock.clearTimer(record.lease.timer)
    record.lease = null
    for (const listener of this.#listeners) listener.leaseEnded?.(id, reason)
  }

  /** Ends every lease (a new discovery token, a restart, a reset: OT-023). */
  endAllLeases (reason: LeaseEndReason): void {
    for (const id of [...this.#records.keys()]) this.endLease(id, reason)
  }

  /**
   * Forgets an adapter id: the user's settings and the last registration go, as if the id had never been seen. Only
   * an id with no live lease can be forgotten (the caller checks it holds no sessions either).
   */
  forget (id: string): boolean {
    const record = this.#records.get(id)
    if (record === undefined) return false
    if (record.lease !== null) throw new Error(`${id} has a live lease`)
    this.#records.delete(id)
    return true
  }

  /** OT-A26: the user changes an adapter's settings. The effective palette follows at once. */
  setUser (id: string, change: UserChange): AdapterRecord {
    const record = this.#records.get(id) ?? this.#create(id)
    const { user } = record
    const before = { ...user }
    applyUserChange(user, change)
    if (record.registration !== null) record.palette = effectivePalette(record.registration, user, this.#options.faults)
    for (const listener of this.#listeners) listener.userChanged?.(id, { ...user }, before)
    return record
  }

  /** Whether the user has allowed this id (OT-A09); its sessions are visible only then (OT-A17). */
  isEnabled (id: string): boolean {
    return this.#records.get(id)?.user.approval === 'allowed'
  }

  /** Forgets every adapter, settings included (control reset). */
  clear (): void {
    this.endAllLeases('reset')
    this.#records.clear()
  }

  /** The adapters part of the state snapshot. Never a token. */
  snapshot (): AdapterSnapshot[] {
    return [...this.#records.values()].map((record) => snapshotAdapter(record, this.silenceWindow(record.id)))
  }

  /** One adapter's snapshot; undefined for an id the fake has never seen. */
  snapshotOf (id: string): AdapterSnapshot | undefined {
    const record = this.#records.get(id)
    return record === undefined ? undefined : snapshotAdapter(record, this.silenceWindow(id))
  }

  /**
   * OT-A08: re-arms a lease's silence timer for the window as it now stands. Sessions call this when TTLs change,
   * since a window that shrinks (a long TTL lowered, a session ended) must bring the deadline forward.
   */
  rearmSilence (id: string): void {
    const lease = this.#records.get(id)?.lease
    if (lease == null) return
    const deadline = lease.lastActivity + this.silenceWindow(id)
    // A timer due no later than the deadline is kept: it re-checks when it fires. Only a nearer deadline re-arms,
    // so the busy path (every session update) costs no timer churn.
    if (lease.timer.due <= deadline) return
    this.#clock.clearTimer(lease.timer)
    lease.timer = this.#watchSilence(id, Math.max(0, deadline - this.#clock.now()))
  }

  // A request that arrives on or after the deadline finds the lease already over, whatever the timer's state.
  #endIfSilent (id: string, now = this.#clock.now()): void {
    const lease = this.#records.get(id)?.lease
    if (lease == null) return
    const quiet = now - lease.lastActivity
    // The window is at least the configured one: only a silence that long needs the sessions' TTLs (OT-A08), which
    // take a walk over the adapter's sessions. A busy adapter's request costs one subtraction here.
    // Kept: with the other kept shortcuts, a session update runs at 61% of bare fastify, 48% without (benchmarks.md).
    if (quiet >= this.#options.silenceMs && quiet >= this.silenceWindow(id)) this.endLease(id, 'silence')
  }

  #create (id: string): AdapterRecord {
    const record = newRecord(id)
    this.#records.set(id, record)
    return record
  }

  // OT-020, OT-A06: the lease's token, compared in constant time; a missing or wrong one is 401 naming the header.
  #checkToken (lease: Lease, token: string | undefined): void {
    if (token === undefined) throw errors.unauthorized(`${ADAPTER_TOKEN_HEADER} is missing`, ADAPTER_TOKEN_HEADER)
    if (!this.#options.secrets.matches(token, lease.token.bytes) && !this.#options.faults.has('lease-token-ignored')) {
      throw errors.unauthorized(`${ADAPTER_TOKEN_HEADER} is not this adapter's lease token`, ADAPTER_TOKEN_HEADER)
    }
  }

  // OT-A08: one timer per lease. Activity only moves `lastActivity`; when the timer fires it either ends the
  // lease or sleeps again for the rest of the window, so a busy adapter costs no timer churn.
  #watchSilence (id: string, delay: number): TimerHandle {
    return this.#clock.setTimer(delay, () => {
      const lease = this.#records.get(id)?.lease
      if (lease == null) return
      const quiet = this.#clock.now() - lease.lastActivity
      const window = this.silenceWindow(id)
      if (quiet >= window) this.endLease(id, 'silence')
      else lease.timer = this.#watchSilence(id, window - quiet)
    })
  }
}
