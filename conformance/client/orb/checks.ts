import type { Outcomes } from '../core/check.js'
import type { JournalExchange, Millis, ScenarioReport } from '../core/journal.js'
import { windowMs } from '../core/windows.js'
import { ORB_A03_WINDOWS, type OrbWindow } from '../../../src/spec/orb.js'
import { at, isAction, type OrbCheck } from './bot-check.js'
import { EVENT_CHECKS } from './events-checks.js'
import { isObject, view, type OrbModel } from './model.js'
import { PLATFORM_CHECKS } from './platform-checks.js'
import { WEBHOOK_CHECKS } from './webhook-checks.js'

const ORB_001: OrbCheck = {
  id: 'ORB-001',
  title: "bot calls go to /api/bot/v1/... on the Orb's own origin (the directory: /api/orb/directory)",
  level: 'MUST',
  ledger: 'Bot calls go to /api/bot/v1/... on the Orb\'s own origin (server URL /). The directory is /api/orb/directory.',
  clauses: [
    { key: 'base', text: 'every call under /api/bot/v1 (or the directory)', level: 'MUST', exercise: 'any call' },
    {
      key: 'operation',
      text: 'every call under /api/bot/v1 is an operation the spec defines',
      level: 'decision',
      basis: 'ORB-A23',
      why: 'the rule names the base path; a call the spec does not define is refused (404, 405) but breaks no client rule in words',
      exercise: 'any call'
    }
  ],
  windows: [],
  reads: {},
  judge: () => ({
    observe (entry, _model, out) {
      if (entry.kind !== 'exchange') return
      const v = view(entry)
      if (v.route !== 'other') {
        out.exercised('base')
        return
      }
      const under = v.path.startsWith('/api/bot/v1/')
      out.violation(under ? 'operation' : 'base', {
        ...at(entry),
        message: `${entry.method} ${entry.target}: ${under ? 'no such operation of the bot API' : 'not under /api/bot/v1'}`,
        expected: 'an operation under /api/bot/v1 (or GET /api/orb/directory)',
        actual: `${entry.method} ${entry.target} (${entry.status})`
      })
    }
  })
}

const ORB_002: OrbCheck = {
  id: 'ORB-002',
  title: 'every /api/bot/v1 call carries Authorization: Bearer <app token>, and the token goes nowhere else',
  level: 'MUST',
  ledger: 'Every /api/bot/v1 call carries Authorization: Bearer <app token>.',
  clauses: [
    { key: 'header', text: 'Authorization: Bearer with a token the app had, on every /api/bot/v1 call', level: 'MUST', exercise: 'any call' },
    {
      key: 'secret',
      text: 'the token in the Authorization header only: not in a URL, a body, the output or a file (OBC-14)',
      level: 'decision',
      basis: 'OBC-14',
      why: 'the spec says where the token goes, not where else it may not; keeping it secret is orbtest\'s reading',
      exercise: 'any call, and the scan of the output and files at the end'
    }
  ],
  windows: [],
  reads: {},
  judge: () => ({
    observe (entry, model, out) {
      if (isAction(entry, 'secret-found')) {
        out.violation('secret', { ...at(entry), message: `the app token was found in ${String(entry.data?.where)}`, expected: 'the token in the Authorization header only', actual: `in ${String(entry.data?.where)}` })
      }
      if (isAction(entry, 'scanned')) out.exercised('secret')
      if (entry.kind !== 'exchange' || !entry.target.startsWith('/api/bot/v1')) return
      const v = view(entry)
      if (v.bearer !== undefined && model.tokens.includes(v.bearer)) out.exercised('header')
      else {
        out.violation('header', {
          ...at(entry),
          message: `${entry.method} ${entry.target}: no bearer app token`,
          expected: 'Authorization: Bearer <the app token>',
          actual: entry.headers.authorization === undefined ? 'no Authorization header' : 'another Authorization'
        })
      }
      if (model.tokens.some((t) => entry.target.includes(t) || (entry.body ?? '').includes(t))) {
        out.violation('secret', { ...at(entry), message: `${entry.method} ${v.path}: the token in the request target or body`, expected: 'the token in the Authorization header only', actual: 'the token in the URL or the body' })
      }
    }
  })
}

