/**
 * The room player (ORB-081..084, ORB-A08's music row, ORB-A17) over loopback HTTP with a virtual clock, and a
 * model-based property: any sequence of actions by two apps and clock moves leaves the player exactly as a plain
 * in-memory model written here from the documented rules says.
 */
import { createHash } from 'node:crypto'
import { isDeepStrictEqual } from 'node:util'
import fc from 'fast-check'
import t from 'tap'
import { defaultWorld, type World } from '../src/orb-mock/world.js'
import { fcParams } from './helpers/fc.js'
import { DEMO, isOrbError, startOrb, type OrbClient, type OrbReply } from './helpers/orb.js'

const MUSIC = '/api/bot/v1/music'

const act = (client: OrbClient, action: string, arg?: unknown, channel = 'ch_lounge'): Promise<OrbReply> =>
  client.post(MUSIC, arg === undefined ? { channel, action } : { channel, action, arg })
const look = (client: OrbClient, channel = 'ch_lounge'): Promise<OrbReply> =>
  client.get(`${MUSIC}?channel=${encodeURIComponent(channel)}`)

/** The documented derivation: 60..420 s from the first four bytes of a SHA-256 of the URL or title. */
const durationOf = (key: string): number => 60 + (createHash('sha256').update(key).digest().readUInt32BE(0) % 361)
const shuffleKey = (id: string): number => createHash('sha256').update(id).digest().readUInt32BE(0)

const fresh = (channel: string) => ({
  channel,
  playing: false,
  position: 0,
  volume: 50,
  loop: 'off',
  shuffle: false,
  current: null,
  queue: []
})

/** The demo world where Lite Bot may also use voice and music, in both voice channels of srv_orbit. */
function twoBotWorld (): World {
  const world = defaultWorld()
  const lite = world.apps.find((app) => app.id === 'app_lite')!
  lite.scopes = [...lite.scopes, 'voice', 'music']
  const install = world.installs!.find((i) => i.community === 'srv_orbit' && i.app === 'app_lite')!
  install.role.rights = ['send_messages', 'connect', 'speak']
  install.channels = ['ch_general', 'ch_lounge', 'ch_stage']
  return world
}

/** Adds tracks and answers the queue. */
async function queueUp (client: OrbClient, ...texts: string[]): Promise<any[]> {
  let reply: OrbReply | undefined
  for (const text of texts) reply = await act(client, 'add', text)
  return reply!.json.queue
}

t.test('ORB-081 POST /music: a missing channel or action, or an unknown action, is 400', async (t) => {
  const orb = await startOrb(t)
  t.ok(isOrbError(await orb.bot.post(MUSIC, { action: 'play' }), 400), 'no channel')
  t.ok(isOrbError(await orb.bot.post(MUSIC, { channel: 'ch_lounge' }), 400), 'no action')
  t.ok(
    isOrbError(await orb.bot.post(MUSIC, { channel: 'ch_lounge', action: 'skip' }), 400),
    'skip is a reserved name, not an action'
  )
  t.ok(isOrbError(await orb.bot.post(MUSIC, { channel: 'ch_lounge', action: 'PLAY' }), 400), 'case-sensitive')
  t.ok(isOrbError(await orb.bot.post(MUSIC), 400), 'no body')
  const ok = await orb.bot.post(MUSIC, { channel: 'ch_lounge', action: 'state' })
  t.equal(ok.status, 200)
  t.strictSame(ok.json, fresh('ch_lounge'), 'success answers the player')
})

t.test('ORB-082 ORB-A17 GET /music needs channel (400) and answers the player; a new player starts stopped at volume 50', async (t) => {
  const orb = await startOrb(t)
  t.ok(isOrbError(await orb.bot.get(MUSIC), 400), 'no channel')
  const reply = await look(orb.bot)
  t.equal(reply.status, 200)
  t.strictSame(reply.json, fresh('ch_lounge'))
  await act(orb.bot, 'add', 'lo-fi beats')
  t.equal((await look(orb.bot)).json.queue.length, 1, 'what the room has queued')
})

