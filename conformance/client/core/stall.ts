// How late this process's own timers run: the judge's error in timing what a client does (OTC-17). On a loaded
// machine the process that stamps the wire is late too, and a check that times the client widens by that lateness
// instead of blaming the client for it.

/** The tick the monitor asks for, and the lateness below which a tick counts as on time. */
const TICK_MS = 10
const ON_TIME_MS = 5
/** Stalls kept: a long `--judge` run forgets the oldest (a check's window is seconds, not hours). */
const KEPT = 4096

interface Stall {
  from: number
  to: number
}

/**
 * One per process, shared by every scenario that runs in it, and running only while one holds it. Times are
 * `performance.now()` milliseconds.
 */
class StallMonitor {
  readonly #stalls: Stall[] = []
  #holders = 0
  #timer: NodeJS.Timeout | undefined
  #last = 0

  /** Whether anyone holds the monitor: a scenario playing, a live judge. */
  get held (): boolean {
    return this.#holders > 0
  }

  /** Starts the monitor (if no one else has); the returned function lets go of it. */
  hold (): () => void {
    if (this.#holders++ === 0) {
      this.#last = performance.now()
      this.#timer = setInterval(() => { this.#tick() }, TICK_MS)
      this.#timer.unref()
    }
    let held = true
    return () => {
      if (!held) return
      held = false
      if (--this.#holders === 0) {
        clearInterval(this.#timer)
        this.#timer = undefined
      }
    }
  }

  /**
   * How late a stamp taken within [from, to] can be, as far as this process's timer saw: the longest single stall
   * that overlaps the interval. Not their sum: a stamp is late by the stall it was taken in, and the error in the time
   * between two stamps is at most the lateness of the later one. (A busy machine stalls a little, often; summed over
   * a ten-second gap those would excuse a missed heartbeat.)
   */
  within (from: number, to: number): number {
    this.#tick()
    let longest = 0
    for (let i = this.#stalls.length - 1; i >= 0; i--) {
      const s = this.#stalls[i]!
      if (s.to <= from) break
      longest = Math.max(longest, Math.min(s.to, to) - Math.max(s.from, from))
    }
    return longest
  }

  /**
   * How long, in all, this process could not run on time within [from, to]: the sum of its stalls. The error of a
   * round trip the judge makes itself (it sends, then reads the reply: each of its stalls in between may have delayed
   * one of its steps), not of one stamp (that is `within`).
   */
  total (from: number, to: number): number {
    this.#tick()
    let sum = 0
    for (let i = this.#stalls.length - 1; i >= 0; i--) {
      const s = this.#stalls[i]!
      if (s.to <= from) break
      sum += Math.max(0, Math.min(s.to, to) - Math.max(s.from, from))
    }
    return sum
  }

  #tick (): void {
    if (this.#holders === 0) return
    const now = performance.now()
    const late = now - this.#last - TICK_MS
    if (late > ON_TIME_MS) {
      this.#stalls.push({ from: now - late, to: now })
      if (this.#stalls.length > KEPT) this.#stalls.splice(0, this.#stalls.length - KEPT)
    }
    this.#last = now
  }
}

export const stalls = new StallMonitor()
