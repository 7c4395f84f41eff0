#!/usr/bin/env node
// orbtest's reference Orbtile adapter for Node >= 20: plain ES module, no dependencies. It simulates an agent with
// two sessions (s1 asks approvals, s2 asks questions) and applies the keypad's decisions. Ledger rules it follows:
// transport and headers OT-002 OT-003 OT-011..014 OT-019; discovery read afresh OT-005 OT-A03 OT-A04; /info proof
// OT-039 OT-A29, apiMinor OT-A28; token in memory only OT-022; registration OT-058 OT-064 OT-074 OT-A10 OT-A27;
// sessions OT-113 OT-A18, request ids OT-128; events OT-134 OT-138 OT-139 OT-147 OT-148 OT-A30 OT-A31; rate OT-027
// OT-A20; unknown reply fields OT-008; lease loss OT-A06, unregister OT-A07. `--fault NAME` breaks one rule on purpose.
import http from 'node:http'
import net from 'node:net'
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import { readFileSync, writeFileSync } from 'node:fs'
import { homedir, tmpdir } from 'node:os'
import { join } from 'node:path'
import { deflateSync } from 'node:zlib'

// ---- The fault switch, for the suite's self-test. With no fault the adapter follows the contract exactly. -------
const FAULTS = ['no-host', 'origin', 'info-no-content-type', 'batch-no-adapter-token', 'ignore-retry-after', 'flood',
  'two-polls', 'ack-on-receipt', 'apply-expired', 'apply-bad-picks', 'reuse-request-id', 'missed-heartbeat',
  'hardcoded-socket', 'stale-discovery', 'log-token', 'token-file', 'crash-on-unknown-field', 'icon-dropped',
  'cursor-past', 'ack-decreases', 'hue-205', 'trust-impostor', 'unknown-palette-key', 'crash', 'garbage',
  'connections', 'ignore-sigterm', 'invalid-body', 'freeze-on-unknown-field', 'no-base-path', 'wrong-bearer',
  'short-nonce', 'fixed-nonce', 'wait-for-keypad', 'attention-hue', 'pending-id-elsewhere', 'no-ack-stale',
  'apply-to-current', 'ignore-api-minor', 'absolute-target', 'host-port', 'content-type-parameter', 'keep-cursor']
/** Set by the freeze fault: a promise that never settles, which every request then waits on. */
let frozen = null
const faults = new Set((process.env.ORBTEST_EXAMPLE_FAULT ?? '').split(',').map((f) => f.trim()).filter(Boolean))
for (let i = 2; i < process.argv.length; i++) {
  const arg = process.argv[i]
  if (arg === '--fault' && i + 1 < process.argv.length) faults.add(process.argv[++i])
  else if (arg.startsWith('--fault=')) faults.add(arg.slice('--fault='.length))
  else { console.error(`usage: adapter.mjs [--fault NAME]...  (faults: ${FAULTS.join(', ')})`); process.exit(2) }
}
for (const f of faults) if (!FAULTS.includes(f)) { console.error(`unknown fault ${f}`); process.exit(2) }
const fault = (name) => faults.has(name)

// ---- Constants -------------------------------------------------------------------------------------------------
const ID = 'dev.orbtest.example-node'
const TOKEN_HEADER = 'X-Orbtile-Adapter-Token'
const DISCOVERY = process.env.ORBTILE_DISCOVERY ||
  join(homedir(), 'Library', 'Application Support', 'Orbtile', 'adapter-api.json')
const QUESTIONS = [
  { text: 'Which?', header: 'Pick', multiSelect: false, options: [{ label: 'A' }, { label: 'B' }] },
  { text: 'Which ones?', multiSelect: true, options: [{ label: 'x' }, { label: 'y' }, { label: 'z' }] }
]
/**
 * How long our own UI waits for a decision before the user answers in the agent itself and the request is withdrawn.
 */
const OWN_UI_ANSWERS_MS = 3000
const agent = new http.Agent({ keepAlive: true, maxSockets: 4 })
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
const log = (line) => process.stderr.write(`orbtile-adapter-node: ${line}\n`) // short lines, never a token