t.test('ORB-084 both music methods without the music scope are 403', async (t) => {
  const orb = await startOrb(t)
  const lite = orb.as(DEMO.lite)
  for (const reply of [await act(lite, 'state'), await act(lite, 'add', 'x'), await look(lite)]) {
    t.ok(isOrbError(reply, 403))
    t.match(reply.json.error.message, /music scope/)
  }
  t.strictSame((await look(orb.bot)).json.queue, [], 'the refused add changed nothing')
})

t.test('ORB-083 the player is the room\'s: another app\'s change shows in GET and in the control state; state changes nothing', async (t) => {
  const orb = await startOrb(t, { world: twoBotWorld() })
  const lite = orb.as(DEMO.lite)
  await act(orb.bot, 'add', 'lo-fi beats')
  const seen = (await look(lite)).json
  t.equal(seen.queue[0].addedBy, 'app_demo', 'Lite sees Demo\'s track')
  await act(lite, 'add', 'Blue Monday')
  await act(lite, 'play')
  orb.clock.advance(5_000)
  const mine = (await look(orb.bot)).json
  t.equal(mine.playing, true, 'Demo sees Lite\'s play')
  t.equal(mine.position, 5)
  t.strictSame(mine.queue.map((q: any) => q.addedBy), ['app_demo', 'app_lite'])
  const state = await act(lite, 'state', 'anything at all')
  t.strictSame(state.json, mine, 'state changes nothing, whatever the arg')
  t.strictSame(orb.control.state().music, { players: [mine] }, 'members see the same player')
  t.strictSame((await look(orb.bot, 'ch_stage')).json, fresh('ch_stage'), 'each voice channel has its own player')
})

t.test('ORB-083 a reset empties every room\'s player and restarts track ids', async (t) => {
  const orb = await startOrb(t)
  await queueUp(orb.bot, 'one', 'two')
  orb.control.reset()
  t.strictSame((await look(orb.bot)).json, fresh('ch_lounge'))
  t.equal((await queueUp(orb.bot, 'three'))[0].id, 'trk_1')
})

t.test(
  'ORB-A17 add: a URL or search text, the same track every time; the first becomes current, not playing; a bad arg is 400',
  async (t) => {
    const orb = await startOrb(t)
    const url = 'https://cdn.example.com/music/Blue_Monday-1983.mp3'
    const queue = await queueUp(orb.bot, url, '  lo-fi   beats ', 'https://example.org/')
    t.strictSame(queue, [
      { id: 'trk_1', title: 'Blue Monday 1983', url, duration: durationOf(url), addedBy: 'app_demo' },
      {
        id: 'trk_2',
        title: 'lo-fi beats',
        url: 'https://music.orb.test/search?q=lo-fi%20beats',
        duration: durationOf('lo-fi beats'),
        addedBy: 'app_demo'
      },
      {
        id: 'trk_3',
        title: 'example.org',
        url: 'https://example.org/',
        duration: durationOf('https://example.org/'),
        addedBy: 'app_demo'
      }
    ])
    for (const track of queue) {
      t.ok(track.duration >= 60 && track.duration <= 420, `${track.title}: ${track.duration} s`)
    }
    const player = (await look(orb.bot)).json
    t.equal(player.current, 0, 'the first track added is current')
    t.equal(player.playing, false, 'but not playing')
    const other = await startOrb(t)
    t.strictSame(
      (await queueUp(other.bot, url, 'lo-fi beats')).map((q: any) => [q.title, q.url, q.duration]),
      queue.slice(0, 2).map((q: any) => [q.title, q.url, q.duration]),
      'deterministic'
    )
    for (const arg of [undefined, '', '   ', 42, null, ['a'], { q: 'a' }]) {
      t.ok(isOrbError(await act(orb.bot, 'add', arg), 400), `add ${JSON.stringify(arg)}`)
    }
    t.equal((await look(orb.bot)).json.queue.length, 3, 'the refused adds changed nothing')
  }
)

