/**
 * Voice (ORB-073..080, ORB-A08's voice rows, ORB-A16) over loopback HTTP with a virtual clock, and a model-based
 * property: two apps joining, heartbeating, leaving and waiting never overfill a channel, and a seat lives exactly
 * while its heartbeats come within 90 s.
 */
import { createHmac } from 'node:crypto'
import { isDeepStrictEqual } from 'node:util'
import fc from 'fast-check'
import t from 'tap'
import { defaultWorld, type World } from '../src/orb-mock/world.js'
import { fcParams } from './helpers/fc.js'
import { DEMO, isOrbError, startOrb, type OrbClient, type OrbReply } from './helpers/orb.js'

const VOICE = '/api/bot/v1/voice'
const BO = { id: 'mem_bo', name: 'Bo', bot: false, speaking: false }
const demoSeat = (speaking = false) => ({ id: 'app_demo', name: 'Demo Bot', bot: true, speaking })
const liteSeat = (speaking = false) => ({ id: 'app_lite', name: 'Lite Bot', bot: true, speaking })

const voice = (client: OrbClient, body: unknown): Promise<OrbReply> => client.post(VOICE, body)

/** The demo world where Lite Bot may also use voice and music, in both voice channels of srv_orbit, with speak. */
function twoBotWorld (edit: (world: World) => void = () => {}): World {
  const world = defaultWorld()
  const lite = world.apps.find((app) => app.id === 'app_lite')!
  lite.scopes = [...lite.scopes, 'voice', 'music']
  const install = world.installs!.find((i) => i.community === 'srv_orbit' && i.app === 'app_lite')!
  install.role.rights = ['send_messages', 'connect', 'speak']
  install.channels = ['ch_general', 'ch_lounge', 'ch_stage']
  edit(world)
  return world
}

const voiceChannel = (world: World, id: string) =>
  world.communities.flatMap((c) => c.channels).find((c) => c.id === id)!

t.test('ORB-073 an unknown or missing action is 400', async (t) => {
  const orb = await startOrb(t)
  t.ok(isOrbError(await voice(orb.bot, { action: 'dance', channel: 'ch_lounge' }), 400), 'unknown action')
  t.ok(isOrbError(await voice(orb.bot, { channel: 'ch_lounge' }), 400), 'missing action')
  t.ok(isOrbError(await voice(orb.bot, { action: 'JOIN', channel: 'ch_lounge' }), 400), 'actions are case-sensitive')
  t.ok(isOrbError(await orb.bot.post(VOICE), 400), 'no body at all')
  t.equal((await voice(orb.bot, { action: 'roster', channel: 'ch_lounge' })).status, 200, 'a known action passes')
})

t.test(
  'ORB-074 join and roster need channel; heartbeat, leave and grant need call; speaking must be a boolean',
  async (t) => {
    const orb = await startOrb(t)
    for (const action of ['join', 'roster']) {
      const reply = await voice(orb.bot, { action, call: 'call_1' })
      t.ok(isOrbError(reply, 400), `${action} without channel`)
      t.match(reply.json.error.message, /body\.channel/)
    }
    for (const action of ['heartbeat', 'leave', 'grant']) {
      const reply = await voice(orb.bot, { action, channel: 'ch_lounge' })
      t.ok(isOrbError(reply, 400), `${action} without call`)
      t.match(reply.json.error.message, /body\.call/)
    }
    const call = (await voice(orb.bot, { action: 'join', channel: 'ch_lounge' })).json.call
    t.ok(isOrbError(await voice(orb.bot, { action: 'heartbeat', call, speaking: 'yes' }), 400), 'speaking: "yes"')
    t.ok(isOrbError(await voice(orb.bot, { action: 'join', channel: 7 }), 400), 'a channel that is not a string')
    t.strictSame(
      (await voice(orb.bot, { action: 'heartbeat', call })).json,
      { ok: true, call },
      'speaking may be left out'
    )
  }
)

t.test('ORB-079 every voice action without the voice scope is 403', async (t) => {
  const orb = await startOrb(t)
  const lite = orb.as(DEMO.lite)
  for (const body of [
    { action: 'join', channel: 'ch_lounge' },
    { action: 'roster', channel: 'ch_lounge' },
    { action: 'heartbeat', call: 'call_1' },
    { action: 'leave', call: 'call_1' },
    { action: 'grant', call: 'call_1' }
  ]) {
    const reply = await voice(lite, body)
    t.ok(isOrbError(reply, 403), `${body.action} → 403`)
    t.match(reply.json.error.message, /voice scope/)
  }
})

