import { writeFileSync } from 'node:fs'
import { UsageError } from '../src/shared/usage-error.js'
import { HumanReporter, type ReporterName } from './human.js'
import { jsonIndex, junitXml, tapHeader, tapLine, tapSummary } from './report.js'
import type { CaseResult, ConformanceCase } from './server/core/case.js'
import { ControlClient } from './server/core/control.js'
import { runCases, runPassed, selectCases } from './server/core/runner.js'
import type { Suite, SuiteEntry } from './server/core/suite.js'
import { readRunReport } from './summary.js'

/** A run of a server suite against one target, as the command line asks for it. */
export interface ServerRunOptions {
  /** The target, as typed: the suite's `prepare` reads it. */
  target: string
  token?: string
  config?: string
  /** The target's control API, its origin. */
  control?: string
  readOnly: boolean
  slow: boolean
  /** Orbtest's own decisions fail the run too. */
  strict: boolean
  /** Only the cases whose id starts with one of these (every case when empty). */
  grep: readonly string[]
  seed: number
  runs: number
  /** fast-check's replay path of one failing case. */
  path?: string
  /** Ids expected to fail, with the reason. */
  expectFailures: ReadonlyMap<string, string>
  reporter: ReporterName
  /** Where to write the JUnit XML, and the JSON index. */
  junit?: string
  json?: string
}

/** The suite that takes a target; one no suite takes falls to the first suite, which says what it accepts. */
export function suiteFor (suites: readonly SuiteEntry[], target: string): SuiteEntry {
  return suites.find((s) => s.accepts(target)) ?? suites[0]!
}

/** `--list`: the cases of each suite (of the target's suite alone when there is a target) that `grep` selects. */
export async function listCases (
  suites: readonly SuiteEntry[],
  target: string | undefined,
  grep: readonly string[],
  out: NodeJS.WritableStream
): Promise<void> {
  const listed = target === undefined ? suites : [suiteFor(suites, target)]
  const cases = await Promise.all(listed.map(async (s) => (await s.load()).cases))
  if (cases.every((c) => selectCases(c, grep).length === 0)) {
    throw new UsageError(`--grep ${grep.join(' ')} selects no case`)
  }
  for (const c of cases.flatMap((all) => selectCases(all, grep))) out.write(listLine(c))
}

/** One line of --list: id, level, needs, title (the bytes users diff between versions). */
function listLine (c: ConformanceCase<any>): string {
  const needs = [...(c.needs ?? []), ...(c.writes === true ? ['writes'] : [])].join(',')
  return `${c.id.padEnd(12)} ${c.level.padEnd(9)} ${needs.padEnd(14)} ${c.title}\n`
}

/**
 * Runs a server suite against its target: TAP or the human reporter on `out`, the reports asked for written.
 * Resolves to whether the run passed (no required case failed, expected failures aside).
 */
export async function runServerSuite (
  suite: Suite<any>,
  o: ServerRunOptions,
  out: NodeJS.WritableStream
): Promise<boolean> {
  const control = o.control === undefined ? undefined : new ControlClient(o.control)
  // A typo in --grep must not pass as a green run of nothing.
  const selected = selectCases(suite.cases, o.grep)
  const prepared = await suite.prepare({
    target: o.target,
    ...(o.token === undefined ? {} : { token: o.token }),
    ...(o.config === undefined ? {} : { config: o.config }),
    ...(control === undefined ? {} : { control }),
    slow: o.slow,
    readOnly: o.readOnly
  })
  try {
    if (selected.length === 0) throw new UsageError(`--grep ${o.grep.join(' ')} selects no case; see --list`)
    const human = o.reporter === 'human' ? new HumanReporter(out, selected.length) : undefined
    const header = prepared.about(`seed ${o.seed}; ${o.runs} runs per property`)
    if (human === undefined) out.write(tapHeader(selected.length, header))
    else human.header(suite.title, header)
    const started = performance.now()
    const results = await runCases(suite.cases, {
      transport: prepared.transport,
      control,
      seed: o.seed,
      runs: o.runs,
      grep: o.grep,
      strict: o.strict,
      slow: o.slow,
      readOnly: o.readOnly,
      expectFailures: o.expectFailures,
      caseTimeoutMs: prepared.caseTimeoutMs,
      ...(o.path === undefined ? {} : { path: o.path }),
      onStart: (c) => human?.start(c.id),
      onResult: (result, index) => {
        if (human === undefined) out.write(tapLine(result, index + 1, o.runs))
        else human.done(`${result.id} ${result.title}`, failedUnexpectedly(result) ? [result.id] : [], result.ms)
      }
    })
    const { seed, runs } = o
    const about = { suite: suite.name, kind: 'server', title: suite.title, seed, runs, target: prepared.target }
    return finishRun(results, { about, started, options: o, out, human })
  } finally {
    await prepared.close()
  }
}

function failedUnexpectedly (result: CaseResult): boolean {
  return result.verdict === 'fail' && result.expectedFailure === undefined
}

interface Finish {
  /** What the JSON index says of the run besides its cases. */
  about: Record<string, unknown> & { title: string }
  started: number
  options: ServerRunOptions
  out: NodeJS.WritableStream
  human: HumanReporter | undefined
}

function finishRun (results: CaseResult[], { about, started, options: o, out, human }: Finish): boolean {
  const note = (text: string): void => { out.write(human === undefined ? `# ${text}\n` : `${text}\n`) }
  for (const id of o.expectFailures.keys()) {
    if (!results.some((r) => r.id === id || r.id.split('.')[0] === id)) note(`--expect-failures names ${id}, which this run has no case for`)
  }
  for (const r of results) {
    if (r.verdict === 'pass' && o.expectFailures.has(r.id)) note(`${r.id} was expected to fail and passed: take it out of the expected-failures file`)
  }
  const ms = performance.now() - started
  const requests = results.reduce((n, r) => n + r.exchanges.length, 0)
  // The JSON index, made only when a reader needs it: the --json file, or the human reporter's summary.
  const json = o.json !== undefined || human !== undefined
    ? jsonIndex(results, { ...about, ms: Math.round(ms), requests })
    : ''
  if (human === undefined) out.write(tapSummary(results, ms, requests))
  else human.end(readRunReport(JSON.parse(json)))
  if (o.junit !== undefined) writeFileSync(o.junit, junitXml(results, about.title, ms))
  if (o.json !== undefined) writeFileSync(o.json, json)
  return runPassed(results)
}
