import { seconds, type Clause, type Outcomes } from '../../client/check.js'
import type { Millis } from '../../client/journal.js'
import { windowMs } from '../../client/windows.js'
import { view } from '../model.js'
import { deliveriesJudge, type Delivery } from './deliveries.js'
import type { OrbtileCheck } from './define.js'

/** Why a finding that rests on OTC-01 is not a failure, in the words every such report gives. */
const UNSEEN_UI = 'the wire cannot show the agent\'s own UI: a write that clears the request stands in for applying it, and a correct adapter may write the same for reasons of its own'

/** What a decision check reads: polls, and the writes that may apply a decision (those that clear a request). */
const READS = { routes: ['session', 'batch', 'events'], requestsOnly: true } as const

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
  if (d.pollsSince < 2) return
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
  reads: READS,
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
  windows: ['stale-ack'],
  reads: READS,
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
  windows: ['stale-ack'],
  reads: READS,
  judge: () => deliveriesJudge((d, out) => {
    if (d.type !== 'question' || (d.stale === undefined && !d.withdrawn)) return
    const clause = !d.withdrawn && d.stale?.startsWith('invalid picks') === true ? 'picks' : 'stale'
    if (!appliedStale(d, clause, out)) out.exercised(clause)
    ackedStale(d, out)
  })
}

/** OT-058, OTC-15: the adapter goes on working while its requests wait for decisions that never come. */
const OT_058: OrbtileCheck = {
  id: 'OT-058',
  title: 'with keypadDecisions true, the adapter keeps working when decisions never arrive',
  level: 'MUST',
  ledger: 'The adapter treats keypadDecisions as a snapshot, not a promise. It keeps working, with its own UI, when decisions never arrive even though the flag was true.',
  clauses: [{
    key: 'working',
    text: 'with requests waiting 6 s for a decision, the adapter still makes requests in the second half of the wait (OTC-15)',
    level: 'decision',
    basis: 'keypad-wait',
    why: 'the spec names no time: orbtest reads "keeps working" as some request in the second half of a 6 s wait',
    exercise: 'keypadDecisions true and requests the user leaves undecided for 6 s (tour:heartbeat)'
  }],
  windows: ['keypad-wait'],
  reads: {},
  judge: () => {
    const requests: Millis[] = []
    /** Since when each adapter's requests have waited with no decision delivered. */
    const waiting = new Map<string, Millis>()
    const judgeWait = (since: Millis, end: Millis, out: Outcomes): void => {
      if (end - since < windowMs('keypad-wait')) return
      // At work in the second half of the wait: an adapter that stalls after a while is caught too.
      const from = since + 2000 + (end - since - 2000) / 2
      if (requests.some((t) => t >= from && t <= end)) {
        out.exercised('working')
        return
      }
      out.violation('working', {
        at: from,
        message: `the adapter's requests waited ${seconds(end - since)} for a decision, and it went quiet`,
        expected: 'the adapter goes on (heartbeats, polls) with its own UI',
        actual: `no request from ${seconds(from)} to ${seconds(end)}`
      })
    }
    return {
      observe (entry, model, out) {
        if (entry.kind !== 'exchange') return
        requests.push(entry.at)
        if (requests.length > 2000) requests.shift()
        const v = view(entry)
        const id = v.adapterId
        if (id === undefined) return
        const delivered = v.route === 'events' && v.ok && /"type"\s*:\s*"(approval|question)"/.test(entry.reply)
        const since = waiting.get(id)
        if (delivered && since !== undefined) {
          judgeWait(since, entry.end, out)
          waiting.delete(id)
        }
        const pending = (model.pending.get(id)?.size ?? 0) > 0
        if (!delivered && pending && model.keypad.get(id) === true && since === undefined) waiting.set(id, entry.at)
      },
      open (_model, end, out) {
        for (const since of waiting.values()) judgeWait(since, end, out)
      }
    }
  }
}

export const DECISION_CHECKS: readonly OrbtileCheck[] = [OT_058, OT_139, OT_147, OT_148]
