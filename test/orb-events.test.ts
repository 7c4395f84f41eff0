import { readFileSync } from 'node:fs'
import { request as httpRequest } from 'node:http'
import { join } from 'node:path'
import fc from 'fast-check'
import t from 'tap'
import { createAjv } from '../src/shared/ajv.js'
import { defaultWorld } from '../src/orb-mock/world.js'
import { DEMO, isOrbError, startOrb } from './helpers/orb.js'
import { fcParams } from './helpers/fc.js'
import { ROOT } from './helpers/root.js'

const root = ROOT
const spec = JSON.parse(readFileSync(join(root, 'specs', 'orb-bot-api.openapi.json'), 'utf8'))
const ajv = createAjv().addSchema({ $id: 'orb', paths: spec.paths, components: spec.components })
const eventSchema = ajv.compile({ $ref: 'orb#/components/schemas/Event' })
const replySchema = ajv.compile({ $ref: 'orb#/paths/~1api~1bot~1v1~1events/get/responses/200/content/application~1json/schema' })

type Orb = Awaited<ReturnType<typeof startOrb>>
const mention = (orb: Orb, content = 'hey <@app_demo>', member = 'mem_bo', channel = 'ch_general') =>
  orb.control.memberPost({ server: 'srv_orbit', channel, member, content })
const poll = (orb: Orb, query = '') => orb.bot.get(`/api/bot/v1/events${query}`)

async function waitFor (condition: () => boolean): Promise<void> {
  for (let i = 0; i < 400 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 5))
  if (!condition()) throw new Error('condition never held')
}

t.test(
  'ORB-043 ORB-046 ORB-052 GET /events: {events, next, mode: "events"}; each event has a cursor and the spec\'s shape',
  async (t) => {
    const orb = await startOrb(t)
    const empty = await poll(orb)
    t.same(empty.json, { events: [], next: 0, mode: 'events' })
    mention(orb)
    orb.control.testEvent('app_demo')
    const reply = await poll(orb)
    t.equal(reply.status, 200)
    t.ok(replySchema(reply.json), "the reply matches the spec's 200 schema")
    t.same(
      reply.json.events.map((e: { cursor: number }) => e.cursor),
      [1, 2]
    )
    t.equal(reply.json.next, 2)
    for (const event of reply.json.events) {
      t.ok(eventSchema(event), `${event.type} matches the spec's Event`)
      t.same(Object.keys(event).sort(), ['api', 'app', 'channel', 'cursor', 'data', 'id', 'sent_at', 'server', 'type'])
      t.equal(event.api, 'orb-bots-v1')
      t.same(event.app, { id: 'app_demo', name: 'Demo Bot' })
      t.equal(event.sent_at, orb.clock.now())
      t.match(event.id, /^evt_[0-9a-f]{24}$/)
    }
  }
)

t.test(
  'ORB-044 ORB-A09 after, wait and limit are validated: wait 26, limit 0 or 101, non-integers and a negative after are 400',
  async (t) => {
    const orb = await startOrb(t)
    for (const query of [
      '?wait=26',
      '?wait=-1',
      '?limit=0',
      '?limit=101',
      '?after=abc',
      '?after=1.5',
      '?wait=x',
      '?after=-1',
      '?limit=5&limit=6'
    ]) {
      t.ok(isOrbError(await poll(orb, query), 400), query)
    }
    for (const query of ['?wait=0', '?limit=1', '?limit=100', '?after=0', '?after=999']) {
      t.equal((await poll(orb, query)).status, 200, query)
    }
  }
)

t.test(
  'ORB-045 ORB-047 only events after the cursor, oldest first, at most limit; the same cursor repeats the same events',
  async (t) => {
    const orb = await startOrb(t)
    for (let i = 0; i < 7; i++) mention(orb, `<@app_demo> ${i}`)
    const page = (await poll(orb, '?after=2&limit=3')).json
    t.same(
      page.events.map((e: { cursor: number }) => e.cursor),
      [3, 4, 5]
    )
    t.same(
      page.events.map((e: { data: { message: { body: string } } }) => e.data.message.body),
      ['<@app_demo> 2', '<@app_demo> 3', '<@app_demo> 4']
    )
    t.equal(page.next, 5)
    t.same((await poll(orb, '?after=2&limit=3')).json, page, 'fetching consumes nothing')
    t.same(
      (await poll(orb, '?after=5')).json.events.map((e: { cursor: number }) => e.cursor),
      [6, 7]
    )
    t.same((await poll(orb, '?after=7')).json, { events: [], next: 7, mode: 'events' })
    t.same(
      (await poll(orb, '?after=70')).json,
      { events: [], next: 70, mode: 'events' },
      'ORB-A09: after beyond the newest: [] and next = after'
    )
  }
)

