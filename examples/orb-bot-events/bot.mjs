#!/usr/bin/env node
// orbtest's reference Orb events-mode bot for Node >= 20: plain ES module, no dependencies. It has no public address:
// it long-polls GET /events with a cursor, answers a mention with a message and a typed command with /respond. Ledger
// rules it follows: the token only in Authorization ORB-002; the whole command list with one PUT ORB-065; the cursor
// ORB-048 (each fetch uses the `next` given, persisted only once the events are handled); each event acted on once,
// across restarts too, ORB-096; encrypted messages (body null) ORB-036; posts paced under 30 a minute and 12 a minute
// per channel, never @everyone, only where the mention came from ORB-032; a typed command answered within 6 s, and
// posted instead after a 410 ORB-071; Retry-After honoured ORB-100. `--fault NAME` breaks one rule on purpose.
//
// Environment: ORB_URL (the Orb's origin), ORB_TOKEN (the app's token), ORB_APP_ID (the app's id: `<@id>` mentions
// it), HOME (where the cursor and the handled event ids are kept). Every event it acts on is one line on stdout:
// `acted <event id> <type>`. SIGTERM or SIGINT stops it at once, with exit code 0.
import { appendFile, readFile, rename, writeFile } from 'node:fs/promises'
import { homedir } from 'node:os'
import { join } from 'node:path'

// ---- The fault switch, for the suite's self-test. With no fault the bot follows the contract exactly. -------------
const FAULT_RULES = {
  'after-not-next': 'the next fetch uses the highest cursor seen + 5, not the `next` given (ORB-048)',
  'cursor-before-handling': 'the cursor is persisted before the events are handled, 2.5 s each (ORB-048)',
  'not-idempotent': 'no handled-ids file: an event repeated after a restart is acted on again (ORB-048, ORB-096)',
  'ignore-retry-after': 'a 429 is retried after 500 ms, whatever its Retry-After (ORB-100)',
  'crash-on-null-body': 'an encrypted mention (body null) crashes the bot (ORB-036)',
  'empty-on-null': 'an encrypted mention is read as empty text: `you said: ` (ORB-036)',
  everyone: 'every post starts with @everyone (ORB-032)',
  flood: 'each mention is answered 15 times, unpaced (ORB-032)',
  'piecemeal-commands': 'commands are DELETEd, then PUT one a list at a time (ORB-065)',
  'no-fallback': 'after a 410 the answer is not posted (ORB-071)',
  'late-respond': 'a typed command is answered 7 s late (ORB-071)',
  'token-in-query': 'the events request also carries ?token= (ORB-002)',
  'post-elsewhere': 'mentions are answered in the read-only ch_news, not where they came from (ORB-032)',
  'null-as-false': 'a passport answer of holds: null is read as false: "not verified" (ORB-088)',
  'silent-seat': '/join takes a voice seat and never sends a heartbeat (ORB-077)',
  'no-speaking': 'voice heartbeats leave out speaking (ORB-077)',
  'no-version': 'posts go to /api/bot/messages, outside /api/bot/v1 (ORB-001)',
  'unknown-operation': 'at start, a call the bot API does not have: GET /api/bot/v1/whoami (ORB-001)',
  'no-auth': 'the events poll carries no Authorization (ORB-002)',
  refetch: 'after the first reply with events, the next fetch asks again from the cursor before it (ORB-048)',
  'no-dedup': 'an event delivered again is acted on again, in the same process too (ORB-048)',
  'changing-commands': 'a second, shorter command list is pushed 2 s after the first (ORB-065)',
  'no-respond': 'typed commands are never answered (ORB-071)',
  card: 'mentions are answered with a /trade card (ORB-032)',
  'exit-early': 'the bot exits by itself 1.5 s after its start (OBC-06)',
  'ignore-sigterm': 'SIGTERM is ignored (OBC-06)'
}
const FAULTS = Object.keys(FAULT_RULES)
const faults = new Set((process.env.ORBTEST_EXAMPLE_FAULT ?? '').split(',').map((f) => f.trim()).filter(Boolean))
for (let i = 2; i < process.argv.length; i++) {
  const arg = process.argv[i]
  if (arg === '--fault' && i + 1 < process.argv.length) faults.add(process.argv[++i])
  else if (arg.startsWith('--fault=')) faults.add(arg.slice('--fault='.length))
  else { console.error(`usage: bot.mjs [--fault NAME]...  (faults: ${FAULTS.join(', ')})`); process.exit(2) }
}
for (const f of faults) {
  if (!FAULTS.includes(f)) {
    console.error(`unknown fault ${f}\nusage: bot.mjs [--fault NAME]...  (faults: ${FAULTS.join(', ')})`)
    process.exit(2)
  }
}
const fault = (name) => faults.has(name)

