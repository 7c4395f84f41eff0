// The decision checks (OT-139, OT-147, OT-148) follow every approval and question event from the poll reply that
// delivered it to the write that applied it and the poll that acknowledged it. What the wire shows of "applied" is
// OTC-01's stand-in: a write that clears the request. It cannot show the agent's own UI, so every finding that rests
// on it is non-strict.
import type { Outcomes } from '../../core/check.js'
import type { JournalExchange, Millis } from '../../core/journal.js'
import { windowMs } from '../../core/windows.js'
import { isObject, updates, view, type OrbtileModel, type PendingRequest } from '../model.js'

type Kind = 'approval' | 'question'

/** A request as the adapter last posted it on a session (its accepted writes), with its content. */
interface Posted { kind: Kind, id: string, content: Record<string, unknown>, since: Millis }

/** A decision event the adapter received, and what it did about it. */
export interface Delivery {
  adapterId: string
  /** The lease it was delivered under: its acknowledgement can only come under the same one. */
  lease: string
  sequence: number
  type: Kind
  requestId: string
  sessionId: string
  /** The reply that delivered it: its entry, and when it was handed to the socket. */
  seq: number
  received: Millis
  /** When the write that posted the request started, if the request was pending when the decision came. */
  posted?: Millis
  /** Why it must not be applied though its request is pending: `expired …`, `invalid picks: …`. */
  stale?: string
  /**
   * The request was no longer pending in the adapter's own UI: it had withdrawn it (cleared or replaced it in a
   * write that started before the decision reached it), or never posted it under this id.
   */
  withdrawn: boolean
  /** The first write after receipt that cleared the request itself (OTC-01: applied). */
  applied?: { at: Millis, seq: number }
  /** For a withdrawn one: a write, before its ack, that cleared another request of the session that had no decision
   *  of its own (the decision applied to whatever was pending). */
  appliedOther?: { at: Millis, seq: number, requestId: string }
  acked?: { at: Millis, seq: number }
  /** Polls of the same lease that started a second or more after receipt without covering it. */
  pollsSince: number
  /** When the first poll a second or more after receipt started: without an ack, a write after it is no application. */
  laterPoll?: Millis
}

