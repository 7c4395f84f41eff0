import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { JournalExchange, ScenarioReport } from '../core/journal.js'
import { ClientProcess, exitText, scanFiles, STOP_GRACE_MS, type ClientExit, whenAborted } from '../core/process.js'
import { makeDirectory } from '../../../src/shared/make-dir.js'
import { defaultWorld, startOrbMock, type OrbMock } from '../../../src/orb-mock/index.js'
import { isObject, view, type ChannelInfo } from './model.js'
import { send } from './deliver.js'
import { OrbObserver } from './observer.js'
import { OrbWire } from './orb-wire.js'
import { freePort, ready } from './ready.js'
import { RunQueueWatch } from '../core/run-queue.js'
import type { Scenario, Step } from './scenario.js'
import {
  DEFAULT_CONTEXT, isGenuine, makeDelivery, replay, REPLAY_MARGIN_MS, sampleEvent, TOLERANCE_MS
} from './webhook-kit.js'

/** Every scope of the bot API: what the bot's app gets unless `--scopes` says otherwise. */
export const ALL_SCOPES = ['messages:read', 'messages:write', 'voice', 'music', 'passport'] as const

/** The community the bot is installed in, and the member who talks to it (the demo world's). */
const SERVER = 'srv_orbit'
const MEMBER = 'mem_ada'

/** The path of the bot's endpoint orbtest sets, on the port it gives the bot as PORT. */
export const WEBHOOK_PATH = '/orb/webhook'

/**
 * Plays one scenario: a fresh fake Orb with an app made for the bot and installed in the demo community, the bot
 * started with ORB_URL, ORB_TOKEN, ORB_APP_ID (and PORT for a webhook bot), the community, the platform and the wire
 * on schedule; then SIGTERM, the secret scan and the checks.
 */
