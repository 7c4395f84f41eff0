// The checks of a bot that fetches its events: its cursor (ORB-048), its answers to typed commands (ORB-071), and
// its waits after a 429 (ORB-100).
import { seconds, unsureRetry, type Outcomes } from '../core/check.js'
import type { JournalExchange, Millis } from '../core/journal.js'
import { windowMs } from '../core/windows.js'
import { at, judged, onItsWay, type OrbCheck } from './bot-check.js'
import { isObject, view, type OrbModel } from './model.js'

/** ORB-048's `next` and `past` on one fetch: the cursor it was given, by the process that was given it. */
function judgeCursor (e: JournalExchange, model: OrbModel, out: Outcomes): void {
  const after = Number(view(e).query.get('after') ?? 0)
  // The cursors given before this fetch: its own reply's is not one of them, however soon it came.
  const given = model.nexts.filter((n) => n.at <= e.at && n.seq !== e.seq)
  const most = Math.max(0, ...given.map((n) => n.next))
  if (after > most) {
    out.violation('past', {
      ...at(e),
      message: `after=${after} is past every next the bot was given`,
      expected: `after <= ${most}`,
      actual: `after=${after}`
    })
    return
  }
  out.exercised('past')
  // OBC-11: the last next the running process surely got, and those of replies cut since, which it may have got.
  const start = model.starts.at(-1) ?? 0
  const sure = given.filter((n) => n.cut !== true && n.at >= start)
  const last = sure.at(-1)
  // A process that has had no reply yet starts from a cursor it saved: any next given before is right.
  if (last === undefined) return
  const maybe = given.filter((n) => n.cut === true && n.at > last.at).map((n) => n.next)
  if (after === last.next || maybe.includes(after)) {
    out.exercised('next')
    return
  }
  out.violation('next', {
    ...at(e),
    message: `after=${after}, where the last reply gave next ${last.next}`,
    expected: `after=${last.next} (the next given)`,
    actual: `after=${after}`
  })
}

/** A typed command answered (a respond that was not refused for the rate), by which process, on which connection. */
interface Answer { status: number, at: Millis, end: Millis, process: number, connection: number }

/** What shows that a bot read a reply: its connection used again, or the event delivered again after it. */
interface Seen {
  /** When each connection last carried a request. */
  used: Map<number, Millis>
  /** When each event was last delivered again (the end of the fetch that carried it). */
  again: Map<string, Millis>
}

/**
 * Why a second answer by the same process may be no second action, if it may not: a bot that sent its answer
 * again on another connection, with nothing to show it had read the first one's reply (its connection unused since,
 * the event not delivered again in between), may have given up on that reply and retried the request.
 */
function retried (e: JournalExchange, first: Answer, seen: Seen, model: OrbModel): string | undefined {
  if (e.connection === first.connection) return undefined
  if ((seen.used.get(first.connection) ?? -Infinity) > first.at) return undefined
  const again = seen.again.get(view(e).event ?? '')
  if (again !== undefined && !onItsWay(model, first.end, again)) return undefined
  return `sent again ${seconds(e.at - first.at)} after the first, on another connection: ` +
    'the first\'s reply may never have been read (a retry)'
}

/**
 * A second answer to an event a process of the bot had answered: certain, unless that process was killed so soon
 * after its answer came back that it may not have had time to note it, or the second may be a retry of the first.
 */
function judgeTwice (e: JournalExchange, first: Answer, seen: Seen, model: OrbModel, out: Outcomes): void {
  const process = model.processAt(e.at)
  const clause = first.process === process ? 'twice' : 'restart-twice'
  const killed = model.starts[first.process]
  const soon = clause === 'restart-twice' && killed !== undefined &&
    killed - first.end < windowMs('on-its-way') + model.inFlight(first.end, killed)
  const unsure = soon
    ? `the process that answered first was killed ${seconds(killed - first.end)} after its answer came back`
    : clause === 'twice' ? retried(e, first, seen, model) : undefined
  judged(out, clause, {
    ...at(e),
    message: `event ${view(e).event ?? ''} was answered a second time${clause === 'twice' ? '' : ', by a later process of the bot'}`,
    expected: 'each event acted on once (handled idempotently)',
    actual: `a second respond (${e.status})`
  }, unsure)
}

