#!/usr/bin/env node
// orbtest's reference Orb webhook bot for Node >= 20: plain ES module, no dependencies. Orb POSTs each event to it
// (its endpoint URL); it checks the signature before anything else, acts at most once per event, answers a typed
// command inline with a notice, and answers a mention with a message through the bot API. Ledger rules it follows:
// signatures ORB-091 ORB-095 ORB-A12 (raw bytes, constant time, any order of keys, any matching v1, 5 minutes of
// tolerance, 401 and no action otherwise); duplicates ORB-096; inline answers ORB-097 ORB-A13; the token only in
// Authorization ORB-002; encrypted messages (body null) ORB-036. `--fault NAME` breaks one rule on purpose.
//
// Environment: PORT (the loopback port to listen on), ORB_TOKEN (the app's token), ORB_URL (the Orb's origin; without
// it the bot only says on stdout what it would post). Every event it acts on is one line on stdout: `acted <event id>
// <type>`.
import http from 'node:http'
import { createHash, createHmac, timingSafeEqual } from 'node:crypto'

// ---- The fault switch, for the suite's self-test. With no fault the bot follows the contract exactly. -------------
const FAULTS = ['no-signature-check', 'parsed-body', 'no-tolerance', 'first-v1-only', 'acts-on-duplicates',
  'notice-on-mention', 'late-notice', 'no-notice', 'crash-on-null-body', 'accept-unsigned', 'blind-acts',
  'ok-to-forgeries']
const faults = new Set((process.env.ORBTEST_EXAMPLE_FAULT ?? '').split(',').map((f) => f.trim()).filter(Boolean))
for (let i = 2; i < process.argv.length; i++) {
  const arg = process.argv[i]
  if (arg === '--fault' && i + 1 < process.argv.length) faults.add(process.argv[++i])
  else if (arg.startsWith('--fault=')) faults.add(arg.slice('--fault='.length))
  else { console.error(`usage: bot.mjs [--fault NAME]...  (faults: ${FAULTS.join(', ')})`); process.exit(2) }
}
for (const f of faults) if (!FAULTS.includes(f)) { console.error(`unknown fault ${f}`); process.exit(2) }
const fault = (name) => faults.has(name)

const TOKEN = process.env.ORB_TOKEN ?? ''
const PORT = Number(process.env.PORT ?? 0)
const ORB = process.env.ORB_URL
if (TOKEN === '') { console.error('ORB_TOKEN is not set'); process.exit(2) }

/** ORB-A12: a `t` further than this from our clock is refused, in the past or the future. */
const TOLERANCE_MS = 5 * 60 * 1000
/** ORB-091: the signing key is sha256(token) as lowercase hex, used as its 64 ASCII bytes. */
const KEY = createHash('sha256').update(TOKEN, 'utf8').digest('hex')
/** Event ids already acted on (ORB-096), the oldest forgotten first. */
const seen = new Set()
const SEEN_KEPT = 10000

// ---- Checking a delivery (ORB-095, ORB-A12) ---------------------------------------------------------------------

/** `t=<ms>,v1=<hex>` in any order, spaces ignored, unknown keys ignored; every v1 kept. Undefined when malformed. */
function parseSignature (header) {
  if (typeof header !== 'string') return undefined
  let t
  const v1 = []
  for (const part of header.split(',')) {
    const at = part.indexOf('=')
    if (at < 0) continue
    const key = part.slice(0, at).trim()
    const value = part.slice(at + 1).trim()
    if (key === 't' && /^\d{1,16}$/.test(value)) t = Number(value)
    if (key === 'v1' && /^[0-9a-f]{64}$/.test(value)) v1.push(value)
  }
  if (t === undefined || v1.length === 0) return undefined
  return { t, v1: fault('first-v1-only') ? v1.slice(0, 1) : v1 }
}

