// The bench's harness: where the servers are, how they are spawned (pinned apart from the load generator), and how
// each is loaded and measured. bench/index.ts runs the rows; bench/dashboard.ts and the others add theirs.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { request } from 'node:http'
import { availableParallelism } from 'node:os'
import { delimiter, dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import autocannon from 'autocannon'

export const here = dirname(fileURLToPath(import.meta.url))
export const root = join(here, '..', '..')
export const CLI = join(root, 'dist', 'cli', 'orbtest.js')
export const BASELINE = join(here, 'baseline-server.js')
export const BASELINE_ORB = join(here, 'baseline-orb-server.js')
export const DEMO_TOKEN = 'orb_demo_0000000000000000000000000000000000'
export const STARTS = Number(process.env.BENCH_STARTS ?? 9)
export const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
export const SECONDS = Number(process.env.BENCH_SECONDS ?? 3)
export const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10)
export const WAKEUPS = Number(process.env.BENCH_WAKEUPS ?? 300)
export const ADAPTER = 'com.bench.agent'
/** BENCH_PROF=DIR: each server started writes a CPU profile into DIR (outside the tree). */
export const PROFILE = process.env.BENCH_PROF === undefined
  ? []
  : ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROF}`]

/**
 * BENCH_PIN=0 turns it off: with two CPUs or more and `taskset` on the machine, every server runs on the last CPU
 * and this process (the load generator) on the others, so that the two never take each other's core and a round's
 * figures do not hang on where the scheduler put them.
 */
export const CPUS = availableParallelism()
export const PIN = process.env.BENCH_PIN !== '0' && CPUS >= 2 && spawnSync('taskset', ['-V']).status === 0
export const SERVER_CPU = String(CPUS - 1)
if (PIN) spawnSync('taskset', ['-a', '-p', '-c', `0-${CPUS - 2}`, String(process.pid)], { stdio: 'ignore' })

/**
 * Spawns a server process (pinned to its CPU when PIN). orbtest's CLI is started as its users start it, as a
 * command, except under BENCH_PROF, where Node itself must take the profiler's flags (NODE_OPTIONS refuses
 * `--cpu-prof`). The baselines are plain Node.
 */
export function spawnServer (args: readonly string[], stdio: 'inherit' | 'ignore' = 'inherit'): ChildProcess {
  const cli = args[0] === CLI
  const run = cli && PROFILE.length === 0 ? args : [process.execPath, ...PROFILE, ...args]
  const argv = PIN ? ['taskset', '-c', SERVER_CPU, ...run] : run
  // The command's `#!/usr/bin/env node` finds Node on PATH: the one running the bench first, as for the baselines.
  const env = cli ? { ...process.env, PATH: `${dirname(process.execPath)}${delimiter}${process.env.PATH ?? ''}` } : process.env
  const child = spawn(argv[0]!, argv.slice(1), { env, stdio: ['ignore', 'ignore', stdio] })
  running.add(child)
  child.once('exit', () => running.delete(child))
  return child
}

/**
 * The servers still running. When the bench ends on an error (a server that exits before its ready file throws), it
 * stops them too: one left behind would hold the bench's stderr open, and whatever reads it would wait.
 */
const running = new Set<ChildProcess>()
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL')
})

/** A pair's two sides, in the order a round starts them. */
export const KINDS = ['baseline', 'orbtest'] as const
export type Kind = (typeof KINDS)[number]

export interface Server {
  kind: Kind
  child: ChildProcess
  socket: string
  token: string | undefined
  control: string | undefined
  readyMs: number
}

export async function launch (kind: Kind, dir: string, n: number, extra: readonly string[] = []): Promise<Server> {
  const socket = join(dir, `${kind}-${n}.sock`)
  const ready = join(dir, `${kind}-${n}.ready`)
  const discovery = join(dir, `${kind}-${n}.json`)
  const args =
    kind === 'orbtest'
      ? [
          CLI,
          'orbtile',
          '--socket',
          socket,
          '--discovery',
          discovery,
          '--control-port',
          '0',
          '--ready-file',
          ready,
          '--rate-limit',
          'off',
          '--log-level',
          'silent',
          '--auto-allow',
          ...extra
        ]
      : [BASELINE, '--socket', socket, '--ready-file', ready]
  const started = process.hrtime.bigint()
  const child = spawnServer(args)
  while (!existsSync(ready)) {
    if (child.exitCode !== null) throw new Error(`${kind} exited with ${child.exitCode}`)
    await new Promise((resolve) => setTimeout(resolve, 1))
  }
  const readyMs = Number(process.hrtime.bigint() - started) / 1e6
  if (kind === 'baseline') return { kind, child, socket, token: undefined, control: undefined, readyMs }
  const { token } = JSON.parse(readFileSync(discovery, 'utf8')) as { token: string }
  const { control } = JSON.parse(readFileSync(ready, 'utf8')) as { control: { url: string } }
  return { kind, child, socket, token, control: control.url, readyMs }
}