t.test(
  'ORB-A16 roster works without a seat; world-seated members are in a call from the start; join answers call, channel and members',
  async (t) => {
    const orb = await startOrb(t)
    t.strictSame((await voice(orb.bot, { action: 'roster', channel: 'ch_lounge' })).json, {
      channel: 'ch_lounge',
      call: 'call_1',
      members: [BO]
    })
    t.strictSame((await voice(orb.bot, { action: 'roster', channel: 'ch_stage' })).json, {
      channel: 'ch_stage',
      call: null,
      members: []
    })
    const joined = await voice(orb.bot, { action: 'join', channel: 'ch_lounge' })
    t.equal(joined.status, 200)
    t.strictSame(joined.json, { call: 'call_1', channel: 'ch_lounge', members: [BO, demoSeat()] })
    t.strictSame((await voice(orb.bot, { action: 'roster', channel: 'ch_lounge' })).json.members, [BO, demoSeat()])
  }
)

t.test(
  'ORB-A16 a second join on the same channel returns the existing seat, even when the channel is now full',
  async (t) => {
    const orb = await startOrb(t)
    const first = await voice(orb.bot, { action: 'join', channel: 'ch_lounge' })
    orb.control.setVoice({ capacity: { ch_lounge: 2 } })
    const again = await voice(orb.bot, { action: 'join', channel: 'ch_lounge' })
    t.equal(again.status, 200)
    t.strictSame(again.json, first.json, 'the same call, one seat')
    t.equal((await voice(orb.bot, { action: 'roster', channel: 'ch_lounge' })).json.members.length, 2)
  }
)

t.test(
  'ORB-A16 ORB-080 a seat in another call of the same community is 409 with the Error body; leaving frees the app to move',
  async (t) => {
    const orb = await startOrb(t)
    const lounge = (await voice(orb.bot, { action: 'join', channel: 'ch_lounge' })).json.call
    const refused = await voice(orb.bot, { action: 'join', channel: 'ch_stage' })
    t.ok(isOrbError(refused, 409))
    t.match(refused.json.error.message, /already has a seat in call_1/)
    t.strictSame(
      (await voice(orb.bot, { action: 'roster', channel: 'ch_stage' })).json,
      { channel: 'ch_stage', call: null, members: [] },
      'the refusal opened no call'
    )
    t.strictSame((await voice(orb.bot, { action: 'leave', call: lounge })).json, { ok: true })
    const moved = await voice(orb.bot, { action: 'join', channel: 'ch_stage' })
    t.strictSame(moved.json, { call: 'call_2', channel: 'ch_stage', members: [demoSeat()] }, 'a new call, numbered on')
  }
)

t.test('ORB-A16 a seat in another community does not stop a join', async (t) => {
  const orb = await startOrb(t)
  orb.control.install('srv_quiet', 'app_demo', { role: { rights: ['connect', 'speak'] } })
  t.equal((await voice(orb.bot, { action: 'join', channel: 'ch_lounge' })).status, 200)
  const quiet = await voice(orb.bot, { action: 'join', channel: 'ch_quiet_voice' })
  t.equal(quiet.status, 200)
  t.strictSame(quiet.json, { call: 'call_2', channel: 'ch_quiet_voice', members: [demoSeat()] })
})

t.test(
  'ORB-075 ORB-080 a bot joining a full channel is refused with 409; world-seated members and other bots take seats',
  async (t) => {
    const orb = await startOrb(t, {
      world: twoBotWorld((w) => {
        voiceChannel(w, 'ch_lounge').capacity = 2
      })
    })
    const lite = orb.as(DEMO.lite)
    t.equal((await voice(lite, { action: 'join', channel: 'ch_lounge' })).status, 200, 'Bo and Lite: 2 of 2')
    const full = await voice(orb.bot, { action: 'join', channel: 'ch_lounge' })
    t.ok(isOrbError(full, 409))
    t.match(full.json.error.message, /ch_lounge is full: 2 of 2/)
    t.strictSame((await voice(orb.bot, { action: 'roster', channel: 'ch_lounge' })).json.members, [BO, liteSeat()])
    await voice(lite, { action: 'leave', call: 'call_1' })
    t.equal((await voice(orb.bot, { action: 'join', channel: 'ch_lounge' })).status, 200, 'a seat came free')
    orb.control.setVoice({ capacity: { ch_stage: 1 } })
    t.equal((await voice(lite, { action: 'join', channel: 'ch_stage' })).status, 200)
    const leave = await voice(orb.bot, { action: 'leave', call: 'call_1' })
    t.equal(leave.status, 200)
    t.ok(
      isOrbError(await voice(orb.bot, { action: 'join', channel: 'ch_stage' }), 409),
      "the control server's capacity counts"
    )
  }
)

