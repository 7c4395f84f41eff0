import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import {
  DELIVERY_KINDS,
  FORGERIES,
  isGenuine,
  makeDelivery,
  sampleEvent,
  signature,
  signedHeaders,
  TOLERANCE_MS,
  type DeliveryKind
} from '../conformance/client/orb/webhook-kit.js'
import { webhook } from '../src/cli/main.js'
import { judge, Journal } from './helpers/journal.js'
import { OrbModel } from '../conformance/client/orb/model.js'
import { WEBHOOK_CHECKS } from '../conformance/client/orb/webhook-checks.js'
import { signature as fakeSignature } from '../src/orb-mock/webhook-signing.js'
import { CLI } from './helpers/cli.js'
import { ROOT } from './helpers/root.js'
import { startOrb } from './helpers/orb.js'

const BOT = join(ROOT, 'examples', 'orb-bot-webhook', 'bot.mjs')
const TOKEN = 'orb_kit_token_0000000000000000000000000000'

interface Bot { url: string, stdout: () => string, child: ChildProcess }

/** Starts the reference webhook bot (a real process on a loopback port), with faults if asked. */
async function startBot (t: { teardown(fn: () => unknown): void }, faults: string[] = []): Promise<Bot> {
  const child = spawn(process.execPath, [BOT, ...faults.flatMap((f) => ['--fault', f])], {
    env: { ...process.env, PORT: '0', ORB_TOKEN: TOKEN, ORB_URL: '' },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  t.teardown(() => { child.kill('SIGKILL') })
  let out = ''
  child.stdout!.on('data', (chunk: Buffer) => { out += chunk.toString() })
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => { reject(new Error(`the bot did not start: ${out}`)) }, 10_000)
    child.stdout!.on('data', () => {
      const m = /listening on (http:\/\/\S+)/.exec(out)
      if (m !== null) {
        clearTimeout(timer)
        resolve(m[1]!)
      }
    })
  })
  return { url, stdout: () => out, child }
}

/** `orbtest webhook send` in this process (the bot is a real process; the reply comes over loopback HTTP). */
async function send (bot: Bot, args: string[]): Promise<{ code: number, out: string, events: string[] }> {
  let out = ''
  const code = await webhook(['send', bot.url, '--token', TOKEN, ...args], (text) => { out += text })
  const events = [...out.matchAll(/^X-Orb-Event: (\S+)$/gm)].map((m) => m[1]!)
  return { code, out, events }
}

/** Whether the bot said it acted on an event (its stdout line `acted <id> <type>`). */
const acted = (bot: Bot, id: string): boolean => bot.stdout().includes(`acted ${id} `)

t.test('ORB-091 the kit signs as the ledger\'s test vector says', async (t) => {
  const headers = signedHeaders('orb_example_token', '{"id":"evt_1","type":"app.test"}', 1700000000000, {
    event: 'evt_1',
    delivery: 'dlv_1'
  })
  t.equal(headers['x-orb-signature'],
    't=1700000000000,v1=debe46c55152e066937fadf824466cc01e34b2456dbde615c85a6e6cd235a8fb')
  t.equal(signature('orb_demo_token', 1, '{"é":1}'), fakeSignature('orb_demo_token', 1, '{"é":1}'),
    'the kit and the fake Orb, written apart, sign alike (UTF-8 bodies too)')
  t.equal(headers['x-orb-event'], 'evt_1')
  t.equal(headers['x-orb-delivery'], 'dlv_1')
})

