import type { FastifyReply } from 'fastify'
import type { Clock, TimerHandle } from '../../shared/clock.js'
import { errors, type OrbtileError } from '../errors.js'
import type { EventLog, EventsReply } from './events.js'

/** A long poll being held (OT-140): one per adapter at most (OT-133). */
interface Waiter {
  after: number
  warnings: string[]
  timer: TimerHandle
  finish: (outcome: { reply: EventsReply } | { error: OrbtileError }) => void
}

/**
 * The long polls one fake holds (OT-140, OT-141, OT-A21): each until an event arrives, its `waitSeconds` pass on
 * the fake's clock, its client goes away, or its lease ends. The session registry decides whether to hold a poll.
 */
export class HeldPolls {
  readonly #clock: Clock
  readonly #waiters = new Map<string, Waiter>()

  constructor (clock: Clock) {
    this.#clock = clock
  }

  /** Whether a poll of this adapter is held. */
  has (adapterId: string): boolean {
    return this.#waiters.has(adapterId)
  }

  /** How many polls are held across the fake (OT-A21: maxLongPolls). */
  get size (): number {
    return this.#waiters.size
  }

  /** Holds a poll of `log` for events after `after`; answers with no events when `waitSeconds` pass. */
  hold (adapterId: string, log: EventLog, after: number, waitSeconds: number, warnings: string[], reply: FastifyReply):
  Promise<EventsReply> {
    return new Promise<EventsReply>((resolve, reject) => {
      const finish: Waiter['finish'] = (outcome) => {
        if (this.#waiters.get(adapterId) !== waiter) return
        this.#waiters.delete(adapterId)
        this.#clock.clearTimer(waiter.timer)
        if ('reply' in outcome) resolve(outcome.reply)
        else reject(outcome.error)
      }
      const waiter: Waiter = {
        after,
        warnings,
        finish,
        timer: this.#clock.setTimer(waitSeconds * 1000, () => finish({ reply: log.reply([], warnings) }))
      }
      this.#waiters.set(adapterId, waiter)
      // OT-141: a client that goes away frees its slot at once.
      reply.raw.once('close', () => finish({ error: errors.badRequest('the client went away') }))
    })
  }

  /** OT-140: after an event is queued, the adapter's held poll (if any) is answered at once. */
  wake (adapterId: string, log: EventLog): void {
    const waiter = this.#waiters.get(adapterId)
    if (waiter === undefined) return
    const events = log.pending(waiter.after)
    if (events.length > 0) waiter.finish({ reply: log.reply(events, waiter.warnings) })
  }

  /** The adapter's lease ended: its held poll is answered adapter_not_registered. */
  endLease (adapterId: string): void {
    this.#waiters.get(adapterId)?.finish({ error: notRegistered() })
  }

  /** Every held poll is answered as if its lease ended (control reset). */
  clear (): void {
    for (const waiter of [...this.#waiters.values()]) waiter.finish({ error: notRegistered() })
  }
}

function notRegistered (): OrbtileError {
  return errors.adapterNotRegistered('the lease ended while the poll was held')
}
