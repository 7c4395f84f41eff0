import { seconds, unsureRetry, type Outcomes } from '../../core/check.js'
import type { JournalEntry, JournalExchange, Millis } from '../../core/journal.js'
import { windowMs, WINDOWS } from '../../core/windows.js'
import { isObject, view, type OrbtileModel } from '../model.js'
import { at, judged, type OrbtileCheck } from './define.js'

/** OT-A20: the bucket a request draws from: its adapter id's, or the shared one. */
function bucketOf (e: JournalExchange): string {
  return view(e).adapterId ?? '(shared)'
}

/** OT-026: the requests a second, and the burst. */
const RATE = windowMs('orbtile-rate')
const BURST = WINDOWS['orbtile-rate'].bounds.burst

/** The most requests 60 + 20·t allows in `spanMs` (OT-026). */
function allowed (spanMs: Millis): number {
  return BURST + RATE * (spanMs / 1000)
}

/** Requests the rate check remembers per bucket: a burst of 60 and three seconds of the rate, with room. */
const KEPT_ARRIVALS = 256

interface Closed { until: Millis, seq: number, after: number, end: Millis, connection: number }

/**
 * OT-027's rate: by how much the requests up to `e` went over 60 + 20·t, at worst, and over how long. A stall of the
 * judge's own makes requests look closer together than they were, so each span is widened by it.
 */
function overRate (
  arrivals: readonly Millis[], e: JournalExchange, model: OrbtileModel
): { over: number, span: Millis } {
  let worst = { over: 0, span: 0 }
  for (let i = arrivals.length - 1; i >= 0; i--) {
    const span = e.at - arrivals[i]!
    const over = arrivals.length - i - allowed(span + model.lag(arrivals[i]!, e.at))
    if (over > worst.over) worst = { over, span }
  }
  return worst
}

/** OT-027's back-off: a request on a refused bucket before its Retry-After (OT-A20). */
function judgeBackoff (closed: Closed, e: JournalExchange, model: OrbtileModel, out: Outcomes): void {
  const early = closed.until - e.at
  if (early <= windowMs('timer-slack')) {
    out.exercised('backoff')
    return
  }
  const waited = seconds(e.at - closed.end)
  const v = at(e, {
    message: `sent ${waited} after a 429 that said Retry-After: ${closed.after}`,
    expected: `no request on this bucket for ${closed.after} s`,
    actual: `a request after ${waited}`
  })
  judged(out, 'backoff', v, unsureRetry(closed, e, early, model))
}

const OT_027: OrbtileCheck = {
  id: 'OT-027',
  title: 'at most 20 requests a second (burst 60), and a back-off after rate_limited',
  level: 'MUST',
  ledger: 'The adapter stays within 20 requests/s (burst 60). After rate_limited it backs off rather than retrying at once.',
  clauses: [
    {
      key: 'rate',
      text: 'never more than 60 + 20·t requests in t seconds',
      level: 'MUST',
      exercise: 'any request'
    },
    {
      key: 'backoff',
      text: 'after a 429, nothing on the refused bucket before its Retry-After',
      level: 'decision',
      basis: 'OT-A20',
      exercise: 'a 429 with Retry-After (tour:wire)'
    }
  ],
  windows: ['orbtile-rate', 'orbtile-retry-after', 'timer-slack', 'measurement-error'],
  reads: {},
  judge: () => {
    /** Until when each bucket is closed to the adapter, and the refusal that closed it. */
    const closed = new Map<string, Closed>()
    const arrivals = new Map<string, Millis[]>()
    let rateRefusals = 0
    /** The first refusal for the rate, until the journal proves one: then that one is the violation. */
    let unsettled: JournalExchange | undefined
    let proved = false
    return {
      observe (entry, model, out) {
        if (entry.kind !== 'exchange') return
        const bucket = bucketOf(entry)
        const times = arrivals.get(bucket) ?? []
        arrivals.set(bucket, times)
        times.push(entry.at)
        if (times.length > KEPT_ARRIVALS) times.splice(0, times.length - KEPT_ARRIVALS)
        const shut = closed.get(bucket)
        if (shut !== undefined && entry.at >= shut.end && entry.seq !== shut.seq) {
          judgeBackoff(shut, entry, model, out)
          if (entry.at >= shut.until) closed.delete(bucket)
        }
        const refused = entry.status === 429 && !view(entry).byWire
        if (!refused) out.exercised('rate')
        if (entry.status !== 429) return
        const after = Number(entry.replyHeaders['retry-after'] ?? 1)
        const wait = Number.isFinite(after) ? after : 1
        closed.set(bucket, {
          until: entry.end + wait * 1000,
          seq: entry.seq,
          after: wait,
          end: entry.end,
          connection: entry.connection
        })
        // The wire's own 429s test the back-off; only the app's say the client went over the rate.
        if (!refused) return
        if (++rateRefusals > 1) out.note(`${rateRefusals} requests refused for the rate`)
        if (proved) return
        const { over, span } = overRate(times, entry, model)
        if (over <= 0) {
          unsettled ??= entry
          return
        }
        proved = true
        out.violation('rate', at(entry, {
          message: `the app refused a request for the rate: more than ${BURST} + ${RATE}·t requests in t seconds`,
          expected: `at most ${RATE} requests a second, burst ${BURST} (OT-026)`,
          actual: `${Math.ceil(allowed(span) + over)} requests in ${seconds(span)}`
        }))
      },
      open (_model, _end, out) {
        if (proved || unsettled === undefined) return
        out.inconclusive('rate', at(unsettled, {
          message: `the app refused a request for the rate; not judged: within the judge's own stalls, the requests kept under ${BURST} + ${RATE}·t`,
          expected: `at most ${RATE} requests a second, burst ${BURST} (OT-026)`,
          actual: 'rate_limited from the app'
        }))
      }
    }
  }
}