t.test(
  'ORB-049 ORB-A09 events are kept a day and at most 500; an older cursor starts from the oldest kept event',
  async (t) => {
    const orb = await startOrb(t)
    for (let i = 0; i < 501; i++) orb.control.testEvent('app_demo')
    const first = (await poll(orb, '?limit=100')).json
    t.equal(first.events[0].cursor, 2, 'the 501st event pushed the first out')
    t.equal(first.events.length, 100)
    orb.clock.advance(12 * 3600_000)
    orb.control.testEvent('app_demo')
    orb.clock.advance(12 * 3600_000)
    t.equal(
      (await poll(orb, '?limit=100')).json.events[0].cursor,
      3,
      'a day old exactly is still kept (the 502nd pushed the 2nd out)'
    )
    orb.clock.advance(1)
    const later = (await poll(orb, '?after=0')).json
    t.same(
      later.events.map((e: { cursor: number }) => e.cursor),
      [502],
      'older than a day by sent_at: gone'
    )
    orb.clock.advance(12 * 3600_000)
    t.same((await poll(orb)).json, { events: [], next: 0, mode: 'events' })
    orb.control.testEvent('app_demo')
    t.same(
      (await poll(orb)).json.events.map((e: { cursor: number }) => e.cursor),
      [503],
      'ORB-A09: cursors are never reused'
    )
  }
)

t.test(
  "ORB-050 a long poll is answered as soon as an event arrives, with no clock tick, and [] at its deadline on the fake's clock",
  async (t) => {
    const orb = await startOrb(t)
    const events = orb.services.events
    const held = poll(orb, '?wait=25')
    await waitFor(() => events.heldPolls() === 1)
    mention(orb)
    const woke = await held
    t.equal(woke.json.events.length, 1, 'woken by the event, the virtual clock never moved')
    t.equal(woke.json.next, 1)
    const timing = poll(orb, '?after=1&wait=3')
    await waitFor(() => events.heldPolls() === 1)
    orb.clock.advance(2999)
    t.equal(events.heldPolls(), 1, 'still held a millisecond before its deadline')
    orb.clock.advance(1)
    t.same((await timing).json, { events: [], next: 1, mode: 'events' })
    t.equal(orb.clock.pendingTimers(), 0, 'nothing left behind')
  }
)

t.test(
  'ORB-050 a client that goes away mid-poll frees its poll and its timer at once; many concurrent polls are fine',
  async (t) => {
    const orb = await startOrb(t)
    const events = orb.services.events
    const url = new URL(`${orb.url}/api/bot/v1/events?wait=20`)
    const req = httpRequest({
      host: url.hostname,
      port: url.port,
      path: url.pathname + url.search,
      headers: { authorization: `Bearer ${DEMO.token}` }
    })
    req.on('error', () => {})
    req.end()
    await waitFor(() => events.heldPolls() === 1)
    req.destroy()
    await waitFor(() => events.heldPolls() === 0)
    t.equal(orb.clock.pendingTimers(), 0, 'the deadline timer went with it')
    const many = Array.from({ length: 30 }, () => poll(orb, '?wait=20'))
    await waitFor(() => events.heldPolls() === 30)
    orb.control.testEvent('app_demo')
    const replies = await Promise.all(many)
    t.ok(
      replies.every((r) => r.json.events.length === 1 && r.json.events[0].type === 'app.test'),
      'ORB-A09: concurrent polls all see the same event'
    )
  }
)

