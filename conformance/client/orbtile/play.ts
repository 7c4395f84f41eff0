import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { JournalExchange, ScenarioReport } from '../core/journal.js'
import { ClientProcess, exitText, scanFiles, STOP_GRACE_MS, whenAborted, type ClientExit } from '../core/process.js'
import { makeDirectory } from '../../../src/shared/make-dir.js'
import { SPEC_DISCOVERY_SUFFIX } from '../../../src/spec/orbtile.js'
import { startOrbtileMock, type OrbtileMock, type OrbtileTap } from '../../../src/orbtile-mock/index.js'
import { ControlError } from '../../../src/shared/control-error.js'
import { routeOf, view, type PendingRequest } from './model.js'
import { RunQueueWatch } from '../core/run-queue.js'
import { stalls } from '../core/stall.js'
import { Observer } from './observer.js'
import type { Scenario } from './scenario.js'
import { playStep, type Stage } from './steps.js'
import { Wire } from './wire.js'
import { windowMs } from '../core/windows.js'

/** Where one scenario lives: a folder of its own, with the adapter's HOME and TMPDIR and the fake's socket. */
export interface Place {
  root: string
  home: string
  tmp: string
  run: string
  discoveryPath: string
}

export function makePlace (): Place {
  const root = mkdtempSync(join(tmpdir(), 'orbtest-client-'))
  const home = join(root, 'home')
  const tmp = join(root, 'tmp')
  const run = join(root, 'run')
  for (const dir of [home, tmp, run]) makeDirectory(dir, 0o700)
  return { root, home, tmp, run, discoveryPath: join(home, SPEC_DISCOVERY_SUFFIX) }
}

/** The environment the adapter runs with: orbtest's own, and the scenario's HOME, TMPDIR and ORBTILE_DISCOVERY. */
export function adapterEnv (place: Place, base: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  return { ...base, HOME: place.home, TMPDIR: place.tmp, ORBTILE_DISCOVERY: place.discoveryPath }
}

/** OTC-19: how long an adapter may take to make its first connection before the scenario plays without it. */
export const START_ALLOWANCE_MS = windowMs('start-allowance')

/**
 * Plays one scenario: a fresh fake Orbtile in a folder of its own, the adapter started in it, the steps and the
 * user's decisions on schedule, the wire's faults on the fake's tap; then SIGTERM, the secret scan and the checks.
 */
export async function playScenario (
  scenario: Scenario,
  command: readonly string[],
  options: PlayOptions
): Promise<ScenarioReport> {
  const play = new ScenarioPlay(scenario, options)
  try {
    const { mock, obs } = await play.startFake()
    const client = play.startClient(command, obs)
    const { aborted, dispose } = whenAborted(options.signal)
    await play.untilContact(client, obs, aborted)
    const stage: Stage = { mock, obs, wire: play.wire, nextSocket: play.nextSocket }
    const ended = await play.playSteps(client, stage, aborted)
    dispose()
    const end = obs.now()
    if (ended === undefined) obs.action('harness', 'stop', 'SIGTERM to the adapter')
    const exit = await client.stop(options.signal?.aborted === true ? 200 : STOP_GRACE_MS)
    play.stopWatching()
    obs.action('client', 'exit', exitText(exit), {
      how: exit.how,
      code: exit.code,
      signal: exit.signal,
      ...(exit.error === undefined ? {} : { error: exit.error })
    })
    scanSecrets(obs, client, play.place)
    // The fake closes before judging, and its close waits for every exchange to be reported: a request the client
    // left open (a long poll when it was stopped) is then journaled as cut (OTC-18).
    await mock.close()
    const findings = obs.findings(end)
    return {
      name: options.name,
      summary: '',
      ms: Math.round(obs.now()),
      exit: exitText(exit),
      findings,
      journal: obs.journal.entries(),
      dropped: obs.journal.dropped
    }
  } finally {
    await play.close()
  }
}

interface PlayOptions {
  name: string
  only?: readonly string[]
  signal?: AbortSignal
}

/**
 * One scenario being played: its folder, its fake and the tap on it, the adapter's process, the timers of its
 * steps and of the user's decisions, and what its clock and its length wait for.
 */
class ScenarioPlay {
  readonly place = makePlace()
  readonly wire: Wire
  readonly #scenario: Scenario
  readonly #options: PlayOptions
  readonly #release = stalls.hold()
  #observer: Observer | undefined
  #fake: OrbtileMock | undefined
  #runQueue: RunQueueWatch | undefined
  readonly #timers: NodeJS.Timeout[] = []
  readonly #length: ScenarioLength
  /** The adapters whose keypad switch is set, at their first registration. */
  readonly #seen = new Set<string>()
  /** The requests the user has decided, or will. */
  readonly #decided = new Set<string>()
  #moves = 0
  // OTC-19: the scenario's clock starts at the adapter's first contact (a connection to the socket), or poll.
  readonly #contacted = new Signal()
  readonly #polled = new Signal()
  #sessionAt: NodeJS.Timeout | undefined
  /** The path of a fresh socket for each move of the app. */
  readonly nextSocket = (): string => join(this.place.run, `orbtile-${++this.#moves}.sock`)