t.test('ORB-076 a seat without heartbeat for 90 s is dropped; its call then answers 410', async (t) => {
  const orb = await startOrb(t)
  const call = (await voice(orb.bot, { action: 'join', channel: 'ch_lounge' })).json.call
  orb.clock.advance(89_999)
  t.equal((await voice(orb.bot, { action: 'heartbeat', call })).status, 200, 'just inside 90 s')
  orb.clock.advance(89_999)
  t.equal((await voice(orb.bot, { action: 'heartbeat', call })).status, 200, 'the heartbeat restarted the 90 s')
  orb.clock.advance(90_000)
  for (const action of ['heartbeat', 'leave', 'grant']) {
    const reply = await voice(orb.bot, { action, call })
    t.ok(isOrbError(reply, 410), `${action} after the drop → 410`)
    t.match(reply.json.error.message, /dropped after 90 s without a heartbeat/)
  }
  t.strictSame(
    (await voice(orb.bot, { action: 'roster', channel: 'ch_lounge' })).json,
    { channel: 'ch_lounge', call: 'call_1', members: [BO] },
    'Bo stays; the call goes on'
  )
  t.strictSame(
    (await voice(orb.bot, { action: 'join', channel: 'ch_lounge' })).json.members,
    [BO, demoSeat()],
    'the app may sit down again'
  )
})

t.test('ORB-076 a repeated join counts as a heartbeat; a refused heartbeat does not', async (t) => {
  const orb = await startOrb(t)
  const call = (await voice(orb.bot, { action: 'join', channel: 'ch_stage' })).json.call
  orb.clock.advance(60_000)
  await voice(orb.bot, { action: 'join', channel: 'ch_stage' })
  orb.clock.advance(60_000)
  t.equal(
    (await voice(orb.bot, { action: 'heartbeat', call })).status,
    200,
    '120 s after the first join, 60 s after the second'
  )
  orb.clock.advance(60_000)
  t.ok(isOrbError(await voice(orb.bot, { action: 'heartbeat', call, speaking: true }), 403), 'no speak in ch_stage')
  orb.clock.advance(30_000)
  t.ok(isOrbError(await voice(orb.bot, { action: 'heartbeat', call }), 410), '90 s after the last accepted heartbeat')
})

t.test(
  'ORB-076 ORB-A16 a call ends with its last participant: the old id answers 410 and a rejoin opens a new call',
  async (t) => {
    const orb = await startOrb(t)
    const first = (await voice(orb.bot, { action: 'join', channel: 'ch_stage' })).json.call
    t.equal(first, 'call_2', "call_1 is the Lounge's, opened by Bo at load")
    orb.clock.advance(90_000)
    t.strictSame((await voice(orb.bot, { action: 'roster', channel: 'ch_stage' })).json, {
      channel: 'ch_stage',
      call: null,
      members: []
    })
    const gone = await voice(orb.bot, { action: 'heartbeat', call: first })
    t.ok(isOrbError(gone, 410))
    t.match(gone.json.error.message, /has ended/)
    const second = (await voice(orb.bot, { action: 'join', channel: 'ch_stage' })).json.call
    t.equal(second, 'call_3')
    t.ok(isOrbError(await voice(orb.bot, { action: 'leave', call: first }), 410), 'the ended call stays 410')
    t.equal((await voice(orb.bot, { action: 'leave', call: second })).status, 200)
    t.ok(isOrbError(await voice(orb.bot, { action: 'grant', call: second }), 410), 'it ended when the app left')
  }
)