t.test(
  'ORB-A17 play and pause: the position runs with the clock only while playing; play with nothing current starts the first',
  async (t) => {
    const orb = await startOrb(t)
    t.equal((await act(orb.bot, 'play')).json.playing, false, 'an empty queue cannot play')
    await queueUp(orb.bot, 'first', 'second')
    t.equal((await act(orb.bot, 'play')).json.playing, true)
    orb.clock.advance(12_345)
    t.equal((await look(orb.bot)).json.position, 12.345)
    t.equal((await act(orb.bot, 'pause')).json.playing, false)
    orb.clock.advance(60_000)
    t.equal((await look(orb.bot)).json.position, 12.345, 'paused, the position stands')
    await act(orb.bot, 'play')
    orb.clock.advance(1_000)
    t.equal((await look(orb.bot)).json.position, 13.345)
  }
)

t.test(
  "ORB-A17 at a track's end: the next plays; after the last, loop off stops (current null), loop all wraps, loop one repeats",
  async (t) => {
    const orb = await startOrb(t)
    const [a, b] = await queueUp(orb.bot, 'first', 'second')
    await act(orb.bot, 'play')
    orb.clock.advance(a.duration * 1000)
    t.match(
      (await look(orb.bot)).json,
      { current: 1, position: 0, playing: true },
      'exactly at the end: the next track at 0'
    )
    orb.clock.advance(b.duration * 1000 + 5_000)
    t.match(
      (await look(orb.bot)).json,
      { current: null, position: 0, playing: false },
      'loop off: stopped after the last'
    )
    t.match(
      (await act(orb.bot, 'play')).json,
      { current: 0, position: 0, playing: true },
      'play starts the first again'
    )
    await act(orb.bot, 'loop', 'all')
    orb.clock.advance((a.duration + b.duration) * 1000 * 3 + 7_000)
    t.match(
      (await look(orb.bot)).json,
      { current: 0, position: 7, playing: true },
      'loop all: three whole rounds and 7 s'
    )
    await act(orb.bot, 'loop', 'one')
    orb.clock.advance(a.duration * 1000 * 2)
    t.match(
      (await look(orb.bot)).json,
      { current: 0, position: 7, playing: true },
      'loop one: the same track twice over'
    )
  }
)

t.test(
  'ORB-A17 next and back: next skips even under loop one and stops after the last unless loop all; back at the first restarts it',
  async (t) => {
    const orb = await startOrb(t)
    await queueUp(orb.bot, 'a', 'b', 'c')
    await act(orb.bot, 'play')
    await act(orb.bot, 'loop', 'one')
    orb.clock.advance(4_000)
    t.match((await act(orb.bot, 'next')).json, { current: 1, position: 0, playing: true })
    await act(orb.bot, 'next')
    t.match(
      (await act(orb.bot, 'next')).json,
      { current: null, playing: false },
      'past the last with loop one: stopped'
    )
    t.match((await act(orb.bot, 'back')).json, { current: 2, playing: false }, 'back from stopped: the last track')
    t.match((await act(orb.bot, 'next')).json, { current: null }, 'loop off too')
    t.match((await act(orb.bot, 'next')).json, { current: 0, position: 0 }, 'next from stopped: the first')
    orb.clock.advance(3_000)
    t.match((await act(orb.bot, 'back')).json, { current: 0, position: 0 }, 'back at the first restarts it')
    await act(orb.bot, 'loop', 'all')
    t.match((await act(orb.bot, 'back')).json, { current: 2 }, 'loop all: back wraps to the last')
    t.match((await act(orb.bot, 'next')).json, { current: 0 }, 'and next wraps to the first')
    await act(orb.bot, 'clear')
    t.strictSame((await act(orb.bot, 'next')).json, (await act(orb.bot, 'back')).json, 'an empty queue: nothing moves')
  }
)

