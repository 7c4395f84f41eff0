// `orbtest proxy orb` in front of a fake Orb that stands in for a real one: the reference bot runs through the proxy
// (a real CLI process), the fake judges the same traffic itself, and the two judges must agree; the Orb's replies are
// read against the spec; what the upstream receives is what the bot sent, but for its Host.
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { createServer as createHttpsServer } from 'node:https'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'
import t, { type Test } from 'tap'
import type { ServerFinding } from '../conformance/client/core/journal.js'
import { startOrbJudge, ORB_SCENARIO_ONLY } from '../conformance/client/orb/judge.js'
import { orbServerFindings } from '../conformance/server/orb/passive.js'
import { startOrbMock, type OrbMock } from '../src/orb-mock/index.js'
import type { OrbFault } from '../src/orb-mock/faults.js'
import type { TapExchange } from '../src/shared/tap.js'
import { CLI } from './helpers/cli.js'
import { scratch } from './helpers/fake.js'
import { DEMO } from './helpers/orb.js'
import { exitOf, until } from './helpers/process.js'
import { ROOT } from './helpers/root.js'
import { exchangeOf } from './helpers/tap-exchange.js'

const BOT = join(ROOT, 'examples', 'orb-bot-events', 'bot.mjs')
const WEBHOOK_BOT = join(ROOT, 'examples', 'orb-bot-webhook', 'bot.mjs')

interface Report { checks: Array<{ id: string, verdict: string }>, server?: ServerFinding[] }
const read = (file: string): Report => JSON.parse(readFileSync(file, 'utf8')) as Report
const verdicts = (report: Report): Record<string, string> =>
  Object.fromEntries(report.checks.map((c) => [c.id, c.verdict]))

interface Proxied { child: ChildProcess, stdout: () => string, stderr: () => string, url: () => string | undefined }

/** `orbtest proxy orb` in front of `upstream`, as a process of its own, with the app's token in ORB_TOKEN. */
function proxy (
  t: Test,
  upstream: string,
  flags: string[],
  command: string[] = [],
  env: NodeJS.ProcessEnv = {}
): Proxied {
  const dir = scratch(t)
  const ready = join(dir, 'ready.json')
  const child = spawn(process.execPath, [CLI, 'proxy', 'orb', '--upstream', upstream, '--listen', '0',
    '--ready-file', ready, ...flags, ...(command.length === 0 ? [] : ['--', ...command])], {
    stdio: ['ignore', 'pipe', 'pipe'],
    // A HOME of its own: the reference bot keeps its cursor there.
    env: { ...process.env, ORB_TOKEN: DEMO.token, ORB_APP_ID: 'app_demo', HOME: dir, ...env }
  })
  t.teardown(() => { child.kill('SIGKILL') })
  let stdout = ''
  let stderr = ''
  child.stdout!.on('data', (chunk: Buffer) => { stdout += chunk.toString() })
  child.stderr!.on('data', (chunk: Buffer) => { stderr += chunk.toString() })
  const url = (): string | undefined => existsSync(ready)
    ? (JSON.parse(readFileSync(ready, 'utf8')) as { proxy: { url: string } }).proxy.url
    : undefined
  return { child, stdout: () => stdout, stderr: () => stderr, url }
}

interface Through { proxy: Report, direct: Record<string, string>, code: number | null, stderr: string, dir: string }

/**
 * The reference bot (with `args`) through the proxy, in front of a fake Orb (with `faults`) that judges the same
 * traffic: a member mentions the bot once it polls, and the run ends once the bot has answered (or 15 s have gone).
 */
