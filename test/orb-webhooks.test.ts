import { createHash, createHmac, timingSafeEqual } from 'node:crypto'
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import t from 'tap'
import fc from 'fast-check'
import type { DeliveryRecord } from '../src/orb-mock/deliveries.js'
import { MAX_IN_FLIGHT, MAX_IN_FLIGHT_PER_APP } from '../src/orb-mock/webhooks.js'
import { signature, signingKey } from '../src/orb-mock/webhook-signing.js'
import { fcParams } from './helpers/fc.js'
import type { Teardown } from './helpers/fake.js'
import { DEMO, isOrbError, startOrb } from './helpers/orb.js'

type Orb = Awaited<ReturnType<typeof startOrb>>

/** One request the receiver got: the raw body bytes as they arrived, and its response, to answer now or later. */
interface Hit {
  method: string
  url: string
  headers: IncomingHttpHeaders
  raw: Buffer
  json: any
  res: ServerResponse
  /** The connection ended (answered, or dropped by the sender). */
  closed: boolean
  answered: boolean
}

interface Receiver {
  url: string
  hits: Hit[]
  /** Requests open right now, and the most ever open at once. */
  stats: { open: number, maxOpen: number }
}

/** A real HTTP endpoint on loopback. `answer` replies to each request, or leaves it held by not replying. */
async function receiver (t: Teardown, answer: (hit: Hit) => void = (hit) => reply(hit, 200)): Promise<Receiver> {
  const hits: Hit[] = []
  const stats = { open: 0, maxOpen: 0 }
  const server = createServer((req, res) => {
    stats.open++
    stats.maxOpen = Math.max(stats.maxOpen, stats.open)
    let counted = true
    const done = (): void => {
      if (counted) stats.open--
      counted = false
    }
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const raw = Buffer.concat(chunks)
      let json: unknown
      try {
        json = JSON.parse(raw.toString('utf8'))
      } catch {
        json = undefined
      }
      const hit: Hit = {
        method: req.method!,
        url: req.url!,
        headers: req.headers,
        raw,
        json,
        res,
        closed: false,
        answered: false
      }
      res.on('finish', done)
      res.on('close', () => {
        hit.closed = true
        done()
      })
      hits.push(hit)
      answer(hit)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => {
    server.closeAllConnections()
    server.close(() => resolve())
  }))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits, stats }
}

function reply (hit: Hit, status: number, body?: unknown, headers: Record<string, string> = {}): void {
  if (hit.answered || hit.closed) return
  hit.answered = true
  hit.res.writeHead(status, { 'content-type': 'application/json', ...headers })
  hit.res.end(body === undefined ? undefined : JSON.stringify(body))
}

/** Awaits a condition by polling (no fixed sleeps); fails after 5 s of real time. */
async function until (condition: () => boolean, what: string): Promise<void> {
  const limit = Date.now() + 5_000
  while (!condition()) {
    if (Date.now() > limit) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 2))
  }
}

/** Checks `X-Orb-Signature` over the raw bytes received, with node:crypto alone (ORB-091, ORB-095). */
function verifies (hit: Hit, token: string): boolean {
  const match = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(String(hit.headers['x-orb-signature']))
  if (match === null) return false
  const key = Buffer.from(createHash('sha256').update(token, 'utf8').digest('hex'), 'ascii')
  const expected = createHmac('sha256', key)
    .update(Buffer.concat([Buffer.from(`${match[1]}.`, 'ascii'), hit.raw]))
    .digest()
  return timingSafeEqual(expected, Buffer.from(match[2]!, 'hex'))
}

const stamp = (hit: Hit): number => Number(/^t=(\d+),/.exec(String(hit.headers['x-orb-signature']))![1])
const log = (orb: Orb): DeliveryRecord[] => orb.services.webhooks.deliveries('app_demo')
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

/** A fake Orb whose demo app sends its events to a fresh receiver. */
async function webhookOrb (t: Teardown, answer?: (hit: Hit) => void): Promise<{ orb: Orb, rx: Receiver }> {
  const orb = await startOrb(t)
  const rx = await receiver(t, answer)
  orb.control.setEndpoint('app_demo', `${rx.url}/hooks/orb?k=1`)
  return { orb, rx }
}