t.test('ORB-A17 jump and remove take a zero-based index (400 out of range); removing adjusts current', async (t) => {
  const orb = await startOrb(t)
  await queueUp(orb.bot, 'a', 'b', 'c', 'd')
  for (const arg of [4, -1, 1.5, '1', null, undefined, true]) {
    t.ok(isOrbError(await act(orb.bot, 'jump', arg), 400), `jump ${JSON.stringify(arg)}`)
    t.ok(isOrbError(await act(orb.bot, 'remove', arg), 400), `remove ${JSON.stringify(arg)}`)
  }
  await act(orb.bot, 'play')
  orb.clock.advance(2_000)
  t.match((await act(orb.bot, 'jump', 2)).json, { current: 2, position: 0, playing: true })
  orb.clock.advance(2_000)
  let player = (await act(orb.bot, 'remove', 0)).json
  t.match(player, { current: 1, position: 2, playing: true }, 'one before the current: the same track, one place up')
  t.strictSame(player.queue.map((q: any) => q.title), ['b', 'c', 'd'])
  player = (await act(orb.bot, 'remove', 1)).json
  t.match(player, { current: 1, position: 0, playing: true }, 'the current one: what would have played next takes over')
  t.equal(player.queue[1].title, 'd')
  t.match((await act(orb.bot, 'remove', 1)).json, { current: null, playing: false }, 'the current and last: stopped')
  t.match((await act(orb.bot, 'remove', 0)).json, { current: null, queue: [] })
  await queueUp(orb.bot, 'solo')
  await act(orb.bot, 'loop', 'all')
  await act(orb.bot, 'play')
  t.match(
    (await act(orb.bot, 'remove', 0)).json,
    { current: null, playing: false, queue: [] },
    'the only track under loop all: stopped'
  )
})

t.test(
  "ORB-A17 seek: seconds from 0 to below the current track's end; past it, negative, not a number, or nothing current is 400",
  async (t) => {
    const orb = await startOrb(t)
    t.ok(isOrbError(await act(orb.bot, 'seek', 1), 400), 'nothing current')
    const [a] = await queueUp(orb.bot, 'a')
    t.equal((await act(orb.bot, 'seek', 30.25)).json.position, 30.25)
    t.equal((await act(orb.bot, 'seek', 0)).json.position, 0)
    t.equal((await act(orb.bot, 'seek', a.duration - 0.001)).json.position, a.duration - 0.001)
    for (const arg of [a.duration, a.duration + 10, -1, '5', null, undefined]) {
      t.ok(isOrbError(await act(orb.bot, 'seek', arg), 400), `seek ${JSON.stringify(arg)}`)
    }
    t.equal((await look(orb.bot)).json.position, a.duration - 0.001, 'refused seeks changed nothing')
    await act(orb.bot, 'play')
    orb.clock.advance(1)
    t.match((await look(orb.bot)).json, { current: null, playing: false }, 'a millisecond later the track has ended')
  }
)

t.test(
  'ORB-A17 volume is an integer 0..100, loop off|one|all, shuffle a boolean or none to toggle; anything else is 400',
  async (t) => {
    const orb = await startOrb(t)
    t.equal((await act(orb.bot, 'volume', 0)).json.volume, 0)
    t.equal((await act(orb.bot, 'volume', 100)).json.volume, 100)
    for (const arg of [101, -1, 50.5, '50', null, undefined]) {
      t.ok(isOrbError(await act(orb.bot, 'volume', arg), 400), `volume ${JSON.stringify(arg)}`)
    }
    t.equal((await act(orb.bot, 'loop', 'all')).json.loop, 'all')
    for (const arg of ['twice', 'OFF', true, null, undefined]) {
      t.ok(isOrbError(await act(orb.bot, 'loop', arg), 400), `loop ${JSON.stringify(arg)}`)
    }
    t.equal((await act(orb.bot, 'shuffle')).json.shuffle, true, 'none toggles on')
    t.equal((await act(orb.bot, 'shuffle', null)).json.shuffle, false, 'null toggles off')
    t.equal((await act(orb.bot, 'shuffle', true)).json.shuffle, true)
    t.equal((await act(orb.bot, 'shuffle', true)).json.shuffle, true, 'a boolean sets')
    for (const arg of ['yes', 1, []]) {
      t.ok(isOrbError(await act(orb.bot, 'shuffle', arg), 400), `shuffle ${JSON.stringify(arg)}`)
    }
    t.strictSame(
      (await look(orb.bot)).json,
      { ...fresh('ch_lounge'), volume: 100, loop: 'all', shuffle: true },
      'refusals changed nothing'
    )
  }
)