/** A post as ORB-031 counts it: when, where, what, and whether Orb refused it for the rate (429). */
interface Post { at: Millis, channel: string, body: string, throttled: boolean }

/**
 * ORB-031's limits on one post: the posts of each sliding window before it, overall and in its channel. A post sent
 * again after a 429 (the same body) is the same post retried, and counts once.
 */
function postLimits (
  posts: Post[],
  e: JournalExchange,
  channel: string,
  model: OrbModel,
  out: Outcomes,
  over: Set<string>
): void {
  const { postsPerApp, postsPerChannel } = ORB_A03_WINDOWS
  const body = e.body ?? ''
  const retried = posts.findLastIndex((p) => p.throttled && p.body === body)
  if (retried >= 0) posts.splice(retried, 1)
  posts.push({ at: e.at, channel, body, throttled: e.status === 429 })
  const longest = Math.max(postsPerApp.windowMs, postsPerChannel.windowMs)
  while (posts.length > 0 && posts[0]!.at <= e.at - longest - windowMs('measurement-error')) posts.shift()
  const check = (key: string, within: readonly Post[], { limit, windowMs: span }: OrbWindow, what: string): void => {
    if (within.length <= limit || over.has(key)) return
    // The post `limit` before this one came within the window by our stamps; within the error, not surely.
    const first = within[within.length - 1 - limit]!.at
    if (e.at - first >= span) return
    over.add(key)
    const v = { ...at(e), message: `${limit + 1} posts ${what} within ${((e.at - first) / 1000).toFixed(1)} s`, expected: `at most ${limit} a minute (ORB-031)`, actual: `${limit + 1}` }
    if (e.at - first < span - model.error(first, e.at)) out.violation('rate', v)
    else out.inconclusive('rate', { ...v, message: `${v.message}; not judged: within the judge's measurement error of a minute` })
  }
  check('all', posts, postsPerApp, 'in all')
  check(channel, posts.filter((p) => p.channel === channel), postsPerChannel, `to ${channel}`)
}

/** ORB-032 on one post: where it goes and what it says. */
function postContent (e: JournalExchange, body: Record<string, unknown>, model: OrbModel, out: Outcomes): void {
  const channel = String(body.channel)
  const content = typeof body.content === 'string' ? body.content : ''
  const where = { ...at(e), actual: `${channel}: ${JSON.stringify(content.slice(0, 80))}` }
  const info = model.channels.get(channel)
  const broken = [
    ...(content.includes('@everyone')
      ? [{ clause: 'everyone', message: 'a post with @everyone', expected: 'no @everyone (ORB-026)' }]
      : []),
    ...(info?.kind === 'voice'
      ? [{ clause: 'channel', message: `a post to voice channel ${channel}`, expected: 'text channels (ORB-028)' }]
      : []),
    ...(info?.readOnly === true
      ? [{ clause: 'channel', message: `a post to read-only channel ${channel}`, expected: 'no posts to read-only channels (ORB-029)' }]
      : []),
    // ORB-A20: what a card is, Orb decides; its refusal says so.
    ...(!view(e).ok && /\bcards?\b/i.test(errorMessage(view(e).reply))
      ? [{
          clause: 'card',
          message: 'a post Orb refused as a card',
          expected: 'no trade, signal or market cards (ORB-027)'
        }]
      : [])
  ]
  for (const b of broken) out.violation(b.clause, { ...where, message: b.message, expected: b.expected })
  // A channel the judge does not know (judged on traffic alone, the bot API lists none) shows nothing of its kind.
  const shown = info === undefined ? ['everyone', 'card'] : ['everyone', 'channel', 'card']
  for (const key of shown) if (!broken.some((b) => b.clause === key)) out.exercised(key)
}