/** Registers /hello for the demo app (through the API) and has Ada type it: the event id. */
async function typeHello (orb: Orb, registered = false): Promise<string> {
  if (!registered) {
    const put = await orb.bot.put('/api/bot/v1/commands', { commands: [{ name: 'hello' }] })
    if (put.status !== 200) throw new Error(`PUT /commands answered ${put.status}`)
  }
  return String(
    orb.control.invoke({ server: 'srv_orbit', channel: 'ch_general', member: 'mem_ada', name: 'hello' }).event
  )
}

const mention = (orb: Orb): string => {
  const posted = orb.control.memberPost({
    server: 'srv_orbit',
    channel: 'ch_general',
    member: 'mem_bo',
    content: 'hi <@app_demo>'
  })
  return (posted.events as Array<{ id: string }>)[0]!.id
}

t.test('ORB-091 the ledger test vector: key sha256(token) as hex, v1 over "<t>.<raw body>"', async (t) => {
  t.equal(signingKey('orb_example_token'), '4265a59929f84c5dc34dd27ea4b48af187709ac6c2210ce8d86fd1a603ce8f06')
  t.equal(
    signature('orb_example_token', 1700000000000, '{"id":"evt_1","type":"app.test"}'),
    'debe46c55152e066937fadf824466cc01e34b2456dbde615c85a6e6cd235a8fb'
  )
})

t.test(
  'ORB-091 property: signature matches an independent HMAC for any token and body, and not under another token',
  async (t) => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1, maxLength: 60, unit: 'binary' }),
        fc.string({ minLength: 1, maxLength: 60, unit: 'binary' }),
        fc.string({ maxLength: 400, unit: 'binary' }),
        fc.integer({ min: 0, max: 4_102_444_800_000 }),
        (token, other, body, at) => {
          const key = Buffer.from(createHash('sha256').update(Buffer.from(token, 'utf8')).digest('hex'), 'ascii')
          const expected = createHmac('sha256', key)
            .update(Buffer.concat([Buffer.from(`${at}.`), Buffer.from(body, 'utf8')]))
            .digest('hex')
          const v1 = signature(token, at, body)
          if (v1 !== expected || !/^[0-9a-f]{64}$/.test(v1)) return false
          return Buffer.from(other, 'utf8').equals(Buffer.from(token, 'utf8')) || signature(other, at, body) !== v1
        }
      ),
      fcParams()
    )
  }
)

t.test(
  'ORB-090 ORB-A11 an event is POSTed as JSON (no cursor) with Content-Type application/json to the endpoint URL',
  async (t) => {
    const { orb, rx } = await webhookOrb(t)
    const { event } = orb.control.testEvent('app_demo')
    const mentioned = mention(orb)
    await until(() => rx.hits.length === 2 && log(orb).length === 2, 'two deliveries')
    for (const hit of rx.hits) {
      t.equal(hit.method, 'POST')
      t.equal(hit.url, '/hooks/orb?k=1', 'path and query of the endpoint URL')
      t.equal(hit.headers['content-type'], 'application/json')
      t.equal(hit.headers['content-length'], String(hit.raw.length))
      t.same(
        Object.keys(hit.json).sort(),
        ['api', 'app', 'channel', 'data', 'id', 'sent_at', 'server', 'type'],
        'an Event, without cursor (ORB-052)'
      )
      t.match(hit.json, { api: 'orb-bots-v1', app: { id: 'app_demo', name: 'Demo Bot' } })
    }
    const test = rx.hits.find((h) => h.json.id === event)!
    t.match(test.json, { type: 'app.test', server: null, channel: null, data: {} })
    const hi = rx.hits.find((h) => h.json.id === mentioned)!
    t.match(hi.json, {
      type: 'message.mention',
      server: 'srv_orbit',
      channel: 'ch_general',
      data: { reason: 'mention', message: { body: 'hi <@app_demo>' } }
    })
    t.same(
      log(orb).map((d) => d.outcome),
      ['delivered', 'delivered']
    )
  }
)