t.test(
  'ORB-A16 ORB-080 leave answers {ok:true}; leaving twice, or heartbeating a call the app never sat in, is 410',
  async (t) => {
    const orb = await startOrb(t)
    const never = await voice(orb.bot, { action: 'heartbeat', call: 'call_1' })
    t.ok(isOrbError(never, 410), "Bo's call, no seat of the app's")
    t.match(never.json.error.message, /holds no seat in call_1/)
    await voice(orb.bot, { action: 'join', channel: 'ch_lounge' })
    t.strictSame((await voice(orb.bot, { action: 'leave', call: 'call_1' })).json, { ok: true })
    const twice = await voice(orb.bot, { action: 'leave', call: 'call_1' })
    t.ok(isOrbError(twice, 410))
    t.match(twice.json.error.message, /left call_1/)
    t.strictSame((await voice(orb.bot, { action: 'roster', channel: 'ch_lounge' })).json.members, [BO])
  }
)

t.test(
  'ORB-102 ORB-A16 unknown call ids, and calls of a community that did not install the app, are 404',
  async (t) => {
    const orb = await startOrb(t)
    for (const call of ['call_99', 'nope', '']) {
      for (const action of ['heartbeat', 'leave', 'grant']) {
        t.ok(isOrbError(await voice(orb.bot, { action, call }), 404), `${action} ${JSON.stringify(call)}`)
      }
    }
    const call = (await voice(orb.bot, { action: 'join', channel: 'ch_lounge' })).json.call
    orb.control.uninstall('srv_orbit', 'app_demo')
    t.ok(
      isOrbError(await voice(orb.bot, { action: 'heartbeat', call }), 404),
      "uninstalled: the call is another community's now"
    )
  }
)

t.test(
  'ORB-A16 ORB-A08 channels: text is 400, unknown or uninstalled is 404, off the allow-list or hidden is 403 (join and roster)',
  async (t) => {
    const orb = await startOrb(t)
    for (const action of ['join', 'roster']) {
      t.ok(isOrbError(await voice(orb.bot, { action, channel: 'ch_general' }), 400), `${action} a text channel`)
      t.ok(isOrbError(await voice(orb.bot, { action, channel: 'ch_nope' }), 404), `${action} an unknown channel`)
      t.ok(
        isOrbError(await voice(orb.bot, { action, channel: 'ch_quiet_voice' }), 404),
        `${action} srv_quiet's voice channel: not installed there`
      )
    }
    orb.control.install('srv_orbit', 'app_demo', {
      role: { rights: ['connect', 'speak'] },
      channels: ['ch_general', 'ch_lounge'],
      hidden: ['ch_lounge']
    })
    for (const action of ['join', 'roster']) {
      t.ok(isOrbError(await voice(orb.bot, { action, channel: 'ch_lounge' }), 403), `${action} a hidden channel`)
      t.ok(
        isOrbError(await voice(orb.bot, { action, channel: 'ch_stage' }), 403),
        `${action} a channel off the allow-list`
      )
    }
  }
)

t.test(
  'ORB-A08 join needs connect (roster does not); speaking: true needs speak; speaking left out means not speaking',
  async (t) => {
    const orb = await startOrb(t)
    const stage = (await voice(orb.bot, { action: 'join', channel: 'ch_stage' })).json.call
    const mute = await voice(orb.bot, { action: 'heartbeat', call: stage, speaking: true })
    t.ok(isOrbError(mute, 403), 'ch_stage grants connect only')
    t.match(mute.json.error.message, /lacks speak in ch_stage/)
    t.strictSame((await voice(orb.bot, { action: 'heartbeat', call: stage, speaking: false })).json, {
      ok: true,
      call: stage
    })
    await voice(orb.bot, { action: 'leave', call: stage })
    const lounge = (await voice(orb.bot, { action: 'join', channel: 'ch_lounge' })).json.call
    t.strictSame((await voice(orb.bot, { action: 'heartbeat', call: lounge, speaking: true })).json, {
      ok: true,
      call: lounge
    })
    t.strictSame((await voice(orb.bot, { action: 'roster', channel: 'ch_lounge' })).json.members, [BO, demoSeat(true)])
    await voice(orb.bot, { action: 'heartbeat', call: lounge })
    t.strictSame(
      (await voice(orb.bot, { action: 'roster', channel: 'ch_lounge' })).json.members,
      [BO, demoSeat(false)],
      'absent speaking is false'
    )
    await voice(orb.bot, { action: 'leave', call: lounge })
    orb.control.install('srv_orbit', 'app_demo', {
      role: { rights: ['send_messages', 'speak'] },
      channels: ['ch_lounge']
    })
    const refused = await voice(orb.bot, { action: 'join', channel: 'ch_lounge' })
    t.ok(isOrbError(refused, 403))
    t.match(refused.json.error.message, /lacks connect in ch_lounge/)
    t.equal((await voice(orb.bot, { action: 'roster', channel: 'ch_lounge' })).status, 200, 'roster needs only sight')
  }
)