// ---- State, all of it in memory (OT-022) -----------------------------------------------------------------------
let discovery = null // { socketPath, basePath, token }: a new object whenever the file says something else
let verified = null // the discovery object whose /info proof checked out (OT-039)
let refusedToken = null // the bearer the app last refused: never sent again (OT-A04)
let apiMinor = 0
let adapterToken = null // OT-022: never printed, written or exported
let lease = 0 // bumped whenever the lease is lost or renewed; what was sent under an older one is void
let registered = false
let sessionsCreated = false
let keypadDecisions = false
let nextRegisterAt = 0
let nextHeartbeatAt = 0
let blockedUntil = 0 // OT-027: after a 429 nothing at all is sent before this time...
let probe = null // ...and then one request alone: the others wait for its reply, which may be a 429 again
let cursor = { after: 0, ack: 0 }
let highestReceived = 0
let idPrefix = ''
let idCounter = 0
let stopping = false
const sessions = new Map([
  ['s1', { id: 's1', title: 'Approvals demo', kind: 'approval', pending: null, nextAskAt: 0 }],
  ['s2', { id: 's2', title: 'Questions demo', kind: 'question', pending: null, nextAskAt: 0 }]
])
// Bookkeeping for the faults only (the connections fault keeps its idle sockets in `held`).
const fx = {
  discoveryReads: 0,
  registeredOnce: false,
  flooded: false,
  polls: 0,
  cursorPast: false,
  held: [],
  invalidSent: false,
  /** The lowest stale sequence discarded and never acknowledged (no-ack-stale). */
  unacked: Infinity,
  /** The last poll was refused invalid_cursor (keep-cursor tries it once more). */
  cursorRefused: false
}

// ---- The icon: a 16x16 RGBA PNG drawn here (a blue disc), compressed with zlib ---------------------------------
const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  for (let k = 0; k < 8; k++) n = n & 1 ? 0xedb88320 ^ (n >>> 1) : n >>> 1
  return n >>> 0
})
const crc32 = (buf) => (buf.reduce((c, b) => CRC_TABLE[(c ^ b) & 0xff] ^ (c >>> 8), 0xffffffff) ^ 0xffffffff) >>> 0
function pngChunk (type, data) { // length, type, data, CRC-32 of type and data
  const typed = Buffer.concat([Buffer.from(type, 'latin1'), data])
  const length = Buffer.alloc(4)
  length.writeUInt32BE(data.length)
  const crc = Buffer.alloc(4)
  crc.writeUInt32BE(crc32(typed))
  return Buffer.concat([length, typed, crc])
}
function makeIcon (size = 16) {
  const row = 1 + size * 4 // a filter byte (0: none), then RGBA pixels
  const raw = Buffer.alloc(size * row) // all transparent
  const c = (size - 1) / 2
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) {
      if ((x - c) ** 2 + (y - c) ** 2 <= (c + 0.5) ** 2) raw.set([0x4f, 0x6b, 0xed, 0xff], y * row + 1 + x * 4)
    }
  }
  const ihdr = Buffer.alloc(13)
  ihdr.writeUInt32BE(size, 0)
  ihdr.writeUInt32BE(size, 4)
  ihdr.set([8, 6, 0, 0, 0], 8) // 8-bit RGBA, deflate, standard filters, no interlace
  return Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), pngChunk('IHDR', ihdr),
    pngChunk('IDAT', deflateSync(raw)), pngChunk('IEND', Buffer.alloc(0))]).toString('base64')
}
const ICON_PNG = makeIcon()

// ---- Discovery (OT-005, OT-A04): read at start and again after every failure, never cached past one -----------
function refreshDiscovery () {
  if (fault('stale-discovery') && fx.discoveryReads > 0) return // FAULT: the first reading is kept for ever (OT-005)
  let next = null
  const d = readDiscoveryFile()
  if (typeof d?.socketPath === 'string' && typeof d.basePath === 'string' && typeof d.token === 'string') {
    next = { socketPath: d.socketPath, basePath: d.basePath, token: d.token } // unknown keys ignored
  }
  if (next !== null) fx.discoveryReads++
  const same = next !== null && discovery !== null && next.socketPath === discovery.socketPath &&
    next.basePath === discovery.basePath && next.token === discovery.token
  if (!same) discovery = next // a changed file must pass the /info proof again before anything else is sent
}

/** The discovery file's JSON, or null while it is missing or half written: the API is off for now (OT-A03). */
function readDiscoveryFile () {
  try {
    return JSON.parse(readFileSync(DISCOVERY, 'utf8'))
  } catch {
    return null
  }
}