const ORB = (process.env.ORB_URL ?? '').replace(/\/+$/, '')
const TOKEN = process.env.ORB_TOKEN ?? ''
const APP_ID = process.env.ORB_APP_ID ?? ''
const HOME = process.env.HOME || homedir()
if (ORB === '' || TOKEN === '') { console.error('ORB_URL and ORB_TOKEN must be set'); process.exit(2) }
const API = `${ORB}/api/bot/v1`
const CURSOR_FILE = join(HOME, '.orb-bot-cursor')
const HANDLED_FILE = join(HOME, '.orb-bot-handled')

/** ORB-065: everything the bot can do, in one place; pushed whole. */
const COMMANDS = [
  { name: 'ping', description: 'Answers pong.' },
  { name: 'echo', description: 'Says your text back.', options: [{ name: 'text', description: 'What to say back.' }] },
  { name: 'join', description: 'Takes a seat in the first voice channel and keeps it.' },
  {
    name: 'verify',
    description: 'Says whether a wallet holds a human passport.',
    options: [{ name: 'address', description: 'The wallet address, 0x and 40 hex digits.' }]
  }
]
/** ORB-032: the limits of POST /messages, as sliding one-minute windows. */
const POSTS_PER_MINUTE = 30
const POSTS_PER_CHANNEL_MINUTE = 12

// ---- Stopping: SIGTERM/SIGINT abort the held poll and every wait; nothing new starts. -----------------------------
const stopping = new AbortController()
const stopped = () => stopping.signal.aborted
const stop = () => {
  stopping.abort()
  if (seat?.timer !== undefined) clearInterval(seat.timer)
  setTimeout(() => process.exit(0), 900).unref() // a call in flight gets what is left of the second
}
process.on('SIGTERM', () => fault('ignore-sigterm') ? undefined : stop()) // FAULT: OBC-06
process.on('SIGINT', stop)
if (fault('exit-early')) setTimeout(() => process.exit(0), 1500) // FAULT: OBC-06

/** Resolves after `ms`, or at once when the bot is stopping. */
function sleep (ms) {
  return new Promise((resolve) => {
    if (stopped()) return resolve()
    const done = () => { clearTimeout(timer); stopping.signal.removeEventListener('abort', done); resolve() }
    const timer = setTimeout(done, ms)
    stopping.signal.addEventListener('abort', done)
  })
}

// ---- Calling the bot API ----------------------------------------------------------------------------------------

/**
 * One call, retried until it has an answer other than 429: ORB-100 waits the 429's Retry-After (1 s without one)
 * before the same call again, and a network error waits 1 s. ORB-002: the token goes in Authorization and nowhere
 * else, and is never printed (logs name the path without its query). Only the poll is aborted by a stop. Answers
 * {status, body}.
 */
async function call (method, path, body, { poll = false } = {}) {
  const where = `${method} ${path.split('?')[0]}`
  for (;;) {
    if (stopped()) throw new Error('stopping')
    let res
    try {
      res = await send(method, path, body, poll)
    } catch (err) {
      if (stopped()) throw err
      console.error(`${where}: ${err.cause?.code ?? err.message}; again in 1 s`)
      await sleep(1000)
      continue
    }
    const text = await res.text().catch(() => '')
    if (res.status === 429) {
      const waitMs = retryAfterMs(res)
      console.error(`${where}: 429; again in ${waitMs} ms`)
      await sleep(waitMs)
      continue
    }
    const json = parseJson(text)
    if (res.status >= 400) console.error(`${where}: ${res.status} ${json?.error?.message ?? ''}`)
    return { status: res.status, body: json }
  }
}