export async function stop (server: Server): Promise<void> {
  const exited = new Promise((resolve) => server.child.once('exit', resolve))
  server.child.kill('SIGTERM')
  await exited
}

export function call (options: {
  socketPath?: string
  url?: string
  method: string
  path: string
  headers?: Record<string, string>
  body?: unknown
}): Promise<{ status: number; json: any }> {
  const payload = options.body === undefined ? undefined : JSON.stringify(options.body)
  const target =
    options.url === undefined
      ? { socketPath: options.socketPath }
      : { host: new URL(options.url).hostname, port: new URL(options.url).port }
  return new Promise((resolve, reject) => {
    const req = request(
      {
        ...target,
        method: options.method,
        path: options.path,
        headers: {
          host: options.url === undefined ? 'localhost' : new URL(options.url).host,
          ...(payload === undefined
            ? {}
            : { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(payload)) }),
          ...options.headers
        }
      },
      (res) => {
        let text = ''
        res.on('data', (chunk) => {
          text += chunk
        })
        res.on('end', () => resolve({ status: res.statusCode ?? 0, json: text === '' ? undefined : JSON.parse(text) }))
      }
    )
    req.on('error', reject)
    req.end(payload)
  })
}

// Registers the bench adapter (auto-allowed, with the tap capability) and opens one session; returns its headers.
export async function prepareAdapter (server: Server): Promise<Record<string, string>> {
  const auth = { authorization: `Bearer ${server.token}` }
  const reg = await call({ socketPath: server.socket, method: 'PUT', path: `/a/v1/adapters/${ADAPTER}`, headers: auth, body: { name: 'Bench', palette: { baseHue: 250 }, capabilities: ['tap'] } })
  const headers = { ...auth, 'x-orbtile-adapter-token': reg.json.adapterToken as string }
  await call({ socketPath: server.socket, method: 'POST', path: `/a/v1/adapters/${ADAPTER}/sessions/s1`, headers, body: { title: 'Bench', activity: 'thinking', ttlSeconds: 3600 } })
  return headers
}

export const median = (xs: number[]): number => percentile(xs, 50)
export function percentile (xs: number[], p: number): number {
  const sorted = [...xs].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!
}

export interface Load {
  rps: number
  /** Requests answered during the measured run. */
  requests: number
  p50: number
  p99: number
  non2xx: number
  /** The server process's CPU time per request during the measured run, in µs (Linux only: read from /proc). */
  cpuUs?: number
}

/** A process's user + system CPU time in ms, from /proc (undefined where there is none). */
export function cpuMs (pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
    return (Number(fields[11]) + Number(fields[12])) * 10 // clock ticks of 10 ms (USER_HZ 100)
  } catch {
    return undefined
  }
}

