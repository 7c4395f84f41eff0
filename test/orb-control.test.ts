import t, { type Test } from 'tap'
import { createAjv } from '../src/shared/ajv.js'
import { startOrbtest } from '../src/orbtest.js'
import { httpRequest } from './helpers/client.js'
import { DEMO, OrbClient, isOrbError } from './helpers/orb.js'

async function setup (tt: { teardown(fn: () => unknown): void }) {
  const fakes = await startOrbtest({
    orbtile: false,
    orb: { port: 0 },
    controlPort: 0,
    clockMode: 'virtual',
    clockStart: Date.UTC(2026, 10, 30)
  })
  tt.teardown(() => fakes.close())
  const call = (method: string, path: string, body?: unknown) => httpRequest(fakes.control.url, { method, path, body })
  return { fakes, call, bot: new OrbClient(fakes.orb!.url, DEMO.token) }
}

t.test(
  'ORB-A04 control: GET /control/orb/state shows apps with tokens and scopes, servers with channels and members, installs',
  async (t) => {
    const { call } = await setup(t)
    const state = (await call('GET', '/control/orb/state')).json
    const demo = state.apps.find((a: { id: string }) => a.id === 'app_demo')
    t.same(
      { id: demo.id, name: demo.name, token: demo.token, scopes: demo.scopes },
      {
        id: 'app_demo',
        name: 'Demo Bot',
        token: DEMO.token,
        scopes: ['messages:read', 'messages:write', 'voice', 'music', 'passport']
      }
    )
    const orbit = state.servers.find((s: { id: string }) => s.id === 'srv_orbit')
    t.same(
      orbit.channels.find((c: { id: string }) => c.id === 'ch_news'),
      { id: 'ch_news', name: 'announcements', kind: 'text', readOnly: true }
    )
    t.same(
      orbit.channels.find((c: { id: string }) => c.id === 'ch_lounge'),
      { id: 'ch_lounge', name: 'Lounge', kind: 'voice', readOnly: false, capacity: 4 }
    )
    t.ok(orbit.members.some((m: { id: string; name: string }) => m.id === 'mem_ada' && m.name === 'Ada'))
    t.ok(state.members.some((m: { id: string }) => m.id === 'mem_eli'))
    t.ok(state.installs.some((i: { server: string; app: string }) => i.server === 'srv_quiet' && i.app === 'app_lite'))
    t.same(state.chain, { available: true })
  }
)

t.test(
  "ORB-A04 control: a member posts; the bot reads it with its mentions; bad posts are refused by the control API's codes",
  async (t) => {
    const { call, bot } = await setup(t)
    const posted = await call('POST', '/control/orb/messages', {
      server: 'srv_orbit',
      channel: 'ch_general',
      member: 'mem_bo',
      content: 'hey <@app_demo> and <@mem_ada> and <@mem_eli>'
    })
    t.equal(posted.status, 200)
    t.same(
      posted.json.mentions,
      ['app_demo', 'mem_ada'],
      'only members and installed apps of the community are mentions'
    )
    const sealed = await call('POST', '/control/orb/messages', {
      server: 'srv_orbit',
      channel: 'ch_general',
      member: 'mem_ada',
      content: 'secret',
      encrypted: true,
      replyTo: posted.json.id
    })
    t.equal(sealed.status, 200)
    const read = (await bot.get('/api/bot/v1/messages?channel=ch_general&limit=2')).json.messages
    t.same(
      read.map((m: { author: { id: string }; body: string | null; replyTo: number | null }) => [
        m.author.id,
        m.body,
        m.replyTo
      ]),
      [
        ['mem_bo', 'hey <@app_demo> and <@mem_ada> and <@mem_eli>', null],
        ['mem_ada', null, posted.json.id]
      ]
    )
    for (const { why, post, status } of REFUSED_POSTS) {
      t.equal((await call('POST', '/control/orb/messages', post)).status, status, why)
    }
  }
)

/** Members' posts the control API refuses, each with its status and why. */
const REFUSED_POSTS = [
  { why: 'not a member there', status: 404, post: { member: 'mem_eli', channel: 'ch_general', content: 'x' } },
  { why: 'no send_messages right', status: 409, post: { member: 'mem_dee', channel: 'ch_general', content: 'x' } },
  { why: 'a voice channel', status: 400, post: { member: 'mem_ada', channel: 'ch_lounge', content: 'x' } },
  {
    why: 'a channel of another community',
    status: 404,
    post: { member: 'mem_ada', channel: 'ch_quiet', content: 'x' }
  },
  { why: 'no content', status: 400, post: { member: 'mem_ada', channel: 'ch_general' } }
].map(({ why, status, post }) => ({ why, status, post: { server: 'srv_orbit', ...post } }))

