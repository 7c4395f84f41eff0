// Requests a fake has seen the head of and not yet reported over, for a client suite's end of scenario (OTC-18).

/** How long a scenario's end waits, at most, for the exchanges still open to be reported once its fake closed. */
export const SETTLE_MS = 1000

/**
 * Counts the exchanges open on a fake's tap: `opened` when a head arrives, `closed` when the exchange is reported.
 * A client's exit and its sockets' closing reach the judging process in either order; the judge waits for the
 * count to reach zero, so a long poll the client was waiting on when it was stopped is journaled before anything
 * is judged.
 */
export class OpenRequests {
  #open = 0
  #waiters: Array<() => void> = []

  opened (): void {
    this.#open++
  }

  closed (): void {
    if (this.#open > 0) this.#open--
    if (this.#open === 0) {
      const waiters = this.#waiters
      this.#waiters = []
      for (const w of waiters) w()
    }
  }

  get count (): number {
    return this.#open
  }

  /** Resolves when no exchange is open, or after `ms` (an exchange the fake never ends is not waited on forever). */
  async settled (ms = SETTLE_MS): Promise<void> {
    if (this.#open === 0) return
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms)
      function done (): void {
        clearTimeout(timer)
        resolve()
      }
      this.#waiters.push(done)
    })
  }
}
