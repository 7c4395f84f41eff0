import { seconds, type Clause, type Outcomes } from '../../core/check.js'
import type { Millis } from '../../core/journal.js'
import { windowMs } from '../../core/windows.js'
import { isObject, view, type ExchangeView, type OrbtileModel } from '../model.js'
import { deliveriesJudge, type Delivery } from './deliveries.js'
import { judged, type OrbtileCheck } from './define.js'

/** Why a finding that rests on OTC-01 is not a failure, in the words every such report gives. */
const UNSEEN_UI = 'the wire cannot show the agent\'s own UI: a write that clears the request stands in for applying it, and a correct adapter may write the same for reasons of its own'

const applied = (what: string): Clause['text'] => `${what} is not applied (OTC-01: no write clears the request before the event is acknowledged)`

/**
 * A stale decision applied, by the stand-in: the write that cleared its request before its ack or, with no ack,
 * before the first poll a second after it (an adapter that discarded it and never acknowledged it is ACK's to judge,
 * and may clear the request later for reasons of its own).
 */
function appliedStale (d: Delivery, clause: string, out: Outcomes): boolean {
  const write = d.withdrawn ? d.appliedOther : d.applied
  const by = d.acked?.at ?? d.laterPoll ?? Infinity
  if (write === undefined || write.at > by) return false
  out.violation(clause, {
    seq: write.seq,
    at: write.at,
    message: d.withdrawn
      ? `the ${d.type} event #${d.sequence} was for ${d.requestId}, which the adapter had withdrawn; a write then cleared ${d.appliedOther!.requestId}, pending on the same session with no decision of its own`
      : `the ${d.type} event #${d.sequence} for ${d.requestId} was ${d.stale!}, and a write then cleared the request`,
    expected: 'the decision discarded: no write clearing a request before the event is acknowledged',
    actual: `entry #${write.seq}, ${seconds(write.at - d.received)} after receipt`
  })
  return true
}

/** A stale decision is acknowledged as a deliberate discard: two later polls without its ack say it was not. */
function ackedStale (d: Delivery, out: Outcomes): void {
  if (d.acked !== undefined) {
    out.exercised('ack')
    return
  }
  if (d.pollsSince < windowMs('stale-ack-polls')) return
  const reason = d.withdrawn ? `for ${d.requestId}, which the adapter had withdrawn` : d.stale!
  out.violation('ack', {
    seq: d.seq,
    at: d.received,
    message: `the ${d.type} event #${d.sequence} (${reason}) was never acknowledged`,
    expected: 'a stale decision discarded and acknowledged',
    actual: `${d.pollsSince} later polls without an ack of ${d.sequence}`
  })
}

const ACK: Clause = {
  key: 'ack',
  text: 'a stale decision, discarded, is then acknowledged',
  level: 'decision',
  basis: 'stale-ack',
  why: 'the spec names no time for the acknowledgement; two later polls are orbtest\'s bound',
  exercise: 'a stale decision (tour:decisions, tour:withdrawn)'
}

const OT_139: OrbtileCheck = {
  id: 'OT-139',
  title: 'a decision is acknowledged only after it was applied or deliberately discarded, never on receipt',
  level: 'MUST',
  ledger: "The adapter acknowledges an event only after an authoritative UI commit (the decision was applied in the agent's own UI) or a deliberate discard of a stale event. It never acknowledges on receipt.",
  clauses: [{
    key: 'receipt',
    text: 'a fresh decision is acknowledged only after a write applied it (OTC-01)',
    level: 'decision',
    basis: 'OTC-01',
    why: UNSEEN_UI,
    exercise: 'an approval or question decided on the keypad and acknowledged (tour:decisions)'
  }],
  windows: [],
  reads: {},
  judge: () => deliveriesJudge((d, out) => {
    if (d.stale !== undefined || d.withdrawn || d.acked === undefined) return
    if (d.applied !== undefined && d.applied.at <= d.acked.at) {
      out.exercised('receipt')
      return
    }
    out.violation('receipt', {
      seq: d.acked.seq,
      at: d.acked.at,
      message: `event #${d.sequence} (${d.type} ${d.requestId}) was acknowledged before any write applied it`,
      expected: 'a write that clears the request (approval/question null) before the ack',
      actual: d.applied === undefined ? `ack ${d.sequence} and no applying write` : `ack at ${seconds(d.acked.at)}, applied at ${seconds(d.applied.at)}`
    })
  })
}