const ORB_032: OrbCheck = {
  id: 'ORB-032',
  title: 'at most 30 posts a minute and 12 per channel; never @everyone, cards, voice or read-only channels',
  level: 'MUST',
  ledger: 'A bot stays under 30 posts a minute overall and 12 a minute per channel. It never posts @everyone or cards, and never posts to voice or read-only channels.',
  clauses: [
    {
      key: 'rate',
      text: 'at most 30 posts in any minute, 12 in one channel',
      level: 'MUST',
      exercise: 'posts (POST /messages)'
    },
    { key: 'everyone', text: 'no @everyone', level: 'MUST', exercise: 'a post (POST /messages)' },
    {
      key: 'channel',
      text: 'no post to a voice or read-only channel',
      level: 'MUST',
      exercise: 'a post (POST /messages)'
    },
    {
      key: 'card',
      text: 'no card (as Orb refuses one, ORB-A20)',
      level: 'decision',
      basis: 'ORB-A20',
      why: 'the spec gives no card syntax: a line starting with /trade, /signal or /market is orbtest\'s',
      exercise: 'a post (POST /messages)'
    }
  ],
  windows: ['orb-posts', 'measurement-error'],
  reads: {},
  judge: () => {
    const posts: Post[] = []
    const over = new Set<string>()
    return {
      observe (entry, model, out) {
        if (entry.kind !== 'exchange' || view(entry).route !== 'messages-post') return
        const body = view(entry).body
        if (!isObject(body)) return
        postContent(entry, body, model, out)
        postLimits(posts, entry, String(body.channel), model, out, over)
      }
    }
  }
}

/** An exit of the bot's own before it was stopped. */
function exitedOnItsOwn (r: ScenarioReport): ScenarioReport['journal'][number] | undefined {
  return r.journal.find((e) => isAction(e, 'exit') && e.data?.how === 'exited')
}

/**
 * ORB-036: tour:encrypted sends an encrypted mention, its twin the same mention in clear. A bot that exits after the
 * encrypted one, where its twin stays up, crashed on it.
 */
function compareEncrypted (variant: ScenarioReport, twin: ScenarioReport, out: Outcomes): void {
  const sent = variant.journal.find((e) =>
    (isAction(e, 'mention') || isAction(e, 'delivery-sent')) && e.data?.encrypted === true)
  if (sent === undefined) {
    out.note('not judged: no encrypted mention was sent')
    return
  }
  const exited = exitedOnItsOwn(variant)
  if (exited === undefined || exited.at < sent.at) {
    out.exercised('crash')
    return
  }
  const message = 'the bot exited after an encrypted message (body null), where its twin given the same message in clear stayed up'
  const v = {
    seq: exited.seq,
    at: exited.at,
    message,
    expected: 'body null handled: the bot goes on',
    actual: exited.kind === 'action' ? exited.text : 'exited'
  }
  if (exitedOnItsOwn(twin) === undefined) out.violation('crash', v)
  else out.inconclusive('crash', { ...v, message: 'the bot and its twin both exited on their own: body null is not what shows' })
}