export async function load (
  server: Server,
  method: 'GET' | 'POST',
  path: string,
  headers: Record<string, string>,
  body?: unknown,
  timing: { warm: number, seconds: number } = { warm: 1, seconds: SECONDS }
): Promise<Load> {
  const run = (duration: number) =>
    autocannon({
      url: `http://localhost${path}`,
      socketPath: server.socket,
      connections: CONNECTIONS,
      duration,
      method,
      headers: { host: 'localhost', ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
  if (timing.warm > 0) await run(timing.warm) // warm-up, not counted
  if (timing.seconds === 0) return { rps: 0, requests: 0, p50: 0, p99: 0, non2xx: 0 }
  const before = cpuMs(server.child.pid)
  const result = await run(timing.seconds)
  const after = cpuMs(server.child.pid)
  const cpuUs = before === undefined || after === undefined || result.requests.total === 0
    ? undefined
    : ((after - before) * 1000) / result.requests.total
  return {
    rps: result.requests.average,
    requests: result.requests.total,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    ...(cpuUs === undefined ? {} : { cpuUs })
  }
}

/** The round with the median throughput. */
export function medianRound (rounds: Load[]): Load {
  return [...rounds].sort((a, b) => a.rps - b.rps)[Math.floor((rounds.length - 1) / 2)]!
}

/** One route's alternating rounds: each side's median round and the spread of the rounds' own ratios. */
export interface Paired {
  orbtest: Load
  baseline: Load
  /** orbtest/baseline throughput of each round (the two measured back to back): lowest, median, highest. */
  ratio: { min: number, median: number, max: number }
  /** Server CPU per request (µs), the median over the rounds of each side, where /proc tells. */
  cpuUs?: { orbtest: number, baseline: number }
}

/** `ratios`: each round's own ratio, where a round measured more than one pair (else each pair's rps). */
export function paired (
  rounds: Record<Kind, Load[]>,
  ratios = rounds.orbtest.map((l, i) => l.rps / rounds.baseline[i]!.rps)
): Paired {
  const cpu = (kind: Kind): number[] => rounds[kind].flatMap((l) => l.cpuUs === undefined ? [] : [l.cpuUs])
  return {
    orbtest: medianRound(rounds.orbtest),
    baseline: medianRound(rounds.baseline),
    ratio: { min: Math.min(...ratios), median: median(ratios), max: Math.max(...ratios) },
    ...(cpu('orbtest').length === 0 || cpu('baseline').length === 0
      ? {}
      : { cpuUs: { orbtest: median(cpu('orbtest')), baseline: median(cpu('baseline')) } })
  }
}

/** One side's slices of a round as one Load: the median slice's throughput, the whole run's requests and CPU. */
function mergeSlices (slices: Load[]): Load {
  const requests = slices.reduce((n, l) => n + l.requests, 0)
  const cpu = slices.every((l) => l.cpuUs !== undefined)
    ? slices.reduce((n, l) => n + l.cpuUs! * l.requests, 0) / Math.max(1, requests)
    : undefined
  return {
    rps: median(slices.map((l) => l.rps)),
    requests,
    p50: median(slices.map((l) => l.p50)),
    p99: Math.max(...slices.map((l) => l.p99)),
    non2xx: slices.reduce((n, l) => n + l.non2xx, 0),
    ...(cpu === undefined ? {} : { cpuUs: cpu })
  }
}

/** Loads one side (`kind`) of a round's pair for `seconds`. */
export type SliceRun = (kind: Kind, seconds: number) => Promise<Load>

/** One round of one route: each side's slices as one Load, and the median of the slices' own ratios. */
export interface SlicedRound { loads: Record<Kind, Load>, ratio: number }

/**
 * One round of one route on a pair of servers side by side: a second of warm-up each, then `slices` slices of
 * `seconds` each, the two in turn and the order turning, so that a slice's pair shares the machine's state of the
 * moment.
 */
export async function slicedRound (run: SliceRun, slices: number, seconds: number): Promise<SlicedRound> {
  for (const kind of KINDS) await run(kind, 1) // warm-up, not counted
  const got: Record<Kind, Load[]> = { orbtest: [], baseline: [] }
  for (let slice = 0; slice < slices; slice++) {
    for (const kind of slice % 2 === 0 ? KINDS : [...KINDS].reverse()) got[kind].push(await run(kind, seconds))
  }
  return {
    loads: { baseline: mergeSlices(got.baseline), orbtest: mergeSlices(got.orbtest) },
    ratio: median(got.orbtest.map((l, i) => l.rps / got.baseline[i]!.rps))
  }
}

/** A route's rounds as its row. */
export const pairedRounds = (rounds: SlicedRound[]): Paired => paired(
  { orbtest: rounds.map((r) => r.loads.orbtest), baseline: rounds.map((r) => r.loads.baseline) },
  rounds.map((r) => r.ratio)
)

export interface OrbServer {
  child: ChildProcess
  url: string
  /** The control server's URL (orbtest's fake only). */
  control?: string
}

/** A fake Orb (throttles off; `extra`: more of its flags) or the bare Orb baseline, on a free port, ready. */
export async function launchOrb (
  kind: Kind, dir: string, n: number, extra: readonly string[] = []
): Promise<OrbServer> {
  const ready = join(dir, `orb-${kind}-${n}.ready`)
  const args =
    kind === 'orbtest'
      ? [
          CLI,
          'orb',
          ...extra,
          '--orb-port',
          '0',
          '--control-port',
          '0',
          '--ready-file',
          ready,
          '--rate-limit',
          'off',
          '--log-level',
          'silent'
        ]
      : [BASELINE_ORB, '--port', '0', '--ready-file', ready]
  const child = spawnServer(args)
  while (!existsSync(ready)) {
    if (child.exitCode !== null) throw new Error(`${kind} orb exited with ${child.exitCode}`)
    await new Promise((resolve) => setTimeout(resolve, 1))
  }
  type Ready = { orb: { url: string }, control?: { url: string } }
  const { orb, control } = JSON.parse(readFileSync(ready, 'utf8')) as Ready
  return { child, url: orb.url, ...(control === undefined ? {} : { control: control.url }) }
}

/** autocannon against an Orb at `url`, with the demo app's token: ROUNDS' worth of one route, its CPU too. */
export async function loadHttp (url: string, method: 'GET' | 'POST', pid: number | undefined, body?: unknown,
  timing = { warm: 1, seconds: SECONDS }): Promise<Load> {
  const run = (duration: number) =>
    autocannon({
      url,
      connections: CONNECTIONS,
      duration,
      method,
      headers: {
        authorization: `Bearer ${DEMO_TOKEN}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' })
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
  if (timing.warm > 0) await run(timing.warm) // warm-up, not counted
  const before = cpuMs(pid)
  const result = await run(timing.seconds)
  const after = cpuMs(pid)
  const { requests, latency } = result
  const cpuUs = before === undefined || after === undefined || requests.total === 0
    ? undefined
    : ((after - before) * 1000) / requests.total
  return {
    rps: requests.average,
    requests: requests.total,
    p50: latency.p50,
    p99: latency.p99,
    non2xx: result.non2xx,
    ...(cpuUs === undefined ? {} : { cpuUs })
  }
}
