/**
 * The trust campaign: every clean client over seeds, alone or beside a CPU hog at the same priority, and every
 * reference fault. It counts what a conformance suite is worth: false failures (a clean client failed: must be 0),
 * inconclusive verdicts, and each fault's detection rate. Each run is the real CLI on real client processes.
 *
 *   npm run trust -- --seeds 5 [--load] [--long] [--jobs N] [--scenarios N] [--client NAME] [--json FILE]
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { accessSync, constants, copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { cpus, tmpdir } from 'node:os'
import { delimiter, join } from 'node:path'
import type { CheckDef } from '../conformance/client/core/check.js'
import { ORB_CLIENT_CHECKS } from '../conformance/client/orb/checks.js'
import { CHECKS } from '../conformance/client/orbtile/checks/index.js'
import { parse, parseFlags, type Flags, type FlagSpecs } from '../src/cli/flags.js'
import { packageRoot } from '../src/shared/paths.js'
import { UsageError } from '../src/shared/usage-error.js'
import { CLIENTS, clientNamed, type CleanClient } from './clients.js'
import { FAULTS, type ReferenceFault } from './faults.js'

export const FAULT_CHOICES = ['all', 'one-per-tour', 'one-per-client', 'none'] as const
export type Faults = typeof FAULT_CHOICES[number]

export interface CampaignOptions {
  /** The repository's root, and the built CLI to run. */
  root: string
  cli: string
  seeds: readonly number[]
  /** Generated scenarios in each clean run, after the tours. */
  scenarios: number
  /** One busy process per core, at the same priority, for the whole campaign. */
  load: boolean
  /** The faults of the long tours too (tour:voice, 93 s). */
  long: boolean
  /** Runs at once. */
  jobs: number
  /** Only these clients (played clean, and their faults), when given. */
  clients?: readonly string[]
  /** Of those, only these are played clean, when given (the others only with their faults). */
  clean?: readonly string[]
  /**
   * Which reference faults to play: every one (the default), none, the first of each reference client for each tour
   * it plays (a bounded run that still shows every tour's situation catching a fault), or the first of each
   * reference client.
   */
  faults?: Faults
  /** `long`: only the faults the long tours catch, and no clean run (the rest is played elsewhere). */
  only?: 'long'
  onRun?: (r: RunResult) => void
}

/** A check as a run's JSON report gives it. */
interface ReportedCheck {
  id: string
  verdict: string
  clauses: Record<string, { violations: number }>
  reason?: string
}

export interface RunResult {
  kind: 'clean' | 'fault'
  client: string
  seed: number
  fault?: ReferenceFault
  args: string[]
  code: number
  ms: number
  /** Clean runs: the checks that failed (false failures), were inconclusive or non-strict. */
  failed: string[]
  inconclusive: string[]
  nonStrict: string[]
  /** The first case of each of those, as the report gave it. */
  reasons: Record<string, string>
  /** Fault runs: each target clause broken and its check failed. */
  detected?: boolean
  /** What went wrong with the run itself (no report), if anything. */
  error?: string
  /** Where its report (with every scenario's journal) is kept: a clean run that failed, a fault not caught. */
  kept?: string
}

export interface CampaignReport {
  runs: RunResult[]
  /** Clients that could not be judged here: a program missing, or a build that failed. */
  unavailable: Array<{ client: string, why: string }>
  load: boolean
  ms: number
}

const DEFS: ReadonlyArray<CheckDef<any>> = [...CHECKS, ...ORB_CLIENT_CHECKS]

/** Whether a clause is one whose finding fails only with --strict (a SHOULD, a decision). */
function soft (clause: string): boolean {
  const [id, key] = clause.split('.') as [string, string]
  const def = DEFS.find((d) => d.id === id)
  const found = def?.clauses.find((c) => c.key === key)
  if (found === undefined) throw new Error(`no clause ${clause}`)
  return found.level !== 'MUST'
}

/**
 * A busy loop on one core, at everyone's priority, that ends when the campaign does, however it ended: it looks at
 * its parent every ten million turns (milliseconds), and a campaign killed without its `finally` leaves none.
 */
const HOG = 'const parent = process.ppid; for (;;) { for (let i = 0; i < 1e7; i++); if (process.ppid !== parent) process.exit(0) }'

