// Recordings and `orbtest parity`: a recording made through the proxy (or on a fake's own tap) replayed against a
// fresh fake. A fake like the recorded server gives no difference of behaviour; a fake that differs on purpose (a
// deliberate fault, the rate limit off) gives exactly the differences that were put there; no recording holds a
// secret.
import { spawn } from 'node:child_process'
import { readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { bodyShape, differencesOf } from '../conformance/parity/compare.js'
import { Bindings } from '../conformance/parity/bindings.js'
import { heldNoLonger, type Replayed } from '../conformance/parity/replay.js'
import { parity } from '../conformance/parity/run.js'
import type { ParityReport } from '../conformance/parity/report.js'
import type { Fault } from '../src/orbtile-mock/faults.js'
import type { OrbtileMockOptions } from '../src/orbtile-mock/index.js'
import { readRecording, Recorder, type RecordedApi, type RecordedExchange } from '../src/proxy/recording.js'
import type { TapExchange, WireTap } from '../src/shared/tap.js'
import { defaultWorld } from '../src/orb-mock/world.js'
import { startOrbMock } from '../src/orb-mock/index.js'
import { CLI } from './helpers/cli.js'
import { exchange as tapExchange } from './helpers/tap-exchange.js'
import { DEMO, OrbClient } from './helpers/orb.js'
import { SocketClient } from './helpers/client.js'
import { scratch, startFake } from './helpers/fake.js'
import { ROOT } from './helpers/root.js'

const ADAPTER = join(ROOT, 'examples', 'orbtile-adapter-node', 'adapter.mjs')

interface Cli { code: number | null, stdout: string, stderr: string }

async function cli (args: string[], ms = 60_000): Promise<Cli> {
  const child = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (c: Buffer) => { stdout += c.toString() })
  child.stderr.on('data', (c: Buffer) => { stderr += c.toString() })
  const timer = setTimeout(() => child.kill('SIGKILL'), ms)
  const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)))
  clearTimeout(timer)
  return { code, stdout, stderr }
}

/** A tap that records every exchange of a fake into `file`, and keeps every reply for the secrets test. */
function recordingTap (
  file: string,
  credential: () => string,
  api: RecordedApi = 'orbtile'
): { tap: WireTap, close: () => void, replies: string[] } {
  const replies: string[] = []
  let recorder: Recorder | undefined
  const tap: WireTap = {
    now: () => performance.now(),
    request: () => undefined,
    malformed: () => undefined,
    exchange: (x: TapExchange) => {
      recorder ??= new Recorder(file, api, credential(), performance.now())
      replies.push(x.reply)
      recorder.exchange(x)
    }
  }
  return { tap, replies, close: () => recorder?.close() }
}

const ID = '/adapters/dev.orbtest.parity'

/** A short session of a scripted adapter: /info, a registration (and one of a reserved id), sessions, a poll. */
async function script (client: SocketClient): Promise<void> {
  await client.request({ path: '/info', headers: { 'x-orbtile-nonce': '0123456789abcdef0123456789abcdef' } })
  const reserved = { name: 'Reserved', palette: { baseHue: 10 } }
  await client.request({ method: 'PUT', path: '/adapters/com.orbtile.mine', body: reserved })
  const reg = await client.request({ method: 'PUT', path: ID, body: { name: 'Parity', palette: { baseHue: 200 } } })
  const headers = { 'x-orbtile-adapter-token': String(reg.json?.adapterToken) }
  const post = async (path: string, body: unknown): Promise<unknown> =>
    await client.request({ method: 'POST', path: `${ID}${path}`, headers, body })
  for (const sid of ['s1', 's2']) await post(`/sessions/${sid}`, { title: sid, activity: 'working', pid: process.pid })
  await post('/sessions/s1', {})
  await post('/events', { after: 0, ack: 0, waitSeconds: 0 })
  // A long poll on a connection of its own, then a second poll on the first connection while it waits: 409.
  const other = new SocketClient(client.socketPath, client.token)
  const held = other.request({ method: 'POST', path: `${ID}/events`, headers, body: { after: 0, waitSeconds: 1 } })
  await new Promise((resolve) => setTimeout(resolve, 100))
  const second = await post('/events', { after: 0, waitSeconds: 0 }) as { status: number }
  await held
  other.close()
  if (second.status !== 409) throw new Error(`the second poll got ${second.status}, not 409 poll_pending`)
  await post('/sessions/nope', { title: 7 })
  await client.request({ method: 'DELETE', path: ID, headers })
}