// ---- Transport: one HTTP/1.1 exchange over the Unix socket (OT-002, OT-003) -----------------------------------
// The head is written only once the request has a connected socket, and `stale()` is asked first: a code
// (EGATED, ELEASE) drops the request unsent, and request() decides what follows. A request queued behind the
// agent's four sockets is handed the socket a 429 has just freed before any promise continuation of ours runs
// (OT-027), and a new connection's head waits for its connect, while a new lease may come (OT-019).
function send (method, route, body, extraHeaders = {}, stale = () => null) {
  const d = discovery
  const json = body === undefined ? undefined : JSON.stringify(body) // PUT/POST bodies are JSON objects (OT-A05)
  const headers = {
    Host: fault('host-port') ? 'localhost:80' : 'localhost', // OT-011; FAULT: with a port (host-port)
    // OT-012: every request, GET /info and DELETE included; FAULT: with a parameter (content-type-parameter)
    'Content-Type': fault('content-type-parameter') ? 'application/json; version=1' : 'application/json',
    Authorization: `Bearer ${fault('wrong-bearer') ? 'not-the-discovery-token' : d.token}`, // OT-013
    ...extraHeaders
  } // OT-014: no Origin header, ever
  if (fault('no-host')) delete headers.Host
  if (fault('origin')) headers.Origin = 'http://localhost'
  if (fault('info-no-content-type') && route === '/info') delete headers['Content-Type']
  // OT-019: every adapter route carries the lease token while we hold one (re-registration included)
  // FAULT: OT-019, the batch route never carries the token (every batch, so some are sent long after the lease began)
  const dropToken = fault('batch-no-adapter-token') && method === 'PUT' && route.endsWith('/sessions')
  const withToken = route.startsWith('/adapters/') && !dropToken
  if (json !== undefined) headers['Content-Length'] = Buffer.byteLength(json)
  const socketPath = fault('hardcoded-socket') ? '/tmp/orbtile.sock' : d.socketPath
  return new Promise((resolve, reject) => {
    // FAULT: OT-003, the routes without basePath (no-base-path), or as an absolute URI (absolute-target)
    const path = fault('no-base-path') ? route : fault('absolute-target') ? `http://localhost${d.basePath}${route}` : d.basePath + route
    const options = { socketPath, path, method, headers, agent, setHost: !fault('no-host') }
    const req = http.request({ ...options, timeout: 15000 }, (res) => {
      // OT-027: a 429 closes the gate as soon as its status line is read, before its socket goes back to the agent
      if (res.statusCode === 429 && !fault('ignore-retry-after')) noteRateLimit(res.headers, Date.now())
      const chunks = []
      res.on('data', (chunk) => chunks.push(chunk))
      res.on('error', reject)
      res.on('end', () => {
        const parsed = parseJson(Buffer.concat(chunks).toString('utf8'))
        const reply = { status: res.statusCode, headers: res.headers, body: parsed, at: Date.now() }
        resolve({ ...reply, discovery: d, sent: headers }) // and what was sent: the discovery used, the headers
      })
    })
    req.on('timeout', () => req.destroy(Object.assign(new Error('timed out'), { code: 'ETIMEDOUT' })))
    req.on('error', reject)
    // OT-019: the token is the one held when the request goes out, and that is when its socket is connected.
    const write = () => {
      const code = stale()
      if (code !== null) { req.destroy(Object.assign(new Error('not sent'), { code })); return }
      if (withToken && adapterToken !== null) {
        headers[TOKEN_HEADER] = adapterToken
        req.setHeader(TOKEN_HEADER, adapterToken)
      }
      req.end(json)
    }
    req.once('socket', (socket) => { if (socket.connecting) socket.once('connect', write); else write() })
  })
}

/** A reply's body as JSON, or null when it is not JSON (an empty 204, a body cut short). */
function parseJson (text) {
  try {
    return JSON.parse(text)
  } catch {
    return null
  }
}

const isObject = (v) => v !== null && typeof v === 'object'
const valueOf = (v) => (typeof v === 'function' ? v() : v)
const errorOf = (r) => (isObject(r.body) && isObject(r.body.error) ? r.body.error : {})
function logStatus (what, r) { // an unexpected status: its code and message only
  const { code, message } = errorOf(r)
  log(`${what}: ${r.status}${code ? ` ${code}` : ''}${typeof message === 'string' ? `: ${message.slice(0, 160)}` : ''}`)
}
function noteRateLimit (headers, at) { // OT-027, OT-A20: Retry-After in whole seconds (or an HTTP date), else 1 s
  const value = String(headers['retry-after'] ?? '').trim()
  const date = Date.parse(value)
  const ms = /^\d+$/.test(value) ? Number(value) * 1000 : Number.isNaN(date) ? 1000 : date - at
  blockedUntil = Math.max(blockedUntil, at + ms)
}

// OT-027, OT-A20: after a 429 nothing is sent before Retry-After; then the first request goes alone, and the others
// wait for its reply (a 429 again closes the gate again), or 500 ms: a held long poll was let in.
async function rateGate () {
  for (;;) {
    if (Date.now() < blockedUntil) await sleep(blockedUntil - Date.now())
    else if (probe !== null) await probe
    else return
  }
}
function startProbe () {
  blockedUntil = 0
  let resolve
  const p = new Promise((_resolve) => { resolve = _resolve })
  const end = () => { if (probe === p) probe = null; resolve() }
  probe = p
  setTimeout(end, 500)
  return end
}