t.test(
  'ORB-090 sending never holds up the call that made the event: dispatch only queues; the API answers while a delivery is held',
  async (t) => {
    const { orb, rx } = await webhookOrb(t, () => {})
    orb.control.testEvent('app_demo')
    t.equal(rx.hits.length, 0, 'nothing sent inside the call')
    t.match(orb.services.webhooks.pending(), { queued: 1, inFlight: 0 })
    await until(() => rx.hits.length === 1, 'the held delivery')
    t.equal((await orb.bot.get('/api/bot/v1/app')).status, 200, 'the API answers while the endpoint holds')
    reply(rx.hits[0]!, 200)
    await until(() => log(orb).length === 1, 'the delivery record')
  }
)

t.test('ORB-090 ORB-A11 the endpoint URL is read at each attempt: a retry goes where the URL points now', async (t) => {
  const { orb, rx } = await webhookOrb(t, (hit) => reply(hit, 503))
  const other = await receiver(t)
  const { event } = orb.control.testEvent('app_demo')
  await until(() => log(orb).length === 1, 'the first attempt')
  orb.control.setEndpoint('app_demo', `${other.url}/new`)
  orb.clock.advance(2_000)
  await until(() => other.hits.length === 1 && log(orb).length === 2, 'the retry at the new URL')
  t.equal(rx.hits.length, 1)
  t.equal(other.hits[0]!.url, '/new')
  t.equal(other.hits[0]!.headers['x-orb-event'], event)
  t.ok(rx.hits[0]!.raw.equals(other.hits[0]!.raw), 'the same bytes')
  t.same(
    log(orb).map((d) => [d.url, d.outcome]),
    [
      [`${rx.url}/hooks/orb?k=1`, 'failed'],
      [`${other.url}/new`, 'delivered']
    ]
  )
})

t.test(
  'ORB-091 ORB-A10 each attempt is signed t=<ms>,v1=<hex> over the raw body, keyed by sha256(token); t is the fake clock',
  async (t) => {
    const { orb, rx } = await webhookOrb(t)
    const now = orb.clock.now()
    orb.control.testEvent('app_demo')
    mention(orb)
    await until(() => rx.hits.length === 2, 'two deliveries')
    for (const hit of rx.hits) {
      t.match(String(hit.headers['x-orb-signature']), /^t=\d+,v1=[0-9a-f]{64}$/)
      t.ok(verifies(hit, DEMO.token), 'verifies over the raw bytes with sha256(token)')
      t.notOk(verifies(hit, DEMO.lite), 'not under another token')
      t.equal(stamp(hit), now, 't is the fake clock in ms')
      t.equal(hit.json.sent_at, now, 'sent_at and t are both epoch ms (ORB-A10)')
    }
    const sent = log(orb)[0]!.requestHeaders
    t.same(Object.keys(sent).sort(), ['content-type', 'x-orb-delivery', 'x-orb-event', 'x-orb-signature'])
    t.notOk(JSON.stringify(log(orb)).includes(DEMO.token), 'the log never holds the token')
  }
)

t.test('ORB-092 X-Orb-Event is the event id; X-Orb-Delivery is a fresh UUID per attempt', async (t) => {
  let n = 0
  const { orb, rx } = await webhookOrb(t, (hit) => reply(hit, n++ === 0 ? 500 : 200))
  const { event } = orb.control.testEvent('app_demo')
  await until(() => log(orb).length === 1, 'first attempt')
  orb.clock.advance(2_000)
  const second = mention(orb)
  await until(() => rx.hits.length === 3 && log(orb).length === 3, 'three attempts')
  const ids = rx.hits.map((h) => String(h.headers['x-orb-delivery']))
  for (const id of ids) t.match(id, UUID)
  t.equal(new Set(ids).size, 3, 'every attempt its own delivery id')
  for (const hit of rx.hits) t.equal(hit.headers['x-orb-event'], hit.json.id)
  t.same(rx.hits.map((h) => h.headers['x-orb-event']).sort(), [event, event, second].sort())
  t.same(log(orb).map((d) => d.delivery).sort(), [...ids].sort(), 'the log names the same delivery ids')
})