t.test(
  "ORB-A04 ORB-A08 uninstalling, or taking the channel or connect away, drops the app's seat at once; a reinstall starts seatless",
  async (t) => {
    const orb = await startOrb(t)
    const joined = await voice(orb.bot, { action: 'join', channel: 'ch_stage' })
    t.equal(joined.status, 200)
    const call = joined.json.call as string
    orb.control.uninstall('srv_orbit', 'app_demo')
    t.same(orb.services.voice.liveCall('ch_stage')?.seats.size ?? 0, 0, 'the seat is gone and the call with it')
    t.equal(orb.clock.pendingTimers(), 0, 'its 90 s timer too')
    orb.control.install('srv_orbit', 'app_demo', {
      role: { rights: ['send_messages', 'connect'] },
      channels: ['ch_general', 'ch_lounge', 'ch_stage']
    })
    t.ok(isOrbError(await voice(orb.bot, { action: 'heartbeat', call }), 410), 'reinstalled, the app holds no seat')
    const lounge = await voice(orb.bot, { action: 'join', channel: 'ch_lounge' })
    t.same(lounge.json.members, [BO, demoSeat()])
    orb.control.install('srv_orbit', 'app_demo', {
      role: { rights: ['send_messages', 'connect'] },
      channels: ['ch_general', 'ch_stage']
    })
    const gone = await voice(orb.bot, { action: 'grant', call: lounge.json.call })
    t.ok(isOrbError(gone, 410), 'off the allow-list: no seat, so no grant')
    t.match(gone.json.error.message, /took its access/)
    t.same((await voice(orb.bot, { action: 'join', channel: 'ch_stage' })).status, 200)
    orb.control.install('srv_orbit', 'app_demo', {
      role: { rights: ['send_messages'] },
      channels: ['ch_general', 'ch_stage']
    })
    t.equal(orb.services.voice.liveCall('ch_stage'), undefined, 'connect taken away: the seat goes')
    orb.control.install('srv_orbit', 'app_demo', {
      role: { rights: ['send_messages', 'connect'] },
      channels: ['ch_general', 'ch_lounge']
    })
    const kept = await voice(orb.bot, { action: 'join', channel: 'ch_lounge' })
    orb.control.install('srv_orbit', 'app_demo', {
      role: { rights: ['send_messages', 'connect', 'speak'] },
      channels: ['ch_general', 'ch_lounge']
    })
    t.equal(
      (await voice(orb.bot, { action: 'heartbeat', call: kept.json.call, speaking: true })).status,
      200,
      'a change that keeps access keeps the seat'
    )
  }
)

t.test('ORB-077 a bot that heartbeats every minute keeps its seat for as long as it does', async (t) => {
  const orb = await startOrb(t)
  const call = (await voice(orb.bot, { action: 'join', channel: 'ch_stage' })).json.call
  for (let minute = 1; minute <= 30; minute++) {
    orb.clock.advance(60_000)
    const reply = await voice(orb.bot, { action: 'heartbeat', call, speaking: false })
    if (reply.status !== 200) t.fail(`minute ${minute}: ${reply.status} ${reply.text}`)
  }
  t.strictSame((await voice(orb.bot, { action: 'roster', channel: 'ch_stage' })).json.members, [demoSeat()])
  orb.clock.advance(90_000)
  t.ok(isOrbError(await voice(orb.bot, { action: 'heartbeat', call }), 410), 'and loses it when the heartbeats stop')
})

