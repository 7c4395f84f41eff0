import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Test } from 'tap'
import { requirementOf } from '../../conformance/server/core/case.js'
import { ROOT } from './root.js'

/**
 * A suite covers its part of the ledger: every [server] and [both] id has a case, or its coverage file says why it
 * cannot be tested from outside; coverage and cases name only ledger ids; ids are unique; decision ids (`<prefix>-A…`)
 * are decision cases and the others required ones.
 */
export function checkCoverage (
  t: Test,
  suite: 'orbtile' | 'orb',
  cases: ReadonlyArray<{ id: string, level: string }>,
  prefix: 'OT' | 'ORB'
): void {
  const dir = join(ROOT, 'conformance', 'server', suite)
  const { requirements, decisions } = JSON.parse(readFileSync(join(dir, 'requirements.json'), 'utf8')) as {
    requirements: Record<string, { kind: string }>
    decisions: string[]
  }
  const coverage = JSON.parse(readFileSync(join(dir, 'coverage.json'), 'utf8')) as Record<string, string>
  const cased = new Set(cases.map((c) => requirementOf(c.id)))
  const reasoned = (id: string): boolean => typeof coverage[id] === 'string' && coverage[id].length > 10
  const missing = Object.entries(requirements)
    .filter(([id, r]) => r.kind !== 'client' && !cased.has(id) && !reasoned(id))
    .map(([id]) => id)
  t.same(missing, [], 'server and both requirements without a case or a reason')
  t.same(Object.keys(coverage).filter((id) => cased.has(id)), [], 'no coverage entry for an id that has a case')
  t.same(Object.keys(coverage).filter((id) => requirements[id] === undefined), [], 'coverage names only ledger ids')
  const unknown = [...cased].filter((id) => requirements[id] === undefined && !decisions.includes(id))
  t.same(unknown, [], 'every case proves a ledger id')
  const ids = cases.map((c) => c.id)
  t.same(ids.filter((id, i) => ids.indexOf(id) !== i), [], 'case ids are unique')
  const decision = (id: string): boolean => id.startsWith(`${prefix}-A`)
  t.ok(cases.filter((c) => decision(c.id)).every((c) => c.level === 'decision'), `${prefix}-A cases are decisions`)
  t.ok(cases.filter((c) => !decision(c.id)).every((c) => c.level === 'required'), `${prefix} cases are required`)
}