t.test('ORB-093 ORB-A11 a failure is retried once, 2 s later on the fake clock: same bytes and X-Orb-Event, new delivery id, t and signature', async (t) => {
  let n = 0
  const { orb, rx } = await webhookOrb(t, (hit) => reply(hit, n++ === 0 ? 500 : 200))
  const start = orb.clock.now()
  const { event } = orb.control.testEvent('app_demo')
  await until(() => log(orb).length === 1, 'the failed first attempt')
  t.match(log(orb)[0], { event, type: 'app.test', attempt: 1, status: 500, outcome: 'failed', at: start, notice: null })
  t.match(orb.services.webhooks.pending(), { retriesScheduled: 1, inFlight: 0, queued: 0 })
  orb.clock.advance(1_999)
  t.match(orb.services.webhooks.pending(), { retriesScheduled: 1, inFlight: 0, queued: 0 }, 'no retry before 2 s')
  t.equal(rx.hits.length, 1)
  orb.clock.advance(1)
  await until(() => log(orb).length === 2, 'the retry')
  const [first, retry] = rx.hits
  t.equal(rx.hits.length, 2)
  t.ok(first!.raw.equals(retry!.raw), 'byte-identical bodies')
  t.equal(retry!.headers['x-orb-event'], first!.headers['x-orb-event'])
  t.not(retry!.headers['x-orb-delivery'], first!.headers['x-orb-delivery'])
  t.equal(stamp(retry!), start + 2_000, 'a new t')
  t.not(retry!.headers['x-orb-signature'], first!.headers['x-orb-signature'])
  t.ok(verifies(retry!, DEMO.token))
  t.match(log(orb)[1], { event, attempt: 2, status: 200, outcome: 'delivered', at: start + 2_000, error: null })
})

t.test('ORB-093 at most two attempts: an endpoint that always fails gets exactly two, both in the log', async (t) => {
  const { orb, rx } = await webhookOrb(t, (hit) => reply(hit, 500, { error: 'down' }))
  orb.control.testEvent('app_demo')
  await until(() => log(orb).length === 1, 'first attempt')
  orb.clock.advance(2_000)
  await until(() => log(orb).length === 2, 'second attempt')
  orb.clock.advance(60_000)
  t.same(orb.services.webhooks.pending(), { inFlight: 0, queued: 0, retriesScheduled: 0 })
  t.equal(rx.hits.length, 2)
  t.same(log(orb).map((d) => [d.attempt, d.status, d.outcome]), [[1, 500, 'failed'], [2, 500, 'failed']])
  t.match(log(orb)[0]!.error, /500/)
})

t.test('ORB-094 any 2xx (200, 201, 202, 204) is delivered, with no retry', async (t) => {
  const statusOf = new Map<string, number>()
  const { orb, rx } = await webhookOrb(t, (hit) => reply(hit, statusOf.get(hit.json.id)!))
  for (const status of [200, 201, 202, 204]) statusOf.set(orb.control.testEvent('app_demo').event, status)
  await until(() => log(orb).length === 4, 'four deliveries')
  orb.clock.advance(30_000)
  t.equal(rx.hits.length, 4, 'no retry')
  t.same(
    log(orb)
      .map((d) => [statusOf.get(d.event), d.status, d.outcome, d.attempt])
      .sort(),
    [
      [200, 200, 'delivered', 1],
      [201, 201, 'delivered', 1],
      [202, 202, 'delivered', 1],
      [204, 204, 'delivered', 1]
    ]
  )
  t.equal(orb.services.webhooks.pending().retriesScheduled, 0)
})

t.test('ORB-094 ORB-A11 a 2xx reply is read up to 64 KiB, then the socket is dropped: an endless reply still counts', async (t) => {
  const { orb, rx } = await webhookOrb(t, (hit) => {
    hit.answered = true
    hit.res.writeHead(200, { 'content-type': 'application/json' })
    hit.res.write('x'.repeat(100 * 1024)) // and never ends
  })
  orb.control.testEvent('app_demo')
  await until(() => log(orb).length === 1, 'the delivery record')
  t.match(log(orb)[0], { status: 200, outcome: 'delivered', notice: null })
  await until(() => rx.hits[0]!.closed, 'the sender to drop the connection')
  t.same(orb.services.webhooks.pending(), { inFlight: 0, queued: 0, retriesScheduled: 0 })
})