// The protocol's policy around send(). Returns the reply, or null when it must not be sent now (stopping, or the
// socket has not passed the /info proof yet: the caller gives up and the agent loop checks the new socket first).
// `body` and `extraHeaders` may be functions, called for each attempt: a retry then sends a fresh nonce (OT-039)
// and the events cursor as it is by then (OT-138).
async function request (method, route, body, extraHeaders) {
  const bearer = { retried: false } // OT-A04: a refused bearer is retried once, with the file read again
  for (;;) {
    if (stopping) return null
    if (frozen !== null) await frozen // FAULT: freeze-on-unknown-field stops every loop, not the one that read it
    await rateGate() // OT-027
    if (discovery === null) refreshDiscovery()
    if (discovery === null) { await sleep(300); continue } // no file: the API is off (OT-A03)
    if (waitingForNewToken()) { await sleep(300); refreshDiscovery(); continue }
    if (route !== '/info' && verified !== discovery) return null // OT-039: nothing before the proof
    const leaseAtSend = lease
    const endProbe = probeIfGated()
    const stale = staleCheck(leaseAtSend)
    const r = await send(method, route, valueOf(body), valueOf(extraHeaders), stale).catch((err) => err)
    endProbe()
    if (r instanceof Error) {
      if (r.code === 'ELEASE') return null
      // ENOENT, ECONNREFUSED, ECONNRESET, EPIPE: the app may be off, or restarted on a new socket (OT-005, OT-A03);
      // EGATED goes straight back to the gate.
      if (r.code !== 'EGATED') { await sleep(300); refreshDiscovery() }
      continue
    }
    if (fault('crash-on-unknown-field') || fault('freeze-on-unknown-field')) await crashOnUnknownKeys(route, r)
    if (r.status === 429) continue // OT-027, OT-A20: send() closed the gate for Retry-After; then try again
    if (r.status === 503 && errorOf(r).code === 'api_disabled') { await sleep(500); continue } // OT-A03
    if (bearerRefused(r, bearer)) continue
    noteLeaseLoss(r, leaseAtSend)
    return r
  }
}

/** OT-A04: a refused bearer waits for the file to change. FAULT: stale-discovery sends it on regardless. */
function waitingForNewToken () {
  return discovery.token === refusedToken && !fault('stale-discovery')
}

/** OT-027, OT-A20: the first request after a 429's wait goes alone; the function given back ends its turn. */
function probeIfGated () {
  return blockedUntil > 0 ? startProbe() : () => {}
}

// Whether a request is not to be sent after all, asked once its socket is connected: a 429 has closed the gate
// (EGATED, OT-027: back to the gate), or the lease has changed (ELEASE, OT-019: its token and its body, an events
// cursor or a session of the old lease, are stale: given up, as a reply under a changed lease is; its caller acts
// anew under the new one).
function staleCheck (leaseAtSend) {
  return () => (Date.now() < blockedUntil ? 'EGATED' : lease !== leaseAtSend ? 'ELEASE' : null)
}

/** OT-A04: a 401 for the discovery token: the file is read again, and the request retried once. True: retry it. */
function bearerRefused (r, bearer) {
  if (r.status !== 401 || errorOf(r).field === TOKEN_HEADER) return false
  refusedToken = r.discovery.token
  refreshDiscovery()
  if (bearer.retried) return false
  bearer.retried = true
  return true
}

/** OT-A06: the lease is gone (not registered, or the token we sent is no longer the lease's). */
function noteLeaseLoss (r, leaseAtSend) {
  const error = errorOf(r)
  const tokenRefused = r.status === 401 && error.field === TOKEN_HEADER && TOKEN_HEADER in r.sent
  if (leaseAtSend === lease && (error.code === 'adapter_not_registered' || tokenRefused)) leaseLost()
}

