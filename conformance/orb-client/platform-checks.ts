// The bot checks about what Orb's platform offers a bot besides messages: a voice seat (ORB-077) and the passport
// registry (ORB-088).
import { seconds, Tally } from '../client/check.js'
import type { JournalEntry, Millis } from '../client/journal.js'
import { at, check, type OrbCheck } from './check.js'
import { isObject, view, type OrbModel } from './model.js'

/** Clock slack when comparing the bot's waits with ours. */
const SLACK_MS = 50

/** ORB-077: a seated bot's heartbeats are never this far apart. */
const HEARTBEAT_GAP_MS = 90_000

/** A voice seat the bot holds: when it joined, its last contact for the seat, and the join's entry. */
interface Seat { joined: Millis, last: Millis, seq: number }

export const PLATFORM_CHECKS: readonly OrbCheck[] = [
  check({
    id: 'ORB-077',
    title: 'a bot in a voice seat sends heartbeat with call and speaking, never 90 s apart',
    level: 'required',
    exercise: 'a voice seat held for over 90 s (tour:voice, long: --tour voice)'
  }, (info) => new class extends Tally<OrbModel> {
    /** The calls the running process of the bot sits in: when it joined, and its last contact for the seat. */
    readonly #seats = new Map<string, Seat>()

    observe (entry: JournalEntry, model: OrbModel): void {
      if (entry.kind === 'action') {
        // A process of the bot ended (stopped, killed, restarted): its seats are judged up to then.
        if (entry.name === 'exit' || (entry.name === 'bot-start' && model.starts.length > 1)) this.#end(entry.at)
        return
      }
      if (entry.kind !== 'exchange') return
      const v = view(entry)
      if (v.route !== 'voice' || !isObject(v.body)) return
      const callId = typeof v.body.call === 'string' ? v.body.call : undefined
      if (v.body.action === 'join' && v.ok && isObject(v.reply) && typeof v.reply.call === 'string') {
        const seat = { joined: entry.end, last: entry.end, seq: entry.seq }
        if (!this.#seats.has(v.reply.call)) this.#seats.set(v.reply.call, seat)
        return
      }
      const seat = callId === undefined ? undefined : this.#seats.get(callId)
      if (seat === undefined) return
      if (v.body.action === 'leave' || entry.status === 410) {
        this.#judge(callId!, seat, entry.at, entry.seq, 'before it left')
        this.#seats.delete(callId!)
        return
      }
      if (v.body.action !== 'heartbeat') return
      this.#judge(callId!, seat, entry.at, entry.seq, 'between heartbeats')
      if (typeof v.body.speaking !== 'boolean') {
        this.violate({
          ...at(entry),
          message: `a heartbeat for ${callId!} without speaking`,
          expected: '{"action":"heartbeat","call":…,"speaking":true|false}',
          actual: JSON.stringify(v.body).slice(0, 120)
        })
      }
      if (v.ok) seat.last = entry.end
    }

    override finish (_model: OrbModel, end: Millis): void {
      this.#end(end)
    }

    #end (at: Millis): void {
      for (const [callId, seat] of this.#seats) this.#judge(callId, seat, at, seat.seq, 'before the bot stopped')
      this.#seats.clear()
    }

    /** A gap from the seat's last contact to `to`; a seat watched for the whole limit exercised the rule. */
    #judge (callId: string, seat: Seat, to: Millis, seq: number, where: string): void {
      if (to - seat.joined >= HEARTBEAT_GAP_MS) this.applied()
      if (to - seat.last <= HEARTBEAT_GAP_MS + SLACK_MS) return
      this.applied()
      this.violate({
        seq,
        at: to,
        message: `no heartbeat for ${callId} for ${seconds(to - seat.last)} ${where}`,
        expected: 'a heartbeat every minute or so, never 90 s apart',
        actual: `${seconds(to - seat.last)} after the last contact for the seat`
      })
    }
  }(info)),

  check({
    id: 'ORB-088',
    title: 'a passport answer of holds: null is unknown, never false: the bot answers otherwise or asks again (OBC-07)',
    level: 'required',
    exercise: 'a command that makes the bot check a passport while the chain is unavailable (tour:passport)'
  }, (info) => new class extends Tally<OrbModel> {
    /** The passport answer the bot had last, not yet followed by an answer of its own to a member. */
    #pending: { holds: boolean | null, address: string, at: Millis, seq: number } | undefined
    /** What the bot told members after a holds: false, and after a holds: null (with when, and for whom). */
    readonly #afterFalse = new Set<string>()
    readonly #afterNull: Array<{ text: string, address: string, at: Millis, seq: number }> = []
    /** Each address's passport checks, by time: a check again after a null is a retry. */
    readonly #checks: Array<{ address: string, at: Millis }> = []

    observe (entry: JournalEntry): void {
      if (entry.kind !== 'exchange') return
      const v = view(entry)
      if (v.route === 'passport') {
        const address = (v.query.get('address') ?? '').toLowerCase()
        this.#checks.push({ address, at: entry.at })
        if (v.ok && isObject(v.reply) && (v.reply.holds === null || typeof v.reply.holds === 'boolean')) {
          this.#pending = { holds: v.reply.holds, address, at: entry.end, seq: entry.seq }
        }
        return
      }
      const pending = this.#pending
      if (pending === undefined || pending.holds === true) return
      if (v.route !== 'respond' && v.route !== 'messages-post') return
      const text = isObject(v.body) && typeof v.body.content === 'string' ? v.body.content.trim() : ''
      this.#pending = undefined
      if (pending.holds === false) this.#afterFalse.add(text)
      else this.#afterNull.push({ text, address: pending.address, at: entry.at, seq: entry.seq })
    }

    override finish (): void {
      for (const answer of this.#afterNull) {
        this.applied()
        const retried = this.#checks.some((c) => c.address === answer.address && c.at > answer.at)
        if (retried || !this.#afterFalse.has(answer.text)) continue
        this.violate({
          seq: answer.seq,
          at: answer.at,
          message: 'after holds: null the bot told the member what it tells them after holds: false, and did not ask again',
          expected: 'null taken as unknown: another answer, or the passport checked again later',
          actual: JSON.stringify(answer.text.slice(0, 120))
        })
      }
    }
  }(info))
]
