import { seconds, type Outcomes } from '../core/check.js'
import type { JournalAction, JournalEntry, JournalExchange, Millis } from '../core/journal.js'
import { windowMs } from '../core/windows.js'
import { at, carries, isAction, judged, type OrbCheck } from './bot-check.js'
import { isWrite, view, type OrbModel } from './model.js'

/** OBC-04: how long after a delivery the suite listens for what it made the bot do (the window `quiet`). */
export const QUIET_MS = windowMs('quiet')

/** OBC-13: how long after a genuine mention's delivery a write may still be the reply it asked for. */
export const OWED_MS = windowMs('owed')

/** The marks a delivery's event carries that a bot can only have from it (its id, its message's id, its text). */
function marksOf (a: JournalAction): string[] {
  return Array.isArray(a.data?.marks) ? a.data.marks.map(String) : []
}

/** A delivery the bot must not act on, and what the journal showed of the writes that carry its marks. */
interface Watched {
  a: JournalAction
  what: string
  marks: string[]
  /** Whether the bot had the same event before in a genuine delivery (this one is a retry or a replay). */
  again: boolean
  /** Writes carrying the marks before this delivery was sent: the bot's handling of the earlier one. */
  before: number
  /** Writes carrying the marks since. */
  after: number
}

/**
 * What a write carrying a watched delivery's marks proves, the `after`-th since it was sent. A forgery of a new event
 * is acted on at its first; an event had before, once the writes since are as many as its first handling made; when
 * that handling had made none yet (a slow bot), a second write may still be its, and is not settled.
 */
function proof (w: Watched): 'act' | 'unsure' | undefined {
  if (!w.again) return w.after === 1 ? 'act' : undefined
  if (w.before > 0) return w.after === w.before ? 'act' : undefined
  return w.after === 2 ? 'unsure' : undefined
}

/** A genuine mention the bot has answered is owed its write until OWED_MS after the answer. */
function answered (owed: Array<{ event: string, until: Millis }>, a: JournalAction): void {
  const event = (a.data?.event as { id?: unknown } | undefined)?.id
  for (const o of owed) if (o.event === event) o.until = Math.max(o.until, a.at + OWED_MS)
}

/**
 * Follows deliveries for ORB-095 and ORB-096. A write that carries the marks of a forged event (its id, its
 * message's id, its text) is certain proof the bot acted on it. For an event the bot had before (a retry, a replay),
 * it is proof once the writes carrying its marks since it was sent again are as many as the bot made for it before:
 * a second handling. Without marks, a write is put down to a delivery by time (OBC-04): any write within QUIET_MS of
 * it, before the next, that no genuine mention is owed (OBC-13).
 */
function listener (
  listens: (a: JournalAction) => string | undefined,
  onResult?: (a: JournalAction, model: OrbModel, out: Outcomes) => void
): ReturnType<OrbCheck['judge']> {
  let listening: { a: JournalAction, what: string } | undefined
  const watched: Watched[] = []
  /** Each delivered event's marks, whether a genuine delivery carried it, and the writes so far that carry them. */
  const marked = new Map<string, { marks: string[], genuine: boolean, writes: number }>()
  /**
   * Each genuine mention still owed its reply, oldest first: when it was sent, and until when it is owed (OWED_MS after
   * it was sent, or after the bot answered it, if later: a bot the machine slowed answers late and writes later).
   */
  const owed: Array<{ event: string, sent: Millis, until: Millis }> = []
  const timed = (e: JournalExchange, out: Outcomes): void => {
    const due = owed.findIndex((o) => e.at >= o.sent && e.at <= o.until)
    if (due !== -1) {
      owed.splice(0, due + 1)
      return
    }
    const l = listening
    if (l === undefined || e.at < l.a.at || e.at > l.a.at + QUIET_MS) return
    listening = undefined
    out.violation('timed', { ...at(e), message: `${e.method} ${e.target} ${seconds(e.at - l.a.at)} after ${l.what}`, expected: 'no action', actual: `${e.method} ${view(e).path}` })
  }
  const write = (e: JournalExchange, out: Outcomes): void => {
    for (const m of marked.values()) if (carries(e, m.marks) !== undefined) m.writes++
    let proved = false
    for (const w of watched) {
      const mark = carries(e, w.marks)
      if (mark === undefined) continue
      w.after++
      const found = proof(w)
      if (found === undefined) continue
      proved = true
      const v = { ...at(e), message: `${e.method} ${e.target} ${seconds(e.at - w.a.at)} after ${w.what}, carrying its ${mark}${w.again ? ', a second handling of the event' : ''}`, expected: 'no action', actual: `${e.method} ${view(e).path}` }
      judged(out, 'act', v, found === 'unsure' ? 'the first handling had made no call before it came again: two calls may both be that one' : undefined)
      if (listening?.a === w.a) listening = undefined
    }
    if (!proved) timed(e, out)
  }
  const sent = (a: JournalAction): void => {
    listening = undefined
    const d = a.data
    const id = String(d?.eventId ?? '')
    if (d?.genuine === true && d.duplicate !== true && d.type === 'message.mention') {
      owed.push({ event: id, sent: a.at, until: a.at + OWED_MS })
    }
    const known = marked.get(id) ?? { marks: marksOf(a), genuine: false, writes: 0 }
    marked.set(id, known)
    const what = listens(a)
    if (what !== undefined) {
      listening = { a, what }
      watched.push({ a, what, marks: known.marks, again: known.genuine, before: known.writes, after: 0 })
    }
    if (d?.genuine === true) known.genuine = true
  }
  return {
    observe (entry: JournalEntry, model: OrbModel, out: Outcomes) {
      if (isAction(entry, 'delivery-sent')) sent(entry)
      if (isAction(entry, 'delivery')) {
        answered(owed, entry)
        onResult?.(entry, model, out)
      }
      if (entry.kind === 'exchange' && isWrite(entry)) write(entry, out)
    },
    open (_model, _end, out) {
      for (const w of watched) if (w.after < (!w.again ? 1 : w.before > 0 ? w.before : 2)) out.exercised('act')
    }
  }
}