t.test(
  'ORB-051 ORB-A05 ORB-A09 with an endpoint URL, /events answers [] with mode "webhook" at once; the queue starts empty and cursors keep counting',
  async (t) => {
    const orb = await startOrb(t)
    mention(orb)
    mention(orb)
    const events = orb.services.events
    const held = poll(orb, '?after=2&wait=25')
    await waitFor(() => events.heldPolls() === 1)
    orb.control.setEndpoint('app_demo', 'http://127.0.0.1:9/hook')
    t.same((await held).json, { events: [], next: 2, mode: 'webhook' }, 'a held poll is answered when the mode changes')
    t.same((await poll(orb, '?after=1&wait=25')).json, { events: [], next: 1, mode: 'webhook' }, 'wait is ignored')
    orb.control.setEndpoint('app_demo', null)
    t.same((await poll(orb)).json, { events: [], next: 0, mode: 'events' }, 'back in events mode with an empty queue')
    orb.control.testEvent('app_demo')
    t.same(
      (await poll(orb)).json.events.map((e: { cursor: number }) => e.cursor),
      [3],
      'the cursor kept counting'
    )
    t.throws(() => orb.control.setEndpoint('app_demo', 'http://example.com/hook'), /https, or http to localhost/)
    t.throws(() => orb.control.setEndpoint('app_demo', 'ftp://localhost/hook'))
    t.doesNotThrow(() => orb.control.setEndpoint('app_demo', 'https://example.com/hook'))
  }
)

t.test(
  'ORB-053 ORB-A10 message.mention: {message:{id, channel, author, body}, reason} for a mention or a reply; encrypted bodies are null',
  async (t) => {
    const orb = await startOrb(t)
    const said = mention(orb, 'hi <@app_demo>')
    const mine = (await orb.bot.post('/api/bot/v1/messages', { channel: 'ch_general', content: 'I am a bot' })).json.id
    orb.control.memberPost({
      server: 'srv_orbit',
      channel: 'ch_general',
      member: 'mem_ada',
      content: 'thanks',
      replyTo: mine
    })
    orb.control.memberPost({
      server: 'srv_orbit',
      channel: 'ch_general',
      member: 'mem_cy',
      content: 'psst <@app_demo>',
      encrypted: true
    })
    orb.control.memberPost({
      server: 'srv_orbit',
      channel: 'ch_general',
      member: 'mem_ada',
      content: 'both <@app_demo>',
      replyTo: mine
    })
    const [a, b, c, d] = (await poll(orb)).json.events
    t.same(a.data, {
      message: {
        id: said.id,
        channel: 'ch_general',
        author: { id: 'mem_bo', name: 'Bo', bot: false },
        body: 'hi <@app_demo>'
      },
      reason: 'mention'
    })
    t.equal(a.server, 'srv_orbit')
    t.equal(a.channel, 'ch_general')
    t.equal(b.data.reason, 'reply')
    t.equal(c.data.message.body, null)
    t.equal(d.data.reason, 'mention', 'a reply that also mentions is one event, a mention')
    t.equal((await poll(orb, '?after=4')).json.events.length, 0)
  }
)

t.test(
  'ORB-054 an app sees only its own events, from communities that installed it and channels its role sees',
  async (t) => {
    const orb = await startOrb(t)
    const lite = orb.as(DEMO.lite)
    mention(orb, 'hi <@app_lite>')
    orb.control.memberPost({ server: 'srv_quiet', channel: 'ch_quiet', member: 'mem_eli', content: 'hi <@app_demo>' })
    orb.control.memberPost({ server: 'srv_orbit', channel: 'ch_staff', member: 'mem_ada', content: 'hi <@app_demo>' })
    t.same(
      (await poll(orb)).json.events,
      [],
      "none for the demo app: another app's mention, a community without it, a channel off its allow-list"
    )
    const liteEvents = (await lite.get('/api/bot/v1/events')).json.events
    t.same(
      liteEvents.map((e: { app: { id: string } }) => e.app.id),
      ['app_lite']
    )
  }
)

