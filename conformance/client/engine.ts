import fc from 'fast-check'
import type { CheckInfo } from './check.js'
import type { CheckFinding, CheckSummary, ClientRunReport, ScenarioReport } from './journal.js'

/**
 * A client suite as the engine sees it: its checks, its tours (fixed scenarios every run plays), how to generate
 * more, and how to play one against a client command. The engine knows no protocol.
 */
export interface ClientSuite<S> {
  name: string
  title: string
  checks: readonly CheckInfo[]
  tours: ReadonlyArray<Tour<S>>
  arbitrary: fc.Arbitrary<S>
  describe(scenario: S): string
  /** Plays one scenario; an aborted `signal` (Ctrl-C) stops the client at once and cleans up. */
  play(scenario: S, command: readonly string[], name: string, signal?: AbortSignal): Promise<ScenarioReport>
}

/**
 * A fixed scenario. A `long` one (it lasts minutes, as a rule about minutes needs) is played only when `--tour`
 * names it, so that a run of the suite stays short.
 */
export interface Tour<S> { name: string, scenario: S, long?: boolean }

/** Whether a run plays a tour: named by `--tour`, or, with no `--tour`, every tour that is not long. */
export function playsTour (tour: { name: string, long?: boolean }, tours: readonly string[] | undefined): boolean {
  return tours === undefined ? tour.long !== true : tours.includes(tour.name)
}

export interface ClientRunOptions {
  command: readonly string[]
  seed: number
  /** Generated scenarios after the tours. */
  scenarios: number
  /** Tours to play: every one that is not long when undefined, none when empty. */
  tours?: readonly string[]
  /** Scenarios played at once (each has its own fake and its own client process). */
  jobs: number
  /** fast-check's path of one generated scenario to replay alone (with its seed). */
  path?: string
  /** Decisions and SHOULDs fail the run too. */
  strict: boolean
  expectFailures: ReadonlyMap<string, string>
  /** Scenarios fast-check may play while shrinking a failure. */
  shrinkRuns: number
  onScenario?: (report: ScenarioReport, done: number, total: number) => void
  /** A scenario is about to be played (for a person's progress line). */
  onStart?: (name: string) => void
  /** Aborted (Ctrl-C): no scenario starts, those under way stop and clean up. */
  signal?: AbortSignal
}

/** What a run plays: the tours, then fast-check's scenarios for the seed (path `k` is the k-th). */
interface Planned<S> { name: string, scenario: S, replay?: { seed: number, path: string } }

/** Plays the suite's scenarios against the client and folds every finding into one verdict per check. */
export async function runClientSuite<S> (suite: ClientSuite<S>, o: ClientRunOptions): Promise<ClientRunReport> {
  const started = performance.now()
  const planned = plan(suite, o)
  const reports = new Array<ScenarioReport>(planned.length)
  let done = 0
  let next = 0
  const worker = async (): Promise<void> => {
    while (next < planned.length && o.signal?.aborted !== true) {
      const i = next++
      const p = planned[i]!
      o.onStart?.(p.name)
      const report = await suite.play(p.scenario, o.command, p.name, o.signal)
      reports[i] = {
        ...report,
        summary: suite.describe(p.scenario),
        ...(p.replay === undefined ? {} : { replay: p.replay })
      }
      o.onScenario?.(reports[i], ++done, planned.length)
    }
  }
  await Promise.all(Array.from({ length: Math.max(1, Math.min(o.jobs, planned.length)) }, worker))
  if (o.signal?.aborted === true) {
    const played = reports.filter((r) => r !== undefined)
    const ms = Math.round(performance.now() - started)
    const checks = fold(suite.checks, played, o)
    const { name, title } = suite
    const { seed, strict } = o
    return { suite: name, title, command: [...o.command], seed, strict, checks, scenarios: played, ms }
  }

  const checks = fold(suite.checks, reports, o)
  // The first generated scenario that failed a required check is shrunk to the smallest that still fails it.
  const failing = planned.findIndex(
    (p, i) => p.replay !== undefined && failedIds(reports[i]!, o.strict).length > 0
  )
  if (failing >= 0 && o.path === undefined && o.shrinkRuns > 0) {
    const ids = failedIds(reports[failing]!, o.strict)
    const shrunk = await shrink(suite, o, planned[failing]!.replay!.path, ids)
    if (shrunk !== undefined) {
      reports.push({
        ...shrunk.report,
        name: `shrunk:${shrunk.path}`,
        summary: suite.describe(shrunk.scenario),
        replay: { seed: o.seed, path: shrunk.path }
      })
      for (const c of checks) if (ids.includes(c.id)) c.shrunk = { seed: o.seed, path: shrunk.path }
    }
  }
  return {
    suite: suite.name,
    title: suite.title,
    command: [...o.command],
    seed: o.seed,
    strict: o.strict,
    checks,
    scenarios: reports,
    ms: Math.round(performance.now() - started)
  }
}