async function botThroughProxy (t: Test, args: string[], faults: OrbFault[] = []): Promise<Through> {
  const dir = scratch(t)
  const direct = startOrbJudge(join(dir, 'direct.json'), DEMO.token, { command: 'the test', receiver: 'the fake' })
  const fake: OrbMock = await startOrbMock({ port: 0, tap: direct.tap, faults })
  t.teardown(async () => { await fake.close() })
  const report = join(dir, 'proxy.json')
  const p = proxy(t, fake.url, ['--judge', report, '--record', join(dir, 'bot.jsonl')],
    [process.execPath, BOT, ...args])
  const posts = (): number => fake.store.messages.size
  const before = posts()
  t.ok(await until(() => direct.state().requests >= 2, 15_000), 'the bot reached the Orb through the proxy')
  const mention = { server: 'srv_orbit', channel: 'ch_general', member: 'mem_ada', content: '<@app_demo> hello' }
  fake.control.memberPost(mention)
  const answered = await until(() => posts() >= before + 2, 15_000)
  p.child.kill('SIGTERM')
  const code = await exitOf(p.child)
  direct.finish()
  return {
    proxy: read(report),
    direct: verdicts(read(join(dir, 'direct.json'))),
    code,
    stderr: p.stderr() + (answered ? '' : '\n(the bot did not answer)'),
    dir
  }
}

t.test('PROXY-10 a clean bot through the proxy: the verdicts of a judge of the same traffic at the fake, no server finding, exit 0', async (t) => {
  const r = await botThroughProxy(t, [])
  t.same(verdicts(r.proxy), r.direct, 'every check has the verdict it has at the fake')
  t.equal(verdicts(r.proxy)['ORB-032'], 'pass', 'the bot\'s answer to the mention was judged (ORB-032)')
  for (const id of ORB_SCENARIO_ONLY) t.notOk(id in verdicts(r.proxy), `${id} needs a scenario: not judged here`)
  t.same(r.proxy.server, [], 'the fake\'s replies hold to the spec: no server finding')
  t.equal(r.code, 0, 'exit 0')
  t.match(r.stderr, /the Orb's replies: 0 server finding/, 'the server\'s count on its own line')
  const recording = readFileSync(join(r.dir, 'bot.jsonl'), 'utf8')
  t.notOk(recording.includes(DEMO.token), 'the recording holds no token')
  const parity = spawn(process.execPath, [CLI, 'parity', join(r.dir, 'bot.jsonl')],
    { stdio: ['ignore', 'pipe', 'pipe'] })
  let said = ''
  for (const stream of [parity.stdout!, parity.stderr!]) {
    stream.on('data', (chunk: Buffer) => { said += chunk.toString() })
  }
  t.equal(await exitOf(parity), 0, 'the recording replays against a fresh fake Orb with no difference of behaviour',
    { said })
})

t.test('PROXY-11 a faulty bot through the proxy is caught under the rule it breaks (@everyone: ORB-032), exit 1', async (t) => {
  const r = await botThroughProxy(t, ['--fault', 'everyone'], ['everyone-allowed'])
  t.equal(verdicts(r.proxy)['ORB-032'], 'fail', 'ORB-032 failed through the proxy')
  t.equal(r.direct['ORB-032'], 'fail', 'as at the fake')
  t.equal(r.code, 1, 'exit 1')
})

/** An upstream that answers each path as `answer` says, and keeps what it received. */
type Answer = (req: IncomingMessage, res: ServerResponse, body: Buffer) => void

async function upstreamOf (t: Test, answer: Answer): Promise<{
  url: string
  received: Array<{ req: IncomingMessage, body: Buffer }>
}> {
  const received: Array<{ req: IncomingMessage, body: Buffer }> = []
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      received.push({ req, body: Buffer.concat(chunks) })
      answer(req, res, Buffer.concat(chunks))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { server.closeAllConnections(); server.close() })
  const address = server.address() as { port: number }
  return { url: `http://127.0.0.1:${address.port}`, received }
}

/** A POST with node:http, its reply read whole. */
async function post (url: string, body: string, headers: Record<string, string>): Promise<{
  status: number
  headers: IncomingMessage['headers']
  body: string
}> {
  return await new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers }, (res) => {
      let text = ''
      res.on('data', (chunk: Buffer) => { text += chunk.toString() })
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }))
    })
    req.once('error', reject)
    req.end(body)
  })
}