t.test(
  'ORB-A17 with shuffle on, tracks play in order of a hash of their ids; the current track stays current',
  async (t) => {
    const orb = await startOrb(t)
    const queue = await queueUp(orb.bot, 'a', 'b', 'c', 'd', 'e', 'f')
    const order = queue
      .map((_: unknown, i: number) => i)
      .sort((x: number, y: number) => shuffleKey(queue[x].id) - shuffleKey(queue[y].id) || x - y)
    t.notSame(order, [0, 1, 2, 3, 4, 5], 'this queue shuffles to another order')
    await act(orb.bot, 'jump', order[0])
    t.equal((await act(orb.bot, 'shuffle', true)).json.current, order[0])
    const seen = [order[0]]
    for (let i = 1; i < queue.length; i++) seen.push((await act(orb.bot, 'next')).json.current)
    t.strictSame(seen, order, 'next walks the shuffled order')
    t.equal((await act(orb.bot, 'next')).json.current, null, 'and stops after its last')
    await act(orb.bot, 'shuffle', false)
    await act(orb.bot, 'jump', 0)
    t.equal((await act(orb.bot, 'next')).json.current, 1, 'shuffle off: queue order again')
  }
)

t.test('ORB-A17 clear empties the queue and stops; volume, loop and shuffle stay', async (t) => {
  const orb = await startOrb(t)
  await queueUp(orb.bot, 'a', 'b')
  await act(orb.bot, 'volume', 20)
  await act(orb.bot, 'loop', 'all')
  await act(orb.bot, 'play')
  orb.clock.advance(1_000)
  t.strictSame((await act(orb.bot, 'clear')).json, { ...fresh('ch_lounge'), volume: 20, loop: 'all' })
})

t.test(
  "ORB-A17 ORB-A08 the channel: text is 400, unknown or another community's 404, hidden 403, and connect is needed (403)",
  async (t) => {
    const orb = await startOrb(t)
    for (const [channel, status] of [
      ['ch_general', 400],
      ['ch_nope', 404],
      ['ch_quiet_voice', 404]
    ] as const) {
      t.ok(isOrbError(await act(orb.bot, 'state', undefined, channel), status), `POST ${channel} → ${status}`)
      t.ok(isOrbError(await look(orb.bot, channel), status), `GET ${channel} → ${status}`)
    }
    t.equal((await look(orb.bot, 'ch_stage')).status, 200, 'connect without speak is enough')
    orb.control.install('srv_orbit', 'app_demo', {
      role: { rights: ['connect'] },
      channels: ['ch_lounge', 'ch_stage'],
      hidden: ['ch_stage'],
      channelRights: { ch_lounge: ['speak'] }
    })
    const noConnect = await act(orb.bot, 'add', 'x')
    t.ok(isOrbError(noConnect, 403), 'POST without connect')
    t.match(noConnect.json.error.message, /lacks connect in ch_lounge/)
    t.ok(isOrbError(await look(orb.bot), 403), 'GET without connect')
    t.ok(isOrbError(await look(orb.bot, 'ch_stage'), 403), 'hidden')
  }
)

// ---- Model-based property -------------------------------------------------------------------------------------

type Who = 'demo' | 'lite'
const MEMBER: Record<Who, string> = { demo: 'app_demo', lite: 'app_lite' }

interface ModelTrack { id: string, title: string, url: string, duration: number, addedBy: string }
interface Model {
  playing: boolean
  /** Milliseconds into the current track. */
  ms: number
  volume: number
  loop: string
  shuffle: boolean
  current: number | null
  queue: ModelTrack[]
  nextId: number
}

