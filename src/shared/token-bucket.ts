import type { Clock } from './clock.js'

/** What a bucket answers: admitted, or refused with the whole seconds to wait before one token is back. */
export type TakeResult = { ok: true } | { ok: false, retryAfterSeconds: number }

/** Shape of a bucket family: `burst` tokens at most, refilled continuously at `perSecond`. */
export interface BucketShape {
  burst: number
  perSecond: number
}

interface Bucket {
  tokens: number
  at: number
}

/**
 * Keyed token buckets on an injected clock (OT-026, OT-A20). A key that has never been seen, or whose bucket has
 * refilled completely, behaves as a full bucket, so full buckets are dropped when the map grows: an attacker who
 * invents keys cannot grow memory past `maxKeys` live (non-full) buckets plus one sweep.
 */
export class TokenBuckets {
  readonly #buckets = new Map<string, Bucket>()
  readonly #shape: BucketShape
  readonly #clock: Clock
  readonly #maxKeys: number

  constructor (shape: BucketShape, clock: Clock, maxKeys = 4096) {
    this.#shape = shape
    this.#clock = clock
    this.#maxKeys = maxKeys
  }

  /** Takes one token from `key`'s bucket if it has one. */
  take (key: string): TakeResult {
    const now = this.#clock.now()
    const bucket = this.#refilled(key, now)
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1
      this.#store(key, bucket)
      return { ok: true }
    }
    // OT-A20: Retry-After is the whole seconds until one token is back, at least 1. Never early: ceil.
    const wait = (1 - bucket.tokens) / this.#shape.perSecond
    this.#store(key, bucket)
    return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil(wait)) }
  }

  /** Tokens currently in `key`'s bucket (fractional). */
  tokens (key: string): number {
    return this.#refilled(key, this.#clock.now()).tokens
  }

  /** The buckets that are not full, for the state snapshot. */
  snapshot (): Array<{ key: string, tokens: number }> {
    const now = this.#clock.now()
    const out: Array<{ key: string, tokens: number }> = []
    for (const key of this.#buckets.keys()) {
      const { tokens } = this.#refilled(key, now)
      if (tokens < this.#shape.burst) out.push({ key, tokens: Math.floor(tokens * 1000) / 1000 })
    }
    return out
  }

  /** Forgets every bucket: all are full again. */
  clear (): void {
    this.#buckets.clear()
  }

  #refilled (key: string, now: number): Bucket {
    const stored = this.#buckets.get(key)
    if (stored === undefined) return { tokens: this.#shape.burst, at: now }
    // A clock never runs backwards here, but guard anyway: elapsed time is never negative.
    const elapsed = Math.max(0, now - stored.at)
    return { tokens: Math.min(this.#shape.burst, stored.tokens + (elapsed * this.#shape.perSecond) / 1000), at: now }
  }

  #store (key: string, bucket: Bucket): void {
    this.#buckets.set(key, bucket)
    if (this.#buckets.size > this.#maxKeys) this.#sweep(bucket.at)
  }

  #sweep (now: number): void {
    for (const key of [...this.#buckets.keys()]) {
      if (this.#refilled(key, now).tokens >= this.#shape.burst) this.#buckets.delete(key)
    }
  }
}