function plan<S> (suite: ClientSuite<S>, o: ClientRunOptions): Array<Planned<S>> {
  if (o.path !== undefined) {
    const value = replayValue(suite.arbitrary, o.seed, o.path)
    return [{ name: `generated:${o.path}`, scenario: value, replay: { seed: o.seed, path: o.path } }]
  }
  const tours = suite.tours.filter((t) => playsTour(t, o.tours))
  const generated = o.scenarios === 0 ? [] : fc.sample(suite.arbitrary, { seed: o.seed, numRuns: o.scenarios })
  return [
    ...tours.map((t) => ({ name: `tour:${t.name}`, scenario: t.scenario })),
    ...generated.map((scenario, k) => ({ name: `generated:${k}`, scenario, replay: { seed: o.seed, path: String(k) } }))
  ]
}

/** The value fast-check's path names for the seed: the run it would replay (`k`, or `k:i:j…` after shrinking). */
function replayValue<S> (arbitrary: fc.Arbitrary<S>, seed: number, path: string): S {
  let found: S | undefined
  fc.check(fc.property(arbitrary, (value) => {
    found = value
    return false
  }), { seed, path, numRuns: 1, endOnFailure: true })
  if (found === undefined) throw new Error(`no scenario at path ${path} for seed ${seed}`)
  return found
}

/** The ids a scenario fails, as the run counts failures (decisions and SHOULDs only with --strict). */
function failedIds (report: ScenarioReport, strict: boolean): string[] {
  return report.findings.filter((f) => counts(f, strict)).map((f) => f.id)
}

function counts (f: CheckFinding, strict: boolean): boolean {
  if (f.violationCount === 0) return false
  return f.verdict === 'fail' || (strict && (f.verdict === 'non-strict' || f.verdict === 'informational'))
}

/** fast-check shrinks the failing scenario, playing at most `shrinkRuns` smaller ones. */
async function shrink<S> (suite: ClientSuite<S>, o: ClientRunOptions, path: string, ids: readonly string[]):
Promise<{ path: string, scenario: S, report: ScenarioReport } | undefined> {
  let budget = o.shrinkRuns + 1
  let smallest: { scenario: S, report: ScenarioReport } | undefined
  const details = await fc.check(fc.asyncProperty(suite.arbitrary, async (scenario) => {
    // Past the budget every candidate "passes", which ends the shrinking with the smallest failure so far.
    if (budget-- <= 0) return true
    const report = await suite.play(scenario, o.command, 'shrinking')
    const still = failedIds(report, o.strict).some((id) => ids.includes(id))
    if (still) smallest = { scenario, report }
    return !still
  }), { seed: o.seed, path, numRuns: 1 })
  if (!details.failed || details.counterexamplePath === null || smallest === undefined) return undefined
  return { path: details.counterexamplePath, ...smallest }
}

/** Every check's findings over the scenarios, folded: a violation anywhere decides, then pass, then not exercised. */
function fold (infos: readonly CheckInfo[], reports: readonly ScenarioReport[], o: ClientRunOptions): CheckSummary[] {
  return infos.map((info) => {
    const found = reports.flatMap((r) => r.findings.filter((f) => f.id === info.id).map((f) => ({ r, f })))
    const exercised = found.reduce((n, { f }) => n + f.exercised, 0)
    const violationCount = found.reduce((n, { f }) => n + f.violationCount, 0)
    const first = found.find(({ f }) => f.violations.length > 0)
    const base: CheckSummary = {
      id: info.id,
      title: info.title,
      level: info.level,
      verdict: 'pass',
      exercised,
      violationCount
    }
    const expected = o.expectFailures.get(info.id)
    if (expected !== undefined) base.expectedFailure = expected
    if (info.level === 'info') {
      // Each scenario's note lists what it saw, `; ` between: the run's note is their union.
      const notes = [...new Set(found.flatMap(({ f }) => (f.note ?? '').split('; ')).filter((n) => n !== ''))]
      return { ...base, verdict: 'informational', note: notes.sort().join('; ') }
    }
    if (first !== undefined) {
      // The strongest finding decides: a failure anywhere, then a SHOULD, then a decision; --strict fails all three.
      const worst = (['fail', 'non-strict', 'informational'] as const)
        .find((w) => found.some(({ f }) => f.verdict === w && f.violationCount > 0)) ?? 'informational'
      const shown = found.find(({ f }) => f.verdict === worst && f.violations.length > 0) ?? first
      const v = shown.f.violations[0]!
      const verdict = o.strict ? 'fail' : worst
      return {
        ...base,
        verdict,
        reason: `${v.message} (in ${shown.r.name})`,
        expected: v.expected,
        actual: v.actual,
        where: { scenario: shown.r.name, ...(v.seq === undefined ? {} : { seq: v.seq }) },
        ...(shown.r.replay === undefined ? {} : { replay: shown.r.replay })
      }
    }
    if (exercised === 0) return { ...base, verdict: 'not-exercised', note: `not exercised: needs ${info.exercise}` }
    return base
  })
}

/** Whether the run passed: no failure that was not expected. */
export function clientRunPassed (report: ClientRunReport): boolean {
  return report.checks.every((c) => c.verdict !== 'fail' || c.expectedFailure !== undefined)
}
