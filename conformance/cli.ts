import { randomInt } from 'node:crypto'
import { readFileSync, writeFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { resolveDiscoveryPath } from '../src/orbtile-mock/discovery.js'
import { UsageError } from '../src/cli/args.js'
import { ControlClient } from './control.js'
import { ORBTILE_CASES } from './orbtile/index.js'
import { OrbtileClient, orbtileTransport, type OrbtileTarget } from './orbtile/transport.js'
import { jsonIndex, junitXml, tapHeader, tapLine, tapSummary } from './report.js'
import type { CaseResult, ConformanceCase } from './case.js'
import { runCases, runPassed, selectCases, type RunOptions } from './runner.js'

export const CONFORMANCE_HELP = `Usage: orbtest conformance --target TARGET [flags]

Runs property-based conformance cases against a server that claims to speak the Orbtile Adapter Protocol v1.2
(orbtile, orbtile:PATH, unix:SOCKET targets) or the Orb bot API (http:// and https:// targets).
TAP on stdout; exit 0 when every required case passes, 1 when one fails, 2 for a usage error or a target that
cannot be reached.

Targets:
  orbtile                  the discovery file at its usual place ($ORBTILE_DISCOVERY, else under $HOME)
  orbtile:PATH             the discovery file at PATH (socketPath, basePath and token are read from it)
  unix:SOCKET              a Unix socket; give the token with --token (base path /a/v1)
  http(s)://HOST:PORT      an Orb; with --control (orbtest's fake) the suite sets up apps of its own, otherwise
                           --config FILE names the apps, community and channels to use

Flags:
  --target TARGET          what to test (required, except with --list)
  --token TOKEN            the discovery token, for unix: targets
  --config FILE            for an Orb without a control API: tokens, community, channels, webhook receiver address
                           (see conformance/orb/orb-target.example.json; "$NAME" values come from the environment)
  --control URL            the target's orbtest control API (printed by orbtest up); cases that play the user or
                           the community's members, and cases that need time (with a virtual clock), need it
  --read-only              skip the cases that change what the target holds (posts, command syncs, voice seats,
                           music); for an Orb shared with people
  --list                   list the cases (id, level, needs, title) and exit; with --target, only that suite's
  --grep PREFIX            run only cases whose id starts with PREFIX (repeatable)
  --seed N                 the seed every property starts from (default: random, printed)
  --runs N                 property runs per case (default 20)
  --path P                 fast-check's replay path of one failing case (with its --seed, --runs and --grep)
  --junit FILE             also write JUnit XML
  --json FILE              also write a JSON index (every case, the exchanges of the failures)
  --expect-failures FILE   ids expected to fail, one per line: "OT-072 reason" (# starts a comment)
  --strict                 orbtest's own decisions (OT-A…, ORB-A…) fail the run too; without them they are
                           informational
  --slow                   also run cases that take minutes in real time (lease silences, 600 s expiries, 4097
                           requests at 20/s); without it they are skipped unless the target's clock is virtual
                           (--control to a target started with --clock virtual), and cases that need time wait
                           seconds of real time at most
  --help, -h               this help
`

/** How long a case may take with --slow on a real clock. */
const SLOW_CASE_TIMEOUT_MS = 20 * 60_000
/** How long an Orb case may take on a real clock, throttles waited out (ORB-A03's windows are a minute). */
const ORB_REAL_CASE_TIMEOUT_MS = 5 * 60_000

type Values = Record<string, string | boolean | string[] | undefined>

/** `orbtest conformance …`: resolves to the exit code. */
export async function conformance (argv: readonly string[], out: NodeJS.WritableStream = process.stdout): Promise<number> {
  let values: Values
  try {
    values = parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: false,
      options: {
        target: { type: 'string' },
        token: { type: 'string' },
        config: { type: 'string' },
        control: { type: 'string' },
        'read-only': { type: 'boolean' },
        list: { type: 'boolean' },
        grep: { type: 'string', multiple: true },
        seed: { type: 'string' },
        path: { type: 'string' },
        runs: { type: 'string' },
        junit: { type: 'string' },
        json: { type: 'string' },
        'expect-failures': { type: 'string' },
        strict: { type: 'boolean' },
        slow: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' }
      }
    }).values
  } catch (err) {
    throw new UsageError((err as Error).message.split('\n')[0]!.replace(/\. To specify.*$/, ''))
  }
  if (values.help === true) {
    out.write(CONFORMANCE_HELP)
    return 0
  }
  const grep = (values.grep as string[] | undefined) ?? []
  const spec = values.target as string | undefined
  const orb = spec !== undefined && /^https?:/i.test(spec)
  if (values.list === true) {
    const { ORB_CASES } = await import('./orb/index.js')
    const suites: Array<readonly ConformanceCase<any>[]> = spec === undefined ? [ORBTILE_CASES, ORB_CASES] : orb ? [ORB_CASES] : [ORBTILE_CASES]
    if (suites.every((cases) => selectCases(cases, grep).length === 0)) throw new UsageError(`--grep ${grep.join(' ')} selects no case`)
    for (const cases of suites) {
      for (const c of selectCases(cases, grep)) out.write(`${c.id.padEnd(12)} ${c.level.padEnd(9)} ${[...(c.needs ?? []), ...(c.writes === true ? ['writes'] : [])].join(',').padEnd(14)} ${c.title}\n`)
    }
    return 0
  }
  const seed = values.seed === undefined ? randomInt(2 ** 31) : integer(values.seed as string, 'seed', -(2 ** 31), 2 ** 31 - 1)
  const runs = values.runs === undefined ? 20 : integer(values.runs as string, 'runs', 1, 100_000)
  if (spec === undefined) throw new UsageError('--target is required (orbtile, orbtile:PATH, unix:SOCKET, or an Orb\'s http(s):// URL)')
  const expectFailures = values['expect-failures'] === undefined ? new Map<string, string>() : readExpectations(values['expect-failures'] as string)
  const control = values.control === undefined ? undefined : new ControlClient(checkUrl(values.control as string))
  const common = { seed, runs, grep, expectFailures, control, values, out }
  return orb ? await runOrb(spec, common) : await runOrbtile(spec, common)
}

