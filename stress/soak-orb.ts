// The soak's bots on the fake Orb: one posts until its windows throttle it and honours Retry-After, reads, long-polls
// the events the community's mentions and commands release and answers the commands; one lives in webhook mode,
// its deliveries going to the local receiver. Every bot route is driven, the directory past its window too.
import type { Answer, Soak } from './soak-core.js'

const ADA = `0x${'1'.repeat(40)}`

/** A request of the demo bot: `route` is the row it is counted under. */
type Call = (route: string, path: string, body?: unknown, holdMs?: number) => Promise<Answer | undefined>

/** The demo bot's state from round to round. */
interface Bot {
  soak: Soak
  call: Call
  round: number
  /** The events cursor. */
  cursor: number
  /** No post, or no sync, before these times: a 429's Retry-After. */
  postAfter: number
  syncAfter: number
  /** The ids of its posts not deleted yet. */
  mine: number[]
}

/** The demo bot's life: post, read, poll, answer, sync commands, voice, music, passport, directory. */
export async function orbBot (soak: Soak): Promise<void> {
  const client = soak.client('orb')
  const call: Call = (route, path, body, holdMs) =>
    soak.call(client, route, path, {
      body,
      headers: [['Authorization', `Bearer ${soak.state.orbToken('app_demo')}`]],
      ...(holdMs === undefined ? {} : { holdMs })
    })
  const bot: Bot = { soak, call, round: 0, cursor: 0, postAfter: 0, syncAfter: 0, mine: [] }
  while (soak.running()) {
    bot.round++
    await postAndRead(bot)
    await pollAndAnswer(bot)
    if (bot.round % 5 === 0) await driveOtherRoutes(bot)
    // ORB-019: sixty directory requests a minute per address; past that, 429.
    for (let n = 0; n < 3; n++) await call('GET /api/orb/directory', '/api/orb/directory')
    await soak.pause(50)
  }
}

/** Posts (unless a window said to wait), reads the channel and an older page, and deletes its oldest post. */
async function postAndRead (bot: Bot): Promise<void> {
  const { soak, call, mine } = bot
  // ORB-031: posts until a window says 429; then none until Retry-After has passed.
  if (Date.now() >= bot.postAfter) {
    const posted = await call('POST /api/bot/v1/messages', '/api/bot/v1/messages',
      { channel: 'ch_general', content: `soak ${bot.round} ${'·'.repeat(Math.floor(soak.random() * 200))}` })
    if (posted?.status === 429) bot.postAfter = Date.now() + (posted.retryAfter ?? 1) * 1000
    if (posted?.status === 200 && typeof posted.json?.id === 'number') mine.push(posted.json.id)
  }
  const page = await call('GET /api/bot/v1/messages', '/api/bot/v1/messages?channel=ch_general&limit=50')
  const oldest = page?.json?.messages?.[0]?.id
  if (typeof oldest === 'number') {
    await call('GET /api/bot/v1/messages', `/api/bot/v1/messages?channel=ch_general&before=${oldest}&limit=5`)
  }
  if (mine.length > 3) await call('DELETE /api/bot/v1/messages/{id}', `/api/bot/v1/messages/${mine.shift()}`)
}

/** ORB-050: a poll held until a mention or a command arrives, or the wait passes; each command is answered. */
async function pollAndAnswer (bot: Bot): Promise<void> {
  const { soak, call } = bot
  const wait = 1 + Math.floor(soak.random() * 4)
  const events = await call('GET /api/bot/v1/events', `/api/bot/v1/events?after=${bot.cursor}&wait=${wait}`,
    undefined, wait * 1000)
  if (events?.status !== 200) return
  bot.cursor = events.json?.next ?? bot.cursor
  for (const event of events.json?.events ?? []) {
    if (event?.type !== 'application_command') continue
    await call('POST /api/bot/v1/interactions/{event}/respond',
      `/api/bot/v1/interactions/${encodeURIComponent(event.id)}/respond`, { content: 'pong' })
  }
}

