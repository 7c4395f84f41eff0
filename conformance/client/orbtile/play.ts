import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { JournalExchange, ScenarioReport } from '../core/journal.js'
import { ClientProcess, exitText, scanFiles, STOP_GRACE_MS, whenAborted } from '../core/process.js'
import { makeDirectory } from '../../../src/shared/make-dir.js'
import { SPEC_DISCOVERY_SUFFIX } from '../../../src/spec/orbtile.js'
import { startOrbtileMock, type OrbtileMock } from '../../../src/orbtile-mock/index.js'
import { isObject, routeOf, view } from './model.js'
import { RunQueueWatch } from '../core/run-queue.js'
import { stalls } from '../core/stall.js'
import { Observer } from './observer.js'
import type { Scenario, Step } from './scenario.js'
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
  options: { name: string, only?: readonly string[], signal?: AbortSignal }
): Promise<ScenarioReport> {
  const place = makePlace()
  const release = stalls.hold()
  let observer: Observer | undefined
  const wire = new Wire(scenario, (adapterId, requestId) =>
    observer?.model.pendingRequest(adapterId, requestId) !== undefined)
  const seen = new Set<string>()
  let fake: OrbtileMock | undefined
  let runQueue: RunQueueWatch | undefined
  const timers: NodeJS.Timeout[] = []
  const length = scenarioLength(scenario)
  // OTC-19: the scenario's clock starts at the adapter's first contact (a connection to the socket).
  let contact: () => void = () => {}
  const contacted = new Promise<void>((resolve) => { contact = resolve })
  let poll: () => void = () => {}
  let sessionAt: NodeJS.Timeout | undefined
  const polled = new Promise<void>((resolve) => { poll = resolve })
  const later = (ms: number, fn: () => unknown): void => {
    timers.push(setTimeout(() => { Promise.resolve().then(fn).catch(() => {}) }, ms))
  }
  try {
    fake = await startOrbtileMock({
      discoveryPath: place.discoveryPath,
      socketPath: join(place.run, 'orbtile.sock'),
      autoAllow: scenario.autoAllow,
      pidCheck: 'off',
      tap: {
        now: () => observer?.now() ?? 0,
        request: (head) => {
          const { route, adapterId } = routeOf(head.method, head.target)
          if (route === 'events') poll()
          // An adapter that never polls has settled a while after it first creates sessions (OTC-19).
          if ((route === 'session' || route === 'batch') && sessionAt === undefined) {
            sessionAt = setTimeout(poll, windowMs('poll-grace'))
            timers.push(sessionAt)
          }
          // The user's keypad switch is set before the adapter's first registration is answered (OT-057's snapshot).
          if (route === 'register' && adapterId !== undefined && !seen.has(adapterId)) {
            seen.add(adapterId)
            try { fake?.control.setUser(adapterId, { keypad: scenario.keypad }) } catch {}
          }
          return wire.plan(head, () => observer?.now() ?? 0)
        },
        exchange: (x) => {
          const entry = observer?.exchange(x)
          if (entry === undefined) return
          userDecides(entry.seq)
          length.seen(entry)
        },
        malformed: (connection, reason, bytes) => observer?.malformed(connection, reason, bytes),
        connection: (_id, open) => {
          if (open) contact()
          observer?.connection(open)
        }
      }
    })
    const mock = fake
    const obs = new Observer(mock.token, options.only === undefined ? {} : { only: options.only })
    observer = obs
    const decided = new Set<string>()
    // The user decides each request the adapter puts on the keypad, after a while, as the policy says.
    const userDecides = (_seq: number): void => {
      if (scenario.decide === 'never') return
      for (const [adapterId, requests] of obs.model.pending) {
        for (const request of requests.values()) {
          if (decided.has(request.id) || decided.size >= (scenario.decideOnly ?? Infinity)) continue
          decided.add(request.id)
          later(scenario.decideAfterMs, () => {
            const answer = request.kind === 'approval'
              ? { decision: policyDecision(scenario.decide, decided.size) }
              : { picks: validPicks(request.content) }
            try {
              mock.control.decide(adapterId, request.id, answer)
              obs.action('user', 'decide', `the user answers ${request.kind} ${request.id}: ${JSON.stringify(answer)}`, { requestId: request.id, ...answer })
            } catch (err) {
              obs.action('harness', 'decide-refused', `${request.kind} ${request.id} could not be decided: ${(err as Error).message}`)
            }
          })
        }
      }
    }
    obs.action('harness', 'start', `scenario ${options.name}: the fake is up; the adapter starts`, {
      extraFields: scenario.extraFields, olderApp: scenario.olderApp, impostor: scenario.impostor
    })
    const client = new ClientProcess(
      command,
      adapterEnv(place),
      () => obs.now(),
      (stream, line) => obs.output(stream, line)
    )
    runQueue = new RunQueueWatch(client.pid)
    obs.watchClient(runQueue)
    // OTC-19: a slow start (a JVM, a loaded machine) must not eat the scenario: its steps and its length count from
    // the adapter's first connection (or first long poll), or from START_ALLOWANCE_MS after its start if none comes.
    const { aborted, dispose } = whenAborted(options.signal)
    let allowance: NodeJS.Timeout | undefined
    const anchor = scenario.clockFromPoll === true ? 'long poll' : 'connection'
    const met = await Promise.race([
      (scenario.clockFromPoll === true ? polled : contacted).then(() => true),
      client.exited.then(() => false),
      aborted.then(() => false),
      new Promise<boolean>((resolve) => { allowance = setTimeout(() => resolve(false), START_ALLOWANCE_MS) })
    ])
    clearTimeout(allowance)
    const late = obs.now()
    if (late >= 100) {
      obs.action('harness', 'contact', met
        ? `the adapter's first ${anchor} came ${(late / 1000).toFixed(1)} s after its start: the scenario's clock starts here`
        : `no ${anchor} from the adapter within ${(late / 1000).toFixed(1)} s of its start: the scenario plays anyway`)
    }
    let moves = 0
    let finished = false
    for (const step of scenario.steps) {
      later(step.atMs, async () => {
        // A step whose time comes once the scenario is over (a loaded machine ran its timer late) is not played.
        if (finished || client.ended !== undefined) return
        await playStep(step, mock, obs, wire, () => join(place.run, `orbtile-${++moves}.sock`))
      })
    }
    length.start()
    const ended = await Promise.race([client.exited, length.over, aborted])
    finished = true
    length.clear()
    dispose()
    for (const t of timers) clearTimeout(t)
    const end = obs.now()
    if (ended === undefined) obs.action('harness', 'stop', 'SIGTERM to the adapter')
    const exit = await client.stop(options.signal?.aborted === true ? 200 : STOP_GRACE_MS)
    runQueue.stop()
    obs.action('client', 'exit', exitText(exit), {
      how: exit.how,
      code: exit.code,
      signal: exit.signal,
      ...(exit.error === undefined ? {} : { error: exit.error })
    })
    scanSecrets(obs, client, place)
    // The fake closes before judging, and its close waits for every exchange to be reported: a request the client
    // left open (a long poll when it was stopped) is then journaled as cut (OTC-18).
    await fake.close()
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
    runQueue?.stop()
    for (const t of timers) clearTimeout(t)
    await fake?.close()
    rmSync(place.root, { recursive: true, force: true })
    release()
  }
}