t.test('ORB-078 grant returns a 30 s HS256 JWT naming the app and the call, with the voice server\'s url', async (t) => {
  const orb = await startOrb(t)
  const call = (await voice(orb.bot, { action: 'join', channel: 'ch_lounge' })).json.call
  orb.clock.advance(1_500)
  const now = orb.clock.now()
  const reply = await voice(orb.bot, { action: 'grant', call })
  t.equal(reply.status, 200)
  t.strictSame(Object.keys(reply.json).sort(), ['expiresAt', 'token', 'url'])
  t.equal(reply.json.url, 'wss://voice.orb.test')
  t.equal(reply.json.expiresAt, now + 30_000)
  const [head, body, signature] = reply.json.token.split('.')
  t.strictSame(JSON.parse(Buffer.from(head, 'base64url').toString()), { alg: 'HS256', typ: 'JWT' })
  t.strictSame(JSON.parse(Buffer.from(body, 'base64url').toString()), {
    sub: 'app_demo',
    room: call,
    iat: Math.floor(now / 1000),
    exp: Math.floor((now + 30_000) / 1000)
  })
  const key = orb.services.voice.grantKey
  t.equal(
    signature,
    createHmac('sha256', key).update(`${head}.${body}`).digest('base64url'),
    "signed with the store's key"
  )
  t.not(
    signature,
    createHmac('sha256', Buffer.alloc(32)).update(`${head}.${body}`).digest('base64url'),
    'and not with any other'
  )
  const other = await startOrb(t)
  t.not(other.services.voice.grantKey.toString('hex'), key.toString('hex'), 'a key per store')
})

t.test(
  'ORB-078 ORB-080 grant where this Orb runs no voice server is 409 with the Error body; a server switched on again grants',
  async (t) => {
    const orb = await startOrb(t)
    const call = (await voice(orb.bot, { action: 'join', channel: 'ch_lounge' })).json.call
    orb.control.setVoice({ server: false })
    const refused = await voice(orb.bot, { action: 'grant', call })
    t.ok(isOrbError(refused, 409))
    t.match(refused.json.error.message, /no voice server/)
    t.equal((await voice(orb.bot, { action: 'heartbeat', call })).status, 200, 'the seat itself is unaffected')
    orb.control.setVoice({ server: true })
    t.equal((await voice(orb.bot, { action: 'grant', call })).status, 200)
  }
)

t.test(
  'ORB-076 ORB-A16 the control state lists every voice channel with its call, participants and seat deadlines',
  async (t) => {
    const orb = await startOrb(t)
    const start = orb.clock.now()
    await voice(orb.bot, { action: 'join', channel: 'ch_lounge' })
    const state = orb.control.state().voice as Record<string, any>
    t.equal(state.server, true)
    t.equal(state.url, 'wss://voice.orb.test')
    t.strictSame(state.channels, [
      {
        channel: 'ch_lounge',
        server: 'srv_orbit',
        capacity: 4,
        call: 'call_1',
        participants: [
          { id: 'mem_bo', bot: false, speaking: false, deadline: null },
          { id: 'app_demo', bot: true, speaking: false, deadline: start + 90_000 }
        ]
      },
      { channel: 'ch_stage', server: 'srv_orbit', capacity: 2, call: null, participants: [] },
      { channel: 'ch_quiet_voice', server: 'srv_quiet', capacity: 3, call: null, participants: [] }
    ])
  }
)

t.test(
  "ORB-076 ORB-A16 a reset puts the calls back to the world's start and cancels every seat timer; so does closing",
  async (t) => {
    const orb = await startOrb(t)
    const idle = orb.clock.pendingTimers()
    await voice(orb.bot, { action: 'join', channel: 'ch_stage' })
    t.equal(orb.clock.pendingTimers(), idle + 1, 'one seat timer')
    orb.control.reset()
    t.equal(orb.clock.pendingTimers(), idle, 'the reset cancelled it')
    t.strictSame((await voice(orb.bot, { action: 'roster', channel: 'ch_stage' })).json, {
      channel: 'ch_stage',
      call: null,
      members: []
    })
    t.strictSame((await voice(orb.bot, { action: 'roster', channel: 'ch_lounge' })).json, {
      channel: 'ch_lounge',
      call: 'call_1',
      members: [BO]
    })
    t.ok(
      isOrbError(await voice(orb.bot, { action: 'heartbeat', call: 'call_2' }), 404),
      "call_2 was never opened in this world's run"
    )
    t.equal(
      (await voice(orb.bot, { action: 'join', channel: 'ch_stage' })).json.call,
      'call_2',
      'numbering starts again'
    )
    orb.store.dispose()
    t.equal(orb.clock.pendingTimers(), idle, 'closing cancels seat timers too')
  }
)

