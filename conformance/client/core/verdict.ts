import { clauseOf, type CheckDef } from './check.js'
import type { CheckFinding, CheckSummary, ClauseCount, ClientRunReport, ClientVerdict, Violation } from './journal.js'

/** The order in which a verdict decides over others: a failure anywhere, then a non-strict finding, and so on. */
const STRONGEST: readonly ClientVerdict[] = ['fail', 'non-strict', 'inconclusive', 'pass', 'not-exercised']

/** Where a scenario's findings come from, for a summary to name it. */
export interface Played {
  name: string
  findings: readonly CheckFinding[]
  replay?: { seed: number, path: string }
}

/**
 * Each check's findings over the scenarios, folded into one verdict: the strongest verdict of any scenario, with
 * its first case as the reason. The live verdicts of a judged run and every report come from this one function.
 */
export function summarize (
  defs: ReadonlyArray<CheckDef<any>>,
  played: readonly Played[],
  options: { strict: boolean, expectFailures?: ReadonlyMap<string, string> }
): CheckSummary[] {
  return defs.map((def) => {
    const found = played.flatMap((p) => p.findings.filter((f) => f.id === def.id).map((f) => ({ p, f })))
    const base: CheckSummary = {
      id: def.id,
      title: def.title,
      level: def.level,
      verdict: 'not-exercised',
      exercised: found.reduce((n, { f }) => n + f.exercised, 0),
      violationCount: found.reduce((n, { f }) => n + f.violationCount, 0),
      inconclusiveCount: found.reduce((n, { f }) => n + f.inconclusiveCount, 0),
      clauses: addClauses(found.map(({ f }) => f.clauses))
    }
    const expected = options.expectFailures?.get(def.id)
    if (expected !== undefined) base.expectedFailure = expected
    if (def.level === 'info') {
      // Each scenario's note lists what it saw, `; ` between: the run's note is their union.
      const notes = [...new Set(found.flatMap(({ f }) => (f.note ?? '').split('; ')).filter((n) => n !== ''))]
      return { ...base, verdict: 'informational', note: notes.sort().join('; ') }
    }
    const verdict = STRONGEST.find((v) => found.some(({ f }) => f.verdict === v)) ?? 'not-exercised'
    const shown = found.find(({ f }) => f.verdict === verdict)
    const strict = options.strict && verdict === 'non-strict'
    const summary: CheckSummary = { ...base, verdict: strict ? 'fail' : verdict }
    if (shown === undefined) return { ...summary, note: `needs ${def.clauses.map((c) => c.exercise).join('; or ')}` }
    const { p, f } = shown
    const cases = verdict === 'inconclusive' ? f.inconclusive : f.violations
    const first = cases[0]
    if (first === undefined) return f.note === undefined ? summary : { ...summary, note: f.note }
    return {
      ...summary,
      ...reasonOf(def, first, p.name),
      ...(f.note === undefined ? {} : { note: f.note }),
      where: { scenario: p.name, ...(first.seq === undefined ? {} : { seq: first.seq }) },
      ...(p.replay === undefined ? {} : { replay: p.replay })
    }
  })
}

/** The first case's words, with its clause and, for one that rests on a decision, what it rests on. */
function reasonOf (def: CheckDef<any>, v: Violation, scenario: string): Partial<CheckSummary> {
  const clause = v.clause === undefined ? undefined : clauseOf(def, v.clause)
  const rests = clause?.level !== 'decision' || clause.basis === undefined
    ? ''
    : ` [rests on ${clause.basis}${clause.why === undefined ? '' : `: ${clause.why}`}]`
  return {
    reason: `${v.message} (in ${scenario})${rests}`,
    expected: v.expected,
    actual: v.actual,
    ...(clause === undefined ? {} : { clause: `${def.id}.${clause.key}` })
  }
}

function addClauses (all: ReadonlyArray<Record<string, ClauseCount>>): Record<string, ClauseCount> {
  const out: Record<string, ClauseCount> = {}
  for (const clauses of all) {
    for (const [key, c] of Object.entries(clauses)) {
      const sum = out[key] ?? { exercised: 0, violations: 0, inconclusive: 0 }
      out[key] = {
        exercised: sum.exercised + c.exercised,
        violations: sum.violations + c.violations,
        inconclusive: sum.inconclusive + c.inconclusive
      }
    }
  }
  return out
}

/** The ids a scenario fails, as the run counts failures (non-strict findings only with --strict). */
export function failedIds (findings: readonly CheckFinding[], strict: boolean): string[] {
  return findings.filter((f) => f.verdict === 'fail' || (strict && f.verdict === 'non-strict')).map((f) => f.id)
}

/** Whether the run passed: no failure that was not expected. */
export function clientRunPassed (report: Pick<ClientRunReport, 'checks'>): boolean {
  return report.checks.every((c) => c.verdict !== 'fail' || c.expectedFailure !== undefined)
}

/** How many checks have each verdict (failures expected by --expect-failures apart). */
export function verdictCounts (checks: readonly CheckSummary[]): Record<ClientVerdict | 'expected', number> {
  const n = (v: ClientVerdict): number => checks.filter((c) => c.verdict === v).length
  const expected = checks.filter((c) => c.verdict === 'fail' && c.expectedFailure !== undefined).length
  return {
    pass: n('pass'),
    fail: n('fail') - expected,
    expected,
    'non-strict': n('non-strict'),
    inconclusive: n('inconclusive'),
    'not-exercised': n('not-exercised'),
    informational: n('informational')
  }
}