const json = (res: ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}): void => {
  res.writeHead(status, { 'content-type': 'application/json', ...headers })
  res.end(JSON.stringify(value))
}

t.test('PROXY-12 what the upstream receives is what the bot sent, but for Host and the headers of one connection; a held reply streams', async (t) => {
  // The held reply ends only once its first bytes have reached the client, through the proxy.
  let release = (): void => undefined
  const up = await upstreamOf(t, (req, res) => {
    if (req.url?.startsWith('/api/bot/v1/events') === true) {
      res.writeHead(200, { 'content-type': 'application/json' })
      res.write('{"events": [], ')
      release = () => { res.end('"next": 0, "mode": "events"}') }
      return
    }
    json(res, 200, { id: 7, channel: 'ch_general' }, { 'x-upstream': 'yes' })
  })
  const p = proxy(t, `${up.url}/`, ['--strict-server'])
  t.ok(await until(() => p.url() !== undefined, 10_000), 'the proxy is up')
  const body = '{"channel":"ch_general","content":"hi"}'
  // fetch refuses to send a header of one connection (Keep-Alive); a bot's own HTTP client may.
  const reply = await post(`${p.url()!}/api/bot/v1/messages`, body, {
    authorization: `Bearer ${DEMO.token}`, 'content-type': 'application/json', 'x-mine': 'a', 'keep-alive': 'timeout=5'
  })
  t.equal(reply.status, 200, 'the upstream\'s status')
  t.equal(reply.headers['x-upstream'], 'yes', 'the upstream\'s headers')
  t.same(JSON.parse(reply.body), { id: 7, channel: 'ch_general' }, 'the upstream\'s body')
  const got = up.received[0]!
  t.equal(got.req.headers.host, new URL(up.url).host, 'Host names the upstream')
  t.equal(got.req.headers.authorization, `Bearer ${DEMO.token}`, 'the token passes unchanged')
  t.equal(got.req.headers['x-mine'], 'a', 'other headers as sent')
  t.equal(got.req.headers['keep-alive'], undefined, 'a header of one connection is not forwarded')
  t.equal(got.body.toString(), body, 'the body, byte for byte')
  const auth = { authorization: `Bearer ${DEMO.token}` }
  const held = await fetch(`${p.url()!}/api/bot/v1/events?wait=2`, { headers: auth })
  const reader = held.body!.getReader()
  const firstChunk = await reader.read()
  t.match(Buffer.from(firstChunk.value!).toString(), /^\{"events"/,
    'its first bytes came while the upstream held the rest')
  release()
  let rest = ''
  for (let r = await reader.read(); !r.done; r = await reader.read()) rest += Buffer.from(r.value).toString()
  t.match(rest, /"mode": "events"\}$/, 'and the rest, once it came')
  p.child.kill('SIGTERM')
  t.equal(await exitOf(p.child), 0, 'exit 0 with --strict-server: the replies held to the spec')
})

t.test('PROXY-13 an Orb that breaks the spec gives server findings under their ids (ORB-101, ORB-099, ORB-043, ORB-A01); --strict-server fails on them', async (t) => {
  const up = await upstreamOf(t, (req, res) => {
    if (req.url === '/api/bot/v1/app') json(res, 401, { message: 'no' })
    else if (req.url === '/api/bot/v1/commands') json(res, 429, { error: { message: 'slow down', code: 429 } })
    else if (req.url?.startsWith('/api/bot/v1/events') === true) json(res, 200, { events: 'none', next: 0 })
    else json(res, 403, { error: { message: 'no', code: 400 } })
  })
  const p = proxy(t, up.url, ['--strict-server'])
  t.ok(await until(() => p.url() !== undefined, 10_000), 'the proxy is up')
  const auth = { authorization: `Bearer ${DEMO.token}` }
  for (const path of ['/app', '/commands', '/events?after=0', '/music?channel=ch_stage']) {
    await (await fetch(`${p.url()!}/api/bot/v1${path}`, { headers: auth })).text()
  }
  p.child.kill('SIGTERM')
  t.equal(await exitOf(p.child), 1, 'exit 1 with --strict-server')
  for (const id of ['ORB-101', 'ORB-099', 'ORB-043', 'ORB-A01']) {
    t.match(p.stderr(), new RegExp(`  ${id} \\(`), `${id} named`)
  }
})

