import { setMaxListeners } from 'node:events'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { ScenarioReport } from '../core/journal.js'
import { stalls } from '../core/stall.js'
import { ClientProcess, exitText, scanFiles, STOP_GRACE_MS, type ClientExit, whenAborted } from '../core/process.js'
import { makeDirectory } from '../../../src/shared/make-dir.js'
import { defaultWorld, startOrbMock, type OrbMock, type WireTap } from '../../../src/orb-mock/index.js'
import { isObject, view, type ChannelInfo } from './model.js'
import { OrbObserver } from './observer.js'
import { OrbWire } from './orb-wire.js'
import { freePort, ready } from './ready.js'
import type { Scenario, Step } from './scenario.js'
import { playStep, SERVER, startBot, type Scene, type Watcher } from './steps.js'

/** Every scope of the bot API: what the bot's app gets unless `--scopes` says otherwise. */
export const ALL_SCOPES = ['messages:read', 'messages:write', 'voice', 'music', 'passport'] as const

/** The path of the bot's endpoint orbtest sets, on the port it gives the bot as PORT. */
export const WEBHOOK_PATH = '/orb/webhook'

/** How a scenario is played: its name, the checks to run (all by default), the run's signal, the app's scopes. */
interface PlayOptions { name: string, only?: readonly string[], signal?: AbortSignal, scopes?: readonly string[] }

/** The bot's own folders: HOME and TMPDIR in a temporary root, removed after the run. */
interface Folders { root: string, home: string, tmp: string }

/** Where the fake's tap sends what it sees: the wire's faults, the observer (once the app is made), the watchers. */
interface Relay {
  readonly wire: OrbWire
  readonly watchers: Set<Watcher>
  observer?: OrbObserver
}

/**
 * Plays one scenario: a fresh fake Orb with an app made for the bot and installed in the demo community, the bot
 * started with ORB_URL, ORB_TOKEN, ORB_APP_ID (and PORT for a webhook bot), the community, the platform and the wire
 * on schedule; then SIGTERM, the secret scan and the checks.
 */
export async function playOrbScenario (
  scenario: Scenario,
  command: readonly string[],
  options: PlayOptions
): Promise<ScenarioReport> {
  const folders = makeFolders()
  const relay: Relay = { wire: new OrbWire(), watchers: new Set() }
  let fake: OrbMock | undefined
  let scene: Scene | undefined
  // The judge's own stalls, for its measurement error (OTC-17), while this scenario plays.
  const release = stalls.hold()
  try {
    fake = await startOrbMock({ port: 0, tap: tapOf(relay) })
    scene = await setScene(fake, relay, scenario, command, options, folders)
    await ready(scene.o, scene.client, scene.port)
    schedule(scene, scenario.steps)
    const ended = await playUntilTheEnd(scene, scenario, options.signal)
    return await endRun(scene, fake, ended, options, folders)
  } finally {
    release()
    if (scene !== undefined) {
      for (const t of scene.timers) clearTimeout(t)
      scene.sending.abort()
      await scene.client.stop(200)
    }
    await fake?.close()
    rmSync(folders.root, { recursive: true, force: true })
  }
}

/**
 * What stops the scenario's deliveries under way when it ends. Each delivery listens on its signal while it is in
 * flight and lets go when it settles, so a slow bot with more than ten deliveries waiting is no listener leak: no
 * warning for it.
 */
function deliveriesController (): AbortController {
  const controller = new AbortController()
  setMaxListeners(0, controller.signal)
  return controller
}

/** Each step at its time from the bot's start. */
function schedule (scene: Scene, steps: readonly Step[]): void {
  for (const step of steps) scene.timers.push(setTimeout(() => { playStep(scene, step) }, step.atMs))
}

function makeFolders (): Folders {
  const root = mkdtempSync(join(tmpdir(), 'orbtest-bot-'))
  const folders = { root, home: join(root, 'home'), tmp: join(root, 'tmp') }
  for (const dir of [folders.home, folders.tmp]) makeDirectory(dir, 0o700)
  return folders
}

/** The fake's tap: the wire plans each request; each exchange is journaled, then shown to the watchers. */
function tapOf (relay: Relay): WireTap {
  return {
    now: () => relay.observer?.now() ?? 0,
    request: (head) => relay.wire.plan(head),
    exchange: (x) => {
      const entry = relay.observer?.exchange(x)
      if (entry !== undefined) for (const watch of relay.watchers) watch(entry)
    },
    malformed: (connection, reason, bytes) => { relay.observer?.malformed(connection, reason, bytes) },
    failed: (part, message) => { relay.observer?.tapFailed(part, message) }
  }
}

