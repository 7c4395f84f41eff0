// The bot checks about what Orb's platform offers a bot besides messages: a voice seat (ORB-077) and the passport
// registry (ORB-088); and how its process lives (OBC-06).
import { seconds, type Outcomes } from '../core/check.js'
import type { JournalEntry, Millis } from '../core/journal.js'
import { windowMs } from '../core/windows.js'
import { at, isAction, judged, type OrbCheck } from './bot-check.js'
import { isObject, view, type OrbModel } from './model.js'

/** A voice seat the bot holds: when it joined, its last contact for the seat, and the join's entry. */
interface Seat { joined: Millis, last: Millis, seq: number }

/** ORB-077 for one seat: a gap from its last contact to `to`; a seat watched for the whole limit exercised the rule. */
function judgeGap (
  callId: string, seat: Seat, to: Millis, seq: number, where: string, model: OrbModel, out: Outcomes
): void {
  const limit = windowMs('voice-gap')
  const gap = to - seat.last
  if (gap <= limit) {
    if (to - seat.joined >= limit) out.exercised('gap')
    return
  }
  judged(out, 'gap', {
    seq,
    at: to,
    message: `no heartbeat for ${callId} for ${seconds(gap)} ${where}`,
    expected: 'a heartbeat every minute or so, never 90 s apart',
    actual: `${seconds(gap)} after the last contact for the seat`
  }, gap <= limit + model.error(seat.last, to) ? 'late by less than the judge\'s measurement error' : undefined)
}

/** ORB-077 on one voice call of the bot. */
function voiceCall (entry: JournalEntry, model: OrbModel, seats: Map<string, Seat>, out: Outcomes): void {
  if (entry.kind !== 'exchange') return
  const v = view(entry)
  if (v.route !== 'voice' || !isObject(v.body)) return
  if (v.body.action === 'join' && v.ok && isObject(v.reply) && typeof v.reply.call === 'string') {
    if (!seats.has(v.reply.call)) seats.set(v.reply.call, { joined: entry.end, last: entry.end, seq: entry.seq })
    return
  }
  const callId = typeof v.body.call === 'string' ? v.body.call : undefined
  const seat = callId === undefined ? undefined : seats.get(callId)
  if (seat === undefined) return
  if (v.body.action === 'leave' || entry.status === 410) {
    judgeGap(callId!, seat, entry.at, entry.seq, 'before it left', model, out)
    seats.delete(callId!)
    return
  }
  if (v.body.action !== 'heartbeat') return
  judgeGap(callId!, seat, entry.at, entry.seq, 'between heartbeats', model, out)
  if (typeof v.body.speaking === 'boolean') out.exercised('speaking')
  else out.violation('speaking', { ...at(entry), message: `a heartbeat for ${callId!} without speaking`, expected: '{"action":"heartbeat","call":…,"speaking":true|false}', actual: JSON.stringify(v.body).slice(0, 120) })
  if (v.ok) seat.last = entry.end
}

const ORB_077: OrbCheck = {
  id: 'ORB-077',
  title: 'a bot in a voice seat sends heartbeat with call and speaking, never 90 s apart',
  level: 'MUST',
  ledger: 'The bot sends heartbeat with call and speaking every minute or so. There must never be a 90-second gap.',
  clauses: [
    { key: 'gap', text: 'never 90 s between heartbeats for a seat', level: 'MUST', exercise: 'a voice seat held for over 90 s (tour:voice, long: --tour voice)' },
    {
      key: 'speaking',
      text: 'each heartbeat carries call and speaking',
      level: 'MUST',
      exercise: 'a voice heartbeat (tour:voice)'
    }
  ],
  windows: ['voice-gap', 'measurement-error'],
  reads: {},
  judge: () => {
    /** The calls the running process of the bot sits in. */
    const seats = new Map<string, Seat>()
    return {
      observe (entry, model, out) {
        // A process of the bot ended (stopped, killed, restarted): its seats are judged up to then.
        if (isAction(entry, 'exit') || (isAction(entry, 'bot-start') && model.starts.length > 1)) {
          for (const [callId, seat] of seats) {
            judgeGap(callId, seat, entry.at, seat.seq, 'before the bot stopped', model, out)
          }
          seats.clear()
        }
        voiceCall(entry, model, seats, out)
      },
      open (model, end, out) {
        for (const [callId, seat] of seats) judgeGap(callId, seat, end, seat.seq, 'before the bot stopped', model, out)
      }
    }
  }
}

