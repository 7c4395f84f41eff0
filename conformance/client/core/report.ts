import { xml } from '../../report.js'
import type { CheckDef } from './check.js'
import type { CheckSummary, ClientRunReport, JournalEntry, ScenarioReport } from './journal.js'
import { verdictCounts } from './verdict.js'

/** How to play a check's failing scenario again: its tour, or fast-check's seed and path. */
export function replayFlags (c: CheckSummary): string | undefined {
  if (c.replay !== undefined) return `--seed ${c.replay.seed} --path ${c.replay.path} --tour none`
  const tour = c.where?.scenario.match(/^tour:([^:]+)/)?.[1]
  return tour === undefined ? undefined : `--tour ${tour} --scenarios 0`
}

/** The words after a TAP line's `#`: why a finding that is not a pass reads as it does. */
function directive (c: CheckSummary): string {
  switch (c.verdict) {
    case 'pass': return ''
    case 'not-exercised': return ` # SKIP not exercised: ${c.note ?? ''}`
    case 'inconclusive': return ` # inconclusive (never fails the run): ${c.reason ?? c.note ?? ''}`
    case 'non-strict': return ` # TODO non-strict, fails only with --strict: ${c.level === 'SHOULD' ? 'a SHOULD of the spec' : 'it rests on a decision of orbtest\'s (see the message)'}`
    case 'informational': return ` # informational: ${c.note ?? ''}`
    case 'fail': return c.expectedFailure === undefined ? '' : ` # TODO expected failure: ${c.expectedFailure}`
  }
}

/** One check as a TAP 14 test point; a YAML block for what a person needs to act on a finding. */
export function clientTapLine (c: CheckSummary, index: number): string {
  const line = `${c.verdict === 'fail' || c.verdict === 'non-strict' ? 'not ok' : 'ok'} ${index} - ${c.id} ${c.title}${directive(c)}`
  if (c.reason === undefined || c.verdict === 'inconclusive') return `${line}\n`
  const yaml = ['  ---', `  message: ${JSON.stringify(c.reason)}`]
  if (c.clause !== undefined) yaml.push(`  clause: ${JSON.stringify(c.clause)}`)
  if (c.expected !== undefined) yaml.push(`  expected: ${JSON.stringify(c.expected)}`)
  if (c.actual !== undefined) yaml.push(`  actual: ${JSON.stringify(c.actual)}`)
  if (c.where !== undefined) {
    yaml.push(`  where: ${JSON.stringify(`${c.where.scenario}${c.where.seq === undefined ? '' : ` #${c.where.seq}`}`)}`)
  }
  yaml.push(`  violations: ${c.violationCount}`)
  const replay = replayFlags(c)
  if (replay !== undefined) yaml.push(`  replay: ${JSON.stringify(replay)}`)
  if (c.shrunk !== undefined) {
    yaml.push(`  smallest: ${JSON.stringify(`--seed ${c.shrunk.seed} --path ${c.shrunk.path} --tour none`)}`)
  }
  yaml.push('  ...')
  return `${line}\n${yaml.join('\n')}\n`
}

/** A comment line per scenario as it ends, so a long run shows progress. */
export function scenarioComment (s: ScenarioReport, done: number, total: number): string {
  const bad = s.findings.filter((f) => f.violationCount > 0).map((f) => f.id)
  const requests = s.journal.filter((e) => e.kind === 'exchange').length
  return `# scenario ${done}/${total} ${s.name}: ${s.exit}; ${requests} requests, ${(s.ms / 1000).toFixed(1)} s${bad.length === 0 ? '' : `; findings: ${bad.join(', ')}`}\n`
}

/** The closing comments: the counts, and the non-strict findings a default run does not fail on, by name. */
export function clientTapSummary (r: ClientRunReport, shown: readonly CheckSummary[]): string {
  const n = verdictCounts(shown)
  const requests = r.scenarios.reduce((sum, s) => sum + s.journal.filter((e) => e.kind === 'exchange').length, 0)
  const lines = [
    `# pass ${n.pass}  fail ${n.fail}  expected failures ${n.expected}  non-strict ${n['non-strict']}  inconclusive ${n.inconclusive}  not exercised ${n['not-exercised']}  informational ${n.informational}`,
    `# ${shown.length} checks, ${r.scenarios.length} scenarios, ${requests} requests, ${(r.ms / 1000).toFixed(1)} s`
  ]
  const soft = shown.filter((c) => c.verdict === 'non-strict').map((c) => c.id)
  if (soft.length > 0) {
    lines.push(`# not failed, but found: ${soft.join(', ')} (non-strict: a SHOULD, or a finding that rests on orbtest's decisions; --strict fails them)`)
  }
  return `${lines.join('\n')}\n`
}