const OT_147: OrbtileCheck = {
  id: 'OT-147',
  title: 'an approval is not applied on or after its expiresAt, nor once no longer pending, and is then acknowledged',
  level: 'MUST',
  ledger: 'On an approval event, the adapter rejects the decision (does not apply it) when the current time is on or after expiresAt, or when its own UI no longer has that request pending. It then acknowledges the event as a deliberate stale-event discard.',
  clauses: [
    {
      key: 'expired',
      text: applied('an approval received on or after its expiresAt'),
      level: 'decision',
      basis: 'OTC-01',
      why: UNSEEN_UI,
      exercise: 'an approval decided on the keypad and delivered after its expiresAt (tour:decisions: OTC-07)'
    },
    {
      key: 'withdrawn',
      text: 'an approval for a request the adapter had withdrawn is applied to nothing (OTC-01: no write clears the request pending now before the ack)',
      level: 'decision',
      basis: 'OTC-01',
      why: UNSEEN_UI,
      exercise: 'a decision held on the wire until the adapter withdrew its request (tour:withdrawn)'
    },
    ACK
  ],
  windows: ['stale-ack', 'stale-ack-polls'],
  reads: {},
  judge: () => deliveriesJudge((d, out) => {
    if (d.type !== 'approval' || (d.stale === undefined && !d.withdrawn)) return
    const clause = d.withdrawn ? 'withdrawn' : 'expired'
    if (!appliedStale(d, clause, out)) out.exercised(clause)
    ackedStale(d, out)
  })
}

const OT_148: OrbtileCheck = {
  id: 'OT-148',
  title: "a question's picks are checked against what is pending; invalid or stale ones are discarded",
  level: 'MUST',
  ledger: "On a question event, the adapter checks picks against its own UI's still-pending options. A single-select question must have exactly one pick, and every index must exist. Anything else is rejected, and stale answers are discarded.",
  clauses: [
    {
      key: 'picks',
      text: applied('an answer with invalid picks (a single-select with other than one, an index past the options)'),
      level: 'decision',
      basis: 'OTC-01',
      why: UNSEEN_UI,
      exercise: 'a question answered on the keypad and delivered with tampered picks (tour:decisions)'
    },
    {
      key: 'stale',
      text: applied('an answer received after its expiresAt, or for a question the adapter had withdrawn,'),
      level: 'decision',
      basis: 'OTC-01',
      why: UNSEEN_UI,
      exercise: 'a question answer held on the wire until the adapter withdrew it (tour:withdrawn)'
    },
    ACK
  ],
  windows: ['stale-ack', 'stale-ack-polls'],
  reads: {},
  judge: () => deliveriesJudge((d, out) => {
    if (d.type !== 'question' || (d.stale === undefined && !d.withdrawn)) return
    const clause = !d.withdrawn && d.stale?.startsWith('invalid picks') === true ? 'picks' : 'stale'
    if (!appliedStale(d, clause, out)) out.exercised(clause)
    ackedStale(d, out)
  })
}

/** What OT-058 keeps of an adapter: when its requests began, and the shortest ttlSeconds it gave a session. */
interface Cadence { starts: Millis[], ttl: number }

/**
 * OTC-15 over one wait: from 2 s after it began to its end, no stretch without a request as long as the adapter's
 * shortest session ttlSeconds (within which it must make one anyway, OT-113). A wait shorter than that shows nothing.
 */
function judgeWait (c: Cadence, since: Millis, end: Millis, model: OrbtileModel, out: Outcomes): void {
  if (end - since < windowMs('keypad-wait')) return
  const from = since + windowMs('keypad-grace')
  const limit = c.ttl * 1000
  if (end - from < limit) {
    out.note(`not judged: a wait of ${seconds(end - since)} is too short to show a stall next to a ttlSeconds of ${c.ttl}`)
    return
  }
  const inside = c.starts.filter((t) => t > from && t < end)
  const marks = [from, ...inside, end]
  let quiet = { from, to: from }
  for (let i = 1; i < marks.length; i++) {
    if (marks[i]! - marks[i - 1]! > quiet.to - quiet.from) quiet = { from: marks[i - 1]!, to: marks[i]! }
  }
  const gap = quiet.to - quiet.from
  if (gap < limit || model.awayDuring(quiet.from, quiet.to)) {
    out.exercised('working')
    return
  }
  judged(out, 'working', {
    at: quiet.from,
    message: `the adapter's requests waited ${seconds(end - since)} for a decision, and it went quiet`,
    expected: `the adapter goes on (heartbeats, polls) with its own UI: a request at least every ${c.ttl} s`,
    actual: `no request from ${seconds(quiet.from)} to ${seconds(quiet.to)}`
  }, gap < limit + model.error(quiet.from, quiet.to)
    ? 'quiet by less than the judge\'s measurement error past ttlSeconds'
    : undefined)
}

