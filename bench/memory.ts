// The memory rows and the suites row:
// - idle RSS of `orbtest up` against three bare fastify listeners (bench/baseline-up-server.ts), alternated;
// - one `orbtest up --clock virtual` that both server suites run against at their default runs (each timed from
//   spawn to exit: the Orbtile suite and the Orb suite), then POST /control/reset: its RSS before the runs, after
//   them, and after the reset.
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { call, CLI, here, spawnServer, STARTS } from './harness.js'
import { spread, type Spread } from './startup-up.js'

const BASELINE_UP = join(here, 'baseline-up-server.js')
/** How long a process is left alone after its ready file before its RSS is read (start-up garbage settles). */
const SETTLE_MS = Number(process.env.BENCH_SETTLE_MS ?? 1000)
/** How long the fake is left quiet after a reset before its RSS is read again (BENCH_QUIET_MS). */
const QUIET_MS = Number(process.env.BENCH_QUIET_MS ?? 8000)
/** The suites' seed: every round runs the same cases with the same values. */
const SEED = 20261202
/** Rounds of both suites against one fake (BENCH_SUITE_ROUNDS): later ones show whether a reset leaves any behind. */
const SUITE_ROUNDS = Number(process.env.BENCH_SUITE_ROUNDS ?? 3)

interface SuiteRun { seconds: Spread, code: number | null, summary: string }

export interface MemoryRows {
  /** Idle RSS in MiB: `orbtest up` and the three bare listeners. */
  idle: { up: Spread, baseline: Spread, ratio: number }
  /**
   * One fake that both suites run against, SUITE_ROUNDS times, each round ending with a reset: its RSS in MiB before
   * the first round, after the first round's suites, SETTLE_MS after each round's reset (`resets`) and QUIET_MS
   * after it (`quiet`); each suite's seconds (spawn to exit) over the
   * rounds, and the first round's verdict.
   */
  suites: {
    before: number
    after: number
    resets: number[]
    quiet: number[]
    orbtile: SuiteRun
    orb: SuiteRun
  }
}

/** A process's resident set in MiB, from /proc (NaN where there is none). */
export function rssMiB (pid: number | undefined): number {
  try {
    const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]
    return kb === undefined ? Number.NaN : Number(kb) / 1024
  } catch {
    return Number.NaN
  }
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

async function started (args: readonly string[], ready: string): Promise<ChildProcess> {
  const child = spawnServer(args, 'ignore')
  while (!existsSync(ready)) {
    if (child.exitCode !== null) throw new Error(`${args[0]} exited with ${child.exitCode}`)
    await sleep(5)
  }
  return child
}

async function stopped (child: ChildProcess): Promise<void> {
  const exited = new Promise((resolve) => child.once('exit', resolve))
  child.kill('SIGTERM')
  await exited
}

const upArgs = (dir: string, name: string, extra: readonly string[] = []): string[] => [
  CLI, 'up', '--socket', join(dir, `${name}.sock`), '--discovery', join(dir, `${name}.json`), '--orb-port', '0',
  '--control-port', '0', '--ready-file', join(dir, `${name}.ready`), '--log-level', 'silent', ...extra
]

async function idleRows (dir: string): Promise<MemoryRows['idle']> {
  const rss: { up: number[], baseline: number[] } = { up: [], baseline: [] }
  for (let i = 0; i < Math.max(3, Math.ceil(STARTS / 3)); i++) {
    const b = join(dir, `mem-b-${i}.ready`)
    const baseline = await started([BASELINE_UP, '--socket', join(dir, `mem-b-${i}.sock`), '--ready-file', b], b)
    await sleep(SETTLE_MS)
    rss.baseline.push(rssMiB(baseline.pid))
    await stopped(baseline)
    const up = await started(upArgs(dir, `mem-u-${i}`), join(dir, `mem-u-${i}.ready`))
    await sleep(SETTLE_MS)
    rss.up.push(rssMiB(up.pid))
    await stopped(up)
  }
  const up = spread(rss.up)
  const baseline = spread(rss.baseline)
  return { up, baseline, ratio: up.median / baseline.median }
}

/** Runs a CLI command to its end (not pinned: it is the load), and says how long it took and how it ended. */
function timed (args: readonly string[]): Promise<{ seconds: number, code: number | null, summary: string }> {
  const start = process.hrtime.bigint()
  const child = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'pipe', 'inherit'] })
  let out = ''
  child.stdout.on('data', (chunk: Buffer) => { out += chunk.toString('utf8') })
  return new Promise((resolve) => child.on('exit', (code) => {
    const summary = out.trimEnd().split('\n').filter((line) => line.startsWith('# ')).slice(-2).join('; ')
    resolve({ seconds: Number(process.hrtime.bigint() - start) / 1e9, code, summary })
  }))
}