// ---- The /info proof (OT-039, OT-A29) ---------------------------------------------------------------------------
async function verify () {
  for (;;) {
    // Fresh each time: 32 hex chars. FAULT: OT-039, 8 hex characters (short-nonce), or the same one (fixed-nonce)
    const value = () => fault('fixed-nonce')
      ? '0123456789abcdef'
      : randomBytes(fault('short-nonce') ? 4 : 16).toString('hex')
    const nonce = () => ({ 'X-Orbtile-Nonce': value() })
    const r = await request('GET', '/info', undefined, nonce)
    if (r === null) return
    if (r.status === 200 && isObject(r.body)) {
      // lowercase hex HMAC-SHA256, key = the discovery token's UTF-8 bytes, message = the nonce's ASCII bytes
      const expected = Buffer.from(createHmac('sha256', Buffer.from(r.discovery.token, 'utf8'))
        .update(Buffer.from(r.sent['X-Orbtile-Nonce'], 'ascii')).digest('hex'))
      const proof = Buffer.from(typeof r.body.proof === 'string' ? r.body.proof : '', 'utf8')
      const genuine = proof.length === expected.length && timingSafeEqual(proof, expected) // constant time
      if (genuine || fault('trust-impostor')) {
        verified = r.discovery
        apiMinor = Number.isInteger(r.body.apiMinor) ? r.body.apiMinor : 0 // OT-A28
        log(`connected to Orbtile (apiMinor ${apiMinor})`)
        return
      }
      log('impostor: /info proof missing or wrong; registering nothing')
    } else logStatus('GET /info', r)
    await sleep(1000)
    refreshDiscovery()
  }
}

// ---- Registration and the lease ---------------------------------------------------------------------------------
async function register () {
  const palette = { baseHue: fault('hue-205') ? 210 : 250 } // OT-074: clear of 205..215
  if (fault('unknown-palette-key')) palette.sheen = 1 // FAULT: Palette is a closed object (OT-A10)
  if (fault('attention-hue')) palette.attentionHue = 150 // FAULT: OT-081, no calm colour to fix, and not an alarm hue
  const body = { name: 'orbtest example (Node)', palette, capabilities: ['tap', 'approvals', 'questions'] }
  // OT-A28: icon only on a v1.2 server; OT-064: with every registration, or Orbtile drops it (OT-063)
  // FAULT: OT-A28, the icon to an older app too (ignore-api-minor)
  if ((apiMinor >= 2 || fault('ignore-api-minor')) && !(fault('icon-dropped') && fx.registeredOnce)) {
    body.icon = { png: ICON_PNG }
  }
  const r = await request('PUT', `/adapters/${ID}`, body)
  if (r === null || r.status !== 200 || !isObject(r.body)) {
    if (r !== null) logStatus('register', r)
    nextRegisterAt = Date.now() + 1000
    return
  }
  fx.registeredOnce = true
  const token = typeof r.body.adapterToken === 'string' ? r.body.adapterToken : null
  if (!registered || token !== adapterToken) newLease(token, r.body)
  const keypad = r.body.keypadDecisions === true // OT-A27: missing reads as false; OT-058: only a snapshot
  if (keypad !== keypadDecisions) log(`keypadDecisions: ${keypad}`)
  keypadDecisions = keypad
  nextRegisterAt = Date.now() + 4000 // OT-058: register again to re-read keypadDecisions
}

function newLease (token, reply) { // a new lease: new cursor, new request-id namespace, sessions made again
  lease++
  fx.unacked = Infinity
  adapterToken = token
  registered = true
  sessionsCreated = false
  if (!fault('keep-cursor')) { // FAULT: OT-138, OT-A23, the last lease's cursor carried into the new one
    cursor = { after: 0, ack: 0 }
    highestReceived = 0
  }
  idPrefix = randomBytes(3).toString('hex')
  idCounter = 0
  for (const s of sessions.values()) s.pending = null
  log(`registered (enabled: ${reply.enabled === true}${typeof reply.reason === 'string' ? `, ${reply.reason}` : ''})`)
  if (fault('log-token')) console.log(`adapterToken ${token}`) // FAULT: OT-022
  const stateFile = join(process.env.TMPDIR || tmpdir(), 'orbtile-state.json')
  if (fault('token-file')) writeFileSync(stateFile, JSON.stringify({ adapterToken: token })) // FAULT: OT-022
}

function leaseLost () { // OT-A06: drop the token, register anew without it
  if (registered) log('lease gone: registering anew')
  lease++
  adapterToken = null
  registered = false
  sessionsCreated = false
  nextRegisterAt = 0
}

// ---- The simulated agent: sessions, heartbeats, requests --------------------------------------------------------
const sessionRoute = (s) => `/adapters/${ID}/sessions/${s.id}`
async function createSessions () {
  const items = [...sessions.values()].map((s) => ({ id: s.id, title: s.title, activity: 'thinking', ttlSeconds: 10 }))
  const r = await request('PUT', `/adapters/${ID}/sessions`, { sessions: items })
  if (r === null || r.status !== 200) { if (r !== null) logStatus('sessions batch', r); await sleep(1000); return }
  sessionsCreated = true
  nextHeartbeatAt = Date.now() + 3000
  for (const s of sessions.values()) { s.pending = null; s.nextAskAt = Date.now() } // ask at once
  log('sessions s1 and s2 created')
  if (fault('flood') && !fx.flooded) { // FAULT: 200 heartbeats back to back on 4 connections, far past OT-027's rate
    fx.flooded = true
    const stream = async () => {
      for (let i = 0; i < 50; i++) await send('POST', sessionRoute(sessions.get('s1')), {}).catch(() => null)
    }
    await Promise.all([stream(), stream(), stream(), stream()]) // ... and then it behaves (send() closed the gate)
  }
}