  constructor (scenario: Scenario, options: PlayOptions) {
    this.#scenario = scenario
    this.#options = options
    this.wire = new Wire(scenario, (adapterId, requestId) =>
      this.#observer?.model.pendingRequest(adapterId, requestId) !== undefined)
    this.#length = scenarioLength(scenario)
  }

  /** The fake, with the tap that journals its wire, and the observer that judges it. */
  async startFake (): Promise<{ mock: OrbtileMock, obs: Observer }> {
    const mock = await startOrbtileMock({
      discoveryPath: this.place.discoveryPath,
      socketPath: join(this.place.run, 'orbtile.sock'),
      autoAllow: this.#scenario.autoAllow,
      pidCheck: 'off',
      tap: this.#tap()
    })
    this.#fake = mock
    const obs = new Observer(mock.token, this.#options.only === undefined ? {} : { only: this.#options.only })
    this.#observer = obs
    const scenario = this.#scenario
    obs.action('harness', 'start', `scenario ${this.#options.name}: the fake is up; the adapter starts`, {
      extraFields: scenario.extraFields, olderApp: scenario.olderApp, impostor: scenario.impostor
    })
    return { mock, obs }
  }

  startClient (command: readonly string[], obs: Observer): ClientProcess {
    const client = new ClientProcess(command, adapterEnv(this.place), () => obs.now(), (stream, line) =>
      obs.output(stream, line))
    this.#runQueue = new RunQueueWatch(client.pid)
    obs.watchClient(this.#runQueue)
    return client
  }

  /**
   * OTC-19: a slow start (a JVM, a loaded machine) must not eat the scenario: its steps and its length count from
   * the adapter's first connection (or first long poll), or from START_ALLOWANCE_MS after its start if none comes.
   */
  async untilContact (client: ClientProcess, obs: Observer, aborted: Promise<undefined>): Promise<void> {
    let allowance: NodeJS.Timeout | undefined
    const fromPoll = this.#scenario.clockFromPoll === true
    const anchor = fromPoll ? 'long poll' : 'connection'
    const met = await Promise.race([
      (fromPoll ? this.#polled : this.#contacted).done.then(() => true),
      client.exited.then(() => false),
      aborted.then(() => false),
      new Promise<boolean>((resolve) => { allowance = setTimeout(() => resolve(false), START_ALLOWANCE_MS) })
    ])
    clearTimeout(allowance)
    const late = obs.now()
    if (late < 100) return
    obs.action('harness', 'contact', met
      ? `the adapter's first ${anchor} came ${(late / 1000).toFixed(1)} s after its start: the scenario's clock starts here`
      : `no ${anchor} from the adapter within ${(late / 1000).toFixed(1)} s of its start: the scenario plays anyway`)
  }

  /** Plays the steps on schedule until the adapter exits, the scenario's length is over, or the run is aborted. */
  async playSteps (client: ClientProcess, stage: Stage, aborted: Promise<undefined>): Promise<ClientExit | undefined> {
    let finished = false
    for (const step of this.#scenario.steps) {
      this.#later(step.atMs, async () => {
        // A step whose time comes once the scenario is over (a loaded machine ran its timer late) is not played.
        if (finished || client.ended !== undefined) return
        await playStep(step, stage)
      })
    }
    this.#length.start()
    const ended = await Promise.race([client.exited, this.#length.over, aborted])
    finished = true
    this.#length.clear()
    this.#clearTimers()
    return ended
  }

  stopWatching (): void {
    this.#runQueue?.stop()
  }

  async close (): Promise<void> {
    this.stopWatching()
    this.#clearTimers()
    await this.#fake?.close()
    rmSync(this.place.root, { recursive: true, force: true })
    this.#release()
  }

  /** The tap's listener: what the scenario does as each request comes, and each exchange it journals. */
  #tap (): OrbtileTap {
    return {
      now: () => this.#observer?.now() ?? 0,
      request: (head) => {
        this.#onHead(routeOf(head.method, head.target))
        return this.wire.plan(head, () => this.#observer?.now() ?? 0)
      },
      exchange: (x) => {
        const entry = this.#observer?.exchange(x)
        if (entry === undefined) return
        this.#userDecides()
        this.#length.seen(entry)
      },
      malformed: (connection, reason, bytes) => this.#observer?.malformed(connection, reason, bytes),
      failed: (part, message) => this.#observer?.tapFailed(part, message),
      connection: (_id, open) => {
        if (open) this.#contacted.resolve()
        this.#observer?.connection(open)
      }
    }
  }

  #onHead ({ route, adapterId }: ReturnType<typeof routeOf>): void {
    if (route === 'events') this.#polled.resolve()
    // An adapter that never polls has settled a while after it first creates sessions (OTC-19).
    if ((route === 'session' || route === 'batch') && this.#sessionAt === undefined) {
      this.#sessionAt = setTimeout(() => this.#polled.resolve(), windowMs('poll-grace'))
      this.#timers.push(this.#sessionAt)
    }
    // The user's keypad switch is set before the adapter's first registration is answered (OT-057's snapshot).
    if (route === 'register' && adapterId !== undefined && !this.#seen.has(adapterId)) {
      this.#seen.add(adapterId)
      this.#setKeypad(adapterId)
    }
  }

  #setKeypad (adapterId: string): void {
    try {
      this.#fake?.control.setUser(adapterId, { keypad: this.#scenario.keypad })
    } catch (err) {
      // An id the protocol refuses (OT-042..044) has no settings: the fake refuses its registration as well.
      if (!(err instanceof ControlError && err.code === 'bad_request')) throw err
    }
  }

  /** The user decides each request the adapter puts on the keypad, after a while, as the policy says. */
  #userDecides (): void {
    const scenario = this.#scenario
    const obs = this.#observer!
    if (scenario.decide === 'never') return
    for (const [adapterId, requests] of obs.model.pending) {
      for (const request of requests.values()) {
        if (this.#decided.has(request.id) || this.#decided.size >= (scenario.decideOnly ?? Infinity)) continue
        this.#decided.add(request.id)
        this.#later(scenario.decideAfterMs, () => { this.#decide(obs, adapterId, request) })
      }
    }
  }

  #decide (obs: Observer, adapterId: string, request: PendingRequest): void {
    const answer = request.kind === 'approval'
      ? { decision: policyDecision(this.#scenario.decide, this.#decided.size) }
      : { picks: validPicks(request.content) }
    try {
      this.#fake!.control.decide(adapterId, request.id, answer)
      obs.action('user', 'decide', `the user answers ${request.kind} ${request.id}: ${JSON.stringify(answer)}`, { requestId: request.id, ...answer })
    } catch (err) {
      obs.action('harness', 'decide-refused', `${request.kind} ${request.id} could not be decided: ${(err as Error).message}`)
    }
  }

  /** Runs `fn` in `ms`, unless the scenario is over by then; a failure is journaled, the scenario goes on. */
  #later (ms: number, fn: () => unknown): void {
    this.#timers.push(setTimeout(() => {
      Promise.resolve().then(fn).catch((err: unknown) => {
        this.#observer?.action('harness', 'harness-failure', `a step or a decision failed: ${(err as Error).message}`)
      })
    }, ms))
  }

  #clearTimers (): void {
    for (const t of this.#timers) clearTimeout(t)
  }
}

