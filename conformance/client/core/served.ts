// How long the fake itself was answering a client's requests: the time a client that waits for those replies spends
// waiting on the fake. A deadline the client misses by no more than that is missed because the fake was slow.
import type { Millis } from './journal.js'

/** The last this many requests are kept: more than any judged interval holds. */
const KEPT = 512

export class Serving {
  readonly #spans: Array<{ at: Millis, end: Millis }> = []

  /** A request the fake took from `at` to `end` to answer (its wire's holds included). */
  add (at: Millis, end: Millis): void {
    this.#spans.push({ at, end })
    if (this.#spans.length > KEPT) this.#spans.shift()
  }

  /** How much of [from, to] some request was being answered in (overlapping ones counted once). */
  within (from: Millis, to: Millis): Millis {
    const cut = this.#spans
      .map((s) => ({ at: Math.max(s.at, from), end: Math.min(s.end, to) }))
      .filter((s) => s.end > s.at)
      .sort((a, b) => a.at - b.at)
    let total = 0
    let reached = from
    for (const s of cut) {
      if (s.end <= reached) continue
      total += s.end - Math.max(s.at, reached)
      reached = s.end
    }
    return total
  }
}