t.test('ORB-A11 a 302 is a failure and is not followed', async (t) => {
  const rx = await receiver(t, (hit) => hit.url === '/elsewhere' ? reply(hit, 200) : reply(hit, 302, undefined, { location: '/elsewhere' }))
  const orb = await startOrb(t)
  orb.control.setEndpoint('app_demo', `${rx.url}/hook`)
  orb.control.testEvent('app_demo')
  await until(() => log(orb).length === 1, 'first attempt')
  orb.clock.advance(2_000)
  await until(() => log(orb).length === 2, 'the retry')
  t.same(rx.hits.map((h) => h.url), ['/hook', '/hook'], 'the Location was never requested')
  t.same(log(orb).map((d) => [d.status, d.outcome]), [[302, 'failed'], [302, 'failed']])
  t.match(log(orb)[0]!.error, /redirects are not followed/)
})

t.test('ORB-A11 a network error is a failure (outcome error) and is retried once', async (t) => {
  const orb = await startOrb(t)
  const closed = createServer()
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve))
  const port = (closed.address() as AddressInfo).port
  await new Promise<void>((resolve) => closed.close(() => resolve()))
  orb.control.setEndpoint('app_demo', `http://127.0.0.1:${port}/hook`)
  orb.control.testEvent('app_demo')
  await until(() => log(orb).length === 1, 'first attempt')
  orb.clock.advance(2_000)
  await until(() => log(orb).length === 2, 'the retry')
  for (const d of log(orb)) {
    t.match(d, { status: null, outcome: 'error' })
    t.match(d.error, /ECONNREFUSED/)
  }
})

t.test('ORB-A11 a slow endpoint times out after 10 s on the fake clock (other events); the retry follows 2 s later', async (t) => {
  const { orb, rx } = await webhookOrb(t, (hit) => { if (rx.hits.length > 1) reply(hit, 200) })
  const start = orb.clock.now()
  mention(orb)
  await until(() => rx.hits.length === 1, 'the held attempt')
  orb.clock.advance(9_999)
  t.equal(log(orb).length, 0, 'still waiting at 9.999 s')
  orb.clock.advance(1)
  t.match(log(orb), [{ attempt: 1, status: null, outcome: 'timeout', durationMs: 10_000, at: start }])
  await until(() => rx.hits[0]!.closed, 'the request to be aborted')
  orb.clock.advance(2_000)
  await until(() => log(orb).length === 2, 'the retry')
  t.match(log(orb)[1], { attempt: 2, outcome: 'delivered', at: start + 12_000 })
})

t.test('ORB-A11 a typed command times out after 4 s, and is not retried once the member stopped waiting (6 s)', async (t) => {
  const { orb, rx } = await webhookOrb(t, () => {})
  const start = orb.clock.now()
  const event = await typeHello(orb)
  await until(() => rx.hits.length === 1, 'the held attempt')
  t.equal(rx.hits[0]!.json.type, 'application_command')
  orb.clock.advance(3_999)
  t.equal(log(orb).length, 0)
  orb.clock.advance(1)
  t.match(log(orb), [{ event, type: 'application_command', outcome: 'timeout', durationMs: 4_000, at: start }])
  orb.clock.advance(2_000)
  t.notOk(orb.services.interactions.waiting(event), 'the member stopped waiting at 6 s')
  orb.clock.advance(30_000)
  t.same(orb.services.webhooks.pending(), { inFlight: 0, queued: 0, retriesScheduled: 0 })
  t.equal(rx.hits.length, 1, 'no retry')
  t.equal(log(orb).length, 1)
})

t.test('ORB-A11 a typed command answered through /respond is not retried after a failed attempt', async (t) => {
  const { orb, rx } = await webhookOrb(t, (hit) => reply(hit, 500))
  const event = await typeHello(orb)
  await until(() => log(orb).length === 1, 'the failed attempt')
  t.equal(orb.services.webhooks.pending().retriesScheduled, 1, 'a retry was scheduled')
  t.equal((await orb.bot.post(`/api/bot/v1/interactions/${event}/respond`, { content: 'by route' })).status, 200)
  orb.clock.advance(2_000)
  t.same(
    orb.services.webhooks.pending(),
    { inFlight: 0, queued: 0, retriesScheduled: 0 },
    "the retry's turn came and nothing was sent"
  )
  await new Promise((resolve) => setImmediate(resolve))
  orb.clock.advance(10_000)
  t.equal(rx.hits.length, 1, 'no retry once answered')
  t.equal(log(orb).length, 1, 'one attempt in the log')
})