/** Whether the raw body, as received, is signed by Orb now. */
function genuine (header, raw) {
  if (fault('no-signature-check')) return true
  const sig = parseSignature(header)
  if (sig === undefined) return fault('accept-unsigned') && header === undefined
  if (!fault('no-tolerance') && Math.abs(Date.now() - sig.t) > TOLERANCE_MS) return false
  // The exact bytes received: a body parsed and serialised again is other bytes (the parsed-body fault does that).
  const signed = fault('parsed-body') ? Buffer.from(JSON.stringify(JSON.parse(raw.toString('utf8')))) : raw
  const expected = createHmac('sha256', KEY).update(`${sig.t}.`).update(signed).digest()
  // Constant time: every v1 is compared whole, as bytes.
  let match = false
  for (const v of sig.v1) if (timingSafeEqual(Buffer.from(v, 'hex'), expected)) match = true
  return match
}

// ---- Acting on events -------------------------------------------------------------------------------------------

async function post (channel, content) {
  if (ORB === undefined) {
    console.log(`would post to ${channel}: ${content}`)
    return
  }
  try {
    const res = await fetch(`${ORB}/api/bot/v1/messages`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ channel, content })
    })
    await res.arrayBuffer()
    if (!res.ok) console.error(`posting to ${channel}: ${res.status}`)
  } catch (err) {
    console.error(`posting to ${channel}: ${err.message}`)
  }
}

/** What to answer a genuine event with (status and JSON), after acting on it once. */
async function handle (event) {
  const id = String(event.id)
  // FAULT: ORB-096, acts-on-duplicates and blind-acts act on an event again
  if (seen.has(id) && !fault('acts-on-duplicates') && !fault('blind-acts')) return { status: 200, body: {} }
  seen.add(id)
  if (seen.size > SEEN_KEPT) seen.delete(seen.values().next().value)
  console.log(`acted ${id} ${event.type}`)
  if (event.type === 'application_command') {
    const name = event.data?.command?.name ?? 'command'
    if (fault('late-notice')) await new Promise((resolve) => setTimeout(resolve, 4500))
    if (fault('no-notice')) return { status: 200, body: {} }
    return { status: 200, body: { notice: `${name}: pong` } }
  }
  if (event.type === 'message.mention') {
    const message = event.data?.message
    // ORB-036: an encrypted message has body null: neither a crash nor empty text.
    const text = message?.body
    // The fault: the process dies on the null body (a throw outside any handler, as a careless bot would).
    if (fault('crash-on-null-body')) setImmediate(() => text.trim())
    const reply = fault('blind-acts') // FAULT: a reply that carries nothing of the message
      ? 'hello!'
      : typeof text === 'string' ? `you said: ${text.slice(0, 200)}` : 'I cannot read encrypted messages.'
    if (typeof event.channel === 'string') post(event.channel, reply).catch(() => {})
    return { status: 200, body: fault('notice-on-mention') ? { notice: 'seen' } : {} }
  }
  return { status: 204 }
}

const server = http.createServer((req, res) => {
  const chunks = []
  let size = 0
  req.on('data', (chunk) => {
    size += chunk.length
    if (size <= 1024 * 1024) chunks.push(chunk)
  })
  req.on('end', async () => {
    const answer = (status, body) => {
      res.writeHead(status, body === undefined ? {} : { 'content-type': 'application/json' })
      res.end(body === undefined ? undefined : JSON.stringify(body))
    }
    if (req.method !== 'POST' || size > 1024 * 1024) return answer(req.method === 'POST' ? 413 : 405, { error: 'no' })
    const raw = Buffer.concat(chunks)
    // ORB-095: nothing is read from the body, nor acted on, before the signature holds.
    // FAULT: ORB-A12, a forgery answered 200 (and not acted on); ORB-095, blind-acts checks nothing
    if (!genuine(req.headers['x-orb-signature'], raw) && !fault('blind-acts')) {
      return answer(fault('ok-to-forgeries') ? 200 : 401, { error: 'bad signature' })
    }
    let event
    try {
      event = JSON.parse(raw.toString('utf8'))
    } catch {
      return answer(400, { error: 'not JSON' })
    }
    try {
      const { status, body } = await handle(event)
      answer(status, body)
    } catch (err) {
      console.error(`event ${event?.id}: ${err.message}`)
      answer(500, { error: 'failed' })
    }
  })
})

server.listen(PORT, '127.0.0.1', () => {
  console.log(`listening on http://127.0.0.1:${server.address().port}/`)
})
const stop = () => server.close(() => process.exit(0))
process.on('SIGTERM', stop)
process.on('SIGINT', stop)