/** A respond to `event` (not refused for the rate): a second answer is judged, and each is kept. */
function answer (
  e: JournalExchange, event: string, answers: Map<string, Answer[]>, seen: Seen, model: OrbModel, out: Outcomes
): void {
  const list = answers.get(event) ?? []
  const first = list.find((a) => a.status >= 200 && a.status < 300)
  if (first !== undefined) judgeTwice(e, first, seen, model, out)
  const { status, at, end, connection } = e
  list.push({ status, at, end, connection, process: model.processAt(e.at) })
  answers.set(event, list)
}

/** An events reply the wire made carry events again: when each of them was delivered again. */
function deliveredAgain (e: JournalExchange, seen: Seen): void {
  const reply = view(e).reply
  const events = isObject(reply) && Array.isArray(reply.events) ? reply.events : []
  for (const ev of events) if (isObject(ev) && typeof ev.id === 'string') seen.again.set(ev.id, e.end)
}

/** OBC-11: the typed commands an earlier process received that this fetch's cursor has gone past. */
function fetchedPast (e: JournalExchange, model: OrbModel, passed: Set<string>): void {
  const after = Number(view(e).query.get('after') ?? 0)
  const start = model.starts.at(-1) ?? 0
  for (const r of model.received.values()) {
    if (r.type === 'application_command' && r.at < start && after >= (r.cursor ?? Infinity)) passed.add(r.id)
  }
}

const ORB_048: OrbCheck = {
  id: 'ORB-048',
  title: 'the cursor: each fetch uses the next it was given; nothing is skipped or acted on twice across a restart',
  level: 'MUST',
  ledger: 'Cursor handling for a bot: the next request uses after = the next it was given; events are handled idempotently, because a repeat is possible; after is persisted only after the events are handled.',
  clauses: [
    {
      key: 'next',
      text: 'each fetch uses the next of the last reply',
      level: 'MUST',
      exercise: 'events fetched with GET /events'
    },
    {
      key: 'past',
      text: 'after never past every next given',
      level: 'MUST',
      exercise: 'events fetched with GET /events'
    },
    { key: 'twice', text: 'an event delivered again is not acted on again by the process that acted on it', level: 'MUST', exercise: 'an event delivered twice (tour:repeat)' },
    { key: 'restart-twice', text: 'an event a process acted on is not acted on again by a later process', level: 'MUST', exercise: 'a typed command delivered again after a restart (tour:repeat)' },
    { key: 'skip', text: 'a typed command a later process fetched past was answered (the cursor saved only after handling)', level: 'MUST', exercise: 'a kill 0.7 s after a typed command was fetched, and a restart (tour:restart)' }
  ],
  windows: ['on-its-way', 'measurement-error'],
  reads: {},
  judge: () => {
    const answers = new Map<string, Answer[]>()
    /** Typed commands a later process's cursor has gone past (OBC-11). */
    const passed = new Set<string>()
    const seen: Seen = { used: new Map(), again: new Map() }
    return {
      observe (entry, model, out) {
        if (entry.kind !== 'exchange') return
        const v = view(entry)
        if (v.route === 'respond' && v.event !== undefined && entry.status !== 429) {
          answer(entry, v.event, answers, seen, model, out)
        }
        seen.used.set(entry.connection, entry.at)
        if (v.route !== 'events') return
        if (entry.wire?.some((w) => w.includes('delivered again')) === true) deliveredAgain(entry, seen)
        judgeCursor(entry, model, out)
        fetchedPast(entry, model, passed)
      },
      open (model, _end, out) {
        for (const r of model.received.values()) {
          if (!passed.has(r.id)) continue
          if (answers.has(r.id)) {
            out.exercised('skip')
            continue
          }
          out.violation('skip', { seq: r.seq, at: r.at, message: `the typed command ${r.id} was received, never answered, and fetched past by a later process`, expected: 'every event handled; the cursor saved only after handling', actual: 'no respond for it' })
        }
        // The situation arose only for an event delivered again after the bot had answered it.
        const answeredBy = (id: string, at: Millis): boolean =>
          (answers.get(id) ?? []).some((a) => a.status < 300 && a.end <= at)
        const again = [...seen.again].some(([id, at]) => answeredBy(id, at))
        if (again) out.exercised('twice')
        const start = model.starts.at(-1) ?? 0
        if ([...answers.values()].some((l) => l.some((a) => a.at < start))) out.exercised('restart-twice')
      }
    }
  }
}

