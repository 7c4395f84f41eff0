import { randomInt } from 'node:crypto'
import { readFileSync, writeFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { resolveDiscoveryPath } from '../src/orbtile-mock/discovery.js'
import { UsageError } from '../src/cli/args.js'
import { ControlClient } from './control.js'
import { ORBTILE_CASES } from './orbtile/index.js'
import { OrbtileClient, type OrbtileTarget } from './orbtile/transport.js'
import { jsonIndex, junitXml, tapHeader, tapLine, tapSummary } from './report.js'
import { runCases, runPassed, selectCases } from './runner.js'

export const CONFORMANCE_HELP = `Usage: orbtest conformance --target TARGET [flags]

Runs property-based conformance cases against a server that claims to speak the Orbtile Adapter Protocol v1.2.
TAP on stdout; exit 0 when every required case passes, 1 when one fails, 2 for a usage error or a target that
cannot be reached.

Targets:
  orbtile                  the discovery file at its usual place ($ORBTILE_DISCOVERY, else under $HOME)
  orbtile:PATH             the discovery file at PATH (socketPath, basePath and token are read from it)
  unix:SOCKET              a Unix socket; give the token with --token (base path /a/v1)

Flags:
  --target TARGET          what to test (required, except with --list)
  --token TOKEN            the discovery token, for unix: targets
  --control URL            the target's orbtest control API (printed by orbtest up); cases that play the user, and
                           cases that need time (with a virtual clock), need it
  --list                   list the cases (id, level, needs, title) and exit
  --grep PREFIX            run only cases whose id starts with PREFIX (repeatable)
  --seed N                 the seed every property starts from (default: random, printed)
  --runs N                 property runs per case (default 20)
  --path P                 fast-check's replay path of one failing case (with its --seed, --runs and --grep)
  --junit FILE             also write JUnit XML
  --json FILE              also write a JSON index (every case, the exchanges of the failures)
  --expect-failures FILE   ids expected to fail, one per line: "OT-072 reason" (# starts a comment)
  --strict                 orbtest's own decisions (OT-A…) fail the run too; without it they are informational
  --slow                   also run cases that take minutes in real time (lease silences, 600 s expiries, 4097
                           requests at 20/s); without it they are skipped unless the target's clock is virtual
                           (--control to a target started with --clock virtual), and cases that need time wait
                           seconds of real time at most
  --help, -h               this help
`

/** How long a case may take with --slow on a real clock. */
const SLOW_CASE_TIMEOUT_MS = 20 * 60_000

/** `orbtest conformance …`: resolves to the exit code. */
export async function conformance (argv: readonly string[], out: NodeJS.WritableStream = process.stdout): Promise<number> {
  let values: Record<string, string | boolean | string[] | undefined>
  try {
    values = parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: false,
      options: {
        target: { type: 'string' },
        token: { type: 'string' },
        control: { type: 'string' },
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
  if (values.list === true) {
    for (const c of selectCases(ORBTILE_CASES, grep)) out.write(`${c.id.padEnd(12)} ${c.level.padEnd(9)} ${(c.needs ?? []).join(',').padEnd(12)} ${c.title}\n`)
    return 0
  }
  const seed = values.seed === undefined ? randomInt(2 ** 31) : integer(values.seed as string, 'seed', -(2 ** 31), 2 ** 31 - 1)
  const runs = values.runs === undefined ? 20 : integer(values.runs as string, 'runs', 1, 100_000)
  if (values.target === undefined) throw new UsageError('--target is required (orbtile, orbtile:PATH or unix:SOCKET)')
  const target = resolveTarget(values.target as string, values.token as string | undefined)
  const expectFailures = values['expect-failures'] === undefined ? new Map<string, string>() : readExpectations(values['expect-failures'] as string)
  const control = values.control === undefined ? undefined : new ControlClient(checkUrl(values.control as string))
  await checkReachable(target, control)

  const selected = selectCases(ORBTILE_CASES, grep)
  // A typo in --grep must not pass as a green run of nothing.
  if (selected.length === 0) throw new UsageError(`--grep ${grep.join(' ')} selects no case; see --list`)
  const about = `orbtest conformance: Orbtile Adapter Protocol v1.2 at ${target.socketPath}; seed ${seed}; ${runs} runs per property${control === undefined ? '; no control API (cases that play the user are skipped)' : `; control ${control.url}`}`
  out.write(tapHeader(selected.length, about))
  const started = performance.now()
  const virtual = control !== undefined && await control.virtualClock()
  const results = await runCases(ORBTILE_CASES, {
    target,
    control,
    seed,
    runs,
    grep,
    strict: values.strict === true,
    slow: values.slow === true,
    expectFailures,
    waitOut: virtual ? async (seconds) => { await control.advance(seconds * 1000) } : undefined,
    // A slow case on a real clock waits up to about 12 minutes (OT-112.b).
    ...(values.slow === true && !virtual ? { caseTimeoutMs: SLOW_CASE_TIMEOUT_MS } : {}),
    ...(values.path === undefined ? {} : { path: values.path as string }),
    onResult: (result, index) => out.write(tapLine(result, index + 1, runs))
  })
  for (const id of expectFailures.keys()) {
    if (!results.some((r) => r.id === id || r.id.split('.')[0] === id)) out.write(`# --expect-failures names ${id}, which this run has no case for\n`)
  }
  for (const r of results) if (r.verdict === 'pass' && expectFailures.has(r.id)) out.write(`# ${r.id} was expected to fail and passed: take it out of the expected-failures file\n`)
  const ms = performance.now() - started
  const requests = results.reduce((n, r) => n + r.exchanges.length, 0)
  out.write(tapSummary(results, ms, requests))
  if (values.junit !== undefined) writeFileSync(values.junit as string, junitXml(results, 'orbtest conformance: Orbtile', ms))
  if (values.json !== undefined) writeFileSync(values.json as string, jsonIndex(results, { suite: 'orbtile', seed, runs, target: target.socketPath, ms: Math.round(ms), requests }))
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
    const match = /^(OT-A?\d{2,3}(?:\.[a-z0-9]+)?)\s+(\S.*)$/.exec(line)
    if (match === null) throw new UsageError(`${file}:${n + 1}: write "OT-072 the reason it fails"`)
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