/** One exchange as the proxy's tap gives it: an events reply as the spec gives it, unless `over` says otherwise. */
const exchange = (over: Partial<TapExchange>): TapExchange => exchangeOf({
  target: '/api/bot/v1/events?after=0',
  replyHeaders: { 'content-type': 'application/json' },
  reply: '{"events": [], "next": 0, "mode": "events"}',
  ...over
})

t.test('PROXY-14 server findings: none for what the spec allows, a cut reply, one the proxy made, or a path outside the API', async (t) => {
  t.same(orbServerFindings(exchange({})), [], 'an events reply as the spec gives it')
  const error = (status: number): string => `{"error": {"message": "m", "code": ${status}}}`
  t.same(orbServerFindings(exchange({ status: 404, reply: error(404) })), [],
    'an error in the spec\'s shape, its code its status')
  t.same(orbServerFindings(exchange({ status: 429, reply: error(429), replyHeaders: { 'retry-after': '3' } })), [],
    'a 429 with its Retry-After')
  t.same(orbServerFindings(exchange({ reply: '{"events": 1', finished: false })), [],
    'a reply cut short: nothing to read')
  t.same(orbServerFindings(exchange({ status: 502, reply: '', notes: ['the proxy answered: the upstream could not be reached (ECONNREFUSED)'] })), [],
    'a 502 the proxy made')
  t.same(orbServerFindings(exchange({ target: '/favicon.ico', status: 404, reply: 'nope' })), [], 'outside the API')
  const ids = (over: Partial<TapExchange>): string[] => orbServerFindings(exchange(over)).map((f) => f.id)
  t.same(ids({ reply: '<html>' }), ['ORB-043'], 'an events reply that is not JSON')
  t.same(ids({ method: 'POST', target: '/api/bot/v1/messages', reply: '{"id": "7"}' }), ['ORB-024'],
    'a PostedMessage whose id is a string')
})

t.test('PROXY-15 usage mistakes are one line and exit 2; an upstream out of reach is a 502 in the Error shape, not a crash', async (t) => {
  type Ran = Promise<{ code: number | null, stderr: string }>
  const run = async (args: string[], env: NodeJS.ProcessEnv = process.env): Ran => {
    const child = spawn(process.execPath, [CLI, 'proxy', 'orb', ...args], { stdio: ['ignore', 'ignore', 'pipe'], env })
    let stderr = ''
    child.stderr!.on('data', (chunk: Buffer) => { stderr += chunk.toString() })
    return { code: await exitOf(child), stderr }
  }
  const noUpstream = await run(['--listen', '0'])
  t.equal(noUpstream.code, 2, 'no --upstream: exit 2')
  t.match(noUpstream.stderr, /--upstream/, 'said so')
  t.equal((await run(['--upstream', 'ftp://orb.example'])).code, 2, 'not http or https: exit 2')
  t.equal((await run(['--upstream', 'http://127.0.0.1:1', '--listen', '0.0.0.0:0'])).code, 2, 'not loopback: exit 2')
  const { ORB_TOKEN: _, ...without } = process.env
  const judge = await run(['--upstream', 'http://127.0.0.1:1', '--listen', '0', '--judge', 'r.json'], without)
  t.equal(judge.code, 2, '--judge without ORB_TOKEN: exit 2')
  t.match(judge.stderr, /ORB_TOKEN/, 'said so')
  t.notMatch(judge.stderr, /\n\s+at /, 'no stack trace')

  const record = await run(['--upstream', 'http://127.0.0.1:1', '--listen', '0', '--record', 'r.jsonl'], without)
  t.equal(record.code, 2, '--record without ORB_TOKEN: exit 2 (the recording names the token\'s placeholder)')

  const p = proxy(t, 'http://127.0.0.1:1', ['--strict-server'])
  t.ok(await until(() => p.url() !== undefined, 10_000), 'the proxy is up')
  const reply = await fetch(`${p.url()!}/api/bot/v1/app`, { headers: { authorization: `Bearer ${DEMO.token}` } })
  t.equal(reply.status, 502, '502')
  const body = await reply.json() as { error: { message: string, code: number } }
  t.equal(body.error.code, 502, 'in the spec\'s Error shape')
  t.match(body.error.message, /could not be reached/, 'saying why')
  p.child.kill('SIGTERM')
  t.equal(await exitOf(p.child), 0, 'no server finding for what the proxy answered itself: exit 0 with --strict-server')
})