/** Every fifth round: the app, its commands (synced unless a window said to wait), voice, music and the passport. */
async function driveOtherRoutes (bot: Bot): Promise<void> {
  const { soak, call, round } = bot
  await call('GET /api/bot/v1/app', '/api/bot/v1/app')
  await call('GET /api/bot/v1/commands', '/api/bot/v1/commands')
  // ORB-060: ten syncs a minute.
  if (Date.now() >= bot.syncAfter) {
    const commands = [{ name: 'ping', description: 'pong' }, { name: `c${round % 7}`, options: [{ name: 'x' }] }]
    const synced = await call('PUT /api/bot/v1/commands', '/api/bot/v1/commands', { commands })
    if (synced?.status === 429) bot.syncAfter = Date.now() + (synced.retryAfter ?? 1) * 1000
  }
  await call('DELETE /api/bot/v1/commands', `/api/bot/v1/commands?name=c${(round + 3) % 7}`)
  await voice(call)
  const music = (body: Record<string, unknown>): Promise<unknown> =>
    call('POST /api/bot/v1/music', '/api/bot/v1/music', { channel: 'ch_lounge', ...body })
  await music({ action: 'add', arg: `song ${round}` })
  await music({ action: soak.pick(['play', 'next', 'pause', 'shuffle']) })
  // The queue is cleared now and then, so that the soak's own state stays bounded.
  if (round % 20 === 0) await music({ action: 'clear' })
  await call('GET /api/bot/v1/music', '/api/bot/v1/music?channel=ch_lounge')
  await call('GET /api/bot/v1/passport', `/api/bot/v1/passport?server=srv_orbit&address=${ADA}&kind=human&minimum=1`)
}

async function voice (call: Call): Promise<void> {
  const route = 'POST /api/bot/v1/voice'
  const path = '/api/bot/v1/voice'
  await call(route, path, { action: 'roster', channel: 'ch_lounge' })
  const joined = await call(route, path, { action: 'join', channel: 'ch_lounge' })
  const call_ = joined?.json?.call
  if (typeof call_ !== 'string') return
  await call(route, path, { action: 'heartbeat', call: call_, speaking: true })
  await call(route, path, { action: 'grant', call: call_ })
  await call(route, path, { action: 'leave', call: call_ })
}

/** A bot in webhook mode: created, installed, pointed at the receiver, sent test events, and deleted again. */
export async function webhookBot (soak: Soak, receiverUrl: string): Promise<void> {
  const control = soak.client('control')
  const orb = soak.client('orb')
  const call = (route: string, path: string, body?: unknown): Promise<Answer | undefined> =>
    soak.call(control, route, path, { body })
  let generation = 0
  while (soak.running()) {
    generation++
    // A deleted app's id is never given again: each generation takes a new one.
    const app = `soak_hook_${generation}`
    const created = await call('POST /control/orb/apps', '/control/orb/apps',
      { id: app, name: `Hook ${generation}`, scopes: ['messages:read', 'messages:write'], rights: ['send_messages'] })
    if (created?.status !== 200) {
      await soak.pause(1000)
      continue
    }
    await call('PUT /control/orb/servers/{server}/apps/{app}', `/control/orb/servers/srv_orbit/apps/${app}`, {})
    await call('PUT /control/orb/apps/{app}/endpoint', `/control/orb/apps/${app}/endpoint`, { url: receiverUrl })
    for (let n = 0; n < 10 && soak.running(); n++) {
      await call('POST /control/orb/apps/{app}/test-event', `/control/orb/apps/${app}/test-event`)
      await call('POST /control/orb/messages', '/control/orb/messages',
        { server: 'srv_orbit', channel: 'ch_general', member: 'mem_bo', content: `hey <@${app}> ${n}` })
      await soak.call(orb, 'GET /api/bot/v1/events', '/api/bot/v1/events?after=0',
        { headers: [['Authorization', `Bearer ${soak.state.orbToken(app)}`]] })
      await soak.pause(300)
    }
    await call('GET /control/orb/apps/{app}/deliveries', `/control/orb/apps/${app}/deliveries`)
    await call('POST /control/orb/apps/{app}/rotate-token', `/control/orb/apps/${app}/rotate-token`)
    await call('PUT /control/orb/apps/{app}/endpoint', `/control/orb/apps/${app}/endpoint`, { url: null })
    await call('DELETE /control/orb/servers/{server}/apps/{app}', `/control/orb/servers/srv_orbit/apps/${app}`)
    await call('DELETE /control/orb/apps/{app}', `/control/orb/apps/${app}?messages=delete`)
  }
}
