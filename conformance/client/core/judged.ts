// The report of a judged run (`orbtest up --judge`, `orbtest proxy`): the client rules read off live traffic, with no
// scenario, in one report whose form follows the file's extension; and, when a proxy read the server's replies too,
// what the server answered that the spec does not allow.
import { writeFileSync } from 'node:fs'
import { extname } from 'node:path'
import type { CheckDef } from './check.js'
import { renderHtml } from './html.js'
import type { CheckFinding, CheckSummary, ClientRunReport, JournalEntry, ServerFinding } from './journal.js'
import { clientJson, clientJunit, clientTapLine, clientTapSummary } from './report.js'
import { clientRunPassed, summarize } from './verdict.js'

/** What the judged traffic passed through, as the report names it. */
export interface JudgedVia {
  /** The command, in the report's title. */
  command: string
  /** What received the requests, in its summary and its end. */
  receiver: string
}

export interface JudgedRun {
  suite: 'orbtile' | 'orb'
  /** The API's name, in the report's title. */
  api: string
  via: JudgedVia
  /** The checks applied. */
  defs: ReadonlyArray<CheckDef<any>>
  /** When the judging began: an ISO time, and `performance.now()`. */
  since: string
  started: number
}

/** A judged run that begins now. */
export function judgedRun (
  suite: JudgedRun['suite'],
  api: string,
  via: JudgedVia,
  defs: ReadonlyArray<CheckDef<any>>
): JudgedRun {
  return { suite, api, via, defs, since: new Date().toISOString(), started: performance.now() }
}

/** Each check's summary over a judged run's findings: the live verdicts and the report's are this one function. */
export function judgedSummaries (run: JudgedRun, findings: CheckFinding[]): CheckSummary[] {
  return summarize(run.defs, [{ name: 'judged', findings }], { strict: false })
}

/** Writes the report to `file` (HTML, JUnit XML, JSON or TAP by its extension); whether every required rule held. */
export function writeJudgedReport (
  file: string,
  run: JudgedRun,
  judged: { findings: CheckFinding[], journal: JournalEntry[], dropped: number },
  server?: readonly ServerFinding[]
): boolean {
  const checks = judgedSummaries(run, judged.findings)
  const ms = Math.round(performance.now() - run.started)
  const report: ClientRunReport = {
    suite: run.suite,
    title: `${run.api}: client rules judged on live traffic (${run.via.command})`,
    command: [],
    seed: 0,
    strict: false,
    checks,
    scenarios: [{
      name: 'judged',
      summary: `every request ${run.via.receiver} received from ${run.since}`,
      ms,
      exit: `${run.via.receiver} stopped`,
      findings: judged.findings,
      journal: judged.journal,
      dropped: judged.dropped
    }],
    ms,
    ...(server === undefined ? {} : { server })
  }
  const ext = extname(file).toLowerCase()
  const text = ext === '.html' || ext === '.htm'
    ? renderHtml(report)
    : ext === '.xml'
      ? clientJunit(report, checks)
      : ext === '.json'
        ? clientJson(report, checks, run.defs)
        : `TAP version 14\n# ${report.title}\n1..${checks.length}\n${checks.map((c, i) => clientTapLine(c, i + 1)).join('')}${clientTapSummary(report, checks)}${serverTap(server)}`
  writeFileSync(file, text)
  return clientRunPassed(report)
}

/** The server's findings as TAP comments, after the client's verdicts. */
function serverTap (server: readonly ServerFinding[] | undefined): string {
  if (server === undefined) return ''
  const lines = server.map((f) => `#   ${f.id} (${f.level}) ${f.what}: ${f.message}`)
  return [`# the server: ${server.length} finding(s)`, ...lines].map((line) => `${line}\n`).join('')
}