interface Common {
  seed: number
  runs: number
  grep: string[]
  expectFailures: Map<string, string>
  control: ControlClient | undefined
  values: Values
  out: NodeJS.WritableStream
}

async function runOrbtile (spec: string, { seed, runs, grep, expectFailures, control, values, out }: Common): Promise<number> {
  if (values.config !== undefined) throw new UsageError('--config is for Orb targets (http:// or https://)')
  const target = resolveTarget(spec, values.token as string | undefined)
  await checkReachable(target, control)
  const selected = selectCases(ORBTILE_CASES, grep)
  // A typo in --grep must not pass as a green run of nothing.
  if (selected.length === 0) throw new UsageError(`--grep ${grep.join(' ')} selects no case; see --list`)
  const about = `orbtest conformance: Orbtile Adapter Protocol v1.2 at ${target.socketPath}; seed ${seed}; ${runs} runs per property${control === undefined ? '; no control API (cases that play the user are skipped)' : `; control ${control.url}`}`
  out.write(tapHeader(selected.length, about))
  const started = performance.now()
  const virtual = control !== undefined && await control.virtualClock()
  const results = await runCases(ORBTILE_CASES, {
    ...runOptions({ seed, runs, grep, expectFailures, control, values, out }),
    transport: orbtileTransport(target, virtual ? async (seconds) => { await control.advance(seconds * 1000) } : undefined),
    // A slow case on a real clock waits up to about 12 minutes (OT-112.b).
    ...(values.slow === true && !virtual ? { caseTimeoutMs: SLOW_CASE_TIMEOUT_MS } : {})
  })
  return finishRun(results, { suite: 'orbtile', title: 'orbtest conformance: Orbtile', target: target.socketPath, seed, runs, started, expectFailures, values, out })
}

async function runOrb (spec: string, { seed, runs, grep, expectFailures, control, values, out }: Common): Promise<number> {
  if (values.token !== undefined) throw new UsageError('--token is for unix: targets; an Orb\'s tokens go in --config')
  const url = checkOrbUrl(spec)
  const { ORB_CASES } = await import('./orb/index.js')
  const { prepareOrbRun } = await import('./orb/run.js')
  const { loadTargetConfig } = await import('./orb/target.js')
  const config = values.config === undefined ? undefined : loadTargetConfig(values.config as string, url)
  if (config === undefined && control === undefined) throw new UsageError('an Orb target needs --config FILE (its apps, community and channels), or --control URL for orbtest\'s fake')
  const selected = selectCases(ORB_CASES, grep)
  if (selected.length === 0) throw new UsageError(`--grep ${grep.join(' ')} selects no case; see --list`)
  await checkOrbReachable(url, config?.full.token, control)
  const run = await prepareOrbRun({ url, ...(control === undefined ? {} : { control }), ...(config === undefined ? {} : { config }) })
  try {
    const about = `orbtest conformance: Orb bot API (orb-bots-v1) at ${url}; seed ${seed}; ${runs} runs per property${control === undefined ? '; no control API (cases that act as members are skipped)' : `; control ${control.url}${run.target.controlled === undefined ? '' : `; apps of the suite's own in ${run.target.community}`}`}${values['read-only'] === true ? '; read-only' : ''}`
    out.write(tapHeader(selected.length, about))
    const started = performance.now()
    const virtual = control !== undefined && await control.virtualClock()
    const results = await runCases(ORB_CASES, {
      ...runOptions({ seed, runs, grep, expectFailures, control, values, out }),
      transport: run.transport,
      // On a real clock a case that posts may wait out the throttles' minute windows several times.
      caseTimeoutMs: values.slow === true && !virtual ? SLOW_CASE_TIMEOUT_MS : virtual ? 60_000 : ORB_REAL_CASE_TIMEOUT_MS
    })
    return finishRun(results, { suite: 'orb', title: 'orbtest conformance: Orb', target: url, seed, runs, started, expectFailures, values, out })
  } finally {
    await run.close()
  }
}