/**
 * When a scenario ends: `durationMs` after it starts or, for one with `sessionMs`, that long after the adapter's first
 * session was made (OTC-27), however late a loaded machine let it come.
 */
function scenarioLength (scenario: Scenario): {
  over: Promise<undefined>
  start(): void
  seen(e: JournalExchange): void
  clear(): void
} {
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

async function playStep (
  step: Step,
  mock: OrbtileMock,
  obs: Observer,
  wire: Wire,
  nextSocket: () => string
): Promise<void> {
  const ids = [...obs.model.leases.keys()]
  const say = (text: string, data?: Record<string, unknown>): void => { obs.action(step.actor, step.name, text, data) }
  try {
    switch (step.name) {
      case 'allow':
      case 'disable':
      case 'keypad-on':
      case 'keypad-off':
      case 'hue': {
        const change =
          step.name === 'hue'
            ? { baseHue: step.hue }
            : step.name.startsWith('keypad')
              ? { keypad: step.name === 'keypad-on' }
              : { allowed: step.name === 'allow' }
        for (const id of ids) mock.control.setUser(id, change)
        say(`the user changes ${ids.join(', ') || 'no adapter yet'}: ${JSON.stringify(change)}`)
        return
      }
      case 'tap': {
        const session = firstSession(obs)
        if (session === undefined) return say('the user would tap a key, but no session is shown')
        const result = mock.control.tap(session.adapterId, session.sessionId)
        return say(`the user taps ${session.sessionId}${isObject(result) && result.event !== undefined ? '' : ' (no tap event for this adapter)'}`)
      }
      case 'regenerate':
        mock.control.regenerateToken()
        return say('the app makes a new discovery token: every lease ends, the file is rewritten', { token: mock.token, leasesEnd: true })
      case 'restart': case 'move': {
        const socketPath = step.name === 'move' ? nextSocket() : undefined
        obs.action('app', 'away', 'the app quits', { away: true })
        await mock.control.restart(socketPath === undefined ? {} : { socketPath })
        return say(`the app restarts${socketPath === undefined ? '' : ' on a new socket'}: a new token, every lease gone`, {
          token: mock.token, leasesEnd: true, away: false, ...(socketPath === undefined ? {} : { socketPath })
        })
      }
      case 'end-lease':
        for (const id of ids) {
          try { mock.control.endLease(id) } catch {}
          say(`the lease of ${id} ends as if it had been silent (OT-A08)`, { leaseEnds: id })
        }
        return
      case 'api-off':
        await mock.control.setApi({ enabled: false, listening: step.listening })
        say(`the user turns the Adapter API off${step.listening ? ' (503 api_disabled)' : ' (no socket, no file)'}`, { away: true })
        await new Promise((resolve) => setTimeout(resolve, step.forMs))
        await mock.control.setApi({ enabled: true })
        obs.action('user', 'api-on', 'the user turns the Adapter API on again', { away: false })
        return
      default:
        wire.arm(step)
        return say(`the wire: ${step.name}`)
    }
  } catch (err) {
    obs.action('harness', 'step-refused', `${step.actor} ${step.name} could not be played: ${(err as Error).message}`)
  }
}

function firstSession (obs: Observer): { adapterId: string, sessionId: string } | undefined {
  for (const entry of obs.journal.entries().reverse()) {
    if (entry.kind !== 'exchange') continue
    const v = view(entry)
    if (v.ok && v.route === 'session' && v.adapterId !== undefined) {
      return { adapterId: v.adapterId, sessionId: v.sessionId! }
    }
    if (
      v.ok &&
      v.route === 'batch' &&
      isObject(v.body) &&
      Array.isArray(v.body.sessions) &&
      isObject(v.body.sessions[0])
    ) {
      return { adapterId: v.adapterId!, sessionId: String(v.body.sessions[0].id) }
    }
  }
  return undefined
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
