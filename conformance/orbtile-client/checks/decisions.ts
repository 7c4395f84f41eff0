import { seconds, Tally } from '../../client/check.js'
import type { JournalEntry, JournalExchange, Millis, Violation } from '../../client/journal.js'
import {
  carriesRequest, isObject, updates, view, type ExchangeView, type OrbtileModel, type PendingRequest
} from '../model.js'
import { check, type OrbtileCheckDef } from './wire.js'

/** A decision event the adapter received, and what it did about it (OTC-01: the observable stand-ins). */
interface Delivery {
  adapterId: string
  sequence: number
  type: 'approval' | 'question'
  requestId: string
  sessionId: string
  /** Pending on that session (as the adapter's accepted updates left it) when the reply arrived. */
  pending: boolean
  /** Why it must not be applied: `expired`, `invalid picks: …`; undefined for a fresh, valid decision. */
  stale?: string
  seq: number
  received: Millis
  /** When the first write that cleared the request started (OTC-01: applying it). */
  appliedAt?: Millis
  appliedSeq?: number
  /** When the first poll whose ack covers it started. */
  ackedAt?: Millis
  ackSeq?: number
  /** Polls that started a second or more after receipt without covering it. */
  pollsSince: number
}

/** Why a question's picks cannot be applied (OT-146, OT-148), or undefined when they can. */
export function picksProblem (picks: unknown, request: PendingRequest | undefined): string | undefined {
  const questions = request?.content.questions
  if (!Array.isArray(questions)) return undefined
  if (!Array.isArray(picks) || picks.length !== questions.length) return `${Array.isArray(picks) ? picks.length : 'no'} answers for ${questions.length} questions`
  for (const [i, answer] of picks.entries()) {
    const q = questions[i] as { multiSelect?: boolean, options?: unknown[] }
    const count = Array.isArray(q?.options) ? q.options.length : 0
    if (!Array.isArray(answer) || answer.length === 0) return `question ${i}: no pick`
    if (new Set(answer).size !== answer.length) return `question ${i}: a pick repeated`
    if (q?.multiSelect !== true && answer.length !== 1) return `question ${i} is single-select: ${answer.length} picks`
    const bad = answer.find((p) => !Number.isInteger(p) || p < 0 || p >= count)
    if (bad !== undefined) return `question ${i}: pick ${String(bad)} of ${count} options`
  }
  return undefined
}

/** Follows every decision event from its receipt to the write that applied it and the poll that acknowledged it. */
abstract class Deliveries extends Tally<OrbtileModel> {
  protected readonly deliveries: Delivery[] = []

  observe (entry: JournalEntry, model: OrbtileModel): void {
    if (entry.kind !== 'exchange') return
    const v = view(entry)
    const id = v.adapterId
    if (id === undefined) return
    // A write can apply only a delivery already received (none, on most of a busy run), and only if it clears one.
    if (this.deliveries.length > 0 && carriesRequest(v)) this.#applies(entry, v, id)
    if (v.route !== 'events') return
    const ack = isObject(v.body) && typeof v.body.ack === 'number' ? v.body.ack : 0
    for (const d of this.deliveries) {
      if (d.adapterId !== id || d.ackedAt !== undefined || entry.at < d.received) continue
      if (ack >= d.sequence) {
        d.ackedAt = entry.at
        d.ackSeq = entry.seq
        this.acked(d)
      } else if (entry.at >= d.received + 1000) {
        d.pollsSince++
      }
    }
    if (this.deliveries.length > KEPT_DELIVERIES) {
      // A write or an ack long after an event is past judging anyway: the oldest acknowledged go first.
      const old = this.deliveries.filter((d) => d.ackedAt !== undefined).slice(0, KEPT_DELIVERIES / 2)
      for (const d of old) this.judge(d)
      const gone = new Set(old)
      this.deliveries.splice(0, this.deliveries.length, ...this.deliveries.filter((d) => !gone.has(d)))
    }
    if (!v.ok || entry.wire?.includes('connection cut before the reply') === true) return
    if (!isObject(v.reply) || !Array.isArray(v.reply.events)) return
    const now = (model.epochAt(entry.end)) / 1000
    for (const event of v.reply.events) {
      if (!isObject(event) || (event.type !== 'approval' && event.type !== 'question')) continue
      if (typeof event.sequence !== 'number' || typeof event.requestId !== 'string') continue
      const request = model.pendingRequest(id, event.requestId)
      const pending = request !== undefined && request.kind === event.type && request.sessionId === event.sessionId
      const expired = typeof event.expiresAt === 'number' && now >= event.expiresAt
      const picks = event.type === 'question' && pending ? picksProblem(event.picks, request) : undefined
      const stale = expired ? `expired (expiresAt ${String(event.expiresAt)}, received at ${now.toFixed(1)})` : picks === undefined ? undefined : `invalid picks: ${picks}`
      this.deliveries.push({
        adapterId: id,
        sequence: event.sequence,
        type: event.type,
        requestId: event.requestId,
        sessionId: String(event.sessionId),
        pending,
        ...(stale === undefined ? {} : { stale }),
        seq: entry.seq,
        received: entry.end,
        pollsSince: 0
      })
    }
  }

