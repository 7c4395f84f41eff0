import { seconds, Tally } from '../client/check.js'
import type { JournalEntry, Millis } from '../client/journal.js'
import { at, check, type OrbCheck } from './check.js'
import { isObject, view, type OrbModel } from './model.js'
import { PLATFORM_CHECKS } from './platform-checks.js'
import { WEBHOOK_CHECKS } from './webhook-checks.js'

/** Clock slack when comparing the bot's waits with ours. */
const SLACK_MS = 50

/** ORB-071: a typed command waits about 6 s for its answer (ORB-A14: exactly 6 s after invoked_at). */
const ANSWER_MS = 6000

/** OBC-05: after a 410 the fallback message is posted within this long. */
const FALLBACK_MS = 5000

/** Every check of the bot suite, in ledger order, then orbtest's own (OBC-…). */
export const ORB_CLIENT_CHECKS: readonly OrbCheck[] = [
  check({
    id: 'ORB-001',
    title: 'bot calls go to /api/bot/v1/... on the Orb\'s own origin (the directory: /api/orb/directory)',
    level: 'required',
    exercise: 'any call'
  }, (info) => new class extends Tally<OrbModel> {
    observe (entry: JournalEntry): void {
      if (entry.kind !== 'exchange') return
      this.applied()
      if (view(entry).route !== 'other') return
      this.violate({
        ...at(entry),
        message: `${entry.method} ${entry.target}: not an operation of the bot API`,
        expected: 'an operation under /api/bot/v1 (or GET /api/orb/directory)',
        actual: `${entry.method} ${entry.target} (${entry.status})`
      })
    }
  }(info)),

  check({
    id: 'ORB-002',
    title: 'every /api/bot/v1 call carries Authorization: Bearer <app token>, and the token goes nowhere else',
    level: 'required',
    exercise: 'any call'
  }, (info) => new class extends Tally<OrbModel> {
    observe (entry: JournalEntry, model: OrbModel): void {
      if (entry.kind === 'action' && entry.name === 'secret-found') {
        this.violate({
          ...at(entry),
          message: `the app token was found in ${String(entry.data?.where)}`,
          expected: 'the token in the Authorization header only',
          actual: `in ${String(entry.data?.where)}`
        })
      }
      if (entry.kind !== 'exchange' || !entry.target.startsWith('/api/bot/v1')) return
      this.applied()
      const v = view(entry)
      if (v.bearer === undefined || !model.tokens.includes(v.bearer)) {
        this.violate({
          ...at(entry),
          message: `${entry.method} ${entry.target}: no bearer app token`,
          expected: 'Authorization: Bearer <the app token>',
          actual: entry.headers.authorization === undefined ? 'no Authorization header' : 'another Authorization'
        })
      }
      // The token anywhere but its header: the query string or the body.
      const elsewhere = model.tokens.some((t) => entry.target.includes(t) || (entry.body ?? '').includes(t))
      if (elsewhere) {
        this.violate({
          ...at(entry),
          message: `${entry.method} ${v.path}: the token in the request target or body`,
          expected: 'the token in the Authorization header only',
          actual: 'the token in the URL or the body'
        })
      }
    }
  }(info)),

  check({
    id: 'ORB-032',
    title: 'under 30 posts a minute and 12 per channel; never @everyone, cards, voice or read-only channels',
    level: 'required',
    exercise: 'a post (POST /messages)'
  }, (info) => new class extends Tally<OrbModel> {
    readonly #posts: Array<{ at: Millis, channel: string }> = []
    #overAll = false
    readonly #overChannel = new Set<string>()
    observe (entry: JournalEntry, model: OrbModel): void {
      if (entry.kind !== 'exchange' || view(entry).route !== 'messages-post') return
      const body = view(entry).body
      if (!isObject(body)) return
      this.applied()
      const channel = String(body.channel)
      const content = typeof body.content === 'string' ? body.content : ''
      const where = { ...at(entry), actual: `${channel}: ${JSON.stringify(content.slice(0, 80))}` }
      if (content.includes('@everyone')) {
        this.violate({ ...where, message: 'a post with @everyone', expected: 'no @everyone (ORB-026)' })
      }
      const info = model.channels.get(channel)
      if (info?.kind === 'voice') {
        this.violate({ ...where, message: `a post to voice channel ${channel}`, expected: 'text channels (ORB-028)' })
      }
      if (info?.readOnly === true) {
        this.violate({
          ...where,
          message: `a post to read-only channel ${channel}`,
          expected: 'no posts to read-only channels (ORB-029)'
        })
      }
      // ORB-A20: what a card is, Orb decides; its refusal says so.
      if (!view(entry).ok && /\bcards?\b/i.test(errorMessage(view(entry).reply))) {
        this.violate({
          ...where,
          message: 'a post Orb refused as a card',
          expected: 'no trade, signal or market cards (ORB-027)'
        })
      }
      this.#posts.push({ at: entry.at, channel })
      const since = entry.at - 60_000
      while (this.#posts.length > 0 && this.#posts[0]!.at <= since) this.#posts.shift()
      if (this.#posts.length > 30 && !this.#overAll) {
        this.#overAll = true
        this.violate({
          ...at(entry),
          message: `${this.#posts.length} posts within a minute`,
          expected: 'at most 30 a minute (ORB-031)',
          actual: `${this.#posts.length}`
        })
      }
      const here = this.#posts.filter((p) => p.channel === channel).length
      if (here > 12 && !this.#overChannel.has(channel)) {
        this.#overChannel.add(channel)
        this.violate({ ...at(entry), message: `${here} posts to ${channel} within a minute`, expected: 'at most 12 a minute in one channel (ORB-031)', actual: `${here}` })
      }
    }
  }(info)),

  check({
    id: 'ORB-036',
    title: 'an encrypted message (body null) neither crashes the bot nor reads as empty text (OBC-03)',
    level: 'required',
    exercise: 'an encrypted mention (tour:basic)'
  }, (info) => new class extends Tally<OrbModel> {
    #encrypted: { at: Millis, seq: number, channel: string | null } | undefined
    observe (entry: JournalEntry, model: OrbModel): void {
      if (this.#encrypted === undefined) {
        const e = model.firstEncrypted
        if (e !== undefined) {
          this.#encrypted = { at: e.at, seq: e.seq, channel: e.channel }
          this.applied()
        }
        return
      }
      const since = this.#encrypted
      if (entry.kind === 'action' && entry.name === 'exit' && entry.data?.how === 'exited') {
        this.violate({
          ...at(entry),
          message: 'the bot exited on its own after an encrypted message reached it',
          expected: 'the bot goes on',
          actual: entry.text
        })
      }
      if (entry.kind !== 'exchange' || view(entry).route !== 'messages-post' || entry.at < since.at) return
      const body = view(entry).body
      if (!isObject(body) || body.channel !== since.channel || typeof body.content !== 'string') return
      // OBC-03: a reply that quotes nothing (ends with a colon, or empty quotes) read the null body as empty text.
      if (/(?::\s*|""|'')$/.test(body.content.trim()) || body.content.trim() === '') {
        this.violate({
          ...at(entry),
          message: 'a reply to an encrypted message that quotes empty text',
          expected: 'body null read as "encrypted", not as ""',
          actual: JSON.stringify(body.content.slice(0, 80))
        })
      }
      this.#encrypted = { ...since, at: Infinity }
    }
  }(info)),

  check({
    id: 'ORB-048',
    title: 'the cursor: each fetch uses the next it was given; nothing is skipped or acted on twice across a restart',
    level: 'required',
    exercise: 'events fetched with GET /events (tour:restart kills and restarts the bot)'
  }, (info) => new class extends Tally<OrbModel> {
    /** Typed commands received, and how often each was answered (respond calls), to judge skips and repeats. */
    readonly #responds = new Map<string, number>()
    /** Typed commands a restarted bot's cursor has gone past (OBC-11). */
    readonly #passed = new Set<string>()
    observe (entry: JournalEntry, model: OrbModel): void {
      if (entry.kind !== 'exchange') return
      const v = view(entry)
      // A respond refused for the rate (429) was no answer: its retry is not a second one.
      if (v.route === 'respond' && v.event !== undefined && entry.status !== 429) {
        const n = (this.#responds.get(v.event) ?? 0) + 1
        this.#responds.set(v.event, n)
        if (n === 2) {
          this.violate({
            ...at(entry),
            message: `event ${v.event} was answered a second time`,
            expected: 'each event acted on once (handled idempotently)',
            actual: `a second respond (${entry.status})`
          })
        }
      }
      if (v.route !== 'events') return
      this.applied()
      const after = Number(v.query.get('after') ?? 0)
      // OBC-11: a typed command an earlier process of the bot received is skipped once a later one fetches past it.
      const lastStart = model.starts.at(-1) ?? 0
      const earlier = [...model.received.values()].filter((r) => r.type === 'application_command' && r.at < lastStart)
      for (const r of earlier) if (after >= (r.cursor ?? Infinity)) this.#passed.add(r.id)
      const given = model.nexts.filter((n) => n.at <= entry.at)
      // OBC-11: the last next the bot surely got, and those of replies cut since, which it may have got.
      const sure = given.filter((n) => n.cut !== true)
      const last = sure.at(-1)
      const maybe = given.filter((n) => n.cut === true && (last === undefined || n.at > last.at)).map((n) => n.next)
      // After a restart of the bot's process, a cursor persisted earlier is right; one past every next given is not.
      const sinceStart = sure.filter((n) => n.at >= lastStart)
      if (sinceStart.length > 0 && last !== undefined && after !== last.next && !maybe.includes(after)) {
        this.violate({
          ...at(entry),
          message: `after=${after}, where the last reply gave next ${last.next}`,
          expected: `after=${last.next} (the next given)`,
          actual: `after=${after}`
        })
      } else if (given.length > 0 && after > Math.max(...given.map((n) => n.next))) {
        this.violate({
          ...at(entry),
          message: `after=${after} is past every next the bot was given`,
          expected: `after <= ${Math.max(...given.map((n) => n.next))}`,
          actual: `after=${after}`
        })
      }
    }

    override finish (model: OrbModel): void {
      // Every typed command a restart's cursor went past was answered at least once: none skipped by the restart. A
      // command received just before the end, or before a restart the scenario ended in, is not judged (OBC-11).
      for (const r of model.received.values()) {
        if (!this.#passed.has(r.id) || this.#responds.has(r.id)) continue
        this.violate({
          seq: r.seq,
          at: r.at,
          message: `the typed command ${r.id} was received and never answered (skipped across the restart?)`,
          expected: 'every event handled; the cursor persisted only after handling',
          actual: 'no respond for it'
        })
      }
    }
  }(info)),

  check({
    id: 'ORB-065',
    title: 'the bot pushes its whole command list with PUT, never piecemeal',
    level: 'required',
    exercise: 'a command sync (PUT /commands)'
  }, (info) => new class extends Tally<OrbModel> {
    #list: string | undefined
    #start = -1
    observe (entry: JournalEntry, model: OrbModel): void {
      if (entry.kind !== 'exchange') return
      const v = view(entry)
      if (v.route === 'commands-delete') {
        this.applied()
        this.violate({
          ...at(entry),
          message: `${entry.method} ${entry.target}: a command removed on its own`,
          expected: 'the whole list pushed with PUT /commands',
          actual: 'DELETE /commands'
        })
      }
      if (v.route !== 'commands-put' || !isObject(v.body) || !Array.isArray(v.body.commands)) return
      this.applied()
      const names = v.body.commands.map((c) => isObject(c) ? String(c.name) : '?').sort().join(',')
      // One process of the bot pushes one list: its code is the source of truth.
      const start = model.starts.length
      if (this.#start === start && this.#list !== undefined && this.#list !== names) {
        this.violate({
          ...at(entry),
          message: 'a second, different command list pushed by the same run of the bot',
          expected: `the whole list every time (${this.#list})`,
          actual: names
        })
      }
      this.#list = names
      this.#start = start
    }
  }(info)),

  check({
    id: 'ORB-071',
    title: 'a fetched typed command is answered within about 6 s; after a 410 the answer is posted instead',
    level: 'required',
    exercise: 'a typed command fetched with GET /events (tour:basic; tour:late delivers one late)'
  }, (info) => new class extends Tally<OrbModel> {
    readonly #answered = new Set<string>()
    readonly #gone: Array<{ event: string, channel: string | null, at: Millis, seq: number, posted: boolean }> = []
    observe (entry: JournalEntry, model: OrbModel): void {
      if (entry.kind !== 'exchange') return
      const v = view(entry)
      if (v.route === 'respond' && v.event !== undefined && !this.#answered.has(v.event)) {
        this.#answered.add(v.event)
        const r = model.received.get(v.event)
        this.applied()
        // Timed from when the bot had the command: a delivery the wire made late is no fault of the bot's.
        const late = r === undefined ? 0 : entry.at - r.at
        if (late > ANSWER_MS) {
          this.violate({
            ...at(entry),
            message: `event ${v.event} answered ${seconds(late)} after the bot received it`,
            expected: 'an answer within about 6 s',
            actual: `${entry.status}`
          })
        }
        if (entry.status === 410) {
          this.#gone.push({
            event: v.event,
            channel: r?.channel ?? null,
            at: entry.end,
            seq: entry.seq,
            posted: false
          })
        }
      }
      if (v.route === 'messages-post' && isObject(v.body)) {
        for (const g of this.#gone) if (!g.posted && v.body.channel === g.channel && entry.at >= g.at) g.posted = true
      }
    }

    override finish (model: OrbModel, end: Millis): void {
      for (const g of this.#gone) {
        // OBC-12: a 410 too close to the end is not judged, and the note says so.
        if (!g.posted && end - g.at < FALLBACK_MS) this.note = `not judged: the 410 at ${seconds(g.at)} came under ${seconds(FALLBACK_MS)} before the end (${seconds(end)})`
        if (g.posted || end - g.at < FALLBACK_MS) continue
        this.violate({ seq: g.seq, at: g.at, message: `the answer to ${g.event} met 410, and no message was posted instead`, expected: 'POST /messages with the answer after a 410', actual: `nothing in ${seconds(FALLBACK_MS)}` })
      }
      for (const r of model.received.values()) {
        if (r.type !== 'application_command' || r.cursor === undefined || this.#answered.has(r.id)) continue
        if (end - r.at < ANSWER_MS) continue
        this.applied()
        this.violate({
          seq: r.seq,
          at: r.at,
          message: `the typed command ${r.id} was never answered`,
          expected: 'POST /interactions/{event}/respond within about 6 s',
          actual: 'no answer'
        })
      }
    }
  }(info)),

  ...PLATFORM_CHECKS,
  ...WEBHOOK_CHECKS,

  check({
    id: 'ORB-100',
    title: 'after a 429 the bot waits at least Retry-After before that call again',
    level: 'required',
    exercise: 'a 429 with Retry-After (tour:throttle)'
  }, (info) => new class extends Tally<OrbModel> {
    readonly #closed = new Map<string, { until: Millis, after: number, end: Millis, seq: number }>()
    observe (entry: JournalEntry): void {
      if (entry.kind !== 'exchange') return
      const call = `${entry.method} ${view(entry).path}`
      const closed = this.#closed.get(call)
      if (closed !== undefined && entry.seq !== closed.seq && entry.at >= closed.end) {
        this.applied()
        if (entry.at + SLACK_MS < closed.until) {
          this.violate({ ...at(entry), message: `${call} again ${seconds(entry.at - closed.end)} after a 429 that said Retry-After: ${closed.after}`, expected: `no ${call} for ${closed.after} s`, actual: `after ${seconds(entry.at - closed.end)}` })
        }
        this.#closed.delete(call)
      }
      if (entry.status !== 429) return
      const after = Number(entry.replyHeaders['retry-after'] ?? 1)
      const wait = Number.isFinite(after) ? after : 1
      this.#closed.set(call, { until: entry.end + wait * 1000, after: wait, end: entry.end, seq: entry.seq })
    }
  }(info)),

  check({
    id: 'OBC-06',
    title: 'the bot stays up until it is stopped, and stops on SIGTERM',
    level: 'required',
    exercise: 'any scenario'
  }, (info) => new class extends Tally<OrbModel> {
    observe (entry: JournalEntry): void {
      if (entry.kind !== 'action' || entry.name !== 'exit') return
      this.applied()
      if (entry.data?.how === 'stopped') return
      this.violate({
        ...at(entry),
        message: entry.data?.how === 'killed' ? 'the bot did not exit after SIGTERM' : 'the bot ended before its stop',
        expected: 'a bot that runs until SIGTERM, then exits',
        actual: entry.text
      })
    }
  }(info))
]

function errorMessage (reply: unknown): string {
  return isObject(reply) && isObject(reply.error) && typeof reply.error.message === 'string' ? reply.error.message : ''
}
