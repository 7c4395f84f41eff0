import fc from 'fast-check'
import type { CheckDef } from './check.js'
import type { CheckFinding, ClientRunReport, ScenarioReport } from './journal.js'
import { failedIds, summarize } from './verdict.js'

/**
 * A client suite as the engine sees it: its checks, its tours (fixed scenarios every run plays), how to generate
 * more, and how to play one against a client command. The engine knows no protocol.
 */
export interface ClientSuite<S> {
  name: string
  title: string
  checks: ReadonlyArray<CheckDef<any>>
  tours: ReadonlyArray<Tour<S>>
  arbitrary: fc.Arbitrary<S>
  describe(scenario: S): string
  /** Plays one scenario; an aborted `signal` (Ctrl-C) stops the client at once and cleans up. */
  play(scenario: S, command: readonly string[], name: string, signal?: AbortSignal): Promise<ScenarioReport>
  /**
   * Judges a tour against its twin, the same world without the one thing the tour varies: the findings of the
   * checks that compare two journals (a rule about behaviour, "as if the variant were not there").
   */
  compare?(variant: ScenarioReport, twin: ScenarioReport): CheckFinding[]
}

/**
 * A fixed scenario. A `long` one (it lasts minutes, as a rule about minutes needs) is played only when `--tour`
 * names it, so that a run of the suite stays short. A tour with a `twin` is played twice at once, as it is and as
 * its twin, and the suite compares the two journals.
 */
export interface Tour<S> { name: string, scenario: S, long?: boolean, twin?: S }

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
  /** Scenarios played at once (each has its own fake and its own client process); every one when undefined. */
  jobs?: number
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

/** What a run plays: the tours (and their twins), then fast-check's scenarios for the seed (path `k` is the k-th). */
interface Planned<S> { name: string, scenario: S, replay?: { seed: number, path: string }, twinOf?: number }

/**
 * Plays the suite's scenarios against the client, every one at once unless `jobs` says otherwise (they are
 * independent: each has its own fake, folder and process), and folds every finding into one verdict per check.
 */
export async function runClientSuite<S> (suite: ClientSuite<S>, o: ClientRunOptions): Promise<ClientRunReport> {
  const started = performance.now()
  const planned = plan(suite, o)
  const reports = await playAll(suite, o, planned)
  if (o.signal?.aborted !== true) compareTwins(suite, planned, reports)
  const played = reports.filter((r): r is ScenarioReport => r !== undefined)
  const checks = summarize(suite.checks, played, o)
  const report: ClientRunReport = {
    suite: suite.name,
    title: suite.title,
    command: [...o.command],
    seed: o.seed,
    strict: o.strict,
    checks,
    scenarios: played,
    ms: 0
  }
  if (o.signal?.aborted !== true) await shrinkFirstFailure(suite, o, planned, report)
  report.ms = Math.round(performance.now() - started)
  return report
}

async function playAll<S> (suite: ClientSuite<S>, o: ClientRunOptions, planned: ReadonlyArray<Planned<S>>):
Promise<Array<ScenarioReport | undefined>> {
  const reports = new Array<ScenarioReport | undefined>(planned.length)
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
  const jobs = Math.max(1, Math.min(o.jobs ?? planned.length, planned.length))
  await Promise.all(Array.from({ length: jobs }, worker))
  return reports
}

/** Each tour played with a twin gets the findings of the checks that compare the two journals. */
function compareTwins<S> (
  suite: ClientSuite<S>,
  planned: ReadonlyArray<Planned<S>>,
  reports: Array<ScenarioReport | undefined>
): void {
  planned.forEach((p, i) => {
    const variant = p.twinOf === undefined ? undefined : reports[p.twinOf]
    const twin = reports[i]
    if (variant === undefined || twin === undefined || suite.compare === undefined) return
    const compared = suite.compare(variant, twin)
    const ids = new Set(compared.map((f) => f.id))
    reports[p.twinOf!] = { ...variant, findings: [...variant.findings.filter((f) => !ids.has(f.id)), ...compared] }
  })
}

/** The first generated scenario that failed is shrunk to the smallest that still fails the same checks. */
async function shrinkFirstFailure<S> (
  suite: ClientSuite<S>,
  o: ClientRunOptions,
  planned: ReadonlyArray<Planned<S>>,
  report: ClientRunReport
): Promise<void> {
  const failing = planned.findIndex(
    (p, i) => p.replay !== undefined && failedIds(report.scenarios[i]!.findings, o.strict).length > 0
  )
  if (failing < 0 || o.path !== undefined || o.shrinkRuns <= 0) return
  const ids = failedIds(report.scenarios[failing]!.findings, o.strict)
  const shrunk = await shrink(suite, o, planned[failing]!.replay!.path, ids)
  if (shrunk === undefined) return
  report.scenarios.push({
    ...shrunk.report,
    name: `shrunk:${shrunk.path}`,
    summary: suite.describe(shrunk.scenario),
    replay: { seed: o.seed, path: shrunk.path }
  })
  for (const c of report.checks) if (ids.includes(c.id)) c.shrunk = { seed: o.seed, path: shrunk.path }
}

function plan<S> (suite: ClientSuite<S>, o: ClientRunOptions): Array<Planned<S>> {
  if (o.path !== undefined) {
    const value = replayValue(suite.arbitrary, o.seed, o.path)
    return [{ name: `generated:${o.path}`, scenario: value, replay: { seed: o.seed, path: o.path } }]
  }
  const tours: Array<Planned<S>> = []
  for (const t of suite.tours.filter((t) => playsTour(t, o.tours))) {
    const at = tours.length
    tours.push({ name: `tour:${t.name}`, scenario: t.scenario })
    if (t.twin !== undefined) tours.push({ name: `tour:${t.name}:twin`, scenario: t.twin, twinOf: at })
  }
  const generated = o.scenarios === 0 ? [] : fc.sample(suite.arbitrary, { seed: o.seed, numRuns: o.scenarios })
  return [
    ...tours,
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

/** fast-check shrinks the failing scenario, playing at most `shrinkRuns` smaller ones. */
async function shrink<S> (suite: ClientSuite<S>, o: ClientRunOptions, path: string, ids: readonly string[]):
Promise<{ path: string, scenario: S, report: ScenarioReport } | undefined> {
  let budget = o.shrinkRuns + 1
  let smallest: { scenario: S, report: ScenarioReport } | undefined
  const details = await fc.check(fc.asyncProperty(suite.arbitrary, async (scenario) => {
    // Past the budget every candidate "passes", which ends the shrinking with the smallest failure so far.
    if (budget-- <= 0) return true
    const report = await suite.play(scenario, o.command, 'shrinking')
    const still = failedIds(report.findings, o.strict).some((id) => ids.includes(id))
    if (still) smallest = { scenario, report }
    return !still
  }), { seed: o.seed, path, numRuns: 1 })
  if (!details.failed || details.counterexamplePath === null || smallest === undefined) return undefined
  return { path: details.counterexamplePath, ...smallest }
}