t.test(
  'ORB-097 ORB-098 ORB-A13 a notice in a 2xx reply within 4 s answers the command inline; a later /respond gets 409',
  async (t) => {
    const { orb, rx } = await webhookOrb(t, (hit) => reply(hit, 200, { notice: 'Hello, Ada!' }))
    const event = await typeHello(orb)
    await until(() => log(orb).length === 1, 'the delivery')
    t.equal(rx.hits.length, 1)
    t.match(log(orb)[0], { event, outcome: 'delivered', notice: { content: 'Hello, Ada!', result: 'answered' } })
    t.match(orb.services.interactions.view(event), {
      answer: { content: 'Hello, Ada!', via: 'inline' },
      member: 'mem_ada'
    })
    const late = await orb.bot.post(`/api/bot/v1/interactions/${event}/respond`, { content: 'again' })
    t.ok(isOrbError(late, 409), 'the first answer wins; /respond after an inline answer is 409')
  }
)

t.test(
  'ORB-A13 an inline notice over 1800 characters answers nothing: the member sees no more inline than by the route',
  async (t) => {
    const { orb } = await webhookOrb(t, (hit) => reply(hit, 200, { notice: 'x'.repeat(1801) }))
    const event = await typeHello(orb)
    await until(() => log(orb).length === 1, 'the attempt')
    t.equal(log(orb)[0]!.notice?.result, 'too-long')
    t.equal(
      (await orb.bot.post(`/api/bot/v1/interactions/${event}/respond`, { content: 'short' })).status,
      200,
      'the route can still answer'
    )
  }
)

t.test('ORB-098 a notice on any other event type is ignored (recorded as ignored)', async (t) => {
  const { orb, rx } = await webhookOrb(t, (hit) => reply(hit, 200, { notice: 'not for you' }))
  orb.control.testEvent('app_demo')
  mention(orb)
  await until(() => log(orb).length === 2, 'two deliveries')
  t.equal(rx.hits.length, 2)
  for (const d of log(orb)) t.match(d, { outcome: 'delivered', notice: { content: 'not for you', result: 'ignored' } })
})

t.test('ORB-A13 a notice after /respond answered is recorded answered-already; the route answer stands', async (t) => {
  const { orb, rx } = await webhookOrb(t, () => {})
  const event = await typeHello(orb)
  await until(() => rx.hits.length === 1, 'the held attempt')
  t.equal((await orb.bot.post(`/api/bot/v1/interactions/${event}/respond`, { content: 'by route' })).status, 200)
  reply(rx.hits[0]!, 200, { notice: 'inline' })
  await until(() => log(orb).length === 1, 'the delivery')
  t.match(log(orb)[0], { outcome: 'delivered', notice: { content: 'inline', result: 'answered-already' } })
  t.match(orb.services.interactions.view(event), { answer: { content: 'by route', via: 'respond' } })
})

t.test(
  'ORB-A13 a notice that comes after the member stopped waiting (6 s) is recorded late and shown to no one',
  async (t) => {
    const { orb, rx } = await webhookOrb(t, () => {})
    const start = orb.clock.now()
    const event = await typeHello(orb)
    await until(() => rx.hits.length === 1, 'the first attempt')
    orb.clock.advance(1_000)
    reply(rx.hits[0]!, 500)
    await until(() => log(orb).length === 1, 'the failed first attempt')
    orb.clock.advance(2_000) // the retry goes at 3 s; its own 4 s run to 7 s, past the member's 6 s
    await until(() => rx.hits.length === 2, 'the retry')
    orb.clock.advance(3_500)
    reply(rx.hits[1]!, 200, { notice: 'too late' })
    await until(() => log(orb).length === 2, 'the retry record')
    t.match(log(orb)[1], {
      attempt: 2,
      at: start + 3_000,
      outcome: 'delivered',
      notice: { content: 'too late', result: 'late' }
    })
    t.match(orb.services.interactions.view(event), { answer: null, expired: true })
  }
)

