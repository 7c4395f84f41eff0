import { xml } from '../report.js'
import type { CheckSummary, ClientRunReport, ScenarioReport } from './journal.js'

/** How to play a check's failing scenario again: its tour, or fast-check's seed and path. */
export function replayFlags (c: CheckSummary): string | undefined {
  if (c.replay !== undefined) return `--seed ${c.replay.seed} --path ${c.replay.path} --tour none`
  const tour = c.where?.scenario.match(/^tour:(.+)$/)?.[1]
  return tour === undefined ? undefined : `--tour ${tour} --scenarios 0`
}

/** One check as a TAP 14 test point; a YAML block for what a person needs to act on a finding. */
export function clientTapLine (c: CheckSummary, index: number): string {
  const name = `${c.id} ${c.title}`
  let line: string
  switch (c.verdict) {
    case 'pass': line = `ok ${index} - ${name}`; break
    case 'not-exercised': line = `ok ${index} - ${name} # SKIP ${c.note ?? 'not exercised'}`; break
    case 'non-strict': line = `not ok ${index} - ${name} # TODO non-strict: a SHOULD of the spec, failing only with --strict`; break
    case 'informational':
      line = c.level === 'info'
        ? `ok ${index} - ${name} # informational: ${c.note ?? ''}`
        : `not ok ${index} - ${name} # TODO informational: a decision of orbtest's, failing only with --strict`
      break
    default:
      line = c.expectedFailure === undefined ? `not ok ${index} - ${name}` : `not ok ${index} - ${name} # TODO expected failure: ${c.expectedFailure}`
  }
  if (c.reason === undefined) return `${line}\n`
  const yaml = ['  ---', `  message: ${JSON.stringify(c.reason)}`]
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

export function clientTapSummary (r: ClientRunReport, shown: readonly CheckSummary[]): string {
  const n = (v: CheckSummary['verdict']): number => shown.filter((c) => c.verdict === v).length
  const expected = shown.filter((c) => c.verdict === 'fail' && c.expectedFailure !== undefined).length
  const requests = r.scenarios.reduce((sum, s) => sum + s.journal.filter((e) => e.kind === 'exchange').length, 0)
  return `# pass ${n('pass')}  fail ${n('fail') - expected}  expected failures ${expected}  non-strict ${n('non-strict')}  not exercised ${n('not-exercised')}  informational ${n('informational')}\n# ${shown.length} checks, ${r.scenarios.length} scenarios, ${requests} requests, ${(r.ms / 1000).toFixed(1)} s\n`
}

/** JUnit XML: one testcase per check; non-strict, informational and expected failures are not failures there. */
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
  return `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites>\n  <testsuite name="${xml(r.title)}" tests="${shown.length}" failures="${failures}" skipped="${skipped}" time="${(r.ms / 1000).toFixed(3)}">\n${cases.join('\n')}\n  </testsuite>\n</testsuites>\n`
}

/** The JSON report: every check, every scenario's findings, and the journal of each scenario with a violation. */
/** The JSON report; `suiteFlags` are the suite's own flags of the run (`--webhook`), for a replay command. */
export function clientJson (
  r: ClientRunReport,
  shown: readonly CheckSummary[],
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
    scenarios: r.scenarios.map((s) => {
      const bad = s.findings.filter((f) => f.verdict !== 'pass' && f.verdict !== 'not-exercised')
      return {
        name: s.name,
        summary: s.summary,
        ...(s.replay === undefined ? {} : { replay: s.replay }),
        exit: s.exit,
        ms: s.ms,
        findings: bad,
        ...(bad.some((f) => f.violationCount > 0) ? { journal: s.journal, dropped: s.dropped } : {})
      }
    })
  }, null, 2)}\n`
}