function cadenceOf (cadence: Map<string, Cadence>, id: string): Cadence {
  let c = cadence.get(id)
  if (c === undefined) {
    c = { starts: [], ttl: windowMs('ttl-default') / 1000 }
    cadence.set(id, c)
  }
  return c
}

/** Requests OT-058 remembers per adapter: the waits it judges are seconds long, and a busy adapter sends thousands. */
const KEPT_STARTS = 2000

/** A request of the adapter's, in its cadence: when it started, and the ttlSeconds an accepted one gave a session. */
function noteRequest (c: Cadence, at: Millis, v: ExchangeView): void {
  c.starts.push(at)
  if (c.starts.length > KEPT_STARTS) c.starts.shift()
  if (v.ok && (v.route === 'session' || v.route === 'batch')) c.ttl = Math.min(c.ttl, ttlOf(v.body) ?? c.ttl)
}

/** The shortest ttlSeconds an exchange gave a session (a session update, or each item of a batch). */
function ttlOf (body: unknown): number | undefined {
  if (!isObject(body)) return undefined
  const items = Array.isArray(body.sessions) ? body.sessions : [body]
  const ttls = items.filter(isObject).map((i) => i.ttlSeconds).filter((n): n is number => typeof n === 'number')
  return ttls.length === 0 ? undefined : Math.min(...ttls)
}

/** OT-058, OTC-15: the adapter goes on working while its requests wait for decisions that never come. */
const OT_058: OrbtileCheck = {
  id: 'OT-058',
  title: 'with keypadDecisions true, the adapter keeps working when decisions never arrive',
  level: 'MUST',
  ledger: 'The adapter treats keypadDecisions as a snapshot, not a promise. It keeps working, with its own UI, when decisions never arrive even though the flag was true.',
  clauses: [{
    key: 'working',
    text: 'with requests waiting 6 s or more for a decision, the adapter never goes its sessions\' ttlSeconds without a request (OTC-15)',
    level: 'decision',
    basis: 'keypad-wait',
    why: 'the spec names no time: orbtest reads "keeps working" as making requests at the pace its sessions\' ttlSeconds already asks',
    exercise: 'keypadDecisions true and requests the user leaves undecided (tour:heartbeat)'
  }],
  windows: ['keypad-wait', 'keypad-grace', 'ttl-seconds', 'ttl-default', 'measurement-error'],
  reads: {},
  judge: () => {
    const cadence = new Map<string, Cadence>()
    /** Since when each adapter's requests have waited with no decision delivered. */
    const waiting = new Map<string, Millis>()
    return {
      observe (entry, model, out) {
        if (entry.kind !== 'exchange') return
        const v = view(entry)
        const id = v.adapterId
        if (id === undefined) return
        const c = cadenceOf(cadence, id)
        noteRequest(c, entry.at, v)
        const delivered = v.route === 'events' && v.ok && /"type"\s*:\s*"(approval|question)"/.test(entry.reply)
        const since = waiting.get(id)
        const pending = (model.pending.get(id)?.size ?? 0) > 0
        // The wait ends with a decision delivered, or when nothing is pending any more (the adapter withdrew it).
        if (since !== undefined && (delivered || !pending)) {
          judgeWait(c, since, delivered ? entry.end : entry.at, model, out)
          waiting.delete(id)
        }
        if (!delivered && pending && model.keypad.get(id) === true && since === undefined) waiting.set(id, entry.at)
      },
      open (model, end, out) {
        for (const [id, since] of waiting) judgeWait(cadence.get(id)!, since, end, model, out)
      }
    }
  }
}

export const DECISION_CHECKS: readonly OrbtileCheck[] = [OT_058, OT_139, OT_147, OT_148]