t.test(
  'ORB-A22 after a token rotation deliveries, a pending retry included, are signed with sha256 of the new token',
  async (t) => {
    let n = 0
    const { orb, rx } = await webhookOrb(t, (hit) => reply(hit, n++ === 0 ? 500 : 200))
    orb.control.testEvent('app_demo')
    await until(() => log(orb).length === 1, 'the failed first attempt')
    t.ok(verifies(rx.hits[0]!, DEMO.token))
    const { token } = orb.control.rotateToken('app_demo')
    orb.clock.advance(2_000)
    orb.control.testEvent('app_demo')
    await until(() => log(orb).length === 3, 'the retry and a new event')
    for (const hit of rx.hits.slice(1)) {
      t.ok(verifies(hit, token), 'signed with the new token')
      t.notOk(verifies(hit, DEMO.token), 'not with the old one')
    }
    t.equal(
      rx.hits[1]!.headers['x-orb-signature'],
      `t=${stamp(rx.hits[1]!)},v1=${signature(token, stamp(rx.hits[1]!), rx.hits[1]!.raw.toString('utf8'))}`
    )
  }
)

t.test('ORB-051 ORB-A05 webhooks and polls never both deliver an event', async (t) => {
  const { orb, rx } = await webhookOrb(t)
  const poll = async (query = ''): Promise<any> => (await orb.bot.get(`/api/bot/v1/events${query}`)).json
  const pushed = [orb.control.testEvent('app_demo').event, mention(orb)]
  await until(() => rx.hits.length === 2, 'two deliveries')
  t.same(await poll(), { events: [], next: 0, mode: 'webhook' })
  t.same(
    await poll('?after=0&wait=20'),
    { events: [], next: 0, mode: 'webhook' },
    'wait is ignored: the poll answers at once'
  )
  orb.control.setEndpoint('app_demo', null)
  t.same(await poll(), { events: [], next: 0, mode: 'events' }, 'the webhook events are not queued for polls')
  const polled = orb.control.testEvent('app_demo').event
  const page = await poll()
  t.same(page.events.map((e: { id: string }) => e.id), [polled])
  t.equal(page.mode, 'events')
  t.equal(rx.hits.length, 2, 'the polled event never reached the endpoint')
  t.same(rx.hits.map((h) => h.json.id).sort(), [...pushed].sort())
  t.same(
    log(orb)
      .map((d) => d.event)
      .sort(),
    [...pushed].sort()
  )
})

t.test(
  `ORB-A11 at most ${MAX_IN_FLIGHT} attempts in flight across the fake and ${MAX_IN_FLIGHT_PER_APP} per app; the rest wait in order and all are delivered`,
  async (t) => {
    const { orb, rx } = await webhookOrb(t, () => {})
    const apps = ['app_demo', 'app_lite', 'app_ghost', 'app_relic']
    for (const app of apps) orb.control.setEndpoint(app, `${rx.url}/hooks/${app}`)
    const made = new Map(apps.map((app) => [app, Array.from({ length: 5 }, () => orb.control.testEvent(app).event)]))
    await until(() => rx.hits.length === MAX_IN_FLIGHT, 'the first slots to fill')
    t.same(orb.services.webhooks.pending(), {
      inFlight: MAX_IN_FLIGHT,
      queued: 20 - MAX_IN_FLIGHT,
      retriesScheduled: 0
    })
    t.match(orb.control.state().webhooks, { inFlight: MAX_IN_FLIGHT, queued: 20 - MAX_IN_FLIGHT })
    for (const app of apps) {
      t.same(
        rx.hits.filter((h) => h.url.endsWith(app)).map((h) => h.json.id),
        made.get(app)!.slice(0, MAX_IN_FLIGHT_PER_APP),
        `${app}: its first ${MAX_IN_FLIGHT_PER_APP}, first in, first out`
      )
    }
    let maxPerApp = 0
    for (let released = 0; released < 20; released++) {
      await until(() => rx.hits.some((h) => !h.answered), 'a held request')
      for (const app of apps) {
        maxPerApp = Math.max(maxPerApp, rx.hits.filter((h) => h.url.endsWith(app) && !h.answered && !h.closed).length)
      }
      reply(
        rx.hits.find((h) => !h.answered)!,
        200
      )
    }
    await until(() => apps.every((app) => orb.services.webhooks.deliveries(app).length === 5), 'twenty deliveries')
    t.equal(rx.stats.maxOpen, MAX_IN_FLIGHT, `never more than ${MAX_IN_FLIGHT} open at once`)
    t.equal(maxPerApp, MAX_IN_FLIGHT_PER_APP, `never more than ${MAX_IN_FLIGHT_PER_APP} of one app`)
    for (const app of apps) {
      t.same(
        rx.hits.filter((h) => h.url.endsWith(app)).map((h) => h.json.id),
        made.get(app),
        `${app}: each event once, in order`
      )
    }
  }
)