t.test(
  'ORB-053 ORB-061 ORB-063 ORB-A10 a typed command is an application_command event only where the app is installed and the member holds its right',
  async (t) => {
    const orb = await startOrb(t)
    t.equal(
      (
        await orb.bot.put('/api/bot/v1/commands', {
          commands: [
            { name: 'roll', options: [{ name: 'sides' }, { name: 'times', optional: true }], right: 'connect' }
          ]
        })
      ).status,
      200
    )
    const invoked = orb.control.invoke({
      server: 'srv_orbit',
      channel: 'ch_general',
      member: 'mem_cy',
      name: 'roll',
      options: { sides: '20' }
    })
    const [event] = (await poll(orb)).json.events
    t.equal(event.id, invoked.event)
    t.equal(event.type, 'application_command')
    const commandId = (await orb.bot.get('/api/bot/v1/commands')).json.commands[0].id
    t.same(event.data, {
      command: { id: commandId, name: 'roll', options: { sides: '20' } },
      member: { id: 'mem_cy', name: 'Cy' },
      invoked_at: orb.clock.now()
    })
    t.throws(
      () =>
        orb.control.invoke({
          server: 'srv_orbit',
          channel: 'ch_general',
          member: 'mem_dee',
          name: 'roll',
          options: { sides: '6' }
        }),
      /lacks connect/,
      'ORB-063'
    )
    orb.control.install('srv_quiet', 'app_lite', { channels: ['ch_quiet'] })
    t.throws(
      () =>
        orb.control.invoke({
          server: 'srv_quiet',
          channel: 'ch_quiet',
          member: 'mem_eli',
          name: 'roll',
          options: { sides: '6' }
        }),
      /no app installed in srv_quiet/,
      'ORB-061'
    )
    t.throws(
      () => orb.control.invoke({ server: 'srv_orbit', channel: 'ch_general', member: 'mem_cy', name: 'roll' }),
      /needs its option sides/
    )
    t.throws(
      () =>
        orb.control.invoke({
          server: 'srv_orbit',
          channel: 'ch_general',
          member: 'mem_cy',
          name: 'roll',
          options: { sides: '6', color: 'red' }
        }),
      /no option color/
    )
    t.equal((await poll(orb, `?after=${event.cursor}`)).json.events.length, 0, 'no refused invocation made an event')
  }
)

t.test(
  'ORB-066 ORB-067 ORB-068 ORB-A14 respond: the first answer wins (200), a second is 409, at 6 s after invoked_at it is 410',
  async (t) => {
    const orb = await startOrb(t)
    await orb.bot.put('/api/bot/v1/commands', { commands: [{ name: 'ping' }] })
    const first = orb.control.invoke({ server: 'srv_orbit', channel: 'ch_general', member: 'mem_bo', name: 'ping' })
      .event as string
    orb.clock.advance(5999)
    const answered = await orb.bot.post(`/api/bot/v1/interactions/${first}/respond`, { content: 'pong' })
    t.equal(answered.status, 200)
    t.ok(isOrbError(await orb.bot.post(`/api/bot/v1/interactions/${first}/respond`, { content: 'again' }), 409))
    const seen = orb.control.state().interactions as Array<{
      event: string
      answer: { content: string; via: string } | null
      member: string
    }>
    t.same(
      seen.find((i) => i.event === first)!.answer,
      { content: 'pong', via: 'respond', at: orb.clock.now() },
      'the member saw the answer'
    )
    const second = orb.control.invoke({ server: 'srv_orbit', channel: 'ch_general', member: 'mem_bo', name: 'ping' })
      .event as string
    orb.clock.advance(6000)
    t.ok(isOrbError(await orb.bot.post(`/api/bot/v1/interactions/${second}/respond`, { content: 'late' }), 410))
    const late = (orb.control.state().interactions as Array<{ event: string; answer: unknown; expired: boolean }>).find(
      (i) => i.event === second
    )!
    t.same({ answer: late.answer, expired: late.expired }, { answer: null, expired: true }, 'the member saw nothing')
    t.ok(
      isOrbError(await orb.bot.post(`/api/bot/v1/interactions/${first}/respond`, { content: 'x' }), 409),
      'ORB-A14: 409 comes before 410'
    )
  }
)