/**
 * Sets the scene on a started fake: the bot's app made and installed, its observer, its endpoint (a webhook bot's),
 * and the bot started.
 */
async function setScene (
  mock: OrbMock, relay: Relay, scenario: Scenario, command: readonly string[], options: PlayOptions, folders: Folders
): Promise<Scene> {
  const app = mock.control.createApp({
    name: 'Bot under test',
    scopes: [...(options.scopes ?? ALL_SCOPES)] as never,
    rights: ['send_messages', 'connect', 'speak']
  })
  mock.control.install(SERVER, app.id, {})
  const o = new OrbObserver(app.token, channelsOf(), options.only)
  relay.observer = o
  const port = scenario.mode === 'webhook' ? await freePort() : undefined
  const endpoint = port === undefined ? undefined : `http://127.0.0.1:${port}${WEBHOOK_PATH}`
  if (endpoint !== undefined) mock.control.setEndpoint(app.id, endpoint)
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HOME: folders.home,
    TMPDIR: folders.tmp,
    ORB_URL: mock.url,
    ORB_TOKEN: app.token,
    ORB_APP_ID: app.id,
    ...(port === undefined ? {} : { PORT: String(port) })
  }
  o.action('harness', 'start', `scenario ${options.name}: app ${app.id} installed in ${SERVER}`, { mode: scenario.mode })
  const launch = { o, command, env, mode: scenario.mode, endpoint }
  return {
    ...launch,
    port,
    mock,
    app,
    wire: relay.wire,
    watchers: relay.watchers,
    timers: [],
    sending: deliveriesController(),
    client: startBot(launch),
    finished: false,
    last: undefined,
    count: 0
  }
}

/**
 * Waits for the run's end: its time up, the signal aborted, or the bot's exit on its own (a restart does not count).
 * Then no step, timed kill or watcher acts any more.
 */
async function playUntilTheEnd (
  scene: Scene, scenario: Scenario, signal: AbortSignal | undefined
): Promise<ClientExit | undefined> {
  const { aborted, dispose } = whenAborted(signal)
  const ended = await Promise.race([exitedOnItsOwn(scene), timeUp(scene, scenario), aborted])
  scene.finished = true
  scene.watchers.clear()
  dispose()
  for (const t of scene.timers) clearTimeout(t)
  return ended
}

/**
 * When the scenario's time is up: its duration from now or, once the bot takes a voice seat, `seatedMs` from then
 * (OBC-08: the seat is watched for its whole length from the join on, however late a loaded machine made it).
 */
function timeUp (scene: Scene, scenario: Scenario): Promise<undefined> {
  return new Promise<undefined>((resolve) => {
    const duration = setTimeout(() => resolve(undefined), scenario.durationMs)
    scene.timers.push(duration)
    const seatedMs = scenario.seatedMs
    if (seatedMs === undefined) return
    const seated: Watcher = (entry) => {
      const v = view(entry)
      if (v.route !== 'voice' || !v.ok || !isObject(v.body) || v.body.action !== 'join') return
      scene.watchers.delete(seated)
      clearTimeout(duration)
      scene.timers.push(setTimeout(() => resolve(undefined), seatedMs))
      scene.o.action('harness', 'seated', `the bot took a voice seat: the scenario ends ${seatedMs / 1000} s from now`)
    }
    scene.watchers.add(seated)
  })
}

/** The bot's exit on its own: not a stop or a kill of the harness's, nor an exit of a process a restart replaced. */
function exitedOnItsOwn (scene: Scene): Promise<ClientExit> {
  return new Promise<ClientExit>((resolve) => {
    const watch = (): void => {
      const c = scene.client
      // A process's `exited` resolves however the process ended: it has no failure to handle.
      c.exited.then((exit) => {
        if (c !== scene.client) watch()
        else if (exit.how !== 'stopped' && exit.how !== 'killed') resolve(exit)
      })
    }
    watch()
  })
}

/** Stops the bot (SIGTERM, unless it has exited), scans for the token, closes the fake and judges the run. */
async function endRun (
  scene: Scene, fake: OrbMock, ended: ClientExit | undefined, options: PlayOptions, folders: Folders
): Promise<ScenarioReport> {
  const { o } = scene
  const end = o.now()
  if (ended === undefined) o.action('harness', 'stop', 'SIGTERM to the bot')
  const exit = await scene.client.stop(options.signal?.aborted === true ? 200 : STOP_GRACE_MS)
  o.action('client', 'exit', exitText(exit), { how: exit.how, code: exit.code, signal: exit.signal })
  scanSecrets(o, scene.client, o.model.tokens, folders.home, folders.tmp)
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