/** Runs the campaign. */
export async function campaign (o: CampaignOptions): Promise<CampaignReport> {
  const started = performance.now()
  const out = mkdtempSync(join(tmpdir(), 'orbtest-trust-'))
  const hogs = o.load ? cpus().map(() => spawn(process.execPath, ['-e', HOG], { stdio: 'ignore' })) : []
  try {
    const { ready, unavailable } = prepare(o, out)
    const plans = plan(o, ready)
    const runs = await pool(plans, o.jobs, async (p) => {
      const r = await play(o, p, join(out, `run-${plans.indexOf(p)}.json`))
      o.onRun?.(r)
      return r
    })
    return { runs, unavailable, load: o.load, ms: Math.round(performance.now() - started) }
  } finally {
    for (const h of hogs) h.kill('SIGKILL')
    rmSync(out, { recursive: true, force: true })
  }
}

/** The clients to judge, built where they need it; the others, with why they cannot be. */
function prepare (o: CampaignOptions, out: string): {
  ready: Map<string, string[]>
  unavailable: Array<{ client: string, why: string }>
} {
  const ready = new Map<string, string[]>()
  const unavailable: Array<{ client: string, why: string }> = []
  for (const c of CLIENTS.filter((c) => o.clients === undefined || o.clients.includes(c.name))) {
    const missing = c.needs.filter((program) => !onPath(program))
    if (missing.length > 0) {
      unavailable.push({ client: c.name, why: `not on the PATH: ${missing.join(', ')}` })
      continue
    }
    const dir = join(out, c.name)
    try {
      if (c.build !== undefined) {
        const [program, ...args] = c.build(o.root, dir)
        execFileSync(program!, args, { stdio: ['ignore', 'ignore', 'pipe'], cwd: o.root })
      }
      ready.set(c.name, c.command(o.root, dir))
    } catch (err) {
      unavailable.push({ client: c.name, why: `its build failed: ${String((err as { stderr?: Buffer }).stderr ?? err).slice(0, 300)}` })
    }
  }
  return { ready, unavailable }
}

interface Plan { kind: 'clean' | 'fault', client: CleanClient, command: string[], seed: number, fault?: ReferenceFault }

/** Every clean client under every seed, then every fault of a client that is ready under every seed. */
function plan (o: CampaignOptions, ready: ReadonlyMap<string, string[]>): Plan[] {
  const plans: Plan[] = []
  for (const seed of o.only === undefined ? o.seeds : []) {
    for (const [name, command] of ready) {
      if (o.clean === undefined || o.clean.includes(name)) {
        plans.push({ kind: 'clean', client: clientNamed(name), command, seed })
      }
    }
  }
  if (o.faults === 'none') return plans
  const played = (f: ReferenceFault): boolean => o.only === 'long' ? f.long === true : o.long || f.long !== true
  const chosen = FAULTS.filter((f) => played(f) && ready.has(f.client))
  for (const seed of o.seeds) {
    for (const f of firstOf(chosen, o.faults ?? 'all')) {
      plans.push({ kind: 'fault', client: clientNamed(f.client), command: [...ready.get(f.client)!, '--fault', f.fault], seed, fault: f })
    }
  }
  // The longest first, so that a long tour does not start last.
  return plans.sort((a, b) => Number(b.fault?.long === true) - Number(a.fault?.long === true))
}

/** The faults to play: all of them, or the first of each reference client (for each tour it plays). */
function firstOf (faults: readonly ReferenceFault[], which: Faults): readonly ReferenceFault[] {
  if (which === 'all') return faults
  const seen = new Set<string>()
  return faults.filter((f) => {
    const key = which === 'one-per-tour' ? `${f.client} ${f.tour}` : f.client
    if (seen.has(key)) return false
    seen.add(key)
    return true
  })
}