t.test(
  'ORB-A04 control: install with rights and an allow-list, uninstall; ORB-A22 rotate-token; ORB-086 chain; ORB-078 voice',
  async (t) => {
    const { call, bot } = await setup(t)
    const installed = await call('PUT', '/control/orb/servers/srv_quiet/apps/app_demo', {
      role: { name: 'Helper', rights: ['send_messages'] },
      channels: ['ch_quiet']
    })
    t.equal(installed.status, 200)
    t.same(installed.json.role, { name: 'Helper', rights: ['send_messages'] })
    t.equal((await bot.post('/api/bot/v1/messages', { channel: 'ch_quiet', content: 'hi' })).status, 200)
    t.equal(
      (await call('PUT', '/control/orb/servers/srv_quiet/apps/app_demo', { channels: ['ch_general'] })).status,
      400,
      'a channel of another community'
    )
    t.equal((await call('PUT', '/control/orb/servers/srv_none/apps/app_demo', {})).status, 404)
    t.equal((await call('PUT', '/control/orb/servers/srv_quiet/apps/app_none', {})).status, 404)
    t.equal(
      (await call('PUT', '/control/orb/servers/srv_quiet/apps/app_demo', { role: { rights: ['admin'] } })).status,
      400,
      'rights from the vocabulary only'
    )
    t.equal((await call('DELETE', '/control/orb/servers/srv_quiet/apps/app_demo')).status, 200)
    t.equal(
      (await call('DELETE', '/control/orb/servers/srv_quiet/apps/app_demo')).status,
      404,
      'not installed any more'
    )
    t.ok(isOrbError(await bot.post('/api/bot/v1/messages', { channel: 'ch_quiet', content: 'hi' }), 404))
    const rotated = await call('POST', '/control/orb/apps/app_demo/rotate-token')
    t.equal(rotated.status, 200)
    t.match(rotated.json.token, /^orb_[A-Za-z0-9_-]{32}$/)
    t.ok(isOrbError(await bot.get('/api/bot/v1/app'), 401))
    t.equal((await new OrbClient(bot.url, rotated.json.token).get('/api/bot/v1/app')).status, 200)
    t.same((await call('PUT', '/control/orb/chain', { available: false })).json, { available: false })
    t.equal((await call('PUT', '/control/orb/chain', { available: 'no' })).status, 400)
    t.same((await call('PUT', '/control/orb/voice', { server: false, capacity: { ch_lounge: 2 } })).json, {
      server: false,
      url: null
    })
    t.equal(
      (await call('PUT', '/control/orb/voice', { capacity: { ch_general: 2 } })).status,
      400,
      'capacity is for voice channels'
    )
    t.equal((await call('PUT', '/control/orb/voice', {})).status, 400, 'an empty change')
    const state = (await call('GET', '/control/orb/state')).json
    t.same({ server: state.voice.server, url: state.voice.url }, { server: false, url: null })
    t.ok(Array.isArray(state.voice.channels), 'the voice module adds its calls to the same key')
    t.equal(state.servers[0].channels.find((c: { id: string }) => c.id === 'ch_lounge').capacity, 2)
    t.same((await call('PUT', '/control/orb/voice', { server: true })).json, {
      server: true,
      url: 'wss://voice.orb.test'
    })
  }
)

