// The steps of a bot-suite scenario, each played by a function of its own: what a member, an admin, the developer,
// the platform, the wire or the harness does to the bot's world at the step's time.
import { randomBytes } from 'node:crypto'
import type { Actor, JournalExchange } from '../core/journal.js'
import { ClientProcess, STOP_GRACE_MS } from '../core/process.js'
import { RunQueueWatch } from '../core/run-queue.js'
import type { OrbMock } from '../../../src/orb-mock/index.js'
import { send } from './deliver.js'
import { isObject, view } from './model.js'
import type { OrbObserver } from './observer.js'
import type { OrbWire } from './orb-wire.js'
import type { Scenario, Step } from './scenario.js'
import {
  DEFAULT_CONTEXT, isGenuine, makeDelivery, replay, REPLAY_MARGIN_MS, sampleEvent, TOLERANCE_MS, type WebhookDelivery
} from './webhook-kit.js'

/** The community the bot is installed in, and the member who talks to it (the demo world's). */
export const SERVER = 'srv_orbit'
const MEMBER = 'mem_ada'

/** Something the scenario waits to see on the wire (OBC-08's seat, OBC-09's fetched command); it removes itself. */
export type Watcher = (entry: JournalExchange) => void

/** What a process of the bot is started with. */
export interface BotLaunch {
  readonly o: OrbObserver
  readonly command: readonly string[]
  /** The bot's environment: a rotation gives it a new ORB_TOKEN. */
  readonly env: NodeJS.ProcessEnv
  readonly mode: Scenario['mode']
  /** A webhook bot's endpoint URL; its port is the bot's PORT. */
  readonly endpoint: string | undefined
}

/** One scenario as it plays: the world its steps act on, and what they change in it. */
export interface Scene extends BotLaunch {
  readonly mock: OrbMock
  /** The app made for the bot, as the fake first gave it (a rotation's new token goes to `env`). */
  readonly app: { readonly id: string, readonly name: string, readonly token: string }
  /** A webhook bot's PORT. */
  readonly port: number | undefined
  readonly wire: OrbWire
  readonly watchers: Set<Watcher>
  /** The steps' timers, and those they set (a timed kill): cleared when the run ends. */
  readonly timers: NodeJS.Timeout[]
  /** Deliveries still waiting for a slow bot's reply end with the run. */
  readonly sending: AbortController
  /** The bot's running process: a restart or a rotation replaces it. */
  client: ClientProcess
  /** Set when the run ends: a kill still under way then starts no new process. */
  finished: boolean
  /** The last genuine delivery: what a duplicate sends again. */
  last: { event: Record<string, unknown>, type: string } | undefined
  /** Mentions, replies and deliveries so far: each one's text is its own. */
  count: number
}

/** Starts a process of the bot, watched for its waits for a CPU (OTC-25). */
export function startBot (launch: BotLaunch): ClientProcess {
  const { o, endpoint } = launch
  o.action('harness', 'bot-start', `the bot starts (${launch.mode} mode${endpoint === undefined ? '' : `, endpoint ${endpoint}`})`)
  const started = new ClientProcess(launch.command, launch.env, () => o.now(), (stream, line) => {
    o.output(stream, line)
  })
  o.watchClient(new RunQueueWatch(started.pid, (problem) => { o.action('harness', 'run-queue', problem) }))
  return started
}

/** Kills the bot and starts it again with the same HOME, unless the run has ended meanwhile. */
async function restartBot (scene: Scene): Promise<void> {
  // Journaled before the kill: what the bot was doing when it came (a delivery in flight) was cut by it.
  scene.o.action('harness', 'kill', 'the bot is killed (SIGKILL), to start again with the same HOME')
  await scene.client.stop(0)
  if (scene.finished) return // the scenario ended while the old process was stopping: no new one
  scene.client = startBot(scene)
}

/** A step's journal entry: its text, in the step's name and by its actor. */
type Say = (text: string, data?: Record<string, unknown>) => void
type StepNamed<N extends Step['name']> = Step & { name: N }
type Play<N extends Step['name'] = Step['name']> = (scene: Scene, step: StepNamed<N>, say: Say) => void | Promise<void>

/** The journal's actors: members and admins are the community; the developer and the platform, Orb's side. */
const ACTORS: Readonly<Record<Step['actor'], Actor>> = {
  member: 'user',
  admin: 'user',
  developer: 'app',
  platform: 'app',
  wire: 'wire',
  harness: 'harness'
}