/** A 410 met by a respond: its command's channel, and whether a message was posted there after. */
interface Gone { event: string, channel: string | null, at: Millis, seq: number, posted: boolean }

/** ORB-071's answer time and the unanswered commands, at the end. */
function unanswered (model: OrbModel, answered: ReadonlySet<string>, end: Millis, out: Outcomes): void {
  const limit = windowMs('answer')
  for (const r of model.received.values()) {
    // A webhook delivery (no cursor) is answered inline: ORB-097's.
    if (r.type !== 'application_command' || r.cursor === undefined || answered.has(r.id)) continue
    // Judged only when the process that received it ran on for the whole wait, and the scenario did.
    const next = model.starts.find((s) => s > r.at) ?? end
    if (Math.min(next, end) - r.at < limit) {
      out.note(`not judged: ${r.id}, received at ${seconds(r.at)}, had under ${seconds(limit)} before ${next < end ? 'a restart' : 'the end'}`)
      continue
    }
    out.violation('unanswered', { seq: r.seq, at: r.at, message: `the typed command ${r.id} was never answered`, expected: 'POST /interactions/{event}/respond within about 6 s', actual: 'no answer' })
  }
}

const ORB_071: OrbCheck = {
  id: 'ORB-071',
  title: 'a fetched typed command is answered within about 6 s; after a 410 the answer is posted instead',
  level: 'MUST',
  ledger: 'A bot that fetches its events answers within about 6 s. On 410 it posts a normal message instead (POST /messages).',
  clauses: [
    {
      key: 'answer',
      text: 'a respond within 6 s of the bot having the command',
      level: 'decision',
      basis: 'ORB-A14',
      why: 'the spec says about 6 s; exactly 6 s is orbtest\'s',
      exercise: 'a typed command fetched with GET /events (tour:basic)'
    },
    {
      key: 'unanswered',
      text: 'every typed command fetched is answered',
      level: 'MUST',
      exercise: 'a typed command fetched with GET /events (tour:basic)'
    },
    {
      key: 'fallback',
      text: 'after a 410, the answer is posted in the command\'s channel (OBC-05)',
      level: 'decision',
      basis: 'fallback',
      why: 'the spec names no time for the post; 5 s is orbtest\'s',
      exercise: 'a typed command delivered late, so that its respond meets 410 (tour:late)'
    }
  ],
  windows: ['answer', 'fallback', 'measurement-error', 'served'],
  reads: {},
  judge: () => {
    const answered = new Set<string>()
    const gone: Gone[] = []
    return {
      observe (entry, model, out) {
        if (entry.kind !== 'exchange') return
        const v = view(entry)
        if (v.route === 'messages-post' && isObject(v.body)) {
          // OBC-05: the post in the command's channel within the fallback window of the 410.
          const soon = (g: Gone): boolean => entry.at - g.at <= windowMs('fallback') + model.error(g.at, entry.at)
          for (const g of gone) {
            if (!g.posted && v.body.channel === g.channel && entry.at >= g.at && soon(g)) g.posted = true
          }
        }
        if (v.route !== 'respond' || v.event === undefined || answered.has(v.event)) return
        answered.add(v.event)
        const r = model.received.get(v.event)
        if (entry.status === 410) {
          gone.push({ event: v.event, channel: r?.channel ?? null, at: entry.end, seq: entry.seq, posted: false })
        }
        // Timed from when the bot had the command: a delivery the wire made late is no fault of the bot's. A process
        // started since had it later than that (its own fetch), by a time the journal does not keep: not judged.
        if (r !== undefined && model.starts.some((s) => s > r.at && s <= entry.at)) {
          out.note(`not judged: ${v.event} was answered by a later process of the bot than the one that first had it`)
          return
        }
        const late = r === undefined ? 0 : entry.at - r.at
        if (late <= windowMs('answer')) {
          out.exercised('answer')
          return
        }
        judged(out, 'answer', { ...at(entry), message: `event ${v.event} answered ${seconds(late)} after the bot received it`, expected: 'an answer within about 6 s', actual: `${entry.status}` },
          late <= windowMs('answer') + model.error(r!.at, entry.at) + model.serving.within(r!.at, entry.at)
            ? 'late by less than the judge\'s measurement error and the time Orb took to answer the bot (OBC-16)'
            : undefined)
      },
      open (model, end, out) {
        for (const g of gone) {
          const limit = windowMs('fallback')
          if (g.posted) out.exercised('fallback')
          else if (end - g.at < limit) out.note(`not judged: the 410 at ${seconds(g.at)} came under ${seconds(limit)} before the end (${seconds(end)})`)
          else out.violation('fallback', { seq: g.seq, at: g.at, message: `the answer to ${g.event} met 410, and no message was posted instead`, expected: 'POST /messages with the answer after a 410', actual: `nothing in ${seconds(limit)}` })
        }
        if (answered.size > 0) out.exercised('unanswered')
        unanswered(model, answered, end, out)
      }
    }
  }
}