interface Live { ttl: number, last: Millis, since: Millis, judged: boolean, seq: number }

/** What judging one entry reads and writes. */
interface Judging { model: OrbtileModel, out: Outcomes }

/** OT-113: each session's gaps between contacts, the last one up to the stop. */
function heartbeatJudge (): ReturnType<OrbtileCheck['judge']> {
  const sessions = new LiveSessions()
  let stopped = false
  return {
    observe (entry: JournalEntry, model: OrbtileModel, out: Outcomes) {
      // What the adapter does once it is told to stop (unregistering) ends no gap: gaps are judged at the stop.
      if (entry.kind === 'action' && entry.name === 'stop' && !stopped) {
        stopped = true
        sessions.stop(entry.at, { model, out })
      }
      if (stopped) return
      if (entry.kind === 'action') {
        if (entry.data?.leasesEnd === true) sessions.endAll()
        if (typeof entry.data?.leaseEnds === 'string') sessions.end(entry.data.leaseEnds)
      }
      if (entry.kind === 'exchange') sessions.exchange(entry, { model, out })
    }
    // Without a stop (the client exited by itself, or a judged run whose adapter went away) the silence at the
    // end is no heartbeat missed: the sessions of an adapter that is gone go offline (OT-112).
  }
}

/** The live sessions as the adapter's accepted writes leave them, each with its last contact. */
class LiveSessions {
  /** By adapter id, then session id (no key made per heartbeat). */
  readonly #sessions = new Map<string, Map<string, Live>>()

  /** The stop: every live session's silence up to it is judged. */
  stop (at: Millis, j: Judging): void {
    for (const [id, live] of this.#sessions) for (const [sid, s] of live) gap(id, sid, s, at, j)
  }

  endAll (): void {
    this.#sessions.clear()
  }

  end (id: string): void {
    this.#sessions.delete(id)
  }

  exchange (e: JournalExchange, j: Judging): void {
    const v = view(e)
    const id = v.adapterId
    if (id === undefined) return
    if (v.ok && v.route === 'unregister') this.#sessions.delete(id)
    // OT-113 asks the adapter to send: an update refused (a 429 of the wire's, say) was sent all the same, and counts
    // for a session it already has. Only an accepted one makes a session, sets its TTL, or ends what a batch leaves.
    if (v.route === 'session' && isObject(v.body)) {
      if (v.ok) this.#contact(id, v.sessionId!, v.body, e, j)
      else this.#refused(id, v.sessionId!, e, j)
    }
    if (v.route === 'batch' && isObject(v.body) && Array.isArray(v.body.sessions)) {
      this.#batch(id, v.ok, v.body.sessions, e, j)
    }
  }

  #batch (id: string, ok: boolean, items: unknown[], e: JournalExchange, j: Judging): void {
    if (!ok) {
      for (const item of items) if (isObject(item) && typeof item.id === 'string') this.#refused(id, item.id, e, j)
      return
    }
    const listed = new Set<string>()
    for (const item of items) {
      if (!isObject(item) || typeof item.id !== 'string') continue
      listed.add(item.id)
      this.#contact(id, item.id, item, e, j)
    }
    // OT-114: a batch ends the sessions it leaves out.
    const live = this.#sessions.get(id)
    for (const sid of [...live?.keys() ?? []]) if (!listed.has(sid)) live!.delete(sid)
  }

  #refused (id: string, sid: string, e: JournalExchange, j: Judging): void {
    if (this.#sessions.get(id)?.has(sid) === true) this.#contact(id, sid, {}, e, j)
  }