const TIMED = {
  key: 'timed',
  text: 'no write within 1 s of such a delivery, before the next, that a genuine mention is not owed (OBC-04, OBC-13)',
  level: 'decision',
  basis: 'OBC-04',
  why: 'a write that carries nothing of the delivery is put down to it by time alone'
} as const

const ORB_095: OrbCheck = {
  id: 'ORB-095',
  title: 'a webhook bot verifies before it acts: a forged delivery gets 401 and causes no call',
  level: 'MUST',
  ledger: 'The app verifies before it acts: it recomputes v1 over the raw body bytes as received, not a re-serialisation; it compares in constant time; with a missing header, a malformed header, or a mismatch, it takes no action (reply: ORB-A12).',
  clauses: [
    { key: 'act', text: 'no call that carries what only a forged delivery held (its event id, its message id, its text)', level: 'MUST', exercise: 'forged webhook deliveries (tour:attack, --webhook)' },
    { ...TIMED, exercise: 'forged webhook deliveries (tour:attack, --webhook)' },
    {
      key: 'refuse',
      text: 'a forged delivery is answered 401',
      level: 'decision',
      basis: 'ORB-A12',
      why: 'the spec says to take no action; the status of the refusal is orbtest\'s decision',
      exercise: 'forged webhook deliveries (tour:attack, --webhook)'
    }
  ],
  windows: ['quiet', 'owed', 'delivery-timeout'],
  reads: {},
  judge: () => listener(
    (a) => a.data?.genuine === false ? `the ${String(a.data.kind)} delivery` : undefined,
    (a, model, out) => {
      if (a.data?.genuine !== false) return
      if (a.data.status === 401) {
        out.exercised('refuse')
        return
      }
      // No reply within the suite's own wait (delivery-timeout) is no reply other than 401: the refusal may come later.
      judged(out, 'refuse', { ...at(a), message: `a ${String(a.data.kind)} delivery was answered ${String(a.data.status ?? a.data.error)}`, expected: '401 (ORB-A12)', actual: String(a.data.status ?? a.data.error) },
        unseen(a, model))
    }
  )
}

const ORB_096: OrbCheck = {
  id: 'ORB-096',
  title: 'an event delivered twice (a retry: the same X-Orb-Event, a new delivery) is acted on once',
  level: 'MUST',
  ledger: 'An event can arrive twice (two attempts), so the app acts at most once per event id (X-Orb-Event / Event.id).',
  clauses: [
    {
      key: 'act',
      text: 'no second call that carries what the event held',
      level: 'MUST',
      exercise: 'a genuine delivery sent again (tour:attack, --webhook)'
    },
    { ...TIMED, exercise: 'a genuine delivery sent again (tour:attack, --webhook)' }
  ],
  windows: ['quiet', 'owed'],
  reads: {},
  judge: () => listener((a) => a.data?.duplicate === true ? 'the second delivery of the same event' : undefined)
}