// ---- Model-based property -------------------------------------------------------------------------------------

type Actor = 'demo' | 'lite'
const MEMBER: Record<Actor, string> = { demo: 'app_demo', lite: 'app_lite' }
const NAME: Record<string, string> = { app_demo: 'Demo Bot', app_lite: 'Lite Bot', mem_bo: 'Bo' }
const CAPACITY: Record<string, number> = { ch_lounge: 3, ch_stage: 1 }

interface ModelSeat { member: string, deadline: number | null, speaking: boolean }
interface ModelCall { id: string, channel: string, seats: ModelSeat[], ended: boolean }
interface VoiceModel {
  now: number
  calls: Map<string, ModelCall>
  live: Map<string, ModelCall>
  next: number
  /** The call id each app was last given by a join: what a bot would heartbeat. */
  known: Map<Actor, string>
}

type Step =
  /** `again`: the channel of the call the app was last given, as a bot re-joining would (ORB-A16). */
  | { kind: 'join'; actor: Actor; channel: 'ch_lounge' | 'ch_stage' | 'again' }
  | { kind: 'heartbeat'; actor: Actor; speaking: boolean | undefined }
  | { kind: 'leave'; actor: Actor }
  | { kind: 'advance'; ms: number }

function freshModel (now: number): VoiceModel {
  const lounge: ModelCall = {
    id: 'call_1',
    channel: 'ch_lounge',
    seats: [{ member: 'mem_bo', deadline: null, speaking: false }],
    ended: false
  }
  return {
    now,
    calls: new Map([[lounge.id, lounge]]),
    live: new Map([['ch_lounge', lounge]]),
    next: 2,
    known: new Map()
  }
}

// The ledger's clock: a seat whose deadline has come is gone, and a call with nobody left has ended (ORB-076).
function modelAdvance (m: VoiceModel, ms: number): void {
  m.now += ms
  for (const call of [...m.live.values()]) {
    call.seats = call.seats.filter((s) => s.deadline === null || s.deadline > m.now)
    if (call.seats.length === 0) {
      call.ended = true
      m.live.delete(call.channel)
    }
  }
}

function modelJoin (m: VoiceModel, actor: Actor, channel: string): number {
  const member = MEMBER[actor]
  const live = m.live.get(channel)
  const mine = live?.seats.find((s) => s.member === member)
  if (mine !== undefined) {
    mine.deadline = m.now + 90_000
    m.known.set(actor, live!.id)
    return 200
  }
  if ([...m.live.values()].some((c) => c.seats.some((s) => s.member === member))) return 409
  if ((live?.seats.length ?? 0) >= CAPACITY[channel]!) return 409
  let call = live
  if (call === undefined) {
    call = { id: `call_${m.next++}`, channel, seats: [], ended: false }
    m.calls.set(call.id, call)
    m.live.set(channel, call)
  }
  call.seats.push({ member, deadline: m.now + 90_000, speaking: false })
  m.known.set(actor, call.id)
  return 200
}

/** The seat an actor holds in the call it knows, or the status that says it has none. */
function modelSeat (m: VoiceModel, actor: Actor): { status: number, call?: ModelCall, seat?: ModelSeat } {
  const call = m.calls.get(m.known.get(actor) ?? 'call_0')
  if (call === undefined) return { status: 404 }
  const seat = call.ended ? undefined : call.seats.find((s) => s.member === MEMBER[actor])
  return seat === undefined ? { status: 410 } : { status: 200, call, seat }
}

function modelStep (m: VoiceModel, step: Step): number | undefined {
  switch (step.kind) {
    case 'advance':
      modelAdvance(m, step.ms)
      return undefined
    case 'join':
      return modelJoin(m, step.actor, channelOf(m, step))
    case 'heartbeat': {
      const found = modelSeat(m, step.actor)
      if (found.seat === undefined) return found.status
      // In the world below only Demo Bot lacks speak, and only in ch_stage.
      if (step.speaking === true && step.actor === 'demo' && found.call!.channel === 'ch_stage') return 403
      found.seat.speaking = step.speaking ?? false
      found.seat.deadline = m.now + 90_000
      return 200
    }
    case 'leave': {
      const found = modelSeat(m, step.actor)
      if (found.seat === undefined) return found.status
      const call = found.call!
      call.seats = call.seats.filter((s) => s !== found.seat)
      if (call.seats.length === 0) {
        call.ended = true
        m.live.delete(call.channel)
      }
      return 200
    }
  }
}