t.test(
  "ORB-069 ORB-070 ORB-A14 respond: 404 for an unknown or another app's event, 400 for an event that is not a command, 400 for a bad body",
  async (t) => {
    const orb = await startOrb(t)
    mention(orb, 'yo <@app_demo>')
    const mentionId = (await poll(orb)).json.events[0].id
    t.ok(
      isOrbError(await orb.bot.post(`/api/bot/v1/interactions/${mentionId}/respond`, { content: 'x' }), 400),
      'a mention'
    )
    const test = orb.control.testEvent('app_demo').event
    t.ok(isOrbError(await orb.bot.post(`/api/bot/v1/interactions/${test}/respond`, { content: 'x' }), 400), 'app.test')
    t.ok(isOrbError(await orb.bot.post('/api/bot/v1/interactions/evt_nope/respond', { content: 'x' }), 404))
    t.ok(
      isOrbError(await orb.as(DEMO.lite).post(`/api/bot/v1/interactions/${mentionId}/respond`, { content: 'x' }), 404),
      "another app's event"
    )
    await orb.bot.put('/api/bot/v1/commands', { commands: [{ name: 'ping' }] })
    const command = orb.control.invoke({ server: 'srv_orbit', channel: 'ch_general', member: 'mem_bo', name: 'ping' })
      .event as string
    t.ok(isOrbError(await orb.bot.post(`/api/bot/v1/interactions/${command}/respond`, {}), 400), 'no content')
    t.ok(
      isOrbError(await orb.bot.post(`/api/bot/v1/interactions/${command}/respond`, { content: 'x'.repeat(1801) }), 400),
      '1801 characters'
    )
    t.equal(
      (await orb.bot.post(`/api/bot/v1/interactions/${command}/respond`, { content: 'x'.repeat(1800) })).status,
      200,
      '1800 characters, and the refused bodies did not use the answer up'
    )
  }
)

t.test(
  'ORB-048 ORB-047 ORB-A09 property: a bot that follows next sees every retained event exactly once, in order, for any interleaving and page size',
  async (t) => {
    const step = fc.oneof(
      fc.constant({ kind: 'mention' as const }),
      fc.constant({ kind: 'test' as const }),
      fc.record({ kind: fc.constant('poll' as const), limit: fc.integer({ min: 1, max: 5 }) }),
      fc.record({ kind: fc.constant('replay' as const), back: fc.nat({ max: 4 }) })
    )
    await fc.assert(
      fc.asyncProperty(fc.array(step, { maxLength: 40 }), async (steps) => {
        const orb = await startOrb(t)
        try {
          const made: string[] = []
          const seen: string[] = []
          let next = 0
          for (const s of steps) {
            if (s.kind === 'mention') made.push(...(mention(orb).events as Array<{ id: string }>).map((e) => e.id))
            else if (s.kind === 'test') made.push(orb.control.testEvent('app_demo').event)
            else if (s.kind === 'poll') {
              const reply = (await poll(orb, `?after=${next}&limit=${s.limit}`)).json
              seen.push(...reply.events.map((e: { id: string }) => e.id))
              if (
                reply.events.some(
                  (e: { cursor: number }, i: number, all: Array<{ cursor: number }>) =>
                    e.cursor <= next || (i > 0 && e.cursor <= all[i - 1]!.cursor)
                )
              ) { return false }
              next = reply.next
            } else {
              // The same cursor repeats the same events.
              const after = Math.max(0, next - s.back)
              const a = (await poll(orb, `?after=${after}`)).json
              const b = (await poll(orb, `?after=${after}`)).json
              if (JSON.stringify(a) !== JSON.stringify(b)) return false
            }
          }
          for (;;) {
            const reply = (await poll(orb, `?after=${next}&limit=100`)).json
            if (reply.events.length === 0) break
            seen.push(...reply.events.map((e: { id: string }) => e.id))
            next = reply.next
          }
          return JSON.stringify(seen) === JSON.stringify(made)
        } finally {
          await orb.close()
        }
      }),
      fcParams({ numRuns: 40 })
    )
  }
)

t.test('ORB-A22 rotating the token keeps queued events and the cursor', async (t) => {
  const orb = await startOrb(t)
  mention(orb)
  const { token } = orb.control.rotateToken('app_demo')
  const reply = (await orb.as(token).get('/api/bot/v1/events')).json
  t.equal(reply.events.length, 1)
  t.equal(reply.next, 1)
})

t.test('ORB-A04 reset answers held polls and starts every cursor again from 1', async (t) => {
  const world = defaultWorld()
  const orb = await startOrb(t, { world })
  mention(orb)
  const held = poll(orb, '?after=1&wait=25')
  await waitFor(() => orb.services.events.heldPolls() === 1)
  orb.control.reset()
  t.same((await held).json.events, [])
  mention(orb)
  t.same((await poll(orb)).json.events.map((e: { cursor: number }) => e.cursor), [1])
})