async function suiteRows (dir: string): Promise<MemoryRows['suites']> {
  const child = await started(upArgs(dir, 'suites', ['--clock', 'virtual']), join(dir, 'suites.ready'))
  try {
    const ready = JSON.parse(readFileSync(join(dir, 'suites.ready'), 'utf8')) as
      { orbtile: { discovery: string }, orb: { url: string }, control: { url: string } }
    await sleep(SETTLE_MS)
    const before = rssMiB(child.pid)
    const common = ['--control', ready.control.url, '--seed', String(SEED), '--reporter', 'tap']
    const runs: { orbtile: Awaited<ReturnType<typeof timed>>[], orb: Awaited<ReturnType<typeof timed>>[] } =
      { orbtile: [], orb: [] }
    let after = Number.NaN
    const resets: number[] = []
    const quiet: number[] = []
    for (let round = 0; round < SUITE_ROUNDS; round++) {
      runs.orbtile.push(await timed(['conformance', '--target', `orbtile:${ready.orbtile.discovery}`, ...common]))
      runs.orb.push(await timed(['conformance', '--target', ready.orb.url, ...common]))
      if (round === 0) after = rssMiB(child.pid)
      const reset = await call({ url: ready.control.url, method: 'POST', path: '/control/reset', body: {} })
      if (reset.status !== 200) throw new Error('POST /control/reset failed')
      await sleep(SETTLE_MS)
      resets.push(rssMiB(child.pid))
      await sleep(Math.max(0, QUIET_MS - SETTLE_MS))
      quiet.push(rssMiB(child.pid))
    }
    const suite = (r: typeof runs.orb): SuiteRun =>
      ({ seconds: spread(r.map((x) => x.seconds)), code: r[0]!.code, summary: r[0]!.summary })
    return { before, after, resets, quiet, orbtile: suite(runs.orbtile), orb: suite(runs.orb) }
  } finally {
    await stopped(child)
  }
}

export async function memoryRows (dir: string): Promise<MemoryRows> {
  return { idle: await idleRows(dir), suites: await suiteRows(dir) }
}

/** The rows as the report prints them. */
export function memoryLines (m: MemoryRows): string[] {
  const mib = (s: Spread): string => `${s.median.toFixed(1)} MiB (${s.min.toFixed(1)}–${s.max.toFixed(1)})`
  const { suites: s } = m
  const change = (x: number): string => `${x >= s.before ? '+' : ''}${(((x - s.before) / s.before) * 100).toFixed(0)}%`
  const suite = (r: SuiteRun): string =>
    `${r.seconds.median.toFixed(1)} s (${r.seconds.min.toFixed(1)}–${r.seconds.max.toFixed(1)} over ${SUITE_ROUNDS} rounds; first: exit ${r.code}, ${r.summary.replaceAll('# ', '')})`
  const first = s.quiet[0]!
  const last = s.quiet.at(-1)!
  return [
    `${'idle RSS, orbtest up'.padEnd(26)}orbtest up ${mib(m.idle.up)}   three bare fastify listeners ${mib(m.idle.baseline)}   ratio ${m.idle.ratio.toFixed(2)}x  (goal <= 1.5x)`,
    `${'RSS over the suites'.padEnd(26)}before ${s.before.toFixed(1)} MiB, after both server suites ${s.after.toFixed(1)} MiB (${change(s.after)}), ${(SETTLE_MS / 1000).toFixed(0)} s after POST /control/reset ${s.resets[0]!.toFixed(1)} MiB (${change(s.resets[0]!)}), ${(QUIET_MS / 1000).toFixed(0)} s after it ${first.toFixed(1)} MiB (${change(first)}); after ${SUITE_ROUNDS} rounds with a reset each ${last.toFixed(1)} MiB (${last >= first ? '+' : ''}${(((last - first) / first) * 100).toFixed(1)}% over the first reset)`,
    `${'Orbtile suite, virtual'.padEnd(26)}${suite(s.orbtile)}  (goal < 6 s, spawn to exit)`,
    `${'Orb suite, virtual'.padEnd(26)}${suite(s.orb)}  (goal < 4 s, spawn to exit)`
  ]
}