  /** The first write that clears (or replaces) a received request applies its delivery (OTC-01). */
  #applies (entry: JournalExchange, v: ExchangeView, id: string): void {
    for (const w of updates(v)) {
      for (const d of this.deliveries) {
        if (d.adapterId !== id || d.sessionId !== w.sessionId || d.appliedAt !== undefined || entry.at < d.received) {
          continue
        }
        if (!(d.type in w.body)) continue
        const sent = w.body[d.type]
        if (!isObject(sent) || sent.id !== d.requestId) {
          d.appliedAt = entry.at
          d.appliedSeq = entry.seq
        }
      }
    }
  }

  /** A delivery's ack has been seen. */
  protected acked (_d: Delivery): void {}

  /** Judges one delivery with what the journal showed of it. */
  abstract judge (d: Delivery): void

  override finish (): void {
    for (const d of this.deliveries) this.judge(d)
  }
}

/** What a delivery check reads: polls, and the writes that may apply a decision (those that clear a request). */
const DELIVERIES_READ = { routes: ['session', 'batch', 'events'], requestsOnly: true } as const

/** Deliveries kept at most; a long judged run judges and forgets the oldest acknowledged ones. */
const KEPT_DELIVERIES = 1000

/** One adapter's cursor as its polls and their replies left it, under one lease (OT-138). */
interface Cursor {
  token: string
  /** The highest sequence each reply delivered, and when the reply ended. */
  received: Array<{ upTo: number, at: Millis }>
  ack: number
  ackAt: Millis
  /** One invalid_cursor for a cursor carried over from the last lease is allowed (OT-A23, OTC-10). */
  grace: boolean
  previous: number
  /** The last lease's cursor, for a verdict on the grace that waits for the journal (OTC-20). */
  before: Cursor | undefined
}

/** The highest sequence the adapter had received by `at`. */
function highestBy (c: Cursor | undefined, at: Millis): number {
  let top = 0
  for (const r of c?.received ?? []) if (r.at <= at) top = Math.max(top, r.upTo)
  return top
}

/** OT-147 and OT-148: a stale decision is not applied, and is acknowledged as a deliberate discard. */
function staleDecisions (
  id: 'OT-147' | 'OT-148',
  type: 'approval' | 'question',
  title: string
): OrbtileCheckDef {
  return check(
    {
      id,
      title,
      level: 'required',
      ...DELIVERIES_READ,
      exercise:
        type === 'approval'
          ? 'an approval decided on the keypad and delivered after its expiresAt (tour:decisions: a late delivery)'
          : 'a question answered on the keypad, delivered as it is or with invalid picks (tour:decisions)'
    },
    (info) =>
      new class extends Deliveries {
        judge (d: Delivery): void {
          if (d.type !== type) return
          if (type === 'question' || d.stale !== undefined || !d.pending) this.applied()
          if (d.stale === undefined || !d.pending) return
          const applied = d.appliedAt !== undefined && (d.ackedAt === undefined || d.appliedAt <= d.ackedAt)
          if (applied) {
            this.violate({
              seq: d.appliedSeq!,
              at: d.appliedAt!,
              message: `the ${type} event #${d.sequence} for ${d.requestId} was ${d.stale}, and a write then cleared the request (OTC-01: applied)`,
              expected: 'the decision rejected: no write clearing the request before the event is acknowledged',
              actual: `cleared by entry #${d.appliedSeq!}, ${seconds(d.appliedAt! - d.received)} after receipt`
            }, true)
          } else if (d.ackedAt === undefined && d.pollsSince >= 2) {
            this.violate({
              seq: d.seq,
              at: d.received,
              message: `the ${type} event #${d.sequence} (${d.stale}) was never acknowledged`,
              expected: 'a stale decision discarded and acknowledged',
              actual: `${d.pollsSince} later polls without an ack of ${d.sequence}`
            })
          }
        }
      }(info)
  )
}