/** Replays a recording against a fresh fake (with `faults`) and reports. */
async function againstFresh (t: Test, file: string, options: OrbtileMockOptions = {}): Promise<ParityReport> {
  const fresh = await startFake(t, options)
  const target = { address: { socketPath: fresh.socketPath }, credential: fresh.token, against: 'a fresh fake' }
  return await parity(file, readRecording(file), target)
}

/** Records the script against a fake with `faults`, then replays it against a fresh one with `against` faults. */
async function scriptParity (t: Test, faults: Fault[], against: Fault[]): Promise<ParityReport> {
  const dir = scratch(t)
  const file = join(dir, 'script.jsonl')
  const holder: { token?: string } = {}
  const rec = recordingTap(file, () => holder.token!)
  const fake = await startFake(t, { autoAllow: true, pidCheck: 'off', faults, tap: rec.tap })
  holder.token = fake.token
  const client = new SocketClient(fake.socketPath, fake.token)
  await script(client)
  client.close()
  await fake.close()
  rec.close()
  return await againstFresh(t, file, { autoAllow: true, pidCheck: 'off', faults: against })
}

t.test('PARITY-01 a clean adapter recorded through the proxy replays against a fresh fake with no difference of behaviour', async (t) => {
  const dir = scratch(t)
  const recording = join(dir, 'adapter.jsonl')
  const replies: string[] = []
  const tap: WireTap = {
    request: () => undefined,
    malformed: () => undefined,
    exchange: (x) => { replies.push(x.reply) }
  }
  const fake = await startFake(t, { autoAllow: true, tap })
  const upstream = join(fake.dir, 'home', 'adapter-api.json')
  const proxy = spawn(process.execPath, [CLI, 'proxy', 'orbtile', '--upstream', upstream,
    '--discovery', join(dir, 'mine.json'), '--record', recording, '--', process.execPath, ADAPTER], { stdio: 'ignore' })
  t.teardown(() => { proxy.kill('SIGKILL') })
  for (let waited = 0; replies.length < 8 && waited < 20_000; waited += 100) {
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  proxy.kill('SIGTERM')
  const code = await new Promise<number | null>((resolve) => proxy.once('exit', (c) => resolve(c)))
  t.equal(code, 0, 'the proxy ran the adapter and stopped it')
  t.equal(statSync(recording).mode & 0o777, 0o600, 'the recording is private (0600)')

  const bytes = readFileSync(recording, 'utf8')
  const made = replies.flatMap((r) => [...r.matchAll(/"(?:adapterToken|proof)":"([^"]+)"/g)].map((m) => m[1]!))
  const secrets = [fake.token, ...made]
  t.ok(secrets.length >= 2, `the app's token and ${secrets.length - 1} token(s) or proof(s) it made`)
  // The adapter's token is random: every request after the registration needed the fake's own put back (PARITY-05).
  t.same(secrets.filter((s) => bytes.includes(s)), [], 'no token or proof is in the recording, in any form')
  t.match(bytes, /orbtest-secret-[0-9a-f]{6}-1\b/, 'each stands as a placeholder')

  const out = join(dir, 'parity.json')
  const r = await cli(['parity', recording, '--auto-allow', '--json', out])
  t.equal(r.code, 0, `exit 0 (${r.stdout.trim().split('\n').at(-1) ?? ''})`)
  const report = JSON.parse(readFileSync(out, 'utf8')) as ParityReport
  t.ok(report.compared >= 8, `${report.compared} exchanges compared`)
  t.same(report.differences.filter((d) => d.cause === 'behaviour'), [], 'no difference of behaviour')
})

t.test('PARITY-02 a recorded server with a deliberate fault: exactly that difference, and none against a fake with the same fault', async (t) => {
  const differs = await scriptParity(t, ['reserved-id-allowed'], [])
  t.same(differs.differences.map((d) => [d.route, d.kind, d.cause, d.recorded, d.replayed]), [
    ['PUT /a/v1/adapters/{adapterId}', 'status', 'behaviour', '200', '403 reserved_id']
  ], 'the reserved id: 200 recorded, 403 from a fake that follows OT-044')
  t.ok(differs.compared >= 8, `${differs.compared} exchanges compared`)
  const same = await scriptParity(t, ['reserved-id-allowed'], ['reserved-id-allowed'])
  t.same(same.differences, [], 'the same fault on both sides: no difference')
  const clean = await scriptParity(t, [], [])
  t.same(clean.differences, [], 'no fault on either side: no difference')
})

t.test('PARITY-03 the rate limit off on the recorded side: the replayed 429s, and nothing else, are differences', async (t) => {
  const dir = scratch(t)
  const file = join(dir, 'burst.jsonl')
  const holder: { token?: string } = {}
  const rec = recordingTap(file, () => holder.token!)
  const fake = await startFake(t, { rateLimit: 'off', tap: rec.tap })
  holder.token = fake.token
  const client = new SocketClient(fake.socketPath, fake.token)
  for (let i = 0; i < 90; i++) await client.request({ path: '/info' })
  client.close()
  await fake.close()
  rec.close()
  const report = await againstFresh(t, file)
  const kinds = new Set(report.differences.map((d) => `${d.route} ${d.kind} ${d.recorded} -> ${d.replayed} ${d.cause}`))
  t.ok(report.differences.length > 0, `${report.differences.length} of 90 refused by the fake's limit (burst 60)`)
  t.same([...kinds], ['GET /a/v1/info status 200 -> 429 rate_limited behaviour'],
    'each one a 429 where the recorded app answered')
})

t.test('PARITY-04 usage: not a recording, another version, a flag of the other API: exit 2 in one line', async (t) => {
  const dir = scratch(t)
  const notOne = join(dir, 'not.jsonl')
  writeFileSync(notOne, '{"hello":1}\n')
  const later = join(dir, 'later.jsonl')
  const p = 'orbtest-secret-abcdef-'
  const head = { orbtest: 'recording', version: 1, api: 'orbtile', placeholders: p, credential: `${p}1`, started: '' }
  writeFileSync(later, `${JSON.stringify({ ...head, version: 9 })}\n`)
  const orbtile = join(dir, 'ok.jsonl')
  writeFileSync(orbtile, `${JSON.stringify(head)}\n`)
  const oneExchange = `${JSON.stringify(head)}\n${JSON.stringify(exchange({}))}\n`
  const withOne = join(dir, 'one.jsonl')
  writeFileSync(withOne, oneExchange)
  const cutOnly = join(dir, 'cut.jsonl')
  writeFileSync(cutOnly, `${JSON.stringify(head)}\n${JSON.stringify(exchange({ finished: false, end: 5 }))}\n`)
  for (const [args, says] of [
    [['parity'], /give one recording/],
    [['parity', join(dir, 'missing.jsonl')], /cannot read/],
    [['parity', notOne], /is not an orbtest recording/],
    [['parity', later], /version 9/],
    [['parity', orbtile], /holds no exchange/],
    [['parity', withOne, '--world', 'w.json'], /--world is a flag of the other API/],
    [['parity', cutOnly], /nothing was compared/]
  ] as const) {
    const r = await cli([...args])
    t.equal(r.code, 2, `${args.slice(1).join(' ')}: exit 2`)
    t.match(r.stderr + r.stdout, says, 'says why')
    t.notMatch(r.stderr, /\n\s+at /, 'no stack trace')
  }
})

const JSON_TYPE = { 'content-type': 'application/json' }

const exchange = (over: Partial<RecordedExchange>): RecordedExchange => ({
  n: 1,
  connection: 1,
  at: 0,
  end: 0,
  method: 'GET',
  target: '/a/v1/info',
  headers: {},
  status: 200,
  replyHeaders: { 'content-type': 'application/json' },
  reply: '{}',
  finished: true,
  ...over
})

t.test('PARITY-05 bindings: a placeholder and a value the recorded server made are put back as the replayed one made them', async (t) => {
  const p = 'orbtest-secret-abcdef-'
  const b = new Bindings(p, [`${p}1`], 'live-token')
  b.learn({ adapterToken: `${p}2`, message: { id: 'msg-recorded-1' }, activities: ['starting', 'idle'] },
    { adapterToken: 'fresh-adapter-token', message: { id: 'msg-9' }, activities: ['idle', 'starting'] })
  t.equal(b.header(`Bearer ${p}1`), 'Bearer live-token', 'the credential')
  t.equal(b.header(`${p}2`), 'fresh-adapter-token', 'a token learnt from a reply')
  t.equal(b.body('{"activity":"starting"}'), '{"activity":"starting"}', 'a value no server made (an enum) is not bound')
  b.learn({ message: { id: 'msg-9' } }, { message: { id: 'msg-10' } })
  t.equal(b.target('/messages/msg-recorded-1'), '/messages/msg-9', 'one pass: a value put back is not rewritten again')
  t.equal(b.body('"orbtest-secret-1 is text"'), '"orbtest-secret-1 is text"',
    'text like another recording\'s placeholder')
  t.equal(b.target('/messages/msg-recorded-1?x=msg-recorded-1'), '/messages/msg-9?x=msg-9', 'an id in path and query')
  t.equal(b.target('/messages/msg-recorded-12'), '/messages/msg-recorded-12', 'not a part of another id')
  t.equal(b.body('{"reply_to":"msg-recorded-1","text":"see msg-recorded-1"}'),
    '{"reply_to":"msg-9","text":"see msg-recorded-1"}', 'a whole JSON string only')
  t.same(b.unbound('/x', [`Bearer ${p}3`, `${p}2`], ''), [`${p}3`], 'a placeholder never learnt is unbound')
  b.learn({ id: 'only-recorded' }, { error: { code: 'x' } })
  t.same(b.unbound('/x/only-recorded', [], ''), ['only-recorded'], 'a value the replay never made is unbound')
  t.same(b.unbound('/x/only-recorded-too', ['agent only-recorded'], '{"a":"only-recorded and more"}'), [],
    'but only where it stands whole')
})

t.test('PARITY-10 bindings: an integer id or cursor the recorded Orb made is put back where the bot refers to it, and only there', async (t) => {
  const b = new Bindings('orbtest-secret-abcdef-', [], 'live-token')
  b.learn({ id: 948213, channel: 'ch_general' }, { id: 6, channel: 'ch_general' })
  b.learn({ events: [], next: 5120 }, { events: [], next: 3 })
  t.equal(b.target('/api/bot/v1/messages/948213'), '/api/bot/v1/messages/6', 'a whole path segment')
  t.equal(b.target('/api/bot/v1/events?after=5120&wait=25'), '/api/bot/v1/events?after=3&wait=25', 'a cursor')
  t.equal(b.target('/api/bot/v1/messages?channel=ch_general&limit=5120'),
    '/api/bot/v1/messages?channel=ch_general&limit=5120', 'not a limit that happens to be equal')
  t.equal(b.body('{"channel": "ch_general", "content": "948213", "reply_to": 948213}'),
    '{"channel": "ch_general", "content": "948213", "reply_to": 6}', 'a reply_to, not a text')
  b.learn({ events: [{ id: 'evt_1', data: { message: { id: 77 } } }], next: 5121 }, { events: [], next: 3 })
  t.same(b.unbound('/api/bot/v1/messages', [], '{"channel": "ch_general", "reply_to": 77}'), ['77'],
    'a message only the recorded Orb had (a member\'s, in an event the replay did not get): the request follows')
  t.same(b.unbound('/api/bot/v1/messages', [], '{"channel": "ch_general", "content": "77"}'), [],
    'not where it is text')
  const kinds = new Bindings('orbtest-secret-abcdef-', [], 'live-token')
  kinds.learn({ events: [], next: 120 }, { events: [], next: 3 })
  kinds.learn({ id: 120, chainId: 8453 }, { id: 7, chainId: 10143 })
  t.equal(kinds.target('/api/bot/v1/events?after=120'), '/api/bot/v1/events?after=3', 'a cursor, as a cursor')
  t.equal(kinds.target('/api/bot/v1/messages/120'), '/api/bot/v1/messages/7', 'the same number, as an id')
  t.equal(kinds.target('/api/bot/v1/messages/8453'), '/api/bot/v1/messages/8453',
    'a chain\'s id is no id of the Orb\'s')
})

t.test('PARITY-06 shapes: keys and types, lists merged, an empty list not compared; a request with an unbound value follows', async (t) => {
  t.same([...bodyShape('{"a":[{"x":1},{"y":"s"}],"b":null}').keys()],
    ['$', '$.a', '$.a[]', '$.a[].x', '$.a[].y', '$.b'], 'every path, list elements merged')
  const replayed = (reply: string, over: Partial<Replayed> = {}): Replayed => ({
    recorded: exchange({ reply: '{"events":[{"seq":1,"kind":"tap"}],"next":"c1"}' }),
    replayed: { status: 200, headers: { 'content-type': 'application/json' }, text: reply },
    unbound: [],
    ...over
  })
  const found = (reply: string): unknown[] =>
    differencesOf('orbtile', replayed(reply)).map((d) => [d.kind, d.where, d.recorded, d.replayed])
  t.same(found('{"events":[],"next":"c2"}'), [], 'values differ, an empty list: no difference')
  t.same(found('{"events":[{"seq":"1","kind":"tap"}],"next":"c2"}'), [['shape', '$.events[].seq', 'number', 'string']],
    'a type changed')
  t.same(found('{"events":[]}'), [['shape', '$.next', 'string', 'absent']], 'a member missing')
  const cut = replayed('{}', { recorded: exchange({ finished: false }) })
  t.same(differencesOf('orbtile', cut), [], 'a reply cut in the recording is not compared')
  const follows = replayed('{"error":{"code":"unauthorized","message":"m"}}', { unbound: ['orbtest-secret-4'] })
  follows.replayed.status = 401
  t.same(differencesOf('orbtile', follows).map((d) => d.cause), ['follows'], 'a request that carried an unbound value')
  const world = differencesOf('orb', {
    recorded: exchange({ method: 'POST', target: '/api/bot/v1/messages', reply: '{"id":"m1"}' }),
    replayed: { status: 404, headers: JSON_TYPE, text: '{"error":{"code":404,"message":"no channel"}}' },
    unbound: []
  })
  t.same(world.map((d) => [d.route, d.cause, d.replayed]), [['POST /api/bot/v1/messages', 'world', '404 404']],
    'a thing the fake\'s world lacks')
})

t.test('PARITY-07 a bot\'s session on a fake Orb replays with no difference; a channel the fake\'s world lacks is a difference of the world, exit 0', async (t) => {
  const dir = scratch(t)
  const file = join(dir, 'bot.jsonl')
  const world = defaultWorld()
  world.communities.find((c) => c.id === 'srv_orbit')!.channels.push({ id: 'ch_two', name: 'two', kind: 'text' })
  world.installs!.find((i) => i.app === 'app_demo' && i.community === 'srv_orbit')!.channels.push('ch_two')
  const worldFile = join(dir, 'world.json')
  writeFileSync(worldFile, JSON.stringify(world))
  const rec = recordingTap(file, () => DEMO.token, 'orb')
  const fake = await startOrbMock({ port: 0, world, tap: rec.tap })
  const bot = new OrbClient(`${fake.url}/api/bot/v1`, DEMO.token)
  await bot.get('/app')
  const posted = await bot.post('/messages', { channel: 'ch_general', content: 'hello' })
  const deleted = await bot.request('DELETE', `/messages/${String(posted.json?.id)}`)
  await bot.post('/messages', { channel: 'ch_two', content: 'there' })
  await bot.get('/events?after=0')
  await fake.close()
  rec.close()
  t.equal(deleted.status, 200, 'the recorded bot deleted its own message')

  const same = join(dir, 'same.json')
  const r = await cli(['parity', file, '--world', worldFile, '--json', same])
  t.equal(r.code, 0, 'the same world: exit 0')
  t.same((JSON.parse(readFileSync(same, 'utf8')) as ParityReport).differences, [],
    'no difference: the post, its deletion, the second channel, the events')
  const other = join(dir, 'other.json')
  const d = await cli(['parity', file, '--json', other])
  t.equal(d.code, 0, 'the demo world, without ch_two: exit 0 (a difference of the world is no fault of the fake)')
  const report = JSON.parse(readFileSync(other, 'utf8')) as ParityReport
  t.same(report.differences.map((x) => [x.route, x.kind, x.cause, x.recorded, x.replayed]),
    [['POST /api/bot/v1/messages', 'status', 'world', '200', '404 404']], 'the post to ch_two, told as the world\'s')
  t.match(d.stdout, /0 difference\(s\) of behaviour/, 'said in words')
})

t.test('PARITY-11 an Orb long poll answered early is replayed with a wait no longer than it was held (a whole second up)', async (t) => {
  const base = { n: 1, connection: 1, method: 'GET', headers: {}, status: 200, replyHeaders: {}, reply: '{}' }
  const held = (target: string, at: number, end: number, more?: Partial<RecordedExchange>): string =>
    heldNoLonger(target, { ...base, target, at, end, finished: true, ...more })
  t.equal(held('/api/bot/v1/events?after=4&wait=25', 1000, 1300), '/api/bot/v1/events?after=4&wait=1',
    'answered after 0.3 s: wait=1')
  t.equal(held('/api/bot/v1/events?wait=25&after=4', 0, 7200), '/api/bot/v1/events?wait=8&after=4', 'after 7.2 s: 8')
  t.equal(held('/api/bot/v1/events?after=4&wait=25', 0, 25_004), '/api/bot/v1/events?after=4&wait=25',
    'held its whole wait: kept')
  t.equal(held('/api/bot/v1/events?after=4&wait=0', 0, 3), '/api/bot/v1/events?after=4&wait=0', 'no wait: kept')
  t.equal(held('/api/bot/v1/events?after=4&wait=30', 0, 2, { status: 400 }), '/api/bot/v1/events?after=4&wait=30',
    'a wait refused: sent as it was, to be refused again')
  t.equal(held('/api/bot/v1/events?wait=25', 0, 900, { finished: false }), '/api/bot/v1/events?wait=25',
    'a poll the bot gave up: sent as it was (and given up when the bot did)')
  t.equal(held('/api/bot/v1/messages?wait=25', 0, 10), '/api/bot/v1/messages?wait=25', 'not a poll: as it came')
  t.equal(held('/api/bot/v1/events?after=4&await=25', 0, 10), '/api/bot/v1/events?after=4&await=25',
    'a parameter that only ends in wait: as it came')
  for (const wait of ['60', '025', '2.0', '-1']) {
    t.equal(held(`/api/bot/v1/events?wait=${wait}`, 0, 10), `/api/bot/v1/events?wait=${wait}`,
      `wait=${wait}, which the spec does not allow, answered 200 by the recorded server: as it came, for the fake to answer`)
  }
  t.equal(held('/api/bot/v1/events?wait=25&wait=25', 0, 10), '/api/bot/v1/events?wait=25&wait=25',
    'two waits: as they came')
  t.equal(held('/api/bot/v1/events/x?wait=25', 0, 10), '/api/bot/v1/events/x?wait=25', 'another path: as it came')

  // A bot's poll that a member's post answered after 0.3 s, recorded and replayed against a fresh fake Orb.
  const dir = scratch(t)
  const file = join(dir, 'poll.jsonl')
  const rec = recordingTap(file, () => DEMO.token, 'orb')
  const fake = await startOrbMock({ port: 0, tap: rec.tap })
  const bot = new OrbClient(`${fake.url}/api/bot/v1`, DEMO.token)
  const polled = bot.get('/events?after=0&wait=25')
  setTimeout(() => {
    const mention = { server: 'srv_orbit', channel: 'ch_general', member: 'mem_ada', content: '<@app_demo> hi' }
    fake.control.memberPost(mention)
  }, 300)
  t.equal((await polled).json?.events?.length, 1, 'recorded: the poll answered early with the mention')
  await fake.close()
  rec.close()
  const out = join(dir, 'parity.json')
  const r = await cli(['parity', file, '--json', out])
  const report = JSON.parse(readFileSync(out, 'utf8')) as ParityReport
  t.equal(r.code, 0, 'parity held')
  t.equal(report.shortened, 1, 'the poll went with a shorter wait, and the report counts it')
  t.match(r.stdout, /1 long poll\(s\) sent with a shorter wait/, 'said in words')
})

t.test('PARITY-08 the replay keeps the client\'s pace: 66 requests at 60 ms apart, under the limit when recorded, are under it replayed', async (t) => {
  const dir = scratch(t)
  const file = join(dir, 'paced.jsonl')
  const holder: { token?: string } = {}
  const rec = recordingTap(file, () => holder.token!)
  const fake = await startFake(t, { tap: rec.tap })
  holder.token = fake.token
  const client = new SocketClient(fake.socketPath, fake.token)
  const started = performance.now()
  for (let i = 0; i < 66; i++) {
    const r = await client.request({ path: '/info' })
    if (r.status !== 200) throw new Error(`request ${i} got ${r.status}: the recording itself met the limit`)
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, started + 60 * (i + 1) - performance.now())))
  }
  client.close()
  await fake.close()
  rec.close()
  const report = await againstFresh(t, file)
  t.equal(report.compared, 66, 'every request replayed')
  t.same(report.differences, [], 'none refused: sent at its recorded pace, not all at once (burst 60)')
})

t.test('PARITY-09 secrets a reply carries are taken out too: a cookie set, and a token in a reply cut short', async (t) => {
  const dir = scratch(t)
  const file = join(dir, 'cut.jsonl')
  const recorder = new Recorder(file, 'orbtile', 'discovery-token-0123', 0)
  recorder.exchange({
    ...tapExchange(1, 200),
    headers: { authorization: 'Bearer discovery-token-0123', cookie: 'sid=request-cookie-777' },
    replyHeaders: { 'set-cookie': 'sid=reply-cookie-4242; Path=/; HttpOnly' },
    reply: '{"adapter":{"id":"dev.example.a"},"adapterToken":"adapter-token-cut-short-9',
    finished: false
  })
  recorder.close()
  const bytes = readFileSync(file, 'utf8')
  const secrets = ['discovery-token-0123', 'request-cookie-777', 'reply-cookie-4242', 'adapter-token-cut-short-9']
  for (const secret of secrets) {
    t.notOk(bytes.includes(secret), `${secret} is not in the recording`)
  }
  t.match(bytes, /Path=\/; HttpOnly/, 'what is not the secret stays')
})