/** One run of the CLI, and what its report says. */
async function play (o: CampaignOptions, p: Plan, json: string): Promise<RunResult> {
  const f = p.fault
  const strict = f === undefined ? p.client.reference : f.clauses.some(soft)
  const plays = f === undefined
    ? ['--scenarios', String(o.scenarios)]
    : ['--tour', f.tour, '--scenarios', '0']
  const args = ['conformance', '--client', ...p.client.suite, '--seed', String(p.seed), ...plays,
    ...(strict ? ['--strict'] : []), '--json', json, '--reporter', 'tap', '--', ...p.command]
  const started = performance.now()
  const code = await exit(spawn(process.execPath, [o.cli, ...args], { stdio: 'ignore' }))
  const base = {
    kind: p.kind,
    client: p.client.name,
    seed: p.seed,
    ...(f === undefined ? {} : { fault: f }),
    args,
    code,
    ms: Math.round(performance.now() - started)
  }
  let checks: ReportedCheck[]
  try {
    checks = (JSON.parse(readFileSync(json, 'utf8')) as { checks: ReportedCheck[] }).checks
  } catch (err) {
    return {
      ...base,
      failed: [],
      inconclusive: [],
      nonStrict: [],
      reasons: {},
      ...(f === undefined ? {} : { detected: false }),
      error: `no report (exit ${code}): ${(err as Error).message}`
    }
  }
  const ids = (verdict: string): string[] => checks.filter((c) => c.verdict === verdict).map((c) => c.id)
  const reasons = Object.fromEntries(checks.filter((c) => c.verdict !== 'pass' && c.reason !== undefined)
    .map((c) => [c.id, c.reason!]))
  const verdicts = { failed: ids('fail'), inconclusive: ids('inconclusive'), nonStrict: ids('non-strict') }
  const result = { ...base, ...verdicts, reasons }
  const detected = f?.clauses.every((clause) => {
    const [id, key] = clause.split('.') as [string, string]
    const c = checks.find((x) => x.id === id)
    return c !== undefined && c.verdict === 'fail' && (c.clauses[key]?.violations ?? 0) > 0
  })
  const wrong = f === undefined ? result.failed.length > 0 : detected === false
  return { ...result, ...(f === undefined ? {} : { detected }), ...(wrong ? { kept: keep(json) } : {}) }
}

/** Copies a run's report out of the campaign's folder, which goes at its end, for a person to read. */
function keep (json: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'orbtest-trust-kept-'))
  const to = join(dir, 'report.json')
  copyFileSync(json, to)
  return to
}

/** How a child ended: its exit code (2 for a killed run). A run that hangs is killed after 10 minutes. */
async function exit (child: ChildProcess): Promise<number> {
  const timer = setTimeout(() => child.kill('SIGKILL'), 600_000)
  return await new Promise((resolve) => {
    child.once('error', () => resolve(2))
    child.once('exit', (code) => {
      clearTimeout(timer)
      resolve(code ?? 2)
    })
  })
}

async function pool<T, R> (items: readonly T[], jobs: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length)
  let next = 0
  await Promise.all(Array.from({ length: Math.max(1, Math.min(jobs, items.length)) }, async () => {
    while (next < items.length) {
      const i = next++
      out[i] = await fn(items[i]!)
    }
  }))
  return out
}

function onPath (program: string): boolean {
  return (process.env.PATH ?? '').split(delimiter).filter(Boolean).some((dir) => {
    try {
      accessSync(join(dir, program), constants.X_OK)
      return true
    } catch {
      return false
    }
  })
}

/** The campaign in a few lines a person reads: the counts that matter, then every run that was not clean. */
export function campaignText (r: CampaignReport): string {
  const clean = r.runs.filter((x) => x.kind === 'clean')
  const faults = r.runs.filter((x) => x.kind === 'fault')
  const lines = [
    `# trust campaign${r.load ? ', beside a CPU hog on every core' : ''}: ${clean.length} clean runs, ${faults.length} fault runs, ${(r.ms / 1000).toFixed(0)} s`,
    `false failures: ${clean.reduce((n, x) => n + x.failed.length, 0)} (must be 0)`,
    `inconclusive verdicts in clean runs: ${clean.reduce((n, x) => n + x.inconclusive.length, 0)}`,
    `non-strict findings in clean runs: ${clean.reduce((n, x) => n + x.nonStrict.length, 0)}`
  ]
  for (const x of clean) {
    const notes = [
      ...x.failed.map((id) => `FAILED ${id}`), ...x.inconclusive.map((id) => `inconclusive ${id}`),
      ...x.nonStrict.map((id) => `non-strict ${id}`), ...(x.error === undefined ? [] : [x.error])
    ]
    lines.push(`  ${x.client} seed ${x.seed}: exit ${x.code}, ${(x.ms / 1000).toFixed(1)} s${notes.length === 0 ? '' : `; ${notes.join(', ')}`}`)
    for (const id of [...x.failed, ...x.inconclusive, ...x.nonStrict]) lines.push(`    ${id}: ${x.reasons[id] ?? ''}`)
    if (x.kept !== undefined) lines.push(`    the report, with every journal, is kept: ${x.kept}`)
  }
  const byFault = new Map<string, RunResult[]>()
  for (const x of faults) {
    const key = `${x.client} --fault ${x.fault!.fault} (tour:${x.fault!.tour}) -> ${x.fault!.clauses.join(', ')}`
    byFault.set(key, [...(byFault.get(key) ?? []), x])
  }
  const caught = [...byFault.values()].filter((runs) => runs.every((x) => x.detected === true)).length
  lines.push(`faults caught in every run: ${caught} of ${byFault.size}`)
  for (const [key, runs] of byFault) {
    const n = runs.filter((x) => x.detected === true).length
    if (n < runs.length) lines.push(`  MISSED ${key}: ${n} of ${runs.length}`)
    for (const x of runs) if (x.kept !== undefined) lines.push(`    seed ${x.seed}: the report is kept: ${x.kept}`)
  }
  for (const u of r.unavailable) lines.push(`not judged: ${u.client}: ${u.why}`)
  return `${lines.join('\n')}\n`
}