/** What both suites' runs take from the command line. */
function runOptions ({ seed, runs, grep, expectFailures, control, values, out }: Common): Omit<RunOptions<never>, 'transport'> {
  return {
    control,
    seed,
    runs,
    grep,
    strict: values.strict === true,
    slow: values.slow === true,
    readOnly: values['read-only'] === true,
    expectFailures,
    ...(values.path === undefined ? {} : { path: values.path as string }),
    onResult: (result, index) => out.write(tapLine(result, index + 1, runs))
  }
}

function finishRun (results: CaseResult[], o: { suite: string, title: string, target: string, seed: number, runs: number, started: number, expectFailures: Map<string, string>, values: Values, out: NodeJS.WritableStream }): number {
  const { out, expectFailures, values } = o
  for (const id of expectFailures.keys()) {
    if (!results.some((r) => r.id === id || r.id.split('.')[0] === id)) out.write(`# --expect-failures names ${id}, which this run has no case for\n`)
  }
  for (const r of results) if (r.verdict === 'pass' && expectFailures.has(r.id)) out.write(`# ${r.id} was expected to fail and passed: take it out of the expected-failures file\n`)
  const ms = performance.now() - o.started
  const requests = results.reduce((n, r) => n + r.exchanges.length, 0)
  out.write(tapSummary(results, ms, requests))
  if (values.junit !== undefined) writeFileSync(values.junit as string, junitXml(results, o.title, ms))
  if (values.json !== undefined) writeFileSync(values.json as string, jsonIndex(results, { suite: o.suite, seed: o.seed, runs: o.runs, target: o.target, ms: Math.round(ms), requests }))
  return runPassed(results) ? 0 : 1
}

/** `orbtile`, `orbtile:PATH` or `unix:SOCKET` (with --token). */
export function resolveTarget (spec: string, token: string | undefined): OrbtileTarget {
  if (spec === 'orbtile' || spec.startsWith('orbtile:')) {
    const discovery = resolveDiscoveryPath(spec === 'orbtile' ? undefined : spec.slice('orbtile:'.length))
    let parsed: { socketPath?: unknown, basePath?: unknown, token?: unknown }
    try {
      parsed = JSON.parse(readFileSync(discovery, 'utf8'))
    } catch (err) {
      throw new TargetError(`cannot read the discovery file ${discovery}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`)
    }
    if (typeof parsed.socketPath !== 'string' || typeof parsed.token !== 'string') throw new TargetError(`${discovery} has no socketPath and token`)
    return { socketPath: parsed.socketPath, basePath: typeof parsed.basePath === 'string' ? parsed.basePath : '/a/v1', token: parsed.token, discovery }
  }
  if (spec.startsWith('unix:')) {
    if (token === undefined || token === '') throw new UsageError('a unix: target needs --token')
    return { socketPath: spec.slice('unix:'.length), basePath: '/a/v1', token }
  }
  throw new UsageError(`--target must be orbtile, orbtile:PATH or unix:SOCKET, not ${JSON.stringify(spec)}`)
}

/** A target that cannot be reached or used: exit 2 with one line. */
export class TargetError extends Error {
  constructor (message: string) {
    super(message)
    this.name = 'TargetError'
  }
}

