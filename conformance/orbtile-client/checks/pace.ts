import { seconds, Tally } from '../../client/check.js'
import type { JournalEntry, JournalExchange, Millis } from '../../client/journal.js'
import { isObject, view, type OrbtileModel } from '../model.js'
import { check, onItsWay, type OrbtileCheckDef } from './wire.js'

/** Clock slack when comparing the adapter's waits with ours: timers and the event loop are not exact. */
const SLACK_MS = 50

/** OT-A20: the bucket a request draws from: its adapter id's, or the shared one. */
function bucketOf (e: JournalExchange): string {
  return view(e).adapterId ?? '(shared)'
}

interface Closed { until: Millis, seq: number, after: number, end: Millis, connection: number }
interface Live { ttl: number, last: Millis, since: Millis, judged: boolean, seq: number }

export const PACE_CHECKS: readonly OrbtileCheckDef[] = [
  check({
    id: 'OT-027',
    title: 'at most 20 requests a second (burst 60), and nothing on a refused bucket before its Retry-After',
    level: 'required',
    exercise: 'a 429 with Retry-After (tour:wire)'
  }, (info) => new class extends Tally<OrbtileModel> {
    /** Until when each bucket is closed to the adapter, and the refusal that closed it. */
    readonly #closed = new Map<string, Closed>()
    #overRate = 0
    observe (entry: JournalEntry, model: OrbtileModel): void {
      if (entry.kind !== 'exchange') return
      const bucket = bucketOf(entry)
      const closed = this.#closed.get(bucket)
      // A request on another connection that came within IN_FLIGHT_MS of the 429 was on its way before the adapter
      // could have read it (OTC-14, as OTC-11 has it for a stale token).
      const inFlight = closed !== undefined &&
        entry.connection !== closed.connection && onItsWay(model, closed.end, entry.at)
      if (closed !== undefined && entry.at >= closed.end && entry.seq !== closed.seq && !inFlight) {
        this.applied()
        const waited = seconds(entry.at - closed.end)
        // Our stamps are late by as long as this process stalled in between (OTC-17).
        const early = entry.at + SLACK_MS < closed.until
        if (early && entry.at + SLACK_MS + model.lag(closed.end, entry.at) < closed.until) {
          this.violate({
            seq: entry.seq,
            at: entry.at,
            message: `${entry.method} ${entry.target} sent ${waited} after a 429 that said Retry-After: ${closed.after}`,
            expected: `no request on this bucket for ${closed.after} s`,
            actual: `a request after ${waited}`
          })
        }
        if (entry.at >= closed.until) this.#closed.delete(bucket)
      }
      if (entry.status !== 429) return
      const after = Number(entry.replyHeaders['retry-after'] ?? 1)
      const wait = Number.isFinite(after) ? after : 1
      this.#closed.set(bucket, {
        until: entry.end + wait * 1000, seq: entry.seq, after: wait, end: entry.end, connection: entry.connection
      })
      if (view(entry).byWire) return
      this.#overRate++
      if (this.#overRate > 1) return
      this.applied()
      this.violate({
        seq: entry.seq,
        at: entry.at,
        message: 'the app refused a request for the rate: more than 60 + 20·t requests in t seconds',
        expected: 'at most 20 requests a second, burst 60 (OT-026)',
        actual: 'rate_limited from the app'
      })
    }

    override finish (): void {
      if (this.#overRate > 1) this.note = `${this.#overRate} requests refused for the rate`
    }
  }(info)),

  check({
    id: 'OT-113',
    title: 'each live session gets an update or heartbeat more often than every ttlSeconds',
    level: 'required',
    exercise: 'a session that lives longer than its ttlSeconds (tour:heartbeat lasts 12 s: use ttlSeconds 10)'
  }, (info) => new class extends Tally<OrbtileModel> {
    /** The live sessions, by adapter id, then session id (no key made per heartbeat). */
    readonly #sessions = new Map<string, Map<string, Live>>()
    #stopped = false
    observe (entry: JournalEntry, model: OrbtileModel): void {
      // What the adapter does once it is told to stop (unregistering) ends no gap: gaps are judged at the stop.
      if (entry.kind === 'action' && entry.name === 'stop' && !this.#stopped) {
        this.#stopped = true
        for (const [adapterId, sessions] of this.#sessions) {
          for (const [sessionId, s] of sessions) this.#gap(adapterId, sessionId, s, entry.at, model)
        }
      }
      if (this.#stopped) return
      if (entry.kind === 'action') {
        if (entry.data?.leasesEnd === true) this.#sessions.clear()
        if (typeof entry.data?.leaseEnds === 'string') this.#sessions.delete(entry.data.leaseEnds)
      }
      if (entry.kind !== 'exchange') return
      const v = view(entry)
      const id = v.adapterId
      if (!v.ok || id === undefined) return
      if (v.route === 'unregister') this.#sessions.delete(id)
      if (v.route === 'session' && isObject(v.body)) this.#contact(id, v.sessionId!, v.body, entry, model)
      if (v.route === 'batch' && isObject(v.body) && Array.isArray(v.body.sessions)) {
        const listed = new Set<string>()
        for (const item of v.body.sessions) {
          if (!isObject(item) || typeof item.id !== 'string') continue
          listed.add(item.id)
          this.#contact(id, item.id, item, entry, model)
        }
        // OT-114: a batch ends the sessions it leaves out.
        const sessions = this.#sessions.get(id)
        for (const sessionId of [...sessions?.keys() ?? []]) if (!listed.has(sessionId)) sessions!.delete(sessionId)
      }
    }

    #contact (
      adapterId: string, sessionId: string, body: Record<string, unknown>, e: JournalExchange, model: OrbtileModel
    ): void {
      let sessions = this.#sessions.get(adapterId)
      if (sessions === undefined) {
        sessions = new Map()
        this.#sessions.set(adapterId, sessions)
      }
      const known = sessions.get(sessionId)
      const ttl = typeof body.ttlSeconds === 'number' ? body.ttlSeconds : known?.ttl ?? 120
      if (known === undefined) {
        sessions.set(sessionId, { ttl, last: e.at, since: e.at, judged: false, seq: e.seq })
        return
      }
      this.#gap(adapterId, sessionId, known, e.at, model, e.seq)
      // Updated in place: a busy adapter heartbeats thousands of times.
      known.ttl = ttl
      known.last = e.at
      known.seq = e.seq
    }

    #gap (adapterId: string, sessionId: string, s: Live, now: Millis, model: OrbtileModel, seq?: number): void {
      if (now - s.since >= s.ttl * 1000 && !s.judged) {
        s.judged = true
        this.applied()
      }
      // The app being away (API off, a restart) is no fault of the adapter's, nor this process stalling (OTC-17).
      const ttl = s.ttl * 1000
      if (now - s.last < ttl || now - s.last < ttl + model.lag(s.last, now) || model.awayDuring(s.last, now)) return
      this.violate({
        // At the stop, the last contact is where the silence began.
        seq: seq ?? s.seq,
        at: s.last,
        message: `session ${adapterId}/${sessionId} went ${seconds(now - s.last)} without an update or heartbeat; its ttlSeconds is ${s.ttl}`,
        expected: `a heartbeat within ${s.ttl} s`,
        actual: `${seconds(now - s.last)} of silence${seq === undefined ? ' (until the scenario ended)' : ''}`
      })
    }

    // Without a stop (the client exited by itself, or a judged run whose adapter simply went away) the silence at the
    // end is no heartbeat missed: sessions of an adapter that is gone go offline, as OT-112 says.
    override finish (): void {}
  }(info)),

  check({
    id: 'OT-134',
    title: 'the adapter never has more than one events poll outstanding',
    level: 'required',
    exercise: 'an events poll (declare a capability: tap, approvals or questions)',
    routes: ['events']
  }, (info) => new class extends Tally<OrbtileModel> {
    readonly #polls = new Map<string, Array<{ at: Millis, end: Millis, seq: number }>>()
    observe (entry: JournalEntry): void {
      if (entry.kind !== 'exchange') return
      const v = view(entry)
      if (v.route !== 'events' || v.adapterId === undefined) return
      this.applied()
      const recent = this.#polls.get(v.adapterId) ?? []
      const overlap = recent.find((p) => p.at < entry.end && entry.at < p.end)
      if (overlap !== undefined || v.code === 'poll_pending') {
        this.violate({
          seq: entry.seq,
          at: entry.at,
          message: `a poll of ${v.adapterId} sent while another was outstanding`,
          expected: 'one events poll at a time: the next only once the last has been answered',
          actual: overlap === undefined ? 'poll_pending' : `polls #${overlap.seq} and #${entry.seq} overlap`
        })
      }
      recent.push({ at: entry.at, end: entry.end, seq: entry.seq })
      if (recent.length > 8) recent.shift()
      this.#polls.set(v.adapterId, recent)
    }
  }(info))
]