async function heartbeat () { // OT-113, OT-A18: `{}` restarts each session's 10 s TTL clock, every 3 s
  nextHeartbeatAt = Date.now() + 3000
  for (const s of sessions.values()) {
    // FAULT: the first heartbeat of the process carries a subagentCount the schema refuses (OTC-06)
    const body = fault('invalid-body') && !fx.invalidSent ? { subagentCount: -1 } : {}
    if (fault('invalid-body')) fx.invalidSent = true
    const r = await request('POST', sessionRoute(s), body)
    if (r !== null && r.status !== 200) logStatus(`heartbeat ${s.id}`, r)
  }
}

function nextRequestId () {
  if (fault('reuse-request-id')) { // FAULT: r1, r2, r1, ...: retired ids come back (OT-128), never a pending one
    let id
    do id = `r${(idCounter++ % 2) + 1}`; while ([...sessions.values()].some((s) => s.pending?.id === id))
    return id
  }
  return `${idPrefix}-${++idCounter}` // OT-128: never reused in a lease, across sessions, kinds, or retirement
}

async function maybeAsk (s) {
  const now = Date.now()
  if (s.pending !== null && now - s.pending.postedAt >= OWN_UI_ANSWERS_MS) return await withdraw(s)
  if (s.pending !== null || now < s.nextAskAt) return
  // FAULT: OT-125, the question takes the id pending as the approval on s1
  const elsewhere = fault('pending-id-elsewhere') && s.kind === 'question' ? sessions.get('s1').pending?.id : undefined
  const id = elsewhere ?? nextRequestId()
  const body = s.kind === 'approval'
    ? { activity: 'waitingPermission', approval: { id, toolName: 'Bash', commandSummary: 'npm test' } }
    : { activity: 'waitingQuestion', question: { id, questions: QUESTIONS } }
  const leaseAtAsk = lease
  s.pending = { kind: s.kind, id, postedAt: now, questions: body.question?.questions } // pending in our UI now
  const r = await request('POST', sessionRoute(s), body)
  if (lease !== leaseAtAsk) return
  if (r !== null && r.status === 200) { log(`asked ${s.kind} ${id} on ${s.id}`); return }
  if (r !== null) logStatus(`asking on ${s.id}`, r)
  s.pending = null
  s.nextAskAt = Date.now() + 1000
}

// The user answered in the agent's own UI before the keypad did: the request is no longer pending here, and a
// decision that arrives for it later is stale (OT-147, OT-148).
async function withdraw (s) {
  if (fault('wait-for-keypad') && keypadDecisions) { // FAULT: OT-058, everything waits for the keypad's decision
    if (frozen === null) setInterval(() => {}, 60_000) // the process stays up, stuck
    frozen ??= new Promise(() => {})
    return
  }
  const { id } = s.pending
  const r = await request('POST', sessionRoute(s), { [s.kind]: null, activity: 'thinking' })
  if (r === null || r.status !== 200) return
  log(`${s.kind} ${id} answered in our own UI: withdrawn`)
  s.pending = null
  s.nextAskAt = Date.now() + 300
}

async function agentStep () {
  if (discovery === null || verified !== discovery) { await verify(); nextRegisterAt = 0 } // OT-039, then register
  if (Date.now() >= nextRegisterAt) await register()
  else if (registered && !sessionsCreated) await createSessions()
  else if (registered && !fault('missed-heartbeat')) { // FAULT: OT-113, the sessions hear nothing once made
    if (Date.now() >= nextHeartbeatAt) await heartbeat()
    for (const s of sessions.values()) await maybeAsk(s)
  }
  await sleep(100)
}

// ---- Events: one poll at a time (OT-134), ack only what was applied or discarded (OT-139) ----------------------
function pollBody () {
  fx.polls++
  const body = { after: cursor.after, ack: cursor.ack, waitSeconds: 2 }
  if (fault('cursor-past') && highestReceived > 0 && !fx.cursorPast) { // FAULT: past what was received (OT-138)
    body.after = highestReceived + 5
    fx.cursorPast = true // once: invalid_cursor then resets the cursor and the adapter goes on
  }
  if (fault('ack-decreases') && fx.polls % 2 === 0) delete body.ack // FAULT: a missing ack reads as 0 (OT-138)
  return body
}