const ORB_036: OrbCheck = {
  id: 'ORB-036',
  title: 'an encrypted message (body null) neither crashes the bot nor reads as empty text',
  level: 'MUST',
  ledger: 'The bot handles body: null (an encrypted message) without crashing or treating it as empty text.',
  clauses: [
    { key: 'crash', text: 'the bot does not exit after an encrypted message, as its twin given it in clear does not', level: 'MUST', exercise: 'tour:encrypted (in either mode), played beside its twin' },
    {
      key: 'exit',
      text: 'the bot does not exit after an encrypted message reached it (no twin to compare with)',
      level: 'decision',
      basis: 'OBC-06',
      why: 'without a twin the exit may have another cause',
      exercise: 'an encrypted mention (tour:basic)'
    },
    {
      key: 'empty',
      text: 'a reply to an encrypted message does not quote empty text (OBC-03)',
      level: 'decision',
      basis: 'OBC-03',
      why: 'what reads as empty text is orbtest\'s reading of the reply: one that ends in a colon or empty quotes',
      exercise: 'an encrypted mention the bot replies to (tour:basic)'
    }
  ],
  windows: [],
  reads: {},
  judge: () => {
    let encrypted: { at: Millis, channel: string | null } | undefined
    return {
      observe (entry, model, out) {
        if (encrypted === undefined) {
          const e = model.firstEncrypted
          if (e !== undefined) encrypted = { at: e.at, channel: e.channel }
          return
        }
        if (isAction(entry, 'exit') && entry.data?.how === 'exited') {
          out.violation('exit', { ...at(entry), message: 'the bot exited on its own after an encrypted message reached it', expected: 'the bot goes on', actual: entry.text })
        }
        if (entry.kind !== 'exchange' || view(entry).route !== 'messages-post' || entry.at < encrypted.at) return
        const body = view(entry).body
        if (!isObject(body) || body.channel !== encrypted.channel || typeof body.content !== 'string') return
        if (/(?::\s*|""|'')$/.test(body.content.trim()) || body.content.trim() === '') {
          out.violation('empty', {
            ...at(entry),
            message: 'a reply to an encrypted message that quotes empty text',
            expected: 'body null read as "encrypted", not as ""',
            actual: JSON.stringify(body.content.slice(0, 80))
          })
        } else out.exercised('empty')
        encrypted = { ...encrypted, at: Infinity }
      },
      open (_model, _end, out) {
        if (encrypted !== undefined) out.exercised('exit')
      }
    }
  },
  compare: compareEncrypted
}

const ORB_065: OrbCheck = {
  id: 'ORB-065',
  title: 'the bot pushes its whole command list with PUT, never piecemeal',
  level: 'MUST',
  ledger: "The bot's code is the single source of truth: it pushes its full command list with PUT, which is idempotent, instead of adding and removing piecemeal.",
  clauses: [
    { key: 'delete', text: 'never DELETE /commands', level: 'MUST', exercise: 'a command sync (PUT /commands)' },
    {
      key: 'whole',
      text: 'one process of the bot pushes one list (OBC-15)',
      level: 'decision',
      basis: 'OBC-15',
      why: 'a second, different list may be a bot that changed its mind; orbtest reads it as commands added piecemeal',
      exercise: 'a command sync (PUT /commands)'
    }
  ],
  windows: [],
  reads: {},
  judge: () => {
    let list: string | undefined
    let process = -1
    return {
      observe (entry, model, out) {
        if (entry.kind !== 'exchange') return
        const v = view(entry)
        if (v.route === 'commands-delete') {
          out.violation('delete', { ...at(entry), message: `${entry.method} ${entry.target}: a command removed on its own`, expected: 'the whole list pushed with PUT /commands', actual: 'DELETE /commands' })
        }
        if (v.route !== 'commands-put' || !isObject(v.body) || !Array.isArray(v.body.commands)) return
        out.exercised('delete')
        const names = v.body.commands.map((c) => isObject(c) ? String(c.name) : '?').sort().join(',')
        const now = model.processAt(entry.at)
        if (process === now && list !== undefined && list !== names) {
          out.violation('whole', { ...at(entry), message: 'a second, different command list pushed by the same run of the bot', expected: `the whole list every time (${list})`, actual: names })
        } else out.exercised('whole')
        list = names
        process = now
      }
    }
  }
}

function errorMessage (reply: unknown): string {
  return isObject(reply) && isObject(reply.error) && typeof reply.error.message === 'string' ? reply.error.message : ''
}

/** Every check of the bot suite, in ledger order, then orbtest's own (OBC-…). */
export const ORB_CLIENT_CHECKS: readonly OrbCheck[] = [
  ORB_001, ORB_002, ORB_032, ORB_036, ORB_065, ...EVENT_CHECKS, ...PLATFORM_CHECKS, ...WEBHOOK_CHECKS
].sort((a, b) => order(a.id) - order(b.id))

function order (id: string): number {
  const [prefix, n] = id.split('-') as [string, string]
  return (prefix === 'OBC' ? 1e5 : 0) + Number(n)
}