/** What `add` makes of each text the property uses, written out by hand from ORB-A17 (docs/decisions.md). */
const TEXTS: Record<string, { title: string, url: string, key: string }> = {
  'lo-fi beats': { title: 'lo-fi beats', url: 'https://music.orb.test/search?q=lo-fi%20beats', key: 'lo-fi beats' },
  '  Blue   Monday ': { title: 'Blue Monday', url: 'https://music.orb.test/search?q=Blue%20Monday', key: 'Blue Monday' },
  'https://cdn.example.com/a/Song_Two.mp3': { title: 'Song Two', url: 'https://cdn.example.com/a/Song_Two.mp3', key: 'https://cdn.example.com/a/Song_Two.mp3' },
  'HTTPS://Example.org': { title: 'example.org', url: 'https://example.org/', key: 'https://example.org/' },
  'naïve & café': { title: 'naïve & café', url: 'https://music.orb.test/search?q=na%C3%AFve%20%26%20caf%C3%A9', key: 'naïve & café' }
}

function order (m: Model): number[] {
  const indices = m.queue.map((_, i) => i)
  return m.shuffle ? indices.sort((a, b) => shuffleKey(m.queue[a]!.id) - shuffleKey(m.queue[b]!.id) || a - b) : indices
}

function stop (m: Model): void {
  m.current = null
  m.ms = 0
  m.playing = false
}

function goTo (m: Model, index: number | null): void {
  if (index === null) return stop(m)
  m.current = index
  m.ms = 0
}

/** Plays `ms` forward one track end at a time (no arithmetic shortcuts, unlike the fake). */
function advance (m: Model, ms: number): void {
  while (m.playing && m.current !== null) {
    const left = m.queue[m.current]!.duration * 1000 - m.ms
    if (ms < left) {
      m.ms += ms
      return
    }
    ms -= left
    if (m.loop === 'one') {
      m.ms = 0
      continue
    }
    const o = order(m)
    const at = o.indexOf(m.current)
    goTo(m, at + 1 < o.length ? o[at + 1]! : m.loop === 'all' ? o[0]! : null)
  }
}

const isIndex = (m: Model, arg: unknown): arg is number =>
  typeof arg === 'number' && Number.isInteger(arg) && arg >= 0 && arg < m.queue.length

/** The track after the current one in play order, as `next` moves: the first again under loop 'all', else none. */
function following (m: Model): number | null {
  const o = order(m)
  const pos = m.current === null ? -1 : o.indexOf(m.current)
  return pos + 1 < o.length ? o[pos + 1]! : m.loop === 'all' ? o[0]! : null
}

/** The track before the current one in play order, as `back` moves: the last under loop 'all', else the first. */
function preceding (m: Model): number {
  const o = order(m)
  const pos = m.current === null ? -1 : o.indexOf(m.current)
  return pos > 0 ? o[pos - 1]! : m.loop === 'all' ? o[o.length - 1]! : o[0]!
}

function add (m: Model, arg: unknown, who: Who): number {
  const known = typeof arg === 'string' ? TEXTS[arg] : undefined
  if (known === undefined) return 400
  m.queue.push({
    id: `trk_${m.nextId++}`,
    title: known.title,
    url: known.url,
    duration: durationOf(known.key),
    addedBy: MEMBER[who]
  })
  if (m.current === null) goTo(m, m.queue.length - 1)
  return 200
}

function remove (m: Model, arg: unknown): number {
  if (!isIndex(m, arg)) return 400
  const removed = m.queue[arg]!
  if (arg !== m.current) {
    m.queue.splice(arg, 1)
    if (m.current !== null && arg < m.current) m.current--
    return 200
  }
  const next = following(m)
  const nextTrack = next === null ? undefined : m.queue[next]
  m.queue.splice(arg, 1)
  goTo(m, nextTrack === undefined || nextTrack === removed ? null : m.queue.indexOf(nextTrack))
  return 200
}