t.test("ORB-A11 one app's endpoint that never answers does not hold up another app's deliveries", async (t) => {
  const { orb, rx } = await webhookOrb(t, (hit) => {
    if (hit.url.endsWith('app_lite')) reply(hit, 204)
  })
  orb.control.setEndpoint('app_lite', `${rx.url}/hooks/app_lite`)
  for (let i = 0; i < 12; i++) orb.control.testEvent('app_demo')
  const lite = orb.control.testEvent('app_lite').event
  await until(
    () => orb.services.webhooks.deliveries('app_lite').length === 1,
    "the other app's delivery, with no clock tick"
  )
  t.match(orb.services.webhooks.deliveries('app_lite'), [{ event: lite, outcome: 'delivered' }])
  t.equal(
    rx.hits.filter((h) => h.url.endsWith('/hooks/orb?k=1')).length,
    MAX_IN_FLIGHT_PER_APP,
    'the stuck app holds only its own slots'
  )
})

t.test(
  'ORB-A11 a typed command waiting for a slot is not sent once its member stopped waiting; the log says why',
  async (t) => {
    const { orb, rx } = await webhookOrb(t, () => {})
    for (let i = 0; i < MAX_IN_FLIGHT_PER_APP; i++) orb.control.testEvent('app_demo')
    await until(() => rx.hits.length === MAX_IN_FLIGHT_PER_APP, "the app's slots to fill")
    const event = await typeHello(orb)
    orb.clock.advance(6_000)
    t.notOk(orb.services.interactions.waiting(event))
    orb.clock.advance(4_000) // the held test events time out (10 s), freeing the slots
    await until(() => log(orb).some((d) => d.event === event), "the command's record")
    t.match(
      log(orb).find((d) => d.event === event),
      { outcome: 'skipped', attempt: 1, status: null }
    )
    t.notOk(
      rx.hits.some((h) => h.json?.id === event),
      'it never reached the endpoint'
    )
  }
)

t.test('ORB-093 a reset aborts deliveries in flight, cancels pending retries and clears the log', async (t) => {
  const { orb, rx } = await webhookOrb(t, (hit) => {
    if (rx.hits.length === 1) reply(hit, 500)
  })
  orb.control.testEvent('app_demo')
  await until(() => log(orb).length === 1, 'the failed attempt')
  mention(orb)
  await until(() => rx.hits.length === 2, 'the held attempt')
  t.same(orb.services.webhooks.pending(), { inFlight: 1, queued: 0, retriesScheduled: 1 })
  orb.control.reset()
  t.same(orb.services.webhooks.pending(), { inFlight: 0, queued: 0, retriesScheduled: 0 })
  t.same(log(orb), [])
  await until(() => rx.hits[1]!.closed, 'the held request to be aborted')
  orb.clock.advance(60_000)
  t.equal(rx.hits.length, 2, 'no retry after the reset')
  t.same(log(orb), [])
})

t.test('ORB-A05 ORB-093 back in events mode, a retry not yet due and attempts still queued are dropped and logged as skipped; a new endpoint gets only new events', async (t) => {
  const { orb, rx } = await webhookOrb(t, (hit) => reply(hit, 500))
  const failed = orb.control.testEvent('app_demo').event
  await until(() => log(orb).length === 1, 'the first attempt to fail')
  t.equal(orb.services.webhooks.pending().retriesScheduled, 1, 'its retry waits 2 s')
  orb.control.setEndpoint('app_demo', null)
  t.equal(orb.services.webhooks.pending().retriesScheduled, 0, 'the retry is dropped with the mode')
  t.match(log(orb).at(-1), { event: failed, attempt: 2, outcome: 'skipped', error: /events mode/ })
  orb.control.setEndpoint('app_demo', `${rx.url}/again`)
  orb.clock.advance(5_000)
  const fresh = orb.control.testEvent('app_demo').event
  await until(() => rx.hits.length === 2, 'the new event')
  t.same(rx.hits.map((h) => h.json.id), [failed, fresh], 'the old event never reaches the new endpoint')
})