/** JUnit XML: one testcase per check; only a failure fails (non-strict and inconclusive findings are written out). */
export function clientJunit (r: ClientRunReport, shown: readonly CheckSummary[]): string {
  const failures = shown.filter((c) => c.verdict === 'fail' && c.expectedFailure === undefined).length
  const skipped = shown.filter((c) => c.verdict === 'not-exercised').length
  const cases = shown.map((c) => {
    const open = `    <testcase classname="${xml(`${r.suite}-client`)}" name="${xml(`${c.id} ${c.title}`)}"`
    if (c.verdict === 'pass') return `${open}/>`
    if (c.verdict === 'not-exercised') {
      return `${open}>\n      <skipped message="${xml(c.note ?? '')}"/>\n    </testcase>`
    }
    const detail = [
      `expected: ${c.expected ?? ''}`,
      `actual: ${c.actual ?? ''}`,
      `where: ${c.where?.scenario ?? ''}`,
      `replay: ${replayFlags(c) ?? ''}`
    ].join('\n')
    if (c.verdict === 'fail' && c.expectedFailure === undefined) {
      return `${open}>\n      <failure message="${xml(c.reason ?? '')}">${xml(detail)}</failure>\n    </testcase>`
    }
    return `${open}>\n      <system-out>${xml(`${c.expectedFailure === undefined ? c.verdict : `expected failure: ${c.expectedFailure}`}: ${c.reason ?? c.note ?? ''}\n${c.reason === undefined ? '' : detail}`)}</system-out>\n    </testcase>`
  })
  return `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites>\n  <testsuite name="${xml(r.title)}" tests="${shown.length}" failures="${failures}" skipped="${skipped}" time="${(r.ms / 1000).toFixed(3)}">\n${cases.join('\n')}\n  </testsuite>\n${serverSuite(r)}</testsuites>\n`
}

/**
 * The server's findings (`orbtest proxy`) as a testsuite of their own: each one a testcase with its finding in
 * system-out, not a failure (they fail a run only with --strict-server, which the exit code says).
 */
function serverSuite (r: ClientRunReport): string {
  if (r.server === undefined) return ''
  const cases = r.server.map((f) => {
    const name = xml(`${f.id} request ${f.request}`)
    const text = xml(`${f.level}: ${f.what}: ${f.message}`)
    return `    <testcase classname="${xml(`${r.suite}-server`)}" name="${name}">\n      <system-out>${text}</system-out>\n    </testcase>`
  })
  return `  <testsuite name="${xml(`${r.title}: the server`)}" tests="${r.server.length}" failures="0" skipped="0">\n${cases.join('\n')}${cases.length === 0 ? '' : '\n'}  </testsuite>\n`
}

/** A check's definition as the JSON report gives it: the rule, its clauses and the windows it rests on. */
export function ruleOf (d: CheckDef<any>): Record<string, unknown> {
  return {
    id: d.id,
    title: d.title,
    level: d.level,
    ledger: d.ledger,
    clauses: d.clauses.map((c) => ({ ...c, id: `${d.id}.${c.key}` })),
    windows: d.windows
  }
}

/** A scenario's journal with each entry a finding cites marked: the timeline the HTML shows, as data. */
function timeline (s: ScenarioReport): Array<JournalEntry & { marks?: unknown[] }> {
  const marks = new Map<number, unknown[]>()
  for (const f of s.findings) {
    const cases = [
      ...f.violations.map((v) => ({ v, as: 'violation' })),
      ...f.inconclusive.map((v) => ({ v, as: 'inconclusive' }))
    ]
    for (const { v, as } of cases) {
      if (v.seq === undefined) continue
      marks.set(v.seq, [
        ...(marks.get(v.seq) ?? []),
        { check: f.id, clause: v.clause, as, verdict: f.verdict, message: v.message }
      ])
    }
  }
  return s.journal.map((e) => marks.has(e.seq) ? { ...e, marks: marks.get(e.seq) } : e)
}

/**
 * The JSON report: every check (its rule, verdict and counts), and every scenario with its findings and its whole
 * journal, each entry a finding cites marked. `suiteFlags` are the suite's own flags of the run (`--webhook`).
 */
export function clientJson (
  r: ClientRunReport,
  shown: readonly CheckSummary[],
  rules: ReadonlyArray<CheckDef<any>>,
  suiteFlags: readonly string[] = []
): string {
  return `${JSON.stringify({
    suite: r.suite,
    kind: 'client',
    title: r.title,
    ...(suiteFlags.length === 0 ? {} : { suiteFlags }),
    command: r.command,
    seed: r.seed,
    strict: r.strict,
    ms: r.ms,
    checks: shown,
    ...(r.server === undefined ? {} : { server: r.server }),
    rules: rules.filter((d) => shown.some((c) => c.id === d.id)).map(ruleOf),
    scenarios: r.scenarios.map((s) => ({
      name: s.name,
      summary: s.summary,
      ...(s.replay === undefined ? {} : { replay: s.replay }),
      exit: s.exit,
      ms: s.ms,
      findings: s.findings,
      journal: timeline(s),
      dropped: s.dropped
    }))
  }, null, 2)}\n`
}