t.test('ORB-A12 each forgery is what its name says, and the genuine ones verify', async (t) => {
  const now = Date.now()
  const event = sampleEvent('message.mention', now)
  const valid = (d: ReturnType<typeof makeDelivery>): boolean => {
    const header = d.headers['x-orb-signature']
    if (header === undefined) return false
    const pairs = header.split(',').map((p) => p.trim().split('='))
    const ts = pairs.filter(([k]) => k === 't').map(([, v]) => Number(v))
    const v1 = pairs.filter(([k]) => k === 'v1').map(([, v]) => v)
    return ts.length === 1 && Math.abs(now - ts[0]!) <= TOLERANCE_MS && v1.includes(signature(TOKEN, ts[0]!, d.body))
  }
  for (const kind of Object.keys(DELIVERY_KINDS) as DeliveryKind[]) {
    const d = makeDelivery(kind, TOKEN, event, now)
    if (kind === 'replayed') {
      t.ok(valid(d), 'replayed: the first sending is genuine, inside the tolerance')
      t.ok(now - d.t! > TOLERANCE_MS - 5000, 'replayed: its t leaves the tolerance within seconds')
      continue
    }
    t.equal(valid(d), isGenuine(kind), `${kind}: ${isGenuine(kind) ? 'verifies' : 'does not verify'} over the bytes sent`)
    t.equal(d.headers['x-orb-event'], event.id, `${kind}: carries the event id`)
  }
  const reserialised = makeDelivery('reserialised', TOKEN, event, now)
  t.equal(reserialised.headers['x-orb-signature'], `t=${now},v1=${signature(TOKEN, now, JSON.stringify(event))}`,
    'reserialised: signed over the compact form of the spaced bytes sent')
  t.not(reserialised.body, JSON.stringify(event))
  const tampered = makeDelivery('tampered', TOKEN, event, now)
  t.doesNotThrow(() => JSON.parse(tampered.body), 'tampered: still JSON')
})