function seek (m: Model, arg: unknown): number {
  if (typeof arg !== 'number' || arg < 0 || m.current === null) return 400
  const ms = Math.round(arg * 1000)
  if (ms >= m.queue[m.current]!.duration * 1000) return 400
  m.ms = ms
  return 200
}

/** What each action does to the model, and the status the fake must answer; a 400 leaves the model as it was. */
const ACTIONS: Record<string, (m: Model, arg: unknown, who: Who) => number> = {
  add,
  play: (m) => {
    if (m.current === null && m.queue.length > 0) goTo(m, order(m)[0]!)
    m.playing = m.current !== null
    return 200
  },
  pause: (m) => {
    m.playing = false
    return 200
  },
  next: (m) => {
    if (m.queue.length === 0) return 200
    goTo(m, m.current === null ? order(m)[0]! : following(m))
    return 200
  },
  back: (m) => {
    if (m.queue.length === 0) return 200
    goTo(m, m.current === null ? order(m)[m.queue.length - 1]! : preceding(m))
    return 200
  },
  jump: (m, arg) => {
    if (!isIndex(m, arg)) return 400
    goTo(m, arg)
    return 200
  },
  remove,
  seek,
  volume: (m, arg) => {
    if (typeof arg !== 'number' || !Number.isInteger(arg) || arg < 0 || arg > 100) return 400
    m.volume = arg
    return 200
  },
  loop: (m, arg) => {
    if (arg !== 'off' && arg !== 'one' && arg !== 'all') return 400
    m.loop = arg
    return 200
  },
  shuffle: (m, arg) => {
    if (arg !== undefined && typeof arg !== 'boolean') return 400
    m.shuffle = arg ?? !m.shuffle
    return 200
  },
  clear: (m) => {
    m.queue = []
    stop(m)
    return 200
  }
}

/** Applies an action to the model; the status the fake must answer. `state` (and any other) changes nothing. */
function apply (m: Model, action: string, arg: unknown, who: Who): number {
  return Object.hasOwn(ACTIONS, action) ? ACTIONS[action]!(m, arg, who) : 200
}

const view = (m: Model) => ({
  channel: 'ch_lounge',
  playing: m.playing,
  position: m.ms / 1000,
  volume: m.volume,
  loop: m.loop,
  shuffle: m.shuffle,
  current: m.current,
  queue: m.queue
})

/** A seek argument, some of them decided from the model when the step runs (the current track's end). */
type SeekArg = number | 'end' | 'end-1ms' | 'end-1s'
function seekArg (m: Model, arg: SeekArg): unknown {
  if (typeof arg === 'number') return arg
  const track = m.current === null ? undefined : m.queue[m.current]
  if (track === undefined) return 1
  return { end: track.duration, 'end-1ms': (track.duration * 1000 - 1) / 1000, 'end-1s': track.duration - 1 }[arg]
}

/** A clock move: milliseconds, or up to (or just short of) the current track's end, decided when the step runs. */
type Wait = number | 'to-end' | 'to-end-1ms'
function waitMs (m: Model, wait: Wait): number {
  if (typeof wait === 'number') return wait
  const left = m.current === null ? 1_000 : m.queue[m.current]!.duration * 1000 - m.ms
  return wait === 'to-end' ? left : left - 1
}

type Step =
  | { kind: 'act', who: Who, action: string, arg: unknown }
  | { kind: 'seek', who: Who, arg: SeekArg }
  | { kind: 'advance', ms: Wait }