/** Whether the campaign holds: no false failure, every fault caught every time, no run without a report. */
export function campaignHolds (r: CampaignReport): boolean {
  return r.runs.every((x) => x.failed.length === 0 || x.kind === 'fault') &&
    r.runs.every((x) => x.error === undefined && (x.kind === 'clean' || x.detected === true))
}

const USAGE = `usage: npm run trust -- [--seeds N] [--seed FIRST] [--load] [--long] [--jobs N] [--scenarios N]
                       [--faults all|one-per-tour|one-per-client|none] [--client NAME]... [--json FILE]
  Judges every clean client (trust/clients.ts) under N seeds from FIRST (default 1 from 20261201), with --load beside
  one busy process per core; plays every reference fault (trust/faults.ts) under each seed (--faults one-per-tour:
  the first of each reference client for each tour; one-per-client: the first of each; none: no fault); --long adds
  those of the long tours (tour:voice).
  --jobs: runs at once (4); --scenarios: generated scenarios in each clean run, after the tours (8).
  Exit 0 when no clean client failed and every fault was caught every time; 1 otherwise; 2 for a bad argument.
`
const FLAGS = {
  seeds: { type: 'string', help: 'seeds', default: '1', parse: parse.integer(1, 1000) },
  seed: { type: 'string', help: 'the first seed', default: '20261201', parse: parse.integer(0, 2 ** 32 - 1) },
  load: { type: 'boolean', help: 'beside a CPU hog on every core' },
  long: { type: 'boolean', help: 'the long tours\' faults too' },
  jobs: { type: 'string', help: 'runs at once', default: '4', parse: parse.integer(1, 64) },
  scenarios: { type: 'string', help: 'generated scenarios a clean run', default: '8', parse: parse.integer(0, 1000) },
  faults: { type: 'string', help: 'which faults', default: 'all', parse: parse.oneOf(...FAULT_CHOICES) },
  client: { type: 'string', help: 'only this clean client', multiple: true },
  json: { type: 'string', help: 'the report as JSON', parse: parse.path },
  help: { type: 'boolean', help: 'this text' }
} as const satisfies FlagSpecs

/** `npm run trust -- …`: resolves to the exit code (0 when the campaign holds). */
export async function main (argv: readonly string[]): Promise<number> {
  let flags: Flags<typeof FLAGS>
  try {
    flags = parseFlags(argv, FLAGS).flags
  } catch (err) {
    if (!(err instanceof UsageError)) throw err
    process.stderr.write(`trust: ${err.message}\n${USAGE}`)
    return 2
  }
  if (flags.help === true) {
    process.stdout.write(USAGE)
    return 0
  }
  const root = packageRoot()
  const report = await campaign({
    root,
    cli: join(root, 'dist', 'cli', 'orbtest.js'),
    seeds: Array.from({ length: flags.seeds }, (_, i) => flags.seed + i),
    scenarios: flags.scenarios,
    load: flags.load === true,
    long: flags.long === true,
    jobs: flags.jobs,
    faults: flags.faults,
    ...(flags.client === undefined ? {} : { clients: flags.client }),
    onRun: (x) => {
      const what = x.kind === 'fault' ? `${x.fault!.fault} ${x.detected === true ? 'caught' : 'MISSED'}` : `clean, ${x.failed.length} failed`
      process.stderr.write(`${x.client} seed ${x.seed}: ${what} (${(x.ms / 1000).toFixed(1)} s)\n`)
    }
  })
  process.stdout.write(campaignText(report))
  if (flags.json !== undefined) writeFileSync(flags.json, `${JSON.stringify(report, null, 2)}\n`)
  return campaignHolds(report) ? 0 : 1
}