t.test('ORB-095 ORB-A12 ORB-097 the reference webhook bot accepts genuine deliveries and refuses every forgery with 401, acting on none', async (t) => {
  const bot = await startBot(t)
  const genuine: string[] = []
  const forged: string[] = []
  for (const type of ['app.test', 'message.mention', 'application_command']) {
    const r = await send(bot, ['--type', type])
    t.equal(r.code, 0, `genuine ${type}: answered as expected`, { output: r.out })
    genuine.push(r.events[0]!)
  }
  const rotated = await send(bot, ['--forge', 'genuine-rotated'])
  t.equal(rotated.code, 0, 'genuine-rotated: accepted', { output: rotated.out })
  genuine.push(rotated.events[0]!)
  for (const kind of FORGERIES) {
    const r = await send(bot, ['--forge', kind, '--type', 'message.mention'])
    t.equal(r.code, 0, `${kind}: refused as ORB-A12 decides`, { output: r.out })
    if (kind === 'replayed') {
      t.equal(r.events.length, 2, 'replayed: sent twice, the same event')
      t.equal(r.events[0], r.events[1])
      t.match(r.out, /<- 2\d\d in[^]*<- 401 in/, 'replayed: the first sending accepted, the second refused')
      genuine.push(r.events[0]!)
    } else {
      t.match(r.out, /<- 401 in/, `${kind}: 401`)
      forged.push(r.events[0]!)
    }
  }
  // The bot's stdout may come after its replies: wait for every genuine event's line, then look for forged ones.
  for (let i = 0; i < 100 && !genuine.every((id) => acted(bot, id)); i++) {
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  for (const id of genuine) t.ok(acted(bot, id), `genuine ${id}: acted on`)
  for (const id of forged) t.notOk(acted(bot, id), `forged ${id}: no action`)
  const actions = bot.stdout().split('\n').filter((l) => l.startsWith('acted '))
  t.equal(actions.length, genuine.length, 'one action per genuine event')
})

t.test('ORB-095 ORB-A12 ORB-097 each fault of the reference bot is caught by the delivery named for it', async (t) => {
  const cases: Array<[fault: string, args: string[]]> = [
    ['no-signature-check', ['--forge', 'wrong-key']],
    ['parsed-body', ['--forge', 'reserialised']],
    ['no-tolerance', ['--forge', 'stale']],
    ['first-v1-only', ['--forge', 'genuine-rotated']],
    ['accept-unsigned', ['--forge', 'unsigned']],
    ['notice-on-mention', ['--type', 'message.mention']],
    ['no-notice', ['--type', 'application_command']],
    ['late-notice', ['--type', 'application_command']]
  ]
  await Promise.all(cases.map(async ([fault, args]) => {
    const bot = await startBot(t, [fault])
    const r = await send(bot, args)
    t.equal(r.code, 1, `${fault}: ${args.join(' ')} is NOT as expected`, { output: r.out })
    t.match(r.out, /NOT as expected/)
  }))
})

t.test('ORB-025 a sample mention names a message the demo world has, so that a bot\'s reply to it is accepted', async (t) => {
  const orb = await startOrb(t)
  const mention = sampleEvent('message.mention', Date.now()) as { channel: string, data: { message: { id: number } } }
  const body = { channel: mention.channel, content: 'pong', reply_to: mention.data.message.id }
  const reply = await orb.bot.post('/api/bot/v1/messages', body)
  t.equal(reply.status, 200, `reply_to ${mention.data.message.id} in ${mention.channel}`)
})

t.test('CLI-05 orbtest webhook sign and send, as a person runs them', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'otw-'))
  t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })
  const body = join(dir, 'event.json')
  writeFileSync(body, '{"id":"evt_1","type":"app.test"}')
  const cli = async (args: string[], stdin?: string): Promise<{ code: number | null, out: string, err: string }> => {
    const child = spawn(process.execPath, [CLI, 'webhook', ...args], {
      stdio: ['pipe', 'pipe', 'pipe']
    })
    let out = ''
    let err = ''
    child.stdout.on('data', (c: Buffer) => { out += c.toString() })
    child.stderr.on('data', (c: Buffer) => { err += c.toString() })
    child.stdin.end(stdin ?? '')
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve))
    return { code, out, err }
  }
  const VECTOR = 't=1700000000000,v1=debe46c55152e066937fadf824466cc01e34b2456dbde615c85a6e6cd235a8fb'
  const signed = await cli([
    'sign', '--token', 'orb_example_token', '--body', body, '--t', '1700000000000', '--delivery', 'dlv_1'
  ])
  t.equal(signed.code, 0, signed.err)
  t.equal(signed.out, `Content-Type: application/json\nX-Orb-Signature: ${VECTOR}\nX-Orb-Event: evt_1\nX-Orb-Delivery: dlv_1\n`)
  t.notMatch(signed.out, /orb_example_token/, 'the token is not printed')
  const piped = await cli(['sign', '--t', '1700000000000', '--json'], '{"id":"evt_1","type":"app.test"}')
  t.equal(piped.code, 2, 'no token: a usage mistake')
  t.match(piped.err, /--token/)
  const fromStdin = await cli(
    ['sign', '--token', 'orb_example_token', '--t', '1700000000000', '--json'],
    '{"id":"evt_1","type":"app.test"}'
  )
  t.equal(JSON.parse(fromStdin.out)['x-orb-signature'], VECTOR, 'the body from standard input')
  const list = await cli(['send', '--list'])
  t.equal(list.code, 0)
  for (const kind of Object.keys(DELIVERY_KINDS)) t.match(list.out, new RegExp(`^${kind} `, 'm'))
  const bad = await cli(['send', 'http://127.0.0.1:1/', '--token', 'x', '--forge', 'nonsense'])
  t.equal(bad.code, 2)
  t.match(bad.err, /--forge is one of/)
  const bot = await startBot(t)
  const sent = await cli(['send', bot.url, '--token', TOKEN, '--forge', 'tampered'])
  t.equal(sent.code, 0, sent.out + sent.err)
  t.match(sent.out, /expected: 401, and no action \(ORB-095, ORB-A12\): as expected/)
  t.notMatch(sent.out, new RegExp(TOKEN), 'the token is not printed')
  const refused = await cli(['send', 'http://127.0.0.1:1/', '--token', TOKEN, '--timeout', '2000'])
  t.equal(refused.code, 1, 'no bot listening: not as expected')
  t.match(refused.out, /no reply/)
})