export async function playOrbScenario (
  scenario: Scenario,
  command: readonly string[],
  options: { name: string, only?: readonly string[], signal?: AbortSignal, scopes?: readonly string[] }
): Promise<ScenarioReport> {
  const root = mkdtempSync(join(tmpdir(), 'orbtest-bot-'))
  const home = join(root, 'home')
  const tmp = join(root, 'tmp')
  for (const dir of [home, tmp]) makeDirectory(dir, 0o700)
  const wire = new OrbWire()
  // Deliveries still waiting for a slow bot's reply end with the run.
  const sending = new AbortController()
  let obs: OrbObserver | undefined
  let fake: OrbMock | undefined
  let client: ClientProcess | undefined
  /** What the scenario waits to see on the wire (OBC-08's seat, OBC-09's fetched command); each removes itself. */
  const watchers = new Set<(entry: JournalExchange) => void>()
  let finished = false
  const timers: NodeJS.Timeout[] = []
  try {
    fake = await startOrbMock({
      port: 0,
      tap: {
        now: () => obs?.now() ?? 0,
        request: (head) => wire.plan(head),
        exchange: (x) => {
          const entry = obs?.exchange(x)
          if (entry !== undefined) for (const watch of watchers) watch(entry)
        },
        malformed: (connection, reason, bytes) => { obs?.malformed(connection, reason, bytes) }
      }
    })
    const mock = fake
    const app = mock.control.createApp({
      name: 'Bot under test',
      scopes: [...(options.scopes ?? ALL_SCOPES)] as never,
      rights: ['send_messages', 'connect', 'speak']
    })
    mock.control.install(SERVER, app.id, {})
    const o = new OrbObserver(app.token, channelsOf(), options.only)
    obs = o
    const port = scenario.mode === 'webhook' ? await freePort() : undefined
    const endpoint = port === undefined ? undefined : `http://127.0.0.1:${port}${WEBHOOK_PATH}`
    if (endpoint !== undefined) mock.control.setEndpoint(app.id, endpoint)
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      HOME: home,
      TMPDIR: tmp,
      ORB_URL: mock.url,
      ORB_TOKEN: app.token,
      ORB_APP_ID: app.id,
      ...(port === undefined ? {} : { PORT: String(port) })
    }
    const start = (): ClientProcess => {
      o.action('harness', 'bot-start', `the bot starts (${scenario.mode} mode${endpoint === undefined ? '' : `, endpoint ${endpoint}`})`)
      const started = new ClientProcess(command, env, () => o.now(), (stream, line) => { o.output(stream, line) })
      o.watchClient(new RunQueueWatch(started.pid))
      return started
    }
    o.action('harness', 'start', `scenario ${options.name}: app ${app.id} installed in ${SERVER}`, { mode: scenario.mode })
    client = start()
    await ready(o, client, port)
    let last: { event: Record<string, unknown>, type: string } | undefined
    let n = 0
    const play = async (step: Step): Promise<void> => {
      // The journal's actors: members and admins are the community; the developer and the platform, Orb's side.
      const actor = step.actor === 'member' || step.actor === 'admin'
        ? 'user'
        : step.actor === 'developer' || step.actor === 'platform' ? 'app' : step.actor
      const say = (text: string, data?: Record<string, unknown>): void => { o.action(actor, step.name, text, data) }
      try {
        switch (step.name) {
          case 'mention': {
            const content = `<@${app.id}> hello ${++n}`
            const made = mock.control.memberPost({
              server: SERVER,
              channel: step.channel,
              member: MEMBER,
              content,
              encrypted: step.encrypted
            })
            return say(`${MEMBER} mentions the bot in ${step.channel}${step.encrypted ? ' (end-to-end encrypted)' : ''}`, { events: made.events, encrypted: step.encrypted })
          }
          case 'reply': {
            // A reply to the bot's latest message in the channel, without a mention: a message.mention with reason
            // "reply" (ORB-A10).
            let mine: number | undefined
            for (const m of mock.store.messages.values()) {
              if (m.author.id === app.id && m.channel === step.channel && !m.deleted) mine = m.id
            }
            if (mine === undefined) return say(`${MEMBER} would reply to the bot in ${step.channel}, but it has posted nothing there`)
            const made = mock.control.memberPost({
              server: SERVER,
              channel: step.channel,
              member: MEMBER,
              content: `thanks ${++n}`,
              replyTo: mine
            })
            return say(`${MEMBER} replies to the bot's message ${mine} in ${step.channel}`, { events: made.events })
          }
          case 'command': {
            const registered = mock.store.apps.get(app.id)?.commands ?? []
            const typed = step.command === undefined ? registered[0] : registered.find((c) => c.name === step.command)
            if (typed === undefined) {
              return say(`a member would type ${step.command === undefined ? 'a command' : `/${step.command}`}, but the bot registered none such`)
            }
            const needed = typed.args.filter((a) => a.optional !== true)
            const opts = { ...Object.fromEntries(needed.map((a) => [String(a.name), 'hi'])), ...step.options }
            const made = mock.control.invoke({
              server: SERVER,
              channel: step.channel,
              member: MEMBER,
              name: typed.name,
              options: opts,
              app: app.id
            })
            return say(`${MEMBER} types /${typed.name} in ${step.channel}`, { event: made.event })
          }
          case 'chain':
            mock.control.setChain({ available: step.available })
            return say(step.available
              ? 'the chain can be consulted again'
              : 'the chain is unavailable: passport answers holds null')
          case 'slow':
            wire.slow = { ms: step.ms, left: 3 }
            return say(`the wire: replies to the bot's next three writes are held ${step.ms} ms`)
          case 'allow': {
            mock.control.install(SERVER, app.id, { channels: [...step.channels] })
            return say(`an admin narrows the bot's allow-list in ${SERVER} to ${step.channels.join(', ')}`)
          }
          case 'uninstall':
            mock.control.uninstall(SERVER, app.id)
            return say(`an admin uninstalls the bot from ${SERVER}`)
          case 'rotate': {
            // As a developer does: a new token from the console, and the bot redeployed with it.
            const { token } = mock.control.rotateToken(app.id)
            env.ORB_TOKEN = token
            say('the developer rotates the app token (the old one now gets 401) and restarts the bot with the new one', { token })
            const old = client!
            await old.stop(STOP_GRACE_MS)
            client = start()
            return
          }
          case 'test-event':
            mock.control.testEvent(app.id)
            return say('the developer sends a test event')
          case 'throttle':
            wire.throttle = { retryAfter: step.retryAfter, left: step.times ?? 1 }
            return say(step.times === undefined || step.times === 1
              ? `the wire: the bot's next write is answered 429, Retry-After ${step.retryAfter}`
              : `the wire: the bot's next ${step.times} writes are answered 429, Retry-After ${step.retryAfter}`)
          case 'late-command':
            wire.late = step.ms
            return say(`the wire: the next reply carrying a typed command is held ${step.ms / 1000} s`)
          case 'cut-poll':
            wire.cut = true
            return say('the wire: the next long poll is cut 300 ms in')
          case 'repeat':
            wire.repeat = true
            return say('the wire: the next events reply carries the last event again')
          case 'restart': {
            const ms = step.afterCommandMs
            if (ms === undefined) return await restart()
            // OBC-09: timed from the reply that carried the command, as the bot got it, not from the member's typing.
            const fetched = (entry: JournalExchange): void => {
              const v = view(entry)
              if (v.route !== 'events' || !v.ok || !isObject(v.reply) || !Array.isArray(v.reply.events)) return
              if (!v.reply.events.some((e) => isObject(e) && e.type === 'application_command')) return
              watchers.delete(fetched)
              timers.push(setTimeout(() => {
                restart().catch((err: unknown) => {
                  o.action('harness', 'step-refused', `restart could not be played: ${(err as Error).message}`)
                })
              }, ms))
            }
            watchers.add(fetched)
            return say(`the harness: the bot is killed ${ms / 1000} s after it next fetches a typed command`)
          }
          case 'deliver': {
            if (endpoint === undefined) return
            // A word no other delivery carries: a call that quotes it acted on this delivery (ORB-095).
            const text = `<@${app.id}> hello ${++n}-${randomBytes(3).toString('hex')}`
            // The mention is a message of the fake's, made without an event of its own: a reply to it is accepted.
            const channel = mock.store.channels.get(DEFAULT_CONTEXT.channel)!
            const options = { encrypted: step.encrypted, replyTo: null }
            const messageId = mock.store.addMessage(channel, mock.store.authorOf(MEMBER), text, options).id
            const event = sampleEvent(step.type, Date.now(), { appId: app.id, appName: app.name, text, messageId })
            if (step.encrypted && isObject(event.data) && isObject(event.data.message)) event.data.message.body = null
            const d = makeDelivery(step.kind, app.token, event, Date.now())
            if (step.kind === 'replayed') {
              await send(o, endpoint, d, sending.signal, { genuine: true, kind: 'genuine', type: step.type, event })
              const wait = Math.max(0, d.t! + TOLERANCE_MS + REPLAY_MARGIN_MS - Date.now())
              await new Promise((resolve) => setTimeout(resolve, wait))
              await send(o, endpoint, replay(d), sending.signal, { genuine: false, kind: 'replayed', type: step.type })
              return
            }
            if (isGenuine(step.kind)) last = { event, type: step.type }
            const genuine = isGenuine(step.kind)
            const about = {
              genuine,
              kind: step.kind,
              type: step.type,
              encrypted: step.encrypted,
              ...(genuine ? { event } : {})
            }
            await send(o, endpoint, d, sending.signal, about)
            return
          }
          case 'duplicate': {
            if (endpoint === undefined || last === undefined) {
              return say('a retry would come, but no genuine delivery went before')
            }
            const d = makeDelivery('genuine', app.token, last.event, Date.now())
            const { type, event } = last
            await send(o, endpoint, d, sending.signal, { genuine: true, duplicate: true, kind: 'genuine', type, event })
          }
        }
      } catch (err) {
        o.action('harness', 'step-refused', `${step.name} could not be played: ${(err as Error).message}`)
      }
    }
    const restart = async (): Promise<void> => {
      // Journaled before the kill: what the bot was doing when it came (a delivery in flight) was cut by it.
      o.action('harness', 'kill', 'the bot is killed (SIGKILL), to start again with the same HOME')
      await client!.stop(0)
      if (finished) return // the scenario ended while the old process was stopping: no new one
      client = start()
    }
    for (const step of scenario.steps) {
      timers.push(setTimeout(() => { play(step).catch(() => {}) }, step.atMs))
    }
    const { aborted, dispose } = whenAborted(options.signal)
    let timer: NodeJS.Timeout | undefined
    const over = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), scenario.durationMs)
      const seatedMs = scenario.seatedMs
      if (seatedMs === undefined) return
      // OBC-08: the seat is watched for its whole length from the join on, however late a loaded machine made it.
      const seated = (entry: JournalExchange): void => {
        const v = view(entry)
        if (v.route !== 'voice' || !v.ok || !isObject(v.body) || v.body.action !== 'join') return
        watchers.delete(seated)
        clearTimeout(timer)
        timer = setTimeout(() => resolve(undefined), seatedMs)
        o.action('harness', 'seated', `the bot took a voice seat: the scenario ends ${seatedMs / 1000} s from now`)
      }
      watchers.add(seated)
    })
    // The run ends at its time, when the signal aborts, or when the bot exits on its own (a restart does not count).
    const exitedOnItsOwn = new Promise<ClientExit>((resolve) => {
      const watch = (): void => {
        const c = client!
        c.exited.then((exit) => {
          if (c !== client) watch()
          else if (exit.how !== 'stopped' && exit.how !== 'killed') resolve(exit)
        }).catch(() => {})
      }
      watch()
    })
    const ended = await Promise.race([exitedOnItsOwn, over, aborted])
    finished = true
    clearTimeout(timer)
    watchers.clear()
    dispose()
    for (const t of timers) clearTimeout(t)
    const end = o.now()
    if (ended === undefined) o.action('harness', 'stop', 'SIGTERM to the bot')
    const exit = await client.stop(options.signal?.aborted === true ? 200 : STOP_GRACE_MS)
    o.action('client', 'exit', exitText(exit), { how: exit.how, code: exit.code, signal: exit.signal })
    scanSecrets(o, client, o.model.tokens, home, tmp)
    // The fake closes before judging, and its close waits for every exchange to be reported: a request the client
    // left open (a long poll when it was stopped) is then journaled as cut (OTC-18).
    await fake.close()
    const findings = o.findings(end)
    return {
      name: options.name,
      summary: '',
      ms: Math.round(o.now()),
      exit: exitText(exit),
      findings,
      journal: o.journal.entries(),
      dropped: o.journal.dropped
    }
  } finally {
    for (const t of timers) clearTimeout(t)
    sending.abort()
    if (client !== undefined) await client.stop(200)
    await fake?.close()
    rmSync(root, { recursive: true, force: true })
  }
}