/** What the bot told members after a passport answer (OBC-07), by the answer it had. */
interface Told { text: string, address: string, at: Millis, seq: number }

const ORB_088: OrbCheck = {
  id: 'ORB-088',
  title: 'a passport answer of holds: null is unknown, never false: the bot answers otherwise or asks again (OBC-07)',
  level: 'MUST',
  ledger: 'A bot treats holds: null as unknown, never as false. It does not lock the member out; it retries later or falls back.',
  clauses: [{
    key: 'null',
    text: 'after holds: null, an answer unlike the one after holds: false, or the passport checked again (OBC-07)',
    level: 'decision',
    basis: 'OBC-07',
    why: 'whether a bot locks a member out shows only in what it says; orbtest compares its answers after null and after false',
    exercise: 'a command that makes the bot check a passport while the chain is unavailable (tour:passport)'
  }],
  windows: [],
  reads: {},
  judge: () => {
    let pending: { holds: boolean | null, address: string } | undefined
    const afterFalse = new Set<string>()
    const afterNull: Told[] = []
    const checks: Array<{ address: string, at: Millis }> = []
    return {
      observe (entry) {
        if (entry.kind !== 'exchange') return
        const v = view(entry)
        if (v.route === 'passport') {
          const address = (v.query.get('address') ?? '').toLowerCase()
          checks.push({ address, at: entry.at })
          if (v.ok && isObject(v.reply) && (v.reply.holds === null || typeof v.reply.holds === 'boolean')) {
            pending = { holds: v.reply.holds, address }
          }
          return
        }
        if (pending === undefined || pending.holds === true ||
          (v.route !== 'respond' && v.route !== 'messages-post')) return
        const text = isObject(v.body) && typeof v.body.content === 'string' ? v.body.content.trim() : ''
        if (pending.holds === false) afterFalse.add(text)
        else afterNull.push({ text, address: pending.address, at: entry.at, seq: entry.seq })
        pending = undefined
      },
      open (_model, _end, out) {
        for (const answer of afterNull) {
          const retried = checks.some((c) => c.address === answer.address && c.at > answer.at)
          // Without an answer after holds: false to set it beside, an answer after null shows nothing either way.
          if (!retried && afterFalse.size === 0) {
            out.note('not judged: an answer after holds: null, and none after holds: false to compare it with')
            continue
          }
          if (retried || !afterFalse.has(answer.text)) {
            out.exercised('null')
            continue
          }
          out.violation('null', { seq: answer.seq, at: answer.at, message: 'after holds: null the bot told the member what it tells them after holds: false, and did not ask again', expected: 'null taken as unknown: another answer, or the passport checked again later', actual: JSON.stringify(answer.text.slice(0, 120)) })
        }
      }
    }
  }
}

const OBC_06: OrbCheck = {
  id: 'OBC-06',
  title: 'the bot stays up until it is stopped, and exits within 10 s of SIGTERM',
  level: 'decision',
  ledger: 'OBC-06: a bot runs until orbtest sends SIGTERM, and then exits within the grace a process manager gives it.',
  clauses: [
    { key: 'up', text: 'running until SIGTERM', level: 'decision', basis: 'OBC-06', exercise: 'any scenario' },
    {
      key: 'exit',
      text: 'an exit within 10 s of SIGTERM',
      level: 'decision',
      basis: 'stop-grace',
      exercise: 'any scenario'
    }
  ],
  windows: ['stop-grace'],
  reads: {},
  judge: () => ({
    observe (entry, _model, out) {
      if (!isAction(entry, 'exit')) return
      const how = entry.data?.how
      if (how === 'stopped') {
        out.exercised('up')
        out.exercised('exit')
        return
      }
      const clause = how === 'killed' ? 'exit' : 'up'
      out.violation(clause, {
        ...at(entry),
        message: how === 'killed' ? `still running ${seconds(windowMs('stop-grace'))} after SIGTERM: killed` : 'the bot ended before its stop',
        expected: 'a bot that runs until SIGTERM, then exits',
        actual: entry.text
      })
    }
  })
}

export const PLATFORM_CHECKS: readonly OrbCheck[] = [ORB_077, ORB_088, OBC_06]