t.test(
  'ORB-A04 control: POST /control/reset brings the world back: tokens, installs, messages, chain, throttles, commands, voice',
  async (t) => {
    const { call, bot, fakes } = await setup(t)
    for (let i = 0; i < 12; i++) await bot.post('/api/bot/v1/messages', { channel: 'ch_general', content: `fill ${i}` })
    t.equal(
      (await bot.post('/api/bot/v1/messages', { channel: 'ch_general', content: 'full' })).status,
      429,
      'the channel window is full'
    )
    await bot.put('/api/bot/v1/commands', { commands: [{ name: 'hello' }] })
    const seat = await bot.post('/api/bot/v1/voice', { action: 'join', channel: 'ch_stage' })
    t.equal(seat.status, 200)
    await call('PUT', '/control/orb/voice', { server: false, capacity: { ch_lounge: 1 } })
    await bot.post('/api/bot/v1/music', { channel: 'ch_lounge', action: 'add', arg: 'a song' })
    await bot.post('/api/bot/v1/messages', { channel: 'ch_general', content: 'gone after reset' }).catch(() => {})
    await call('POST', '/control/orb/apps/app_demo/rotate-token')
    await call('DELETE', '/control/orb/servers/srv_orbit/apps/app_lite')
    await call('PUT', '/control/orb/chain', { available: false })
    t.equal((await call('POST', '/control/reset')).status, 200)
    const read = (await bot.get('/api/bot/v1/messages?channel=ch_general')).json.messages
    t.equal(read.length, 3, "the world's history only, under the world's token")
    t.equal(
      (await new OrbClient(bot.url, DEMO.lite).get('/api/bot/v1/messages?channel=ch_general')).status,
      200,
      'the install is back'
    )
    t.same((await call('GET', '/control/orb/state')).json.chain, { available: true })
    const first = (await bot.post('/api/bot/v1/messages', { channel: 'ch_general', content: 'x' })).json.id
    t.equal(first, 6, "ids start over after the world's five messages, and the throttle window is empty again")
    t.same((await bot.get('/api/bot/v1/commands')).json.commands, [], 'the commands synced are gone')
    const state = (await call('GET', '/control/orb/state')).json
    t.same(
      { server: state.voice.server, url: state.voice.url },
      { server: true, url: 'wss://voice.orb.test' },
      'the voice server is back'
    )
    t.equal(
      state.servers[0].channels.find((c: { id: string }) => c.id === 'ch_lounge').capacity,
      4,
      "and the world's capacity"
    )
    t.same(
      state.voice.channels.find((c: { channel: string }) => c.channel === 'ch_stage').participants,
      [],
      "the app's seat is gone"
    )
    t.same(state.music.players, [], 'no player was used yet')
    t.equal(fakes.clock.pendingTimers(), 0, 'no seat timer outlives the reset')
  }
)

t.test(
  'ORB-A04 ORB-A05 ORB-A10 control: invoke, endpoint, test-event and deliveries over HTTP answer what the control document says',
  async (t) => {
    const { call, bot } = await setup(t)
    const doc = (await call('GET', '/control/openapi.json')).json
    const ajv = createAjv().addSchema({ $id: 'control', components: doc.components })
    const check = (schema: string, value: unknown): boolean =>
      ajv.validate({ $ref: `control#/components/schemas/${schema}` }, value) as boolean
    await bot.put('/api/bot/v1/commands', { commands: [{ name: 'roll', options: [{ name: 'sides' }] }] })
    const invoked = await invokeCommands(t, call, check)
    const tested = await testEvents(t, call, check)
    const events = (await bot.get('/api/bot/v1/events')).json.events
    t.same(
      events.map((e: { id: string }) => e.id),
      [invoked, ...tested],
      'the events in the order they were made, and none from a refused count'
    )
    await endpointAndDeliveries(t, call, check)
  }
)

type Call = (method: string, path: string, body?: unknown) => Promise<{ status: number, json: any }>
type Check = (schema: string, value: unknown) => boolean

/** A member types the `roll` command (and three that are refused); the event id of the one that went through. */
async function invokeCommands (t: Test, call: Call, check: Check): Promise<string> {
  const where = { server: 'srv_orbit', channel: 'ch_general' }
  const roll = { ...where, member: 'mem_cy', name: 'roll', options: { sides: '6' } }
  const invoked = await call('POST', '/control/orb/commands/invoke', roll)
  t.equal(invoked.status, 200)
  t.ok(check('OrbInvoked', invoked.json), 'OrbInvoked')
  const unknown = { ...where, member: 'mem_cy', name: 'nope' }
  t.equal((await call('POST', '/control/orb/commands/invoke', unknown)).status, 404)
  const noRight = { ...roll, member: 'mem_dee' }
  t.equal((await call('POST', '/control/orb/commands/invoke', noRight)).status, 409, 'no right')
  const notText = { ...roll, options: { sides: 6 } }
  t.equal((await call('POST', '/control/orb/commands/invoke', notText)).status, 400, 'options are text')
  return invoked.json.event
}