interface Closed { until: Millis, after: number, end: Millis, seq: number, connection: number }

const ORB_100: OrbCheck = {
  id: 'ORB-100',
  title: 'after a 429 the bot waits at least Retry-After before that call again',
  level: 'MUST',
  ledger: 'After a 429, the bot waits at least Retry-After seconds before retrying that call. It does not retry in a tight loop.',
  clauses: [{ key: 'wait', text: 'the same call (method, path and body) not before Retry-After has passed', level: 'MUST', exercise: 'a 429 with Retry-After (tour:throttle)' }],
  windows: ['orb-retry-after', 'timer-slack', 'measurement-error'],
  reads: {},
  judge: () => {
    const closed = new Map<string, Closed>()
    return {
      observe (entry, model, out) {
        if (entry.kind !== 'exchange') return
        // "That call": the same request again. Another on the same route (a new post) is not a retry of it.
        const call = `${entry.method} ${view(entry).path}`
        const key = `${call} ${entry.body ?? ''}`
        const shut = closed.get(key)
        if (shut !== undefined && entry.seq !== shut.seq && entry.at >= shut.end) {
          const early = shut.until - entry.at
          const unsure = unsureRetry(shut, entry, early, model)
          // The call stays closed after a retry that is not settled: a later one on the 429's connection may be.
          if (early <= windowMs('timer-slack') || unsure === undefined) closed.delete(key)
          if (early <= windowMs('timer-slack')) out.exercised('wait')
          else judged(out, 'wait', { ...at(entry), message: `${call} again ${seconds(entry.at - shut.end)} after a 429 that said Retry-After: ${shut.after}`, expected: `no ${call} for ${shut.after} s`, actual: `after ${seconds(entry.at - shut.end)}` }, unsure)
        }
        if (entry.status !== 429) return
        const after = Number(entry.replyHeaders['retry-after'] ?? 1)
        const wait = Number.isFinite(after) ? after : 1
        closed.set(key, {
          until: entry.end + wait * 1000,
          after: wait,
          end: entry.end,
          seq: entry.seq,
          connection: entry.connection
        })
      }
    }
  }
}

export const EVENT_CHECKS: readonly OrbCheck[] = [ORB_048, ORB_071, ORB_100]