/** Why a question's picks cannot be applied (OT-146, OT-148), or undefined when they can. */
export function picksProblem (
  picks: unknown, request: Pick<PendingRequest, 'content'> | undefined
): string | undefined {
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

/** Deliveries kept at most; a long judged run judges and forgets the oldest acknowledged ones. */
const KEPT_DELIVERIES = 1000

/**
 * Follows deliveries for one check: `judge` says what one delivery shows, into `out`; it is called for every
 * delivery at the end (and live), and for an old one when a long run forgets it.
 */
export function deliveriesJudge (
  judge: (d: Delivery, out: Outcomes) => void
): ReturnType<import('./define.js').OrbtileCheck['judge']> {
  const deliveries: Delivery[] = []
  /** What each session has pending as the adapter posted it, by `adapterId session`. */
  const posted = new Map<string, Posted>()
  return {
    observe (entry, model, out) {
      if (entry.kind !== 'exchange') return
      const v = view(entry)
      if (v.adapterId === undefined) return
      if (v.route === 'session' || v.route === 'batch') writes(entry, v.adapterId, deliveries, posted)
      if (v.route !== 'events') return
      acks(entry, v.adapterId, deliveries)
      received(entry, v.adapterId, model, deliveries, posted)
      if (deliveries.length > KEPT_DELIVERIES) {
        // A write or an ack long after an event is past judging anyway: the oldest acknowledged go first.
        const old = new Set(deliveries.filter((d) => d.acked !== undefined).slice(0, KEPT_DELIVERIES / 2))
        for (const d of old) judge(d, out)
        deliveries.splice(0, deliveries.length, ...deliveries.filter((d) => !old.has(d)))
      }
    },
    open (_model, _end, out) {
      for (const d of deliveries) judge(d, out)
    }
  }
}

/** One request field (`approval` or `question`) a write set or cleared on a session. */
interface RequestWrite {
  e: JournalExchange
  adapterId: string
  sessionId: string
  kind: Kind
  /** The id it set; undefined when it cleared the field. */
  sentId: string | undefined
  /** What the session had pending as the adapter posted it, before this write. */
  before: Posted | undefined
}

/** A write's effect on the deliveries: a request withdrawn before its decision came, or cleared after (applied). */
function writes (e: JournalExchange, adapterId: string, deliveries: Delivery[], posted: Map<string, Posted>): void {
  const v = view(e)
  for (const w of updates(v)) {
    for (const kind of KINDS) {
      if (!(kind in w.body)) continue
      const sent = w.body[kind]
      const key = `${adapterId} ${w.sessionId}`
      const write: RequestWrite = {
        e,
        adapterId,
        sessionId: w.sessionId,
        kind,
        sentId: isObject(sent) && typeof sent.id === 'string' ? sent.id : undefined,
        before: posted.get(key)
      }
      for (const d of deliveries) if (touches(write, d)) followWrite(write, d, deliveries)
      if (v.ok) post(write, sent, key, posted)
    }
  }
}

const KINDS = ['approval', 'question'] as const

/** Whether a write of a request field can withdraw or apply a delivery: its session and kind, another request. */
function touches (w: RequestWrite, d: Delivery): boolean {
  return d.adapterId === w.adapterId && d.sessionId === w.sessionId && d.type === w.kind && w.sentId !== d.requestId
}

function followWrite (w: RequestWrite, d: Delivery, deliveries: readonly Delivery[]): void {
  const { e, before } = w
  // Withdrawn: cleared by a write sent after the request was posted and before the decision reached it.
  if (e.at < d.received) d.withdrawn ||= d.posted !== undefined && e.at > d.posted
  else d.applied ??= { at: e.at, seq: e.seq }
  // A decision for a request the adapter had withdrawn, applied to the one pending now (OT-147, OT-148).
  const other = before !== undefined && before.kind === w.kind && before.id !== d.requestId && before.id !== w.sentId
  if (other && d.withdrawn && e.at >= d.received && d.acked === undefined &&
    !decided(deliveries, w.adapterId, before.id, e.at)) {
    d.appliedOther ??= { at: e.at, seq: e.seq, requestId: before.id }
  }
}

/** What an accepted write leaves pending on its session: the request it posted, or none once it cleared it. */
function post (w: RequestWrite, sent: unknown, key: string, posted: Map<string, Posted>): void {
  if (w.sentId !== undefined && w.before?.id !== w.sentId) {
    posted.set(key, { kind: w.kind, id: w.sentId, content: sent as Record<string, unknown>, since: w.e.at })
  } else if (w.before?.kind === w.kind) posted.delete(key)
}

/** Whether a decision for this request had reached the adapter by `at`. */
function decided (deliveries: readonly Delivery[], adapterId: string, requestId: string, at: Millis): boolean {
  return deliveries.some((d) => d.adapterId === adapterId && d.requestId === requestId && d.received <= at)
}

/** A poll's `ack` acknowledges every delivery of its lease up to it (OT-136: the ack is cumulative). */
function acks (e: JournalExchange, adapterId: string, deliveries: Delivery[]): void {
  const body = view(e).body
  const ack = isObject(body) && typeof body.ack === 'number' ? body.ack : 0
  const lease = e.headers['x-orbtile-adapter-token']
  for (const d of deliveries) {
    if (d.adapterId !== adapterId || d.lease !== lease || d.acked !== undefined || e.at < d.received) continue
    if (ack >= d.sequence) d.acked = { at: e.at, seq: e.seq }
    else if (e.at >= d.received + windowMs('stale-ack')) d.pollsSince++
    if (d.acked === undefined && d.pollsSince === 1) d.laterPoll ??= e.at
  }
}

/** The decision events a poll's reply delivered (a reply cut before it went delivered nothing). */
function received (
  e: JournalExchange,
  adapterId: string,
  model: OrbtileModel,
  deliveries: Delivery[],
  posted: ReadonlyMap<string, Posted>
): void {
  const v = view(e)
  if (!v.ok || e.wire?.includes('connection cut before the reply') === true) return
  if (!isObject(v.reply) || !Array.isArray(v.reply.events)) return
  const now = model.epochAt(e.end) / 1000
  for (const event of v.reply.events) {
    if (!isDecisionEvent(event)) continue
    const request = posted.get(`${adapterId} ${String(event.sessionId)}`)
    const pending = request !== undefined && request.kind === event.type && request.id === event.requestId
    const stale = staleness(event, pending ? request : undefined, now)
    deliveries.push({
      adapterId,
      lease: e.headers['x-orbtile-adapter-token'] ?? '',
      sequence: event.sequence,
      type: event.type,
      requestId: event.requestId,
      sessionId: String(event.sessionId),
      seq: e.seq,
      received: e.end,
      ...(stale === undefined ? {} : { stale }),
      ...(pending ? { posted: request.since } : {}),
      withdrawn: !pending,
      pollsSince: 0
    })
  }
}

/** An approval or question event, with the fields a delivery is followed by. */
interface DecisionEvent extends Record<string, unknown> {
  type: Kind
  sequence: number
  requestId: string
}

function isDecisionEvent (event: unknown): event is DecisionEvent {
  return isObject(event) && (event.type === 'approval' || event.type === 'question') &&
    typeof event.sequence === 'number' && typeof event.requestId === 'string'
}

/**
 * Why a decision must not be applied though its request is pending, received at `now` (epoch seconds): it expired,
 * or a question's picks do not fit the request (`request`: the one pending, if it is).
 */
function staleness (event: DecisionEvent, request: Posted | undefined, now: number): string | undefined {
  if (typeof event.expiresAt === 'number' && now >= event.expiresAt) {
    return `expired (expiresAt ${String(event.expiresAt)}, received at ${now.toFixed(1)})`
  }
  const picks = event.type === 'question' && request !== undefined ? picksProblem(event.picks, request) : undefined
  return picks === undefined ? undefined : `invalid picks: ${picks}`
}