function channelOf (m: VoiceModel, step: { actor: Actor, channel: string }): string {
  if (step.channel !== 'again') return step.channel
  return m.calls.get(m.known.get(step.actor) ?? '')?.channel ?? 'ch_lounge'
}

function modelRoster (m: VoiceModel, channel: string): unknown {
  const call = m.live.get(channel)
  return {
    channel,
    call: call?.id ?? null,
    members: (call?.seats ?? []).map((s) => ({
      id: s.member,
      name: NAME[s.member],
      bot: s.member !== 'mem_bo',
      speaking: s.speaking
    }))
  }
}

const actor = fc.constantFrom<Actor>('demo', 'lite')
const steps: fc.Arbitrary<Step[]> = fc.array(
  fc.oneof(
    {
      weight: 3,
      arbitrary: fc.record({
        kind: fc.constant('join' as const),
        actor,
        channel: fc.constantFrom('ch_lounge', 'ch_stage', 'again', 'again')
      })
    },
    {
      weight: 2,
      arbitrary: fc.record({
        kind: fc.constant('heartbeat' as const),
        actor,
        speaking: fc.constantFrom(true, false, undefined)
      })
    },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('leave' as const), actor }) },
    {
      weight: 4,
      arbitrary: fc.record({
        kind: fc.constant('advance' as const),
        ms: fc.constantFrom(1, 1_000, 30_000, 30_000, 59_999, 60_000, 89_999, 90_000, 120_000)
      })
    }
  ),
  { maxLength: 30, size: 'max' }
)

t.test(
  'ORB-075 ORB-076 ORB-A16 property: any joins, heartbeats, leaves and waits by two apps match the model; no roster exceeds its capacity',
  async (t) => {
    const orb = await startOrb(t, {
      world: twoBotWorld((w) => {
        voiceChannel(w, 'ch_lounge').capacity = CAPACITY.ch_lounge
        voiceChannel(w, 'ch_stage').capacity = CAPACITY.ch_stage
      })
    })
    const clients: Record<Actor, OrbClient> = { demo: orb.bot, lite: orb.as(DEMO.lite) }
    let runs = 0
    await fc.assert(
      fc.asyncProperty(steps, async (list) => {
        runs++
        orb.control.reset()
        const m = freshModel(orb.clock.now())
        for (const step of list) {
          const channel = step.kind === 'join' ? channelOf(m, step) : undefined
          const expected = modelStep(m, step)
          if (step.kind === 'advance') {
            orb.clock.advance(step.ms)
          } else {
            const call = step.kind === 'join' ? undefined : (m.known.get(step.actor) ?? 'call_0')
            const body =
              step.kind === 'join'
                ? { action: 'join', channel }
                : {
                    action: step.kind,
                    call,
                    ...(step.kind === 'heartbeat' && step.speaking !== undefined ? { speaking: step.speaking } : {})
                  }
            const reply = await voice(clients[step.actor], body)
            if (reply.status !== expected) {
              throw new Error(`${JSON.stringify(step)}: expected ${expected}, got ${reply.status} ${reply.text}`)
            }
            if (expected !== 200 && !isOrbError(reply, expected)) {
              throw new Error(`${JSON.stringify(step)}: not an Error body: ${reply.text}`)
            }
            if (step.kind === 'join' && expected === 200 && reply.json.call !== m.known.get(step.actor)) {
              throw new Error(`join gave ${reply.json.call}, the model ${m.known.get(step.actor)}`)
            }
          }
          for (const channel of ['ch_lounge', 'ch_stage']) {
            const roster = (await voice(orb.bot, { action: 'roster', channel })).json
            if (roster.members.length > CAPACITY[channel]!) { throw new Error(`${channel} holds ${roster.members.length} of ${CAPACITY[channel]}`) }
            const wanted = modelRoster(m, channel)
            if (!isDeepStrictEqual(roster, wanted)) {
              throw new Error(
                `after ${JSON.stringify(step)}: roster ${JSON.stringify(roster)}, the model ${JSON.stringify(wanted)}`
              )
            }
          }
        }
      }),
      fcParams({ numRuns: 60 })
    )
    t.ok(runs >= 60, `${runs} runs`)
  }
)