/** The developer's test events: one, none for an unknown app, three with a count, and refused counts. */
async function testEvents (t: Test, call: Call, check: Check): Promise<string[]> {
  const tested = await call('POST', '/control/orb/apps/app_demo/test-event')
  t.ok(check('OrbEventRef', tested.json), 'OrbEventRef')
  t.same(tested.json.events, [tested.json.event], 'one event without a count')
  t.equal((await call('POST', '/control/orb/apps/app_none/test-event')).status, 404)
  const three = await call('POST', '/control/orb/apps/app_demo/test-event', { count: 3 })
  t.ok(check('OrbEventRef', three.json), 'OrbEventRef, with a count')
  t.equal(three.json.events.length, 3, 'count 3: three events')
  t.equal(three.json.event, three.json.events[2], 'event is the last of them')
  for (const bad of [{ count: 0 }, { count: 1001 }, { count: 2.5 }, { count: '3' }, { count: 3, app: 'x' }]) {
    const refused = await call('POST', '/control/orb/apps/app_demo/test-event', bad)
    t.equal(refused.status, 400, `${JSON.stringify(bad)}: 400`)
    t.equal(refused.json.error.code, 'bad_request', `${JSON.stringify(bad)}: bad_request`)
  }
  return [tested.json.event, ...three.json.events]
}

/** The app gets an endpoint URL (and refused ones); a test event's failed delivery is logged without the token. */
async function endpointAndDeliveries (t: Test, call: Call, check: Check): Promise<void> {
  const endpoint = await call('PUT', '/control/orb/apps/app_demo/endpoint', { url: 'http://127.0.0.1:9/hook' })
  t.ok(check('OrbEndpointState', endpoint.json), 'OrbEndpointState')
  t.same(endpoint.json, { app: 'app_demo', endpoint: 'http://127.0.0.1:9/hook', mode: 'webhook' })
  t.equal(
    (await call('PUT', '/control/orb/apps/app_demo/endpoint', { url: 'http://example.com/hook' })).status,
    400,
    'plain http elsewhere'
  )
  t.equal(
    (await call('PUT', '/control/orb/apps/app_demo/endpoint', {})).status,
    400,
    'url is required (null to clear)'
  )
  const state = (await call('GET', '/control/orb/state')).json
  t.ok(check('OrbState', state), 'OrbState')
  t.equal(state.apps.find((a: { id: string }) => a.id === 'app_demo').endpoint, 'http://127.0.0.1:9/hook')
  expectOk(t, await call('POST', '/control/orb/apps/app_demo/test-event'))
  const deliveries = await waitForDeliveries(call)
  t.ok(
    deliveries.every((d: unknown) => check('OrbDelivery', d)),
    'every record is an OrbDelivery'
  )
  t.match(deliveries[0], { type: 'app.test', attempt: 1, outcome: 'error', url: 'http://127.0.0.1:9/hook' })
  t.notMatch(JSON.stringify(deliveries), DEMO.token, 'the token is never in the log')
  t.equal((await call('GET', '/control/orb/apps/app_none/deliveries')).status, 404)
  t.same((await call('PUT', '/control/orb/apps/app_demo/endpoint', { url: null })).json.mode, 'events')
}

function expectOk (t: { equal(a: unknown, b: unknown): void }, reply: { status: number }): void {
  t.equal(reply.status, 200)
}