async function pollStep () {
  if (!registered || discovery === null || verified !== discovery) { await sleep(200); return }
  const leaseAtPoll = lease
  const r = await request('POST', `/adapters/${ID}/events`, pollBody) // the body is made when it is sent
  if (lease !== leaseAtPoll) return // the lease changed meanwhile: that reply's sequences mean nothing now
  if (r === null) { await sleep(300); return }
  if (r.status !== 200) {
    // Start again from the beginning; FAULT: keep-cursor tries the refused cursor once more first
    if (errorOf(r).code === 'invalid_cursor' && !(fault('keep-cursor') && !fx.cursorRefused)) {
      cursor = { after: 0, ack: 0 }
    }
    if (errorOf(r).code === 'invalid_cursor') fx.cursorRefused = !fx.cursorRefused
    else logStatus('events poll', r)
    await sleep(500)
    return
  }
  const events = Array.isArray(r.body?.events) ? r.body.events : []
  for (const e of events) if (Number.isInteger(e?.sequence)) highestReceived = Math.max(highestReceived, e.sequence)
  if (fault('ack-on-receipt') && events.length > 0) { // FAULT: ack in the next poll, apply after it (OT-139)
    const from = cursor.after
    cursor = { after: highestReceived, ack: highestReceived }
    setTimeout(() => handleEvents(events, leaseAtPoll, from).catch((err) => log(`error: ${err.message}`)), 200)
    return
  }
  const { handled, complete } = await handleEvents(events, leaseAtPoll, cursor.after)
  // OT-138: after = the last handled sequence (never past what was received), ack = after; neither decreases
  const after = Math.max(cursor.after, handled)
  if (lease === leaseAtPoll) cursor = { after, ack: Math.min(after, fx.unacked - 1) }
  if (!complete) await sleep(500) // an event we could not apply yet comes back with the next poll
}

async function handleEvents (events, leaseAtPoll, from) {
  let handled = from
  for (const event of events) {
    if (!Number.isInteger(event?.sequence) || event.sequence <= handled) continue
    if (!(await handleEvent(event)) || lease !== leaseAtPoll) return { handled, complete: false }
    handled = event.sequence
  }
  return { handled, complete: true }
}

// true: applied or deliberately discarded, so it may be acknowledged; false: not handled (yet)
async function handleEvent (event) {
  if (event.type === 'tap') { log(`tap on ${String(event.sessionId).slice(0, 128)}`); return true }
  const s = sessions.get(event.sessionId) // OT-A30: events for unknown or ended sessions are stale
  const pending = s?.pending ?? null
  const answers = answersPending(event, pending)
  if (event.type === 'approval' && (event.decision === 'allow' || event.decision === 'deny') && answers) {
    const update = event.decision === 'allow' ? { activity: 'tool', toolKind: 'shell' } : { activity: 'thinking' }
    return apply(s, { approval: null, ...update }, `approval ${pending.id} (${event.decision})`)
  }
  if (event.type === 'question' && answers) {
    if (fault('apply-bad-picks') || picksFit(event.picks, pending.questions)) { // OT-148
      return apply(s, { question: null, activity: 'thinking' }, `question ${pending.id} ${JSON.stringify(event.picks)}`)
    }
    log(`discarded invalid answer to ${pending.id}`)
    if (fault('no-ack-stale')) fx.unacked = Math.min(fx.unacked, event.sequence) // FAULT: OT-148, never acknowledged
    return true
  }
  log(`discarded stale ${String(event.type).slice(0, 20)} ${String(event.requestId).slice(0, 128)}`)
  if (fault('no-ack-stale')) fx.unacked = Math.min(fx.unacked, event.sequence) // FAULT: OT-147, never acknowledged
  return true
}

// Whether a decision answers the request its session has pending, in time. OT-147, OT-A31: stale on or after
// expiresAt (epoch seconds, fractions count), or when our UI no longer shows it.
function answersPending (event, pending) {
  const fresh = fault('apply-expired') || (typeof event.expiresAt === 'number' && Date.now() / 1000 < event.expiresAt)
  // FAULT: OT-147, OT-148, a decision goes to whatever the session has pending, whatever its request id
  const current = pending !== null && pending.kind === event.type &&
    (pending.id === event.requestId || fault('apply-to-current'))
  return fresh && current
}