const who = fc.constantFrom<Who>('demo', 'lite')
const index = fc.constantFrom<unknown>(0, 0, 1, 1, 2, 3, -1, 1.5, '1')
const musicSteps: fc.Arbitrary<Step[]> = fc.array(
  fc.oneof(
    {
      weight: 6,
      arbitrary: fc.record({
        kind: fc.constant('act' as const),
        who,
        action: fc.constant('add'),
        arg: fc.constantFrom<unknown>(...Object.keys(TEXTS), '   ')
      })
    },
    {
      weight: 4,
      arbitrary: fc.record({
        kind: fc.constant('act' as const),
        who,
        action: fc.constantFrom('play', 'play', 'pause', 'next', 'next', 'back', 'back', 'clear', 'state'),
        arg: fc.constant(undefined)
      })
    },
    {
      weight: 3,
      arbitrary: fc.record({
        kind: fc.constant('act' as const),
        who,
        action: fc.constantFrom('jump', 'remove'),
        arg: index
      })
    },
    {
      weight: 1,
      arbitrary: fc.record({
        kind: fc.constant('act' as const),
        who,
        action: fc.constant('volume'),
        arg: fc.constantFrom<unknown>(0, 37, 100, 101, -1, 7.5, '50')
      })
    },
    {
      weight: 2,
      arbitrary: fc.record({
        kind: fc.constant('act' as const),
        who,
        action: fc.constant('loop'),
        arg: fc.constantFrom<unknown>('off', 'one', 'all', 'twice')
      })
    },
    {
      weight: 2,
      arbitrary: fc.record({
        kind: fc.constant('act' as const),
        who,
        action: fc.constant('shuffle'),
        arg: fc.constantFrom<unknown>(true, false, undefined, 'yes')
      })
    },
    {
      weight: 2,
      arbitrary: fc.record({
        kind: fc.constant('seek' as const),
        who,
        arg: fc.constantFrom<SeekArg>(0, 1.5, 59.999, 'end', 'end-1ms', 'end-1ms', 'end-1s', -1)
      })
    },
    {
      weight: 4,
      arbitrary: fc.record({
        kind: fc.constant('advance' as const),
        ms: fc.constantFrom<Wait>(
          0,
          1,
          999,
          1_000,
          30_000,
          60_000,
          200_000,
          420_000,
          1_500_000,
          'to-end',
          'to-end',
          'to-end-1ms'
        )
      })
    }
  ),
  { maxLength: 40, size: 'max' }
)

t.test(
  'ORB-A17 ORB-083 property: any actions by two apps and any clock moves leave the shared player as the model says',
  async (t) => {
    const orb = await startOrb(t, { world: twoBotWorld() })
    const clients: Record<Who, OrbClient> = { demo: orb.bot, lite: orb.as(DEMO.lite) }
    let runs = 0
    await fc.assert(
      fc.asyncProperty(musicSteps, async (list) => {
        runs++
        orb.control.reset()
        const m: Model = {
          playing: false,
          ms: 0,
          volume: 50,
          loop: 'off',
          shuffle: false,
          current: null,
          queue: [],
          nextId: 1
        }
        for (const step of list) {
          if (step.kind === 'advance') {
            const ms = waitMs(m, step.ms)
            advance(m, ms)
            orb.clock.advance(ms)
          } else {
            const action = step.kind === 'seek' ? 'seek' : step.action
            const arg = step.kind === 'seek' ? seekArg(m, step.arg) : step.arg
            const status = apply(m, action, arg, step.who)
            const reply = await act(clients[step.who], action, arg)
            if (reply.status !== status) {
              throw new Error(`${action} ${JSON.stringify(arg)}: expected ${status}, got ${reply.status} ${reply.text}`)
            }
            if (status !== 200 && !isOrbError(reply, status)) {
              throw new Error(`${action}: not an Error body: ${reply.text}`)
            }
            if (status === 200 && !isDeepStrictEqual(reply.json, view(m))) {
              throw new Error(
                `${action} ${JSON.stringify(arg)}: answered ${reply.text}, the model ${JSON.stringify(view(m))}`
              )
            }
          }
          // ORB-083: the other app sees the same player.
          const seen = (await look(clients[step.kind === 'advance' || step.who === 'demo' ? 'lite' : 'demo'])).json
          if (!isDeepStrictEqual(seen, view(m))) {
            throw new Error(
              `after ${JSON.stringify(step)}: GET ${JSON.stringify(seen)}, the model ${JSON.stringify(view(m))}`
            )
          }
        }
      }),
      fcParams({ numRuns: 100 })
    )
    t.ok(runs >= 100, `${runs} runs`)
  }
)