const ORB_097: OrbCheck = {
  id: 'ORB-097',
  title: 'a typed command delivered by webhook is answered within 4 s with a 2xx {"notice"}; other events without one',
  level: 'MUST',
  ledger: 'For a typed command (application_command), the app answers within four seconds with a 2xx and JSON {"notice": "..."}. notice is only for application_command.',
  clauses: [
    { key: 'notice', text: 'a typed command answered 2xx with {"notice"} within 4 s', level: 'MUST', exercise: 'a genuine application_command delivery (tour:deliveries, --webhook)' },
    {
      key: 'only',
      text: 'any other genuine delivery answered 2xx without notice',
      level: 'MUST',
      exercise: 'genuine webhook deliveries (tour:deliveries, --webhook)'
    }
  ],
  windows: ['notice', 'delivery-timeout', 'measurement-error', 'served'],
  reads: {},
  judge: () => ({
    observe (entry, model, out) {
      if (!isAction(entry, 'delivery') || entry.data?.genuine !== true || entry.data.duplicate === true) return
      const status = typeof entry.data.status === 'number' ? entry.data.status : undefined
      const command = entry.data.type === 'application_command'
      const notice = entry.data.notice === true
      const ms = Number(entry.data.ms ?? 0)
      const twoHundred = status !== undefined && status >= 200 && status < 300
      const clause = command ? 'notice' : 'only'
      if (twoHundred && (command ? notice && ms <= windowMs('notice') : !notice)) {
        out.exercised(clause)
        return
      }
      judged(out, clause, {
        ...at(entry),
        message: `a genuine ${String(entry.data.type)} delivery answered ${status ?? String(entry.data.error)} in ${ms} ms${notice ? ' with a notice' : ''}`,
        expected: command ? 'a 2xx with {"notice": "..."} within 4 s' : 'a 2xx without notice',
        actual: `${status ?? 'no reply'}${notice ? ', notice' : ', no notice'}, ${ms} ms`
      }, unsureNotice(entry, command, model))
    }
  })
}

/**
 * Why the suite saw no reply to a delivery through no fault of the bot's, if it did not (OBC-17): its own wait ran
 * out (the spec may allow longer), the run ended, or the harness stopped the bot while the delivery was in flight.
 */
function unseen (a: JournalAction, model: OrbModel): string | undefined {
  if (typeof a.data?.status === 'number') return undefined
  const error = String(a.data?.error ?? '')
  if (error.startsWith('no complete reply within')) {
    return `no reply within the suite's wait of ${seconds(windowMs('delivery-timeout'))}`
  }
  if (error === 'the run ended before a reply came') return 'the run ended before a reply came'
  const sentAt = Number(a.data?.sentAt ?? a.at)
  const stopped = model.stops.some((t) => t > sentAt && t <= a.at)
  return stopped ? 'the bot was stopped while the delivery was in flight' : undefined
}

/** How late a delivery's reply may be through no fault of the bot's: the judge's error over its trip, Orb's time. */
function excusedTrip (a: JournalAction, ms: number, model: OrbModel): number {
  const sentAt = Number(a.data?.sentAt ?? a.at - ms)
  const written = typeof a.data?.writtenAt === 'number' ? a.data.writtenAt : undefined
  return model.roundTripError(sentAt, written, a.at) + model.serving.within(sentAt, a.at)
}

/**
 * Why a delivery's reply may not break ORB-097, if it may not: a typed command's reply not seen, or late, by no more
 * than the judge's error and Orb's own time answering the bot (OBC-16); another event's reply not seen (OBC-17).
 */
function unsureNotice (a: JournalAction, command: boolean, model: OrbModel): string | undefined {
  const missed = unseen(a, model)
  // Refused as the bot was being stopped (a connect a busy judge made late): the bot never had it.
  if (!command || (missed !== undefined && String(a.data?.error ?? '').includes('ECONNREFUSED'))) return missed
  const ms = Number(a.data?.ms ?? 0)
  const status = a.data?.status
  const slow = typeof status === 'number' && status >= 200 && status < 300 && a.data?.notice === true
  if ((missed === undefined && !slow) || ms > windowMs('notice') + excusedTrip(a, ms, model)) return undefined
  return missed ?? 'late by less than the judge\'s measurement error and the time Orb took to answer the bot (OBC-16)'
}

export const WEBHOOK_CHECKS: readonly OrbCheck[] = [ORB_095, ORB_096, ORB_097]
