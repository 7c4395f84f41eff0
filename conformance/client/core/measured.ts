import type { Millis } from './journal.js'
import { windowMs } from './windows.js'

/** A span of journal time's measured quantity, in ms. */
export type Measure = (from: Millis, to: Millis) => Millis

/**
 * What the judge knows of its own timing and of the client's (OTC-17, OTC-25), which a verdict on time allows for:
 * the suites' models extend it, and their observers set what they can watch.
 */
export class Measured {
  /** How long, within [from, to], the judging process itself could not run on time (OTC-17): its longest stall. */
  readonly lag: Measure
  /** Every stall of the judging process within [from, to], summed (OTC-17). */
  readonly stalled: Measure
  /** How long, within [from, to], a thread of the client waited for a CPU (OTC-25): nothing unless it is watched. */
  clientWait: Measure = () => 0
  /** How long, within [from, to], a thread of the client was running or waiting for a CPU (OTC-25). */
  clientBusy: Measure = () => 0

  constructor (lag: Measure = () => 0, stalled: Measure = () => 0) {
    this.lag = lag
    this.stalled = stalled
  }

  /**
   * The judge's measurement error over [from, to] (the window `measurement-error`): its own longest stall plus the
   * client's longest wait for a CPU, at most 5 s. A finding within it is inconclusive.
   */
  error (from: Millis, to: Millis): Millis {
    return Math.min(windowMs('measurement-error'), this.lag(from, to) + this.clientWait(from, to))
  }

  /**
   * The judge's measurement error over a round trip it made itself (a webhook delivery): from its decision to send at
   * `from`, through the request handed to the connection whole at `written`, to the reply read at `to`. Until the
   * request is written every stall of the judge delays it (it connects, then writes, each a step of its own); after,
   * the reply is read late by the stall it came in, as one stamp is. Plus the client's longest wait for a CPU, at
   * most 5 s. Without `written` (nothing was written), every stall to `to`.
   */
  roundTripError (from: Millis, written: Millis | undefined, to: Millis): Millis {
    const sending = this.stalled(from, written ?? to)
    const reading = written === undefined ? 0 : this.lag(written, to)
    return Math.min(windowMs('measurement-error'), sending + reading + this.clientWait(from, to))
  }

  /**
   * How long after a reply at `from` the client may still have been working through what it had before it
   * (OTC-25): the judge's stalls plus the longest time one thread of the client was running or waiting for a CPU,
   * at most 5 s. Only time the client spent idle shows it could have read that reply.
   */
  inFlight (from: Millis, to: Millis): Millis {
    return Math.min(windowMs('measurement-error'), this.lag(from, to) + this.clientBusy(from, to))
  }
}