/** Plays one step; one the fake refused (a step that cannot be played now) is journaled, and the scenario goes on. */
export function playStep (scene: Scene, step: Step): void {
  play(scene, step).catch((err: unknown) => { refused(scene, step.name, err) })
}

async function play (scene: Scene, step: Step): Promise<void> {
  const handler = STEPS[step.name] as Play
  await handler(scene, step, (text, data) => { scene.o.action(ACTORS[step.actor], step.name, text, data) })
}

function refused (scene: Scene, name: string, err: unknown): void {
  scene.o.action('harness', 'step-refused', `${name} could not be played: ${(err as Error).message}`)
}

const mention: Play<'mention'> = (scene, step, say) => {
  const made = scene.mock.control.memberPost({
    server: SERVER,
    channel: step.channel,
    member: MEMBER,
    content: `<@${scene.app.id}> hello ${++scene.count}`,
    encrypted: step.encrypted
  })
  say(`${MEMBER} mentions the bot in ${step.channel}${step.encrypted ? ' (end-to-end encrypted)' : ''}`, { events: made.events, encrypted: step.encrypted })
}

/**
 * A reply to the bot's latest message in the channel, without a mention: a message.mention with reason "reply"
 * (ORB-A10).
 */
const reply: Play<'reply'> = (scene, step, say) => {
  let mine: number | undefined
  for (const m of scene.mock.store.messages.values()) {
    if (m.author.id === scene.app.id && m.channel === step.channel && !m.deleted) mine = m.id
  }
  if (mine === undefined) return say(`${MEMBER} would reply to the bot in ${step.channel}, but it has posted nothing there`)
  const made = scene.mock.control.memberPost({
    server: SERVER,
    channel: step.channel,
    member: MEMBER,
    content: `thanks ${++scene.count}`,
    replyTo: mine
  })
  say(`${MEMBER} replies to the bot's message ${mine} in ${step.channel}`, { events: made.events })
}

/** A member types one of the commands the bot registered (the first, unless the step names one), its options filled. */
const command: Play<'command'> = (scene, step, say) => {
  const { mock, app } = scene
  const registered = mock.store.apps.get(app.id)?.commands ?? []
  const typed = step.command === undefined ? registered[0] : registered.find((c) => c.name === step.command)
  if (typed === undefined) {
    return say(`a member would type ${step.command === undefined ? 'a command' : `/${step.command}`}, but the bot registered none such`)
  }
  const needed = typed.args.filter((a) => a.optional !== true)
  const options = { ...Object.fromEntries(needed.map((a) => [String(a.name), 'hi'])), ...step.options }
  const made = mock.control.invoke({
    server: SERVER,
    channel: step.channel,
    member: MEMBER,
    name: typed.name,
    options,
    app: app.id
  })
  say(`${MEMBER} types /${typed.name} in ${step.channel}`, { event: made.event })
}

/** As a developer does: a new token from the console, and the bot redeployed with it. */
const rotate: Play<'rotate'> = async (scene, _step, say) => {
  const { token } = scene.mock.control.rotateToken(scene.app.id)
  scene.env.ORB_TOKEN = token
  say('the developer rotates the app token (the old one now gets 401) and restarts the bot with the new one', { token })
  await scene.client.stop(STOP_GRACE_MS)
  scene.client = startBot(scene)
}

const restart: Play<'restart'> = async (scene, step, say) => {
  const ms = step.afterCommandMs
  if (ms === undefined) return await restartBot(scene)
  killAfterCommand(scene, ms)
  say(`the harness: the bot is killed ${ms / 1000} s after it next fetches a typed command`)
}

/** OBC-09: the kill timed from the reply that carried a typed command, as the bot got it, not from the typing. */
function killAfterCommand (scene: Scene, ms: number): void {
  const fetched: Watcher = (entry) => {
    const v = view(entry)
    if (v.route !== 'events' || !v.ok || !isObject(v.reply) || !Array.isArray(v.reply.events)) return
    if (!v.reply.events.some((e) => isObject(e) && e.type === 'application_command')) return
    scene.watchers.delete(fetched)
    scene.timers.push(setTimeout(() => {
      restartBot(scene).catch((err: unknown) => { refused(scene, 'restart', err) })
    }, ms))
  }
  scene.watchers.add(fetched)
}