/** A loopback port free a moment ago, for a bot that must be told its port before it starts. */
async function freePort (): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise((resolve) => server.close(resolve))
  return port
}

interface Delivered { report: Report, code: number | null, stderr: string, deliveries: Array<{ outcome: string }> }

/**
 * The reference webhook bot (with `args`) behind the proxy, which is the app's endpoint at a fake Orb (with
 * `faults`): a member types the bot's command, and the run ends once the Orb has logged that delivery.
 */
async function webhookThroughProxy (t: Test, args: string[], faults: OrbFault[] = []): Promise<Delivered> {
  const fake: OrbMock = await startOrbMock({ port: 0, faults })
  t.teardown(async () => { await fake.close() })
  const port = await freePort()
  const report = join(scratch(t), 'proxy.json')
  const p = proxy(t, fake.url, ['--judge', report, '--webhook-to', `http://127.0.0.1:${port}/`],
    [process.execPath, WEBHOOK_BOT, ...args], { PORT: String(port) })
  t.ok(await until(() => p.url() !== undefined && p.stdout().includes('listening on'), 15_000), 'the bot listens')
  const put = await fetch(`${fake.url}/api/bot/v1/commands`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${DEMO.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ commands: [{ name: 'ping', description: 'Ping', args: [], right: 'send_messages' }] })
  })
  t.equal(put.status, 200, 'the developer registered the bot\'s command')
  fake.control.setEndpoint('app_demo', `${p.url()!}/webhook`)
  fake.control.invoke({ server: 'srv_orbit', channel: 'ch_general', member: 'mem_ada', name: 'ping' })
  const log = (): Array<{ outcome: string }> =>
    fake.control.deliveries('app_demo').deliveries as Array<{ outcome: string }>
  t.ok(await until(() => log().length > 0, 15_000), 'the Orb delivered the command to the proxy')
  p.child.kill('SIGTERM')
  const code = await exitOf(p.child)
  return { report: read(report), code, stderr: p.stderr(), deliveries: log() }
}

t.test('PROXY-16 --webhook-to: the Orb\'s delivery goes on to the bot and its answer back, judged (ORB-097); a clean bot and Orb pass', async (t) => {
  const r = await webhookThroughProxy(t, [])
  t.same(r.deliveries.map((d) => d.outcome), ['delivered'], 'the Orb counted the bot\'s answer as delivered')
  t.equal(verdicts(r.report)['ORB-097'], 'pass', 'the command answered in time with a notice (ORB-097)')
  t.notOk('ORB-096' in verdicts(r.report), 'ORB-096 (an event sent twice) is the suite\'s, which sends it twice')
  t.same(r.report.server, [], 'the delivery held to the spec: signed, named, an Event without cursor')
  t.equal(r.code, 0, 'exit 0')
})

