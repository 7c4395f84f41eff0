import { writeFileSync } from 'node:fs'
import { playsTour, runClientSuite, type ClientRunOptions, type ClientSuite } from './engine.js'
import { renderHtml } from './html.js'
import type { ClientRunReport, Level } from './journal.js'
import { clientJson, clientJunit, clientTapLine, clientTapSummary, scenarioComment } from './report.js'
import { clientRunPassed } from './verdict.js'
import { HumanReporter, type ReporterName } from '../../human.js'
import { readRunReport } from '../../summary.js'

/** A client suite the command line can load by name, without loading the others. */
export interface ClientSuiteEntry {
  name: string
  /** The suite, for the run's options (`--webhook`, `--scopes`: the bot suite's). */
  load(options?: { webhook?: boolean, scopes?: readonly string[] }): Promise<ClientSuite<any>>
}

/** A run of a client suite as the command line asks for it: the engine's options, and what to report how. */
export interface ClientJudgeOptions extends Omit<ClientRunOptions, 'onScenario' | 'onStart'> {
  /** Only the checks whose id starts with one of these are reported (every check when empty). */
  grep: readonly string[]
  reporter: ReporterName
  /** The suite's own flags, for the report's replay commands (`--webhook`, `--scopes LIST`). */
  suiteFlags: readonly string[]
  /** Where to write the JUnit XML, the JSON report and the HTML timeline. */
  junit?: string
  json?: string
  html?: string
}

/**
 * How a client run ended. A client that never reached the fake in any scenario was not judged: it is a command
 * that cannot run as the suite runs it.
 */
export type ClientOutcome = 'passed' | 'failed' | 'never-reached' | 'interrupted'

/** What a run plays: how many tours, and how many scenarios in all (tours and generated ones, or the one replayed). */
export function plannedPlays (
  suite: ClientSuite<unknown>,
  o: Pick<ClientRunOptions, 'path' | 'tours' | 'scenarios'>
): { tours: number, total: number } {
  if (o.path !== undefined) return { tours: 0, total: 1 }
  const tours = suite.tours.filter((t) => playsTour(t, o.tours)).length
  return { tours, total: tours + o.scenarios }
}

/** Whether a check is reported, by `--grep`. */
export function shownCheck (id: string, grep: readonly string[]): boolean {
  return grep.length === 0 || grep.some((g) => id.startsWith(g))
}

/** Judges a client command: plays the suite's scenarios against it, reports on `out`, writes the files asked for. */
export async function judgeClient (
  suite: ClientSuite<unknown>,
  o: ClientJudgeOptions,
  out: NodeJS.WritableStream
): Promise<ClientOutcome> {
  const planned = plannedPlays(suite, o)
  const human = o.reporter === 'human' ? new HumanReporter(out, planned.total) : undefined
  const plays = o.path === undefined
    ? `${planned.tours} tours and ${o.scenarios} generated scenarios`
    : `the scenario at path ${o.path}`
  if (human === undefined) out.write(`TAP version 14\n# ${suite.title}: ${JSON.stringify(o.command.join(' '))}; seed ${o.seed}; ${plays}\n`)
  else human.header(suite.title, `${o.command.join(' ')} · seed ${o.seed} · ${plays}`)
  const report = await runClientSuite(suite, {
    ...o,
    onStart: (name) => human?.start(name),
    onScenario: (s, done, all) => {
      if (human === undefined) {
        out.write(scenarioComment(s, done, all))
        return
      }
      human.grow(all)
      human.done(s.name, s.findings.filter((f) => f.violationCount > 0).map((f) => f.id), s.ms)
    }
  })
  if (o.signal?.aborted === true) {
    out.write(`# interrupted after ${report.scenarios.length} of ${planned.total} scenarios: clients stopped, folders removed\n`)
    return 'interrupted'
  }
  return reportRun(suite, report, o, { out, human })
}

