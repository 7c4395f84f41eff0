import type { Clock } from '../shared/clock.js'
import { orbRetryAfterSeconds, type OrbWindow } from '../spec/orb.js'

/** One limit: at most `limit` events per `windowMs` for a key, in a sliding window (ORB-A03). */
export interface WindowLimit extends OrbWindow {
  key: string
}

/** Whether a request is admitted; if not, the Retry-After it carries and the key of the window that refused it. */
export type WindowVerdict = { ok: true } | { ok: false, retryAfterSeconds: number, key: string }

/**
 * Sliding-window counters on the fake's clock (ORB-031, ORB-A03). `check` asks several limits at once without
 * counting; `record` counts an admitted event against each of them. Refused events never count. `Retry-After` is the
 * ceiling of the seconds until every full window has a free slot, at least 1, so that waiting it out always succeeds.
 */
export class SlidingWindows {
  readonly #clock: Clock
  readonly #events = new Map<string, number[]>()
  /** Each counted key's limit and window, for `windows()`. */
  readonly #limits = new Map<string, OrbWindow>()
  /** Seconds a Retry-After is short by: 0, except under the `retry-after-early` fault. */
  readonly #early: number

  constructor (clock: Clock, early = 0) {
    this.#clock = clock
    this.#early = early
  }

  /** Whether every limit has a free slot now; counts nothing. */
  check (limits: readonly WindowLimit[]): WindowVerdict {
    const now = this.#clock.now()
    let wait = 0
    let blocking: string | undefined
    for (const { key, limit, windowMs } of limits) {
      const times = this.#live(key, now, windowMs)
      if (times.length < limit) continue
      // The window frees a slot when its `limit`-th newest event leaves it.
      const freeAt = times[times.length - limit]! + windowMs
      if (freeAt - now > wait) {
        wait = freeAt - now
        blocking = key
      }
    }
    if (blocking === undefined) return { ok: true }
    return { ok: false, retryAfterSeconds: orbRetryAfterSeconds(wait) - this.#early, key: blocking }
  }

  /** Counts an admitted event against each limit. */
  record (limits: readonly WindowLimit[]): void {
    const now = this.#clock.now()
    for (const { key, limit, windowMs } of limits) {
      this.#limits.set(key, { limit, windowMs })
      let times = this.#events.get(key)
      if (times === undefined) this.#events.set(key, times = [])
      times.push(now)
    }
  }

  /** Checks and, when admitted, records: the common case. */
  take (limits: readonly WindowLimit[]): WindowVerdict {
    const verdict = this.check(limits)
    if (verdict.ok) this.record(limits)
    return verdict
  }

  /** How many events each key holds in its window now (for the control server). */
  count (key: string, windowMs: number): number {
    return this.#live(key, this.#clock.now(), windowMs).length
  }

  /** Every window holding events now: its key, limit and length, how many it holds and when it next frees a slot. */
  windows (): Array<{ key: string, limit: number, windowMs: number, used: number, freesAt: number }> {
    const now = this.#clock.now()
    const open = []
    for (const [key, { limit, windowMs }] of this.#limits) {
      const times = this.#live(key, now, windowMs)
      if (times.length === 0) {
        this.#limits.delete(key)
        continue
      }
      open.push({ key, limit, windowMs, used: times.length, freesAt: times[0]! + windowMs })
    }
    return open
  }

  /** Forgets every counted event (a reset). */
  clear (): void {
    this.#events.clear()
    this.#limits.clear()
  }

  // Drops events that left the window; an event exactly `windowMs` old has left it.
  #live (key: string, now: number, windowMs: number): number[] {
    const times = this.#events.get(key)
    if (times === undefined) return []
    let drop = 0
    while (drop < times.length && times[drop]! <= now - windowMs) drop++
    if (drop > 0) times.splice(0, drop)
    if (times.length === 0) this.#events.delete(key)
    return times
  }
}
