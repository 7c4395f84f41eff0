import { errors } from '../errors.js'
import { NO_FAULTS, type Faults } from '../faults.js'
import { LIMITS } from '../../spec/orbtile.js'

/** The three event shapes (OT-143). */
export type OrbtileEvent =
  | { sequence: number, type: 'tap', sessionId: string, host: string }
  | Decided<{ type: 'approval', decision: 'allow' | 'deny' }>
  | Decided<{ type: 'question', picks: number[][] }>

// A decision event: what every event holds, the request it answers, and when that request expires (OT-A21).
type Decided<T> = { sequence: number, sessionId: string, host: string, requestId: string, expiresAt: number } & T

/** An event before it has a sequence. */
export type NewEvent = OrbtileEvent extends infer E ? E extends OrbtileEvent ? Omit<E, 'sequence'> : never : never

/** The reply to `POST /adapters/{id}/events` (OT-131..146, OT-A23). */
export interface EventsReply {
  events: OrbtileEvent[]
  lastSequence: number
  acknowledged: number
  warnings?: string[]
}

/**
 * One lease's event stream (OT-131..146, OT-A21, OT-A23): sequences from 1, shared by all types; a cumulative
 * ack that never goes down; a queue of the unacknowledged events bounded at maxEvents (the oldest is dropped, and
 * its sequence is never reused, so clients see a gap).
 */
export class EventLog {
  #next = 1
  #acknowledged = 0
  #highestDelivered = 0
  #queue: OrbtileEvent[] = []

  /** Deliberate faults (faults.ts). */
  constructor (readonly faults: Faults = NO_FAULTS) {
    if (faults.has('cursor-from-zero')) this.#next = 0
  }

  /** OT-A23: the highest sequence assigned under the lease, or 0. */
  get lastSequence (): number {
    return this.#next - 1
  }

  get acknowledged (): number {
    return this.#acknowledged
  }

  get highestDelivered (): number {
    return this.#highestDelivered
  }

  /** Events not yet acknowledged, oldest first. */
  queued (): readonly OrbtileEvent[] {
    return this.#queue
  }

  /**
   * Appends an event with the next sequence; past maxEvents the oldest unacknowledged one is dropped (OT-A21) and
   * returned, so that the caller can undo what it meant.
   */
  push (event: NewEvent): { event: OrbtileEvent, dropped: OrbtileEvent | undefined } {
    const stamped = { sequence: this.#next++, ...event } as OrbtileEvent
    this.#queue.push(stamped)
    const dropped = this.#queue.length > LIMITS.maxEvents ? this.#queue.shift() : undefined
    return { event: stamped, dropped }
  }

  /** Removes queued events that match, delivered or not (expired decisions, a capability downgrade); returns them. */
  drop (match: (event: OrbtileEvent) => boolean): OrbtileEvent[] {
    const dropped = this.#queue.filter(match)
    if (dropped.length > 0) this.#queue = this.#queue.filter((event) => !match(event))
    return dropped
  }

  /** Removes queued events that no poll has delivered yet (OT-057: the keypad switch turned off); returns them. */
  dropUndelivered (match: (event: OrbtileEvent) => boolean): OrbtileEvent[] {
    return this.drop((event) => event.sequence > this.#highestDelivered && match(event))
  }

  /**
   * OT-137, OT-A23: refuses a cursor with `ack > after`, or `after` beyond the highest sequence delivered.
   * Checked before anything changes.
   */
  checkCursor (after: number, ack: number): void {
    if (ack > after) throw errors.invalidCursor(`ack ${ack} is greater than after ${after}`)
    if (after > this.#highestDelivered) {
      throw errors.invalidCursor(`after ${after} is beyond the highest sequence delivered (${this.#highestDelivered})`)
    }
  }

  /** OT-136, OT-A23: a cumulative ack; one below the stored value changes nothing. */
  acknowledge (ack: number): void {
    if (this.faults.has('ack-decreases') && ack < this.#acknowledged) this.#acknowledged = ack
    if (ack <= this.#acknowledged) return
    this.#acknowledged = ack
    this.#queue = this.#queue.filter((event) => event.sequence > ack)
  }

  /** OT-135: what a poll returns: queued events after `max(after, acknowledged)`, ascending, at most maxEvents. */
  pending (after: number): OrbtileEvent[] {
    const from = Math.max(after, this.#acknowledged)
    const out: OrbtileEvent[] = []
    for (const event of this.#queue) {
      if (event.sequence > from) out.push(event)
      if (out.length === LIMITS.maxEvents) break
    }
    return out
  }

  /** Marks events as delivered, which moves the ceiling for `after` (OT-137). */
  delivered (events: readonly OrbtileEvent[]): void {
    const last = events[events.length - 1]
    if (last !== undefined && last.sequence > this.#highestDelivered) this.#highestDelivered = last.sequence
  }

  reply (events: OrbtileEvent[], warnings: string[]): EventsReply {
    this.delivered(events)
    return {
      events,
      lastSequence: this.lastSequence,
      acknowledged: this.#acknowledged,
      ...(warnings.length > 0 ? { warnings } : {})
    }
  }
}