  #contact (id: string, sid: string, body: Record<string, unknown>, e: JournalExchange, j: Judging): void {
    let live = this.#sessions.get(id)
    if (live === undefined) {
      live = new Map()
      this.#sessions.set(id, live)
    }
    const known = live.get(sid)
    const ttl = typeof body.ttlSeconds === 'number' ? body.ttlSeconds : known?.ttl ?? windowMs('ttl-default') / 1000
    if (known === undefined) {
      live.set(sid, { ttl, last: e.at, since: e.at, judged: false, seq: e.seq })
      return
    }
    gap(id, sid, known, e.at, j, e.seq)
    // Updated in place: a busy adapter heartbeats thousands of times.
    known.ttl = ttl
    known.last = e.at
    known.seq = e.seq
  }
}

/** A session's silence up to `now` (a contact, numbered `seq`, or the stop) judged against its ttlSeconds. */
function gap (id: string, sid: string, s: Live, now: Millis, { model, out }: Judging, seq?: number): void {
  if (now - s.since >= s.ttl * 1000 && !s.judged) {
    s.judged = true
    out.exercised('gap')
  }
  const silence = now - s.last
  // The app being away (API off, a restart) keeps the adapter from reaching it: no fault of its own.
  if (silence < s.ttl * 1000 || model.awayDuring(s.last, now)) return
  judged(out, 'gap', {
    // At the stop, the last contact is where the silence began.
    seq: seq ?? s.seq,
    at: s.last,
    message: `session ${id}/${sid} went ${seconds(silence)} without an update or heartbeat; its ttlSeconds is ${s.ttl}`,
    expected: `a heartbeat within ${s.ttl} s`,
    actual: `${seconds(silence)} of silence${seq === undefined ? ' (until the scenario ended)' : ''}`
  }, silence < s.ttl * 1000 + model.error(s.last, now) + model.serving.within(s.last, now)
    ? 'late by less than the judge\'s measurement error and the time the app took to answer the adapter (OTC-28)'
    : undefined)
}

const OT_113: OrbtileCheck = {
  id: 'OT-113',
  title: 'each live session gets an update or heartbeat more often than every ttlSeconds',
  level: 'MUST',
  ledger: 'For each live session, the adapter sends an update or heartbeat more often than every ttlSeconds.',
  clauses: [{
    key: 'gap',
    text: 'no live session goes ttlSeconds without an update or heartbeat (OTC-13)',
    level: 'MUST',
    exercise: 'a session that lives longer than its ttlSeconds (tour:heartbeat watches sessions for 15.5 s)'
  }],
  windows: ['ttl-seconds', 'ttl-default', 'measurement-error', 'served'],
  reads: {},
  judge: heartbeatJudge
}

const OT_134: OrbtileCheck = {
  id: 'OT-134',
  title: 'the adapter never has more than one events poll outstanding',
  level: 'MUST',
  ledger: 'The adapter never has more than one events poll outstanding.',
  clauses: [{
    key: 'one',
    text: 'a poll only once the last has been answered',
    level: 'MUST',
    exercise: 'an events poll (an adapter that declares tap, approvals or questions)'
  }],
  windows: ['measurement-error'],
  reads: {},
  judge: () => {
    const polls = new Map<string, Array<{ at: Millis, end: Millis, seq: number, cut: boolean }>>()
    return {
      observe (entry, model, out) {
        if (entry.kind !== 'exchange') return
        const v = view(entry)
        if (v.route !== 'events' || v.adapterId === undefined) return
        const recent = polls.get(v.adapterId) ?? []
        const overlap = recent.find((p) => p.at < entry.end && entry.at < p.end)
        const cut = entry.wire?.some((w) => w.startsWith('connection')) === true
        if (overlap === undefined) out.exercised('one')
        else {
          const [first, second] = overlap.at <= entry.at ? [overlap, { ...entry, cut }] : [{ ...entry, cut }, overlap]
          const by = first.end - second.at
          // A cut poll's end is when the judge saw the connection close, which the adapter may have seen first.
          const unsure = by <= model.error(second.at, first.end) || (first.cut && by <= windowMs('on-its-way'))
          judged(out, 'one', {
            seq: entry.seq,
            at: entry.at,
            message: `a poll of ${v.adapterId} sent while another was outstanding`,
            expected: 'one events poll at a time: the next only once the last has been answered',
            actual: `polls #${first.seq} and #${second.seq} overlap by ${seconds(by)}`
          }, unsure ? 'they overlap by less than the judge\'s measurement error' : undefined)
        }
        recent.push({ at: entry.at, end: entry.end, seq: entry.seq, cut })
        if (recent.length > 8) recent.shift()
        polls.set(v.adapterId, recent)
      }
    }
  }
}

export const PACE_CHECKS: readonly OrbtileCheck[] = [OT_027, OT_113, OT_134]