t.test('ORB-050 a held poll waits for an event past its own cursor: events at or before it do not answer it', async (t) => {
  const orb = await startOrb(t)
  mention(orb)
  mention(orb)
  const events = orb.services.events
  const held = poll(orb, '?after=3&wait=25')
  await waitFor(() => events.heldPolls() === 1)
  mention(orb) // cursor 3: not after 3
  await new Promise((resolve) => setTimeout(resolve, 20))
  t.equal(events.heldPolls(), 1, 'still held after cursor 3')
  mention(orb)
  t.same((await held).json.events.map((e: { cursor: number }) => e.cursor), [4])
})

t.test('ORB-050 closing the fake answers every held poll at once', async (t) => {
  const orb = await startOrb(t)
  const held = poll(orb, '?wait=25')
  await waitFor(() => orb.services.events.heldPolls() === 1)
  const started = Date.now()
  await orb.close()
  t.ok(Date.now() - started < 2000, `close took ${Date.now() - started} ms`)
  await held.then(() => {}, () => {})
})

t.test('ORB-A22 a poll held with a token that is then rotated is answered 401 at once', async (t) => {
  const orb = await startOrb(t)
  const held = poll(orb, '?wait=25')
  await waitFor(() => orb.services.events.heldPolls() === 1)
  orb.control.rotateToken('app_demo')
  t.ok(isOrbError(await held, 401))
  orb.control.testEvent('app_demo')
  t.ok(isOrbError(await poll(orb), 401), 'the old token gets nothing')
})

t.test('ORB-A05 setting the same mode again changes nothing: the queue survives an endpoint of null in events mode', async (t) => {
  const orb = await startOrb(t)
  mention(orb)
  mention(orb)
  orb.control.setEndpoint('app_demo', null)
  t.same((await poll(orb)).json.events.map((e: { cursor: number }) => e.cursor), [1, 2])
  orb.control.setEndpoint('app_demo', 'http://127.0.0.1:9/a')
  orb.control.setEndpoint('app_demo', 'http://127.0.0.1:9/b')
  t.same((await poll(orb)).json, { events: [], next: 0, mode: 'webhook' })
})

t.test('ORB-A14 ORB-049 a day after an event it is forgotten: respond then answers 404', async (t) => {
  const orb = await startOrb(t)
  await orb.bot.put('/api/bot/v1/commands', { commands: [{ name: 'ping' }] })
  const old = orb.control.invoke({ server: 'srv_orbit', channel: 'ch_general', member: 'mem_bo', name: 'ping' })
    .event as string
  orb.clock.advance(7000)
  t.ok(
    isOrbError(await orb.bot.post(`/api/bot/v1/interactions/${old}/respond`, { content: 'x' }), 410),
    'the member stopped waiting'
  )
  orb.clock.advance(24 * 3600_000)
  orb.control.testEvent('app_demo')
  t.ok(
    isOrbError(await orb.bot.post(`/api/bot/v1/interactions/${old}/respond`, { content: 'x' }), 404),
    'forgotten with the events of its day'
  )
  t.notOk(
    (orb.control.state().interactions as Array<{ event: string }>).some((i) => i.event === old),
    'and gone from the control state'
  )
})

t.test(
  "ORB-061 an app that does not see the channel does not offer its command there, so another app's is not ambiguous",
  async (t) => {
    const orb = await startOrb(t)
    await orb.bot.put('/api/bot/v1/commands', { commands: [{ name: 'greet' }] })
    await orb.as(DEMO.lite).put('/api/bot/v1/commands', { commands: [{ name: 'greet' }] })
    t.throws(
      () => orb.control.invoke({ server: 'srv_orbit', channel: 'ch_general', member: 'mem_ada', name: 'greet' }),
      /several apps offer \/greet/
    )
    orb.control.install('srv_orbit', 'app_demo', { channels: ['ch_news'] })
    const invoked = orb.control.invoke({ server: 'srv_orbit', channel: 'ch_general', member: 'mem_ada', name: 'greet' })
    t.equal(invoked.app, 'app_lite', 'only the app that sees ch_general offers /greet there')
  }
)