/** The demo world's channels: their kind and whether they are read-only (ORB-028, ORB-029). */
function channelsOf (): Map<string, ChannelInfo> {
  const out = new Map<string, ChannelInfo>()
  for (const community of defaultWorld().communities) {
    for (const c of community.channels) out.set(c.id, { kind: c.kind, readOnly: c.readOnly === true })
  }
  return out
}

/** ORB-002: the app token looked for in the bot's output and in the files under its HOME and TMPDIR. */
function scanSecrets (
  o: OrbObserver, client: ClientProcess, tokens: readonly string[], home: string, tmp: string
): void {
  // Every token the app had in the run: one rotated away is still a secret.
  const labels = new Map(tokens.map((t) => [t, o.secrets.add(t, 'app token')]))
  for (const stream of ['stdout', 'stderr'] as const) {
    const text = client.output(stream)
    for (const [token, label] of labels) {
      if (text.includes(token)) o.action('harness', 'secret-found', `${label} found in ${stream}`, { where: stream })
    }
  }
  const roots = [{ name: 'HOME', path: home }, { name: 'TMPDIR', path: tmp }]
  const found = scanFiles(roots, labels, new Set())
  for (const f of found) o.action('harness', 'secret-found', `${f.label} found in ${f.where}`, { where: f.where })
}