// The target answers /info, accepts the token, and has room for the suite's adapters (OT-028: at most 8 live).
async function checkReachable (target: OrbtileTarget, control: ControlClient | undefined): Promise<void> {
  const client = new OrbtileClient(target)
  try {
    const info = await client.request({ path: '/info', timeoutMs: 5000 }).catch((err: Error) => {
      throw new TargetError(`the target at ${target.socketPath} cannot be reached: ${(err as NodeJS.ErrnoException).code ?? err.message}`)
    })
    if (info.status === 401) throw new TargetError('the target refuses the token (401); is the discovery file current?')
    if (info.status !== 200) throw new TargetError(`the target answers GET ${target.basePath}/info with ${info.status}, not 200`)
    const probe = 'org.orbtest.conformance.probe'
    const reg = await client.request({ method: 'PUT', path: `/adapters/${probe}`, body: { name: 'orbtest conformance probe', palette: { baseHue: 200 } } })
    if (reg.status === 409 && reg.json?.error?.code === 'limit_exceeded') throw new TargetError('the target already holds 8 adapters; the suite needs room for its own (unregister some and retry)')
    if (reg.status === 200) {
      const done = await client.request({ method: 'DELETE', path: `/adapters/${probe}`, headers: { 'x-orbtile-adapter-token': reg.json.adapterToken } })
      // orbtest's fake forgets the probe too; a control API that cannot be reached is reported below.
      if (done.status === 204 && control !== undefined) await control.forget(probe).catch(() => undefined)
    }
  } finally {
    client.close()
  }
  if (control !== undefined) {
    const clock = await control.call('GET', '/control/clock').catch((err: Error) => {
      throw new TargetError(`the control API at ${control.url} cannot be reached: ${(err as NodeJS.ErrnoException).code ?? err.message}`)
    })
    if (clock.status !== 200) throw new TargetError(`${control.url} does not look like orbtest's control API (GET /control/clock answered ${clock.status})`)
  }
}

// The Orb answers its public directory, and the config's token is accepted (a 401 says the config is stale).
async function checkOrbReachable (url: string, token: string | undefined, control: ControlClient | undefined): Promise<void> {
  const get = async (path: string, headers: Record<string, string> = {}): Promise<number> => {
    try {
      const res = await fetch(`${url}${path}`, { headers, signal: AbortSignal.timeout(5000) })
      await res.arrayBuffer()
      return res.status
    } catch (err) {
      // fetch wraps the socket's error, and for a name with several addresses an AggregateError of them.
      const cause = (err as { cause?: { code?: string, errors?: Array<{ code?: string }> } }).cause
      throw new TargetError(`the Orb at ${url} cannot be reached: ${cause?.code ?? cause?.errors?.[0]?.code ?? (cause as { message?: string } | undefined)?.message ?? (err as Error).message}`)
    }
  }
  const directory = await get('/api/orb/directory')
  if (directory !== 200 && directory !== 429) throw new TargetError(`${url} answers GET /api/orb/directory with ${directory}, not 200: is it an Orb?`)
  if (token !== undefined) {
    const app = await get('/api/bot/v1/app', { authorization: `Bearer ${token}` })
    if (app === 401) throw new TargetError('the Orb refuses the config\'s full token (401); is it current?')
  }
  if (control !== undefined) {
    const clock = await control.call('GET', '/control/clock').catch((err: Error) => {
      throw new TargetError(`the control API at ${control.url} cannot be reached: ${(err as NodeJS.ErrnoException).code ?? err.message}`)
    })
    if (clock.status !== 200) throw new TargetError(`${control.url} does not look like orbtest's control API (GET /control/clock answered ${clock.status})`)
    const state = await control.call('GET', '/control/orb/state')
    if (state.status !== 200) throw new TargetError(`${control.url} runs no fake Orb (GET /control/orb/state answered ${state.status})`)
  }
}

function checkOrbUrl (raw: string): string {
  try {
    const url = new URL(raw)
    if (url.pathname !== '/' || url.search !== '' || url.hash !== '') throw new Error('not an origin')
    return url.origin
  } catch {
    throw new UsageError(`an Orb target is the server's origin, for example http://127.0.0.1:8787, not ${JSON.stringify(raw)}`)
  }
}

function readExpectations (file: string): Map<string, string> {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (err) {
    throw new UsageError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`)
  }
  const map = new Map<string, string>()
  for (const [n, raw] of text.split('\n').entries()) {
    const line = raw.replace(/#.*$/, '').trim()
    if (line === '') continue
    const match = /^((?:OT|ORB)-A?\d{2,3}(?:\.[a-z0-9]+)?)\s+(\S.*)$/.exec(line)
    if (match === null) throw new UsageError(`${file}:${n + 1}: write "OT-072 the reason it fails" (or an ORB- id)`)
    map.set(match[1]!, match[2]!)
  }
  return map
}

function integer (raw: string, name: string, min: number, max: number): number {
  if (!/^-?\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) throw new UsageError(`--${name} must be an integer from ${min} to ${max}, not ${JSON.stringify(raw)}`)
  return Number(raw)
}

function checkUrl (raw: string): string {
  try {
    const url = new URL(raw)
    if (url.protocol !== 'http:') throw new Error('not http')
    // `orbtest up` prints the control API as …/control; the client adds that part itself.
    return raw.replace(/\/+$/, '').replace(/\/control$/, '')
  } catch {
    throw new UsageError(`--control must be an http:// URL, not ${JSON.stringify(raw)}`)
  }
}