// OT-148: one unique, non-empty array per question, every index an existing option, single-select exactly one
function picksFit (picks, questions) {
  return Array.isArray(picks) && picks.length === questions.length && picks.every((p, i) =>
    Array.isArray(p) && p.length > 0 && new Set(p).size === p.length &&
    p.every((n) => Number.isInteger(n) && n >= 0 && n < questions[i].options.length) &&
    (questions[i].multiSelect === true || p.length === 1))
}

async function apply (s, update, what) { // the authoritative UI commit: done once Orbtile answers 200
  const r = await request('POST', sessionRoute(s), update)
  if (r === null || r.status !== 200) { if (r !== null) logStatus(`applying ${what}`, r); return false }
  s.pending = null
  s.nextAskAt = Date.now() + 300 // ask again 300 ms after a decision is applied
  log(`applied ${what}`)
  return true
}

// ---- FAULT crash-on-unknown-field: the opposite of OT-008 ------------------------------------------------------
const EVENT_KEYS = ['sequence', 'type', 'sessionId', 'host']
const KNOWN = {
  info: ['server', 'api', 'version', 'activities', 'limits', 'proof', 'apiMinor'],
  registration: ['adapter', 'enabled', 'keypadDecisions', 'reason', 'warnings', 'adapterToken'],
  session: ['session', 'warnings'],
  batch: ['sessions', 'ended', 'warnings'], // OT-A19: the schema gives the batch reply no shape
  events: ['events', 'lastSequence', 'acknowledged'],
  error: ['error'],
  tap: EVENT_KEYS,
  approval: [...EVENT_KEYS, 'requestId', 'decision', 'expiresAt'],
  question: [...EVENT_KEYS, 'requestId', 'picks', 'expiresAt']
}
function replyKind (route) {
  if (route.endsWith('/events')) return 'events'
  if (route.endsWith('/sessions')) return 'batch'
  return route.includes('/sessions/') ? 'session' : 'registration'
}
function crashOnUnknownKeys (route, r) { // returns a promise that never settles for the freeze fault
  if (!isObject(r.body)) return
  const kind = r.status >= 400 ? 'error' : route === '/info' ? 'info' : replyKind(route)
  const objects = [[kind, r.body]]
  if (kind === 'events' && Array.isArray(r.body.events)) for (const e of r.body.events) objects.push([e?.type, e])
  for (const [k, object] of objects) {
    const unknown = Object.keys(object ?? {}).find((key) => !(KNOWN[k] ?? []).includes(key))
    if (unknown === undefined) continue
    // FAULT: OT-008: exit, or stay up and send nothing more
    log(`unknown field ${unknown.slice(0, 40)} in a reply: ${fault('freeze-on-unknown-field') ? 'stuck' : 'exiting'}`)
    if (fault('freeze-on-unknown-field')) {
      setInterval(() => {}, 60_000)
      frozen = new Promise(() => {})
      return frozen
    }
    process.exit(1)
  }
}

// ---- Start and stop --------------------------------------------------------------------------------------------
async function stop () { // OT-A07: best-effort unregister (500 ms at most), then exit 0
  if (stopping) return
  stopping = true
  refreshDiscovery()
  const canSend = verified !== null && verified === discovery && discovery.token !== refusedToken &&
    Date.now() >= blockedUntil && probe === null
  if (registered && adapterToken !== null && canSend) {
    await Promise.race([send('DELETE', `/adapters/${ID}`).catch(() => {}), sleep(500)])
  }
  process.exit(0)
}
process.on('SIGTERM', () => (fault('ignore-sigterm') ? log('SIGTERM ignored') : stop())) // FAULT: OTC-05
process.on('SIGINT', stop)

async function forever (step) { // never crash on a reply: log, pause, go on
  for (;;) {
    try { await step() } catch (err) { log(`error: ${err.message}`); await sleep(1000) }
  }
}

log(`starting (discovery ${DISCOVERY}${faults.size > 0 ? `; faults: ${[...faults].join(', ')}` : ''})`)
if (fault('crash')) setTimeout(() => process.exit(3), 1000) // FAULT: OTC-03
if (fault('garbage') || fault('connections')) { // FAULT: OTC-02 (64 bytes that are not HTTP), OTC-04 (1000 idle)
  while (discovery === null) { refreshDiscovery(); if (discovery === null) await sleep(300) }
  const raw = () => net.connect(discovery.socketPath).on('error', () => {})
  if (fault('garbage')) raw().end(Buffer.from('\0GARBAGE'.repeat(8), 'latin1'))
  if (fault('connections')) fx.held = Array.from({ length: 1000 }, raw)
}
forever(agentStep)
forever(pollStep)
if (fault('two-polls')) setTimeout(() => forever(pollStep), 1000) // FAULT: a second poll loop (OT-134)