export const DECISION_CHECKS: readonly OrbtileCheckDef[] = [
  check({
    id: 'OT-139',
    title: 'a decision is acknowledged only after it was applied (OTC-01) or deliberately discarded, never on receipt',
    level: 'required',
    exercise: 'an approval or question decided on the keypad (keypad on, the capability declared, the user deciding)',
    ...DELIVERIES_READ
  }, (info) => new class extends Deliveries {
    judge (d: Delivery): void {
      if (d.stale !== undefined || !d.pending || d.ackedAt === undefined) return
      this.applied()
      if (d.appliedAt !== undefined && d.appliedAt <= d.ackedAt) return
      this.violate({
        seq: d.ackSeq!,
        at: d.ackedAt,
        message: `event #${d.sequence} (${d.type} ${d.requestId}) was acknowledged before any write applied it`,
        expected: 'a write that clears the request (approval/question null) before the ack',
        actual: d.appliedAt === undefined ? `ack ${d.sequence} and no applying write` : `ack at ${seconds(d.ackedAt)}, applied at ${seconds(d.appliedAt)}`
      // The ack's order against an Orbtile write stands in for the order against the agent's own UI (OTC-01).
      }, true)
    }
  }(info)),
  staleDecisions('OT-147', 'approval', 'an approval is not applied on or after its expiresAt, nor once no longer pending, and is then acknowledged'),
  staleDecisions('OT-148', 'question', "a question's picks are checked (one per single-select, every index exists); stale or invalid ones are discarded"),

  check(
    {
      id: 'OT-138',
      title: 'the cursor: ack <= after, ack never decreases, after never passes the highest sequence received',
      level: 'required',
      exercise: 'an events poll',
      routes: ['events']
    },
    (info) =>
      new class extends Tally<OrbtileModel> {
        readonly #cursor = new Map<string, Cursor>()
        /** OTC-20: graces the journal could not yet settle, judged once every exchange is in. */
        readonly #unsettled: Array<{ c: Cursor, after: number, by: Millis, violation: Violation }> = []

        observe (entry: JournalEntry, model: OrbtileModel): void {
          if (entry.kind !== 'exchange') return
          const v = view(entry)
          if (v.route !== 'events' || v.adapterId === undefined || !v.bodyRead) return
          const token = model.leaseBefore?.token ?? ''
          let c = this.#cursor.get(v.adapterId)
          if (c === undefined || c.token !== token) {
            c = { token, received: [], ack: 0, ackAt: -1, grace: true, previous: highestBy(c, Infinity), before: c }
            this.#cursor.set(v.adapterId, c)
          }
          // OTC-21: a poll belongs to the lease whose token it carries, whenever its reply ended. A held poll that
          // the app's restart cut can reach the journal after the new lease's registration; it is judged by the
          // last lease's cursor, which it was sent with.
          const sent = entry.headers['x-orbtile-adapter-token']
          if (sent !== undefined && sent !== c.token && sent === c.before?.token) c = c.before
          const body = isObject(v.body) ? v.body : {}
          const after = typeof body.after === 'number' ? body.after : 0
          const ack = typeof body.ack === 'number' ? body.ack : 0
          this.applied()
          const at = { seq: entry.seq, at: entry.at }
          if (ack > after) {
            this.violate({
              ...at,
              message: `ack ${ack} is above after ${after}`,
              expected: 'ack <= after',
              actual: `after ${after}, ack ${ack}`
            })
          }
          // Entries come in the order their replies ended: a lower ack from a poll sent before the higher one is no
          // decrease.
          if (ack < c.ack && entry.at > c.ackAt) {
            this.violate({
              ...at,
              message: `ack went down from ${c.ack} to ${ack}${'ack' in body ? '' : ' (left out: its default is 0)'}`,
              expected: `ack >= ${c.ack}`,
              actual: `ack ${ack}`
            })
          }
          const highest = highestBy(c, entry.at)
          if (after > highest) {
            // OT-A23: one poll with the last lease's cursor, refused as invalid_cursor, is how an adapter learns
            // of a new lease.
            const violation = {
              ...at,
              message: `after ${after} is past the highest sequence received, ${highest}`,
              expected: `after <= ${highest}`,
              actual: `after ${after}`
            }
            if (c.grace && v.code === 'invalid_cursor') {
              c.grace = false
              // OTC-20: the last lease's poll that delivered this cursor may end in the journal after this one (its
              // connection cut by the restart is reported late): settled at the end, from every reply that ended
              // before this poll began.
              if (after > c.previous) this.#unsettled.push({ c, after, by: entry.at, violation })
            } else {
              this.violate(violation)
            }
          }
          if (ack > c.ack) {
            c.ack = ack
            c.ackAt = entry.at
          }
          if (
            v.ok &&
            isObject(v.reply) &&
            Array.isArray(v.reply.events) &&
            entry.wire?.includes('connection cut before the reply') !== true
          ) {
            let top = 0
            for (const e of v.reply.events) {
              if (isObject(e) && typeof e.sequence === 'number') top = Math.max(top, e.sequence)
            }
            if (top > 0) c.received.push({ upTo: top, at: entry.end })
            if (c.received.length > 32) {
              const old = c.received.splice(0, c.received.length - 31)
              c.received.unshift({ upTo: Math.max(...old.map((r) => r.upTo)), at: old.at(-1)!.at })
            }
          }
        }

        override finish (): void {
          for (const { c, after, by, violation } of this.#unsettled) {
            // A late reply is filed under the lease the journal had reached: the new one or the last.
            if (after > Math.max(highestBy(c, by), highestBy(c.before, by))) this.violate(violation)
          }
        }
      }(info)
  ),

  check(
    {
      id: 'OT-058',
      title: 'with keypadDecisions true, the adapter keeps working when decisions never arrive',
      level: 'required',
      exercise: 'keypadDecisions true and a request the user leaves undecided for 4 s (tour:heartbeat)'
    },
    (info) =>
      new class extends Tally<OrbtileModel> {
        readonly #requests: Millis[] = []
        readonly #waiting = new Map<string, Millis>()
        readonly #decided = new Set<string>()
        observe (entry: JournalEntry, model: OrbtileModel): void {
          if (entry.kind === 'action' && entry.name === 'decide' && typeof entry.data?.requestId === 'string') {
            this.#decided.add(entry.data.requestId)
          }
          if (entry.kind !== 'exchange') return
          this.#requests.push(entry.at)
          if (this.#requests.length > 2000) this.#requests.shift()
          const v = view(entry)
          if (v.adapterId === undefined || model.keypad.get(v.adapterId) !== true) return
          for (const [rid, p] of model.pending.get(v.adapterId) ?? []) {
            if (!this.#waiting.has(rid)) this.#waiting.set(rid, p.since)
          }
        }

        override finish (_model: OrbtileModel, end: Millis): void {
          for (const [rid, since] of this.#waiting) {
            if (this.#decided.has(rid) || end - since < 6000) continue
            this.applied()
            // Still at work in the second half of the wait: an adapter that stalls after a while is caught too.
            const from = since + 2000 + (end - since - 2000) / 2
            if (!this.#requests.some((at) => at >= from && at <= end)) {
              this.violate({
                at: from,
                message: `request ${rid} was never decided, and the adapter went quiet`,
                expected: 'the adapter goes on (heartbeats, polls) with its own UI',
                actual: `no request from ${seconds(from)} to ${seconds(end)}`
              })
            }
          }
        }
      }(info))
]