/** A promise resolved from outside, once. */
class Signal {
  resolve: () => void = () => {}
  readonly done = new Promise<void>((resolve) => { this.resolve = resolve })
}

/**
 * When a scenario ends: `durationMs` after it starts or, for one with `sessionMs`, that long after the adapter's first
 * session was made (OTC-27), however late a loaded machine let it come.
 */
interface ScenarioLength {
  over: Promise<undefined>
  start(): void
  seen(e: JournalExchange): void
  clear(): void
}

function scenarioLength (scenario: Scenario): ScenarioLength {
  let timer: NodeJS.Timeout | undefined
  let end: () => void = () => {}
  let sessioned = scenario.sessionMs === undefined
  const over = new Promise<undefined>((resolve) => { end = () => resolve(undefined) })
  const after = (ms: number): void => {
    clearTimeout(timer)
    timer = setTimeout(end, ms)
  }
  return {
    over,
    start: () => { after(scenario.durationMs) },
    seen: (e) => {
      const v = view(e)
      if (sessioned || !v.ok || (v.route !== 'session' && v.route !== 'batch')) return
      sessioned = true
      after(scenario.sessionMs!)
    },
    clear: () => { clearTimeout(timer) }
  }
}

function policyDecision (policy: Scenario['decide'], n: number): 'allow' | 'deny' {
  if (policy === 'allow' || policy === 'deny') return policy
  return n % 2 === 0 ? 'deny' : 'allow'
}

/** A valid answer to a question: the first option of each (OT-146). */
export function validPicks (content: Record<string, unknown>): number[][] {
  const questions = Array.isArray(content.questions) ? content.questions : []
  return questions.map(() => [0])
}

/** OT-022: every adapter token the app issued, looked for in the output and in the files under HOME and TMPDIR. */
function scanSecrets (obs: Observer, client: ClientProcess, place: Place): void {
  const tokens = new Map([...obs.model.adapterTokens].map((t) => [t, obs.secrets.add(t, 'adapter token')]))
  for (const stream of ['stdout', 'stderr'] as const) {
    const text = client.output(stream)
    for (const [token, label] of tokens) {
      if (text.includes(token)) {
        obs.action('harness', 'secret-found', `${label} found in ${stream}`, { where: stream, label })
      }
    }
  }
  const found = scanFiles(
    [
      { name: 'HOME', path: place.home },
      { name: 'TMPDIR', path: place.tmp }
    ],
    tokens,
    new Set([place.discoveryPath])
  )
  for (const f of found) {
    obs.action('harness', 'secret-found', `${f.label} found in ${f.where}`, { where: f.where, label: f.label })
  }
  obs.action('harness', 'scanned', `looked for ${tokens.size} adapter token(s) in stdout, stderr, $HOME and $TMPDIR`)
}