t.test('OBC-13 ORB-095 ORB-096 a write that carries a forged event\'s marks is proof; one put down to a delivery by time alone is non-strict', async (t) => {
  // Journals played by hand: the suite's delivery actions and the bot's posts, at the times given (ms).
  const marks = (n: number): string[] => [`evt_${n}`, `word-${n}`]
  const sent = (j: Journal, at: number, n: number, data: Record<string, unknown>): void => {
    j.action(at, 'wire', 'delivery-sent', { eventId: `evt_${n}`, marks: marks(n), ...data })
  }
  const mention = (j: Journal, at: number, n: number, duplicate = false): void =>
    sent(j, at, n, { genuine: true, kind: 'genuine', type: 'message.mention', duplicate })
  const forged = (j: Journal, at: number, n: number): void =>
    sent(j, at, n, { genuine: false, kind: 'unsigned', type: 'message.mention', duplicate: false })
  const post = (j: Journal, at: number, n?: number): void => {
    j.exchange({
      path: '/api/bot/v1/messages',
      body: { channel: 'ch_general', content: n === undefined ? 'hi' : `you said hello word-${n}` },
      at
    })
  }
  const verdict = (id: string, play: (j: Journal) => void): string => {
    const j = new Journal()
    play(j)
    const model = new OrbModel('token-0123456789', new Map(), 0)
    return judge(WEBHOOK_CHECKS.find((c) => c.id === id)!, model, j.entries, 20_000).verdict
  }
  t.equal(verdict('ORB-095', (j) => { mention(j, 1000, 1); forged(j, 2300, 2); post(j, 2600, 1) }), 'pass',
    'the mention\'s reply, 1.6 s late, inside the forgery\'s window, carrying the mention\'s word')
  t.equal(verdict('ORB-095', (j) => { forged(j, 2300, 2); post(j, 9000, 2) }), 'fail',
    'a post carrying the forged event\'s word, however late: certain')
  t.equal(verdict('ORB-095', (j) => { mention(j, 1000, 1); post(j, 1100, 1); forged(j, 2300, 2); post(j, 2400) }), 'non-strict',
    'a post that carries nothing of the forgery, 0.1 s after it: put down to it by time alone (OBC-04)')
  t.equal(verdict('ORB-095', (j) => { mention(j, 1000, 1); forged(j, 7000, 2); post(j, 7100) }), 'non-strict',
    'a mention is owed its reply for 5 s, no longer')
  const answered = (j: Journal, at: number, n: number): void => {
    j.action(at, 'wire', 'delivery', { event: { id: `evt_${n}` }, genuine: true, type: 'message.mention', status: 200 })
  }
  t.equal(verdict('ORB-095', (j) => { mention(j, 1000, 1); answered(j, 4700, 1); forged(j, 7000, 2); post(j, 7100) }),
    'pass', 'a mention answered late (3.7 s) is owed its reply for 5 s from the answer: a slowed bot writes later too')
  t.equal(verdict('ORB-095', (j) => { mention(j, 1000, 1); answered(j, 1100, 1); forged(j, 7000, 2); post(j, 7100) }),
    'non-strict', 'one answered at once: 5 s from the delivery')
  t.equal(verdict('ORB-096', (j) => { mention(j, 1000, 1); mention(j, 2300, 1, true); post(j, 2500, 1) }), 'pass',
    'the first delivery\'s reply, late, after the retry: its first handling')
  t.equal(verdict('ORB-096', (j) => { mention(j, 1000, 1); post(j, 1100, 1); mention(j, 2300, 1, true); post(j, 2500, 1) }), 'fail',
    'handled, then handled again after the retry: certain')
  t.equal(verdict('ORB-096', (j) => { mention(j, 1000, 1); mention(j, 2300, 1, true); post(j, 2500, 1); post(j, 2600, 1) }), 'inconclusive',
    'two posts for the event, both after the retry: one slow handling of two posts, or two handlings')
})