/** A webhook delivery of a mention the fake holds, genuine or forged as the step says (nothing for an events bot). */
const deliver: Play<'deliver'> = async (scene, step) => {
  const { endpoint, mock, app } = scene
  if (endpoint === undefined) return
  // A word no other delivery carries: a call that quotes it acted on this delivery (ORB-095).
  const text = `<@${app.id}> hello ${++scene.count}-${randomBytes(3).toString('hex')}`
  // The mention is a message of the fake's, made without an event of its own: a reply to it is accepted.
  const channel = mock.store.channels.get(DEFAULT_CONTEXT.channel)!
  const options = { encrypted: step.encrypted, replyTo: null }
  const messageId = mock.store.addMessage(channel, mock.store.authorOf(MEMBER), text, options).id
  const event = sampleEvent(step.type, Date.now(), { appId: app.id, appName: app.name, text, messageId })
  if (step.encrypted && isObject(event.data) && isObject(event.data.message)) event.data.message.body = null
  const d = makeDelivery(step.kind, app.token, event, Date.now())
  if (step.kind === 'replayed') return await sendThenReplay(scene, endpoint, d, step.type, event)
  const genuine = isGenuine(step.kind)
  if (genuine) scene.last = { event, type: step.type }
  const about = { genuine, kind: step.kind, type: step.type, encrypted: step.encrypted, ...(genuine ? { event } : {}) }
  await send(scene.o, endpoint, d, scene.sending.signal, about)
}

/** A genuine delivery, then its exact bytes and headers again once its t has left the tolerance (ORB-A12). */
async function sendThenReplay (
  scene: Scene, endpoint: string, d: WebhookDelivery, type: string, event: Record<string, unknown>
): Promise<void> {
  const signal = scene.sending.signal
  await send(scene.o, endpoint, d, signal, { genuine: true, kind: 'genuine', type, event })
  const wait = Math.max(0, d.t! + TOLERANCE_MS + REPLAY_MARGIN_MS - Date.now())
  await new Promise((resolve) => setTimeout(resolve, wait))
  await send(scene.o, endpoint, replay(d), signal, { genuine: false, kind: 'replayed', type })
}

/** The last genuine delivery sent again as a new delivery of the same event: Orb's retry (ORB-096). */
const duplicate: Play<'duplicate'> = async (scene, _step, say) => {
  const { endpoint, last } = scene
  if (endpoint === undefined || last === undefined) {
    return say('a retry would come, but no genuine delivery went before')
  }
  const d = makeDelivery('genuine', scene.app.token, last.event, Date.now())
  const about = { genuine: true, duplicate: true, kind: 'genuine', type: last.type, event: last.event }
  await send(scene.o, endpoint, d, scene.sending.signal, about)
}

/** Each step's player, by the step's name. */
const STEPS: { readonly [N in Step['name']]: Play<N> } = {
  mention,
  reply,
  command,
  'test-event': (scene, _step, say) => {
    scene.mock.control.testEvent(scene.app.id)
    say('the developer sends a test event')
  },
  rotate,
  allow: (scene, step, say) => {
    scene.mock.control.install(SERVER, scene.app.id, { channels: [...step.channels] })
    say(`an admin narrows the bot's allow-list in ${SERVER} to ${step.channels.join(', ')}`)
  },
  uninstall: (scene, _step, say) => {
    scene.mock.control.uninstall(SERVER, scene.app.id)
    say(`an admin uninstalls the bot from ${SERVER}`)
  },
  chain: (scene, step, say) => {
    scene.mock.control.setChain({ available: step.available })
    say(step.available ? 'the chain can be consulted again' : 'the chain is unavailable: passport answers holds null')
  },
  slow: (scene, step, say) => {
    scene.wire.slow = { ms: step.ms, left: 3 }
    say(`the wire: replies to the bot's next three writes are held ${step.ms} ms`)
  },
  throttle: (scene, step, say) => {
    scene.wire.throttle = { retryAfter: step.retryAfter, left: step.times ?? 1 }
    say(step.times === undefined || step.times === 1
      ? `the wire: the bot's next write is answered 429, Retry-After ${step.retryAfter}`
      : `the wire: the bot's next ${step.times} writes are answered 429, Retry-After ${step.retryAfter}`)
  },
  'late-command': (scene, step, say) => {
    scene.wire.late = step.ms
    say(`the wire: the next reply carrying a typed command is held ${step.ms / 1000} s`)
  },
  'cut-poll': (scene, _step, say) => {
    scene.wire.cut = true
    say('the wire: the next long poll is cut 300 ms in')
  },
  repeat: (scene, _step, say) => {
    scene.wire.repeat = true
    say('the wire: the next events reply carries the last event again')
  },
  restart,
  deliver,
  duplicate
}