async function waitForDeliveries (call: (method: string, path: string) => Promise<{ json: any }>): Promise<any[]> {
  for (let i = 0; i < 400; i++) {
    const { deliveries } = (await call('GET', '/control/orb/apps/app_demo/deliveries')).json
    if (deliveries.length > 0) return deliveries
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
  throw new Error('no delivery was recorded')
}

t.test(
  'ORB-A04 ORB-004 control: the developer creates an app (token shown once, unlisted, installed nowhere) and deletes it (uninstalled, 401)',
  async (t) => {
    const { call, fakes } = await setup(t)
    const made = await call('POST', '/control/orb/apps', {
      id: 'app_new',
      name: 'New Bot',
      scopes: ['messages:read', 'voice'],
      rights: ['send_messages', 'connect']
    })
    t.equal(made.status, 200)
    t.match(made.json, { id: 'app_new', name: 'New Bot', scopes: ['messages:read', 'voice'], member: 'app_new' })
    t.match(made.json.token, /^orb_[A-Za-z0-9_-]{32}$/)
    const bot = new OrbClient(fakes.orb!.url, made.json.token)
    const app = await bot.get('/api/bot/v1/app')
    t.equal(app.status, 200)
    t.same(app.json.servers, [], 'installed nowhere')
    const state = (await call('GET', '/control/orb/state')).json
    t.match(
      state.apps.find((a: { id: string }) => a.id === 'app_new'),
      { listed: false, installs: 0, endpoint: null }
    )
    t.equal(
      (await call('POST', '/control/orb/apps', { id: 'app_new', name: 'Again', scopes: [] })).status,
      409,
      'an id is taken once'
    )
    t.equal(
      (await call('POST', '/control/orb/apps', { id: 'mem_ada', name: 'Clash', scopes: [] })).status,
      409,
      'a member id is taken too'
    )
    t.equal((await call('POST', '/control/orb/apps', { name: 'No scopes field' })).status, 400)
    t.equal(
      (await call('POST', '/control/orb/apps', { name: 'x', scopes: ['admin'] })).status,
      400,
      'scopes from the vocabulary only'
    )
    const unnamed = await call('POST', '/control/orb/apps', { name: 'Auto', scopes: [] })
    t.match(unnamed.json.id, /^app_[0-9a-f]{12}$/)
    t.equal(
      (await call('PUT', '/control/orb/servers/srv_orbit/apps/app_new', { channels: ['ch_general', 'ch_lounge'] }))
        .status,
      200
    )
    t.equal(
      (await bot.post('/api/bot/v1/voice', { action: 'join', channel: 'ch_lounge' })).status,
      200,
      'it takes a seat'
    )
    t.equal((await call('POST', '/control/orb/apps/app_new/test-event')).status, 200)
    t.ok(Object.hasOwn(fakes.orb!.control.state().events as object, 'app_new'), 'it has an event log')
    t.equal((await call('DELETE', '/control/orb/apps/app_new')).status, 200)
    t.equal((await call('DELETE', '/control/orb/apps/app_new')).status, 404)
    t.equal(
      (await call('POST', '/control/orb/apps', { id: 'app_new', name: 'Reborn', scopes: [] })).status,
      409,
      "a deleted app's id is not given out again"
    )
    t.notOk(Object.hasOwn(fakes.orb!.control.state().events as object, 'app_new'), 'its event log went with it')
    t.ok(isOrbError(await bot.get('/api/bot/v1/app'), 401), 'its token is dead')
    const after = (await call('GET', '/control/orb/state')).json
    t.notOk(
      after.apps.some((a: { id: string }) => a.id === 'app_new'),
      'gone from the console'
    )
    t.notOk(
      after.installs.some((i: { app: string }) => i.app === 'app_new'),
      'uninstalled everywhere'
    )
    t.notOk(JSON.stringify(after.voice).includes('app_new'), 'its seat went with it')
  }
)

t.test('ORB-A04 control: a moderator removes any message; deleting an app can remove what it posted', async (t) => {
  const { call, fakes, bot } = await setup(t)
  const said = await call('POST', '/control/orb/messages', {
    server: 'srv_orbit',
    channel: 'ch_general',
    member: 'mem_bo',
    content: 'remove me'
  })
  t.equal((await call('DELETE', `/control/orb/messages/${said.json.id}`)).status, 200)
  t.equal((await call('DELETE', `/control/orb/messages/${said.json.id}`)).status, 404, 'already removed')
  t.equal((await call('DELETE', '/control/orb/messages/abc')).status, 400)
  t.equal((await call('DELETE', '/control/orb/messages/999999')).status, 404)
  const read = (await bot.get('/api/bot/v1/messages?channel=ch_general')).json.messages
  t.notOk(
    read.some((m: { id: number }) => m.id === said.json.id),
    'gone from the channel'
  )
  const made = (
    await call('POST', '/control/orb/apps', { id: 'app_poster', name: 'Poster', scopes: ['messages:write'] })
  ).json
  await call('PUT', '/control/orb/servers/srv_orbit/apps/app_poster', { channels: ['ch_general'] })
  const poster = new OrbClient(fakes.orb!.url, made.token)
  for (const content of ['one', 'two']) {
    t.equal((await poster.post('/api/bot/v1/messages', { channel: 'ch_general', content })).status, 200)
  }
  const gone = await call('DELETE', '/control/orb/apps/app_poster?messages=delete')
  t.same(gone.json, { deleted: true, messages: 2 })
  const after = (await bot.get('/api/bot/v1/messages?channel=ch_general')).json.messages
  t.notOk(after.some((m: { author: { id: string } }) => m.author.id === 'app_poster'), 'its posts are gone too')
})