t.test('PROXY-17 --webhook-to: a bot without a notice fails ORB-097; an Orb that signs another body gives ORB-091', async (t) => {
  const late = await webhookThroughProxy(t, ['--fault', 'no-notice'])
  t.equal(verdicts(late.report)['ORB-097'], 'fail', 'a command answered without {"notice"}: ORB-097 failed')
  t.equal(late.code, 1, 'exit 1')
  const forged = await webhookThroughProxy(t, [], ['signature-parsed-body'])
  t.same((forged.report.server ?? []).map((f) => f.id), ['ORB-091'], 'the Orb\'s signature is a server finding')
  t.equal(verdicts(forged.report)['ORB-097'], 'not-exercised', 'a delivery the proxy cannot verify is not judged')
})

const OPENSSL = spawnSync('openssl', ['version']).status === 0

t.test('PROXY-18 an https upstream: the proxy speaks TLS to it, with Host and the certificate\'s name its own', {
  skip: OPENSSL ? false : 'no openssl on the PATH to make a certificate with'
}, async (t) => {
  const dir = scratch(t)
  const key = join(dir, 'key.pem')
  const cert = join(dir, 'cert.pem')
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
    '-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost'],
  { stdio: 'ignore' })
  const hosts: string[] = []
  const server = createHttpsServer({ key: readFileSync(key), cert: readFileSync(cert) }, (req, res) => {
    hosts.push(req.headers.host ?? '')
    json(res, 200, { id: 'app_demo' })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { server.closeAllConnections(); server.close() })
  const port = (server.address() as { port: number }).port
  // The certificate is trusted as a real Orb's is, through the CA list Node reads at start.
  const p = proxy(t, `https://localhost:${port}`, [], [], { NODE_EXTRA_CA_CERTS: cert })
  t.ok(await until(() => p.url() !== undefined, 10_000), 'the proxy is up')
  const reply = await fetch(`${p.url()!}/api/bot/v1/app`, { headers: { authorization: `Bearer ${DEMO.token}` } })
  t.equal(reply.status, 200, 'the upstream\'s answer, over TLS')
  t.same(await reply.json(), { id: 'app_demo' }, 'its body')
  t.same(hosts, [`localhost:${port}`], 'Host names the upstream')
  p.child.kill('SIGTERM')
  t.equal(await exitOf(p.child), 0, 'exit 0')
})

t.test('PROXY-19 a compressed reply is read as the client reads it: no server finding for a gzip body that holds to the spec', async (t) => {
  const up = await upstreamOf(t, (req, res) => {
    const body = req.url?.startsWith('/api/bot/v1/events') === true
      ? '{"events": [], "next": 0, "mode": "events"}'
      : '{"error": {"message": "No such thing for this app", "code": 404}}'
    res.writeHead(req.url?.startsWith('/api/bot/v1/events') === true ? 200 : 404,
      { 'content-type': 'application/json', 'content-encoding': 'gzip' })
    res.end(gzipSync(body))
  })
  const p = proxy(t, up.url, ['--strict-server'])
  t.ok(await until(() => p.url() !== undefined, 10_000), 'the proxy is up')
  const auth = { authorization: `Bearer ${DEMO.token}`, 'accept-encoding': 'gzip' }
  const events = await fetch(`${p.url()!}/api/bot/v1/events?after=0`, { headers: auth })
  t.same(await events.json(), { events: [], next: 0, mode: 'events' },
    'the client gets the body, decoded by its own client')
  await (await fetch(`${p.url()!}/api/bot/v1/messages/9`, { method: 'DELETE', headers: auth })).text()
  p.child.kill('SIGTERM')
  t.equal(await exitOf(p.child), 0, 'exit 0 with --strict-server: both replies held, read decoded')
  t.match(p.stderr(), /the Orb's replies: 0 server finding/, 'none counted')
  const notes = ['the reply body was not read: zstd']
  const x = exchange({ replyHeaders: { 'content-encoding': 'zstd' }, reply: '', notes })
  t.same(orbServerFindings(x), [], 'a body in an encoding the proxy does not read gives no finding')
})