/** One request of `call`: the token in Authorization, a body as JSON; the poll is aborted by a stop. */
function send (method, path, body, poll) {
  // FAULT: ORB-001, posts outside /api/bot/v1 (no-version); ORB-002, the poll without its token (no-auth)
  const base = fault('no-version') && path === '/messages' ? `${ORB}/api/bot` : API
  const auth = fault('no-auth') && poll ? {} : { authorization: `Bearer ${TOKEN}` }
  const type = body === undefined ? {} : { 'content-type': 'application/json' }
  return fetch(`${base}${path}`, {
    method,
    headers: { ...auth, ...type },
    body: body === undefined ? undefined : JSON.stringify(body),
    ...(poll ? { signal: stopping.signal } : {})
  })
}

/** ORB-100: how long to wait after a 429: its Retry-After in seconds, at least 1 s, and 1 s without one. */
function retryAfterMs (res) {
  if (fault('ignore-retry-after')) return 500 // FAULT: ORB-100
  const seconds = Number.parseInt(res.headers.get('retry-after') ?? '', 10)
  return Math.max(1, Number.isFinite(seconds) ? seconds : 1) * 1000
}

/** A reply's text as JSON; undefined when it is not JSON (an empty body, a proxy's HTML page). */
function parseJson (text) {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/** ORB-032: the posts of the last minute, oldest first, each with its channel. */
const posts = []

/** ORB-032: waits until one more post to `channel` stays under both windows, then takes the slot. */
async function pace (channel) {
  while (!stopped()) {
    const now = Date.now()
    while (posts.length > 0 && posts[0].at <= now - 60_000) posts.shift()
    const here = posts.filter((p) => p.channel === channel)
    let freeAt = now
    // A window frees a slot when its limit-th newest post leaves it.
    if (posts.length >= POSTS_PER_MINUTE) freeAt = posts[posts.length - POSTS_PER_MINUTE].at + 60_000
    if (here.length >= POSTS_PER_CHANNEL_MINUTE) {
      freeAt = Math.max(freeAt, here[here.length - POSTS_PER_CHANNEL_MINUTE].at + 60_000)
    }
    if (freeAt <= now) {
      const slot = { at: now, channel }
      posts.push(slot)
      return slot
    }
    await sleep(freeAt - now + 50)
  }
  return undefined
}

/** POST /messages in a slot `pace` gave (or none, under the flood fault); the slot dates from Orb's answer. */
async function post (slot, channel, content, replyTo) {
  const text = fault('everyone') ? `@everyone ${content}` : content
  const reply = Number.isSafeInteger(replyTo) ? { reply_to: replyTo } : {}
  await call('POST', '/messages', { channel, content: text.slice(0, 2000), ...reply })
  if (slot !== undefined) slot.at = Date.now()
}

/** Never @everyone (ORB-032), even one pieced together by a first removal ("@every@everyoneone"); spaces tidied. */
function clean (text) {
  let out = text
  while (/@everyone/i.test(out)) out = out.replace(/@everyone/gi, '')
  return out.replace(/[ \t]{2,}/g, ' ').trim()
}

// ---- The cursor and the handled events (ORB-048, ORB-096) -------------------------------------------------------

async function readCursor () {
  const n = Number.parseInt((await readFile(CURSOR_FILE, 'utf8').catch(() => '0')).trim(), 10)
  return Number.isSafeInteger(n) && n >= 0 ? n : 0
}

/** Atomically: a half-written cursor file is never read. */
async function saveCursor (cursor) {
  const tmp = `${CURSOR_FILE}.${process.pid}.tmp`
  await writeFile(tmp, `${cursor}\n`)
  await rename(tmp, CURSOR_FILE)
}

const handled = new Set(fault('not-idempotent')
  ? []
  : (await readFile(HANDLED_FILE, 'utf8').catch(() => '')).split('\n').filter(Boolean))

/** The moment of acting: the id is written down, so a repeat of the event (after a restart too) is skipped. */
async function acting (event) {
  handled.add(event.id)
  if (!fault('not-idempotent')) await appendFile(HANDLED_FILE, `${event.id}\n`)
  console.log(`acted ${event.id} ${event.type}`)
}

// ---- Acting on events -------------------------------------------------------------------------------------------

/** ORB-036: the reply to a mention; an encrypted message (body null) is neither a crash nor empty text. */
function mentionReply (message) {
  let body = message?.body
  if (fault('crash-on-null-body')) body.trim()
  if (fault('empty-on-null') && body === null) body = ''
  if (typeof body !== 'string') return 'I cannot read encrypted messages.'
  const text = APP_ID === '' ? body : body.split(`<@${APP_ID}>`).join('')
  if (fault('card')) return `/trade buy 1 ORB\n${clean(text).slice(0, 200)}` // FAULT: ORB-032, a card
  return `you said: ${clean(text).slice(0, 200)}`
}

/** ORB-071: the answer to a typed command. */
async function commandAnswer (command, server) {
  if (command?.name === 'ping') return 'pong'
  if (command?.name === 'echo') return clean(String(command.options?.text ?? '')).slice(0, 1800) || '(nothing to echo)'
  if (command?.name === 'verify') return await verify(String(command.options?.address ?? ''), server)
  if (command?.name === 'join') return await joinVoice(server)
  return `I do not know /${String(command?.name ?? '')}.`
}

/** ORB-077: a seat is kept with a heartbeat every 30 s, well inside the 90 s after which Orb drops it. */
const HEARTBEAT_MS = 30_000
let seat // { call, timer } while the bot sits in a call

async function joinVoice (server) {
  if (seat !== undefined) return 'I am in a voice channel already.'
  const app = await call('GET', `/app?server=${encodeURIComponent(String(server ?? ''))}`)
  const voice = (app.body?.channels ?? []).find((c) => c?.type === 'voice')
  if (voice === undefined) return 'I can see no voice channel here.'
  const joined = await call('POST', '/voice', { action: 'join', channel: voice.id })
  if (joined.status !== 200 || typeof joined.body?.call !== 'string') return `I could not join ${voice.name}.`
  const callId = joined.body.call
  const beat = async () => {
    if (stopped() || seat?.call !== callId) return
    const speaking = fault('no-speaking') ? {} : { speaking: false } // FAULT: ORB-077, no speaking
    const r = await call('POST', '/voice', { action: 'heartbeat', call: callId, ...speaking })
      .catch(() => undefined)
    if (r?.status === 410) { clearInterval(seat.timer); seat = undefined } // dropped, or the call ended
  }
  seat = { call: callId, timer: fault('silent-seat') ? undefined : setInterval(beat, HEARTBEAT_MS) }
  return `Joined ${voice.name}.`
}

/** ORB-088: `holds` is three-valued; null means the chain could not be asked, so the answer is "not known yet". */
async function verify (address, server) {
  if (!/^0x[0-9a-fA-F]{40}$/.test(address)) return 'Give a wallet address: 0x and 40 hex digits.'
  const query = new URLSearchParams({ server: String(server ?? ''), address, kind: 'human' })
  const { status, body } = await call('GET', `/passport?${query}`)
  if (status !== 200 || body === undefined) return 'I could not check that passport.'
  const holds = fault('null-as-false') && body.holds === null ? false : body.holds
  if (holds === true) return `${address} holds a human passport.`
  if (holds === false) return `${address} holds no human passport.`
  return 'The passport registry cannot be reached right now, so I cannot say yet; ask me again in a minute.'
}

/** Acts on one event, once: a repeat of an event already handled (after a restart too) is skipped. */
async function handle (event) {
  // FAULT: ORB-048, no-dedup acts on an event again, whatever was handled
  if (typeof event?.id !== 'string' || /\s/.test(event.id) || (handled.has(event.id) && !fault('no-dedup'))) return
  if (fault('cursor-before-handling')) await sleep(2500)
  if (stopped()) return
  await EVENT_HANDLERS.get(event.type)?.(event)
}

/** ORB-032: a mention is answered in the channel it came from (never a voice or read-only one), as a reply. */
async function onMention (event) {
  const content = mentionReply(event.data?.message)
  const channel = fault('post-elsewhere') ? 'ch_news' : event.channel
  const replyTo = fault('post-elsewhere') ? undefined : event.data?.message?.id
  if (fault('flood')) {
    await acting(event)
    for (let i = 0; i < 15; i++) await post(undefined, channel, content, replyTo)
    return
  }
  // Written down once Orb has answered the post: a stop while it waits (for a slot, or out a 429) leaves the event
  // to the next run, which posts it then.
  const slot = await pace(channel)
  if (slot === undefined) return
  await post(slot, channel, content, replyTo)
  await acting(event)
}

/** ORB-071: a typed command is answered within 6 s of invoked_at, and posted in its channel after a 410. */
async function onCommand (event) {
  const content = await commandAnswer(event.data?.command, event.server)
  await acting(event) // before /respond: a second respond to one event is a second answer
  if (fault('no-respond')) return // FAULT: ORB-071
  if (fault('late-respond')) await sleep(7000)
  // 409 means answered already; 410, the member stopped waiting.
  const answer = await call('POST', `/interactions/${encodeURIComponent(event.id)}/respond`, { content })
  if (answer.status === 410 && !fault('no-fallback') && typeof event.channel === 'string') {
    const slot = await pace(event.channel) // ORB-032: paced, but never dropped
    if (slot !== undefined) await post(slot, event.channel, content)
  }
}

/** What the bot does with each type of event; other types are left alone. */
const EVENT_HANDLERS = new Map([
  ['message.mention', onMention],
  ['application_command', onCommand],
  ['app.test', acting]
])

// ---- The loop ---------------------------------------------------------------------------------------------------

/** ORB-065: the whole list in one PUT (idempotent), once at start. */
async function pushCommands () {
  if (fault('piecemeal-commands')) {
    for (const c of COMMANDS) await call('DELETE', `/commands?name=${encodeURIComponent(c.name)}`)
    for (const c of COMMANDS) await call('PUT', '/commands', { commands: [c] })
  } else {
    await call('PUT', '/commands', { commands: COMMANDS })
  }
  if (fault('unknown-operation')) await call('GET', '/whoami') // FAULT: ORB-001
  if (fault('changing-commands')) { // FAULT: ORB-065, a second list from the same run
    setTimeout(() => { call('PUT', '/commands', { commands: COMMANDS.slice(1) }).catch(() => {}) }, 2000)
  }
}

/** The events after `after`, held up to 25 s: the reply's body, or undefined when it is not a list of events. */
async function fetchEvents (after) {
  const leak = fault('token-in-query') ? `token=${encodeURIComponent(TOKEN)}&` : '' // FAULT: ORB-002
  const query = `${leak}after=${after}&wait=25&limit=50`
  const { status, body } = await call('GET', `/events?${query}`, undefined, { poll: true })
  if (status !== 200 || !Array.isArray(body?.events) || !Number.isSafeInteger(body.next)) return undefined
  return body
}

/** ORB-048: the next request uses the `next` given, nothing else. */
function nextCursor (body) {
  if (!fault('after-not-next') || body.events.length === 0) return body.next
  return Math.max(...body.events.map((e) => Number(e.cursor) || 0)) + 5 // FAULT: ORB-048
}

async function main () {
  await pushCommands()
  let after = await readCursor()
  let refetched = false
  while (!stopped()) {
    const body = await fetchEvents(after)
    if (body === undefined) {
      await sleep(5000)
      continue
    }
    const next = nextCursor(body)
    if (fault('cursor-before-handling')) await saveCursor(next)
    for (const event of body.events) {
      if (stopped()) break
      await handle(event)
    }
    if (stopped()) break // the batch may be unfinished: the cursor stays, and a restart repeats what is left
    // ORB-048: persisted only once every event of the reply is handled.
    if (!fault('cursor-before-handling')) await saveCursor(next)
    if (fault('refetch') && !refetched && body.events.length > 0) { refetched = true; continue } // FAULT: ORB-048
    after = next
    if (body.mode === 'webhook') await sleep(2000) // events go to the endpoint URL; look again now and then
  }
}

main().then(() => process.exit(0), (err) => {
  if (stopped()) process.exit(0)
  console.error(err)
  process.exit(1)
})
