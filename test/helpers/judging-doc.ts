// The generated parts of the client suites' docs: the windows table (docs/judging.md) and each suite's table of
// checks and clauses (docs/client-conformance.md, docs/bot-conformance.md), written from the checks themselves.
import type { CheckDef } from '../../conformance/client/core/check.js'
import { WINDOWS, type Window } from '../../conformance/client/core/windows.js'
import { ORB_CLIENT_CHECKS } from '../../conformance/client/orb/checks.js'
import { CHECKS } from '../../conformance/client/orbtile/checks/index.js'

/** The markers a page keeps a generated table between. */
export const begin = (what: string): string => `<!-- ${what}: generated from the checks by scripts/judging-doc.ts -->`
export const end = (what: string): string => `<!-- ${what}: end -->`

const cell = (text: string): string => text.replace(/\|/g, '\\|').replace(/\n/g, ' ')

const KIND: Record<Window['kind'], string> = {
  spec: 'the spec',
  decision: 'orbtest (non-strict)',
  excuse: 'an excuse (inconclusive)',
  scenario: 'a scenario\'s pace'
}

/** The windows table: every row, what kind it is, its value, where it comes from, and the checks that cite it. */
export function windowsTable (): string {
  const all: ReadonlyArray<CheckDef<any>> = [...CHECKS, ...ORB_CLIENT_CHECKS]
  const rows = Object.entries(WINDOWS).map(([id, w]: [string, Window]) => {
    const cited = all.filter((c) => (c.windows as readonly string[]).includes(id)).map((c) => c.id)
    return `| \`${id}\` | ${KIND[w.kind]} | ${cell(w.value)} | ${cell(w.from)} | ${cited.join(', ') || '(scenarios)'} |`
  })
  return [
    '| window | from | value | where it comes from | cited by |',
    '| --- | --- | --- | --- | --- |',
    ...rows
  ].join('\n')
}

/** A suite's checks: each clause with its level (and what a non-strict one rests on) and what exercises it. */
export function checksTable (suite: 'orbtile' | 'orb'): string {
  const checks: ReadonlyArray<CheckDef<any>> = suite === 'orbtile' ? CHECKS : ORB_CLIENT_CHECKS
  const rows = checks.flatMap((c) => c.clauses.map((k, i) => {
    const level = k.level === 'decision' && k.basis !== undefined ? `decision (${k.basis})` : k.level
    const head = i === 0 ? `**${c.id}** (${c.level})` : ''
    return `| ${head} | \`.${k.key}\` | ${level} | ${cell(k.text)} | ${cell(k.exercise)} |`
  }))
  return ['| check | clause | level | what is judged | what exercises it |', '| --- | --- | --- | --- | --- |', ...rows]
    .join('\n')
}

/** Each generated part: the page it is in, its marker's name, and its text. */
export function generatedParts (): Array<{ page: string, what: string, text: string }> {
  return [
    { page: 'judging.md', what: 'windows', text: windowsTable() },
    { page: 'client-conformance.md', what: 'checks', text: checksTable('orbtile') },
    { page: 'bot-conformance.md', what: 'checks', text: checksTable('orb') }
  ]
}