/** The run's end: TAP's lines or the human summary, notes on the expected failures, the files; then its outcome. */
function reportRun (
  suite: ClientSuite<unknown>,
  report: ClientRunReport,
  o: ClientJudgeOptions,
  { out, human }: { out: NodeJS.WritableStream, human: HumanReporter | undefined }
): ClientOutcome {
  const checks = report.checks.filter((c) => shownCheck(c.id, o.grep))
  const json = clientJson(report, checks, suite.checks, o.suiteFlags)
  const note = (text: string): void => { out.write(human === undefined ? `# ${text}\n` : `${text}\n`) }
  if (human === undefined) {
    out.write(`1..${suite.checks.filter((c) => shownCheck(c.id, o.grep)).length}\n`)
    checks.forEach((c, i) => out.write(clientTapLine(c, i + 1)))
  }
  for (const id of o.expectFailures.keys()) {
    const c = report.checks.find((x) => x.id === id)
    if (c === undefined) note(`--expect-failures names ${id}, which this suite has no check for`)
    else if (c.verdict === 'pass') note(`${id} was expected to fail and passed: take it out of the expected-failures file`)
  }
  if (human === undefined) out.write(clientTapSummary(report, checks))
  else human.end(readRunReport(JSON.parse(json)))
  if (o.junit !== undefined) writeFileSync(o.junit, clientJunit(report, checks))
  if (o.json !== undefined) writeFileSync(o.json, json)
  if (o.html !== undefined) writeFileSync(o.html, renderHtml({ ...report, checks }))
  if (neverReached(report)) {
    const reads = suite.name === 'orbtile' ? 'ORBTILE_DISCOVERY' : 'ORB_URL and ORB_TOKEN (and PORT with --webhook)'
    note(`the client never reached the fake in any scenario (${report.scenarios[0]?.exit ?? 'no scenario'}): nothing was judged; does it read ${reads}?`)
    return 'never-reached'
  }
  return clientRunPassed({ ...report, checks }) ? 'passed' : 'failed'
}

/**
 * A client that never reached the fake in any scenario (no request, and, a webhook bot, no delivery taken) is a
 * command that cannot run as the suite runs it (a wrong path, a variable it does not read), not a client to judge.
 */
function neverReached (report: ClientRunReport): boolean {
  const reached = (e: ClientRunReport['scenarios'][number]['journal'][number]): boolean =>
    e.kind === 'exchange' || e.kind === 'malformed' ||
    (e.kind === 'action' && e.name === 'delivery' &&
      (typeof e.data?.status === 'number' || !/ECONNREFUSED/.test(String(e.data?.error))))
  return report.scenarios.length > 0 && !report.scenarios.some((s) => s.journal.some(reached))
}

const SHOWN_LEVEL: Record<Level, string> = { MUST: 'MUST', SHOULD: 'SHOULD', decision: 'decision', info: 'info' }

/**
 * `--list`: each check as plain data says it (level, the ledger sentence, its clauses, its windows), then the tours.
 */
export function listChecks (suite: ClientSuite<unknown>, out: NodeJS.WritableStream): void {
  for (const c of suite.checks) {
    out.write(`${c.id.padEnd(12)} ${SHOWN_LEVEL[c.level].padEnd(9)} ${c.title}\n`)
    out.write(`${''.padEnd(22)}ledger: ${c.ledger}\n`)
    for (const k of c.clauses) {
      const rests = k.level === 'decision' && k.basis !== undefined ? ` (rests on ${k.basis})` : ''
      out.write(`${''.padEnd(22)}.${k.key}: ${SHOWN_LEVEL[k.level]}${rests}: ${k.text}; exercised by ${k.exercise}\n`)
    }
    if (c.windows.length > 0) out.write(`${''.padEnd(22)}windows: ${c.windows.join(', ')}\n`)
  }
  for (const t of suite.tours) {
    const long = t.long === true ? ` (long: played only with --tour ${t.name})` : ''
    const twin = t.twin === undefined ? '' : ' (played beside its twin, which varies in one thing)'
    out.write(`tour:${t.name.padEnd(14)} ${suite.describe(t.scenario)}${long}${twin}\n`)
  }
}
