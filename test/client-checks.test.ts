// The client suite's list of checks against the ledger: every [client] and [both] rule of part 1 is judged, and what
// cannot be judged whole is said; the command line's --list and its refusals.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import t from 'tap'
import { conformance } from '../src/cli/main.js'
import { CHECKS } from '../conformance/client/orbtile/checks/index.js'
import { picksProblem } from '../conformance/client/orbtile/checks/deliveries.js'
import { ORB_CLIENT_CHECKS } from '../conformance/client/orb/checks.js'
import { WINDOWS, type Window } from '../conformance/client/core/windows.js'
import { LIMITS } from '../src/spec/orbtile.js'
import { FAULTS } from '../trust/faults.js'
import { TOURS } from '../conformance/client/orbtile/scenario.js'
import { UsageError } from '../src/shared/usage-error.js'
import { ROOT } from './helpers/root.js'

const root = ROOT
const sink = (): { out: Writable; text: () => string } => {
  let text = ''
  return {
    out: new Writable({
      write (chunk, _e, done) {
        text += String(chunk)
        done()
      }
    }),
    text: () => text
  }
}

/** A suite's requirements (part 1 or part 2 of the ledger) and its coverage file's unobservable clauses. */
function ledger (api: 'orbtile' | 'orb'): {
  ids: string[]
  unobservable: Record<string, string>
} {
  const file = join(root, 'conformance', 'server', api, 'requirements.json')
  const requirements = (JSON.parse(readFileSync(file, 'utf8')) as {
    requirements: Record<string, { kind: string }>
  }).requirements
  const coverage = JSON.parse(readFileSync(join(root, 'conformance', 'client', api, 'coverage.json'), 'utf8')) as {
    unobservable: Record<string, string>
  }
  const ids = Object.entries(requirements).filter(([, r]) => r.kind === 'client' || r.kind === 'both').map(([id]) => id)
  return { ids, unobservable: coverage.unobservable }
}

for (const [name, checks, api, floor] of [
  ['part 1', CHECKS, 'orbtile', 25],
  ['part 2', ORB_CLIENT_CHECKS, 'orb', 15]
] as const) {
  t.test(`CLIENT-09 every [client] and [both] rule of ${name} has a check or a clause the coverage file says cannot be seen`, async (t) => {
    const { ids, unobservable } = ledger(api)
    const checked = new Set<string>(checks.map((c) => c.id))
    const said = new Set(Object.keys(unobservable).map((k) => k.split('.')[0]!))
    t.same(ids.filter((id) => !checked.has(id) && !said.has(id)), [], 'rules with neither')
    t.ok(ids.length >= floor, `${ids.length} client and both rules in ${name}`)
    for (const [clause, why] of Object.entries(unobservable)) {
      t.ok(ids.includes(clause.split('.')[0]!), `${clause}: a client rule of the ledger`)
      t.ok(why.length > 40, `${clause}: says why it cannot be seen`)
    }
    const all = checks.map((c) => c.id)
    t.same(all.filter((id, i) => all.indexOf(id) !== i), [], 'check ids are unique')
  })
}

t.test('CLIENT-09 each check is plain data: its level, the ledger sentence, clauses with what exercises them, windows that exist', async (t) => {
  for (const c of [...CHECKS, ...ORB_CLIENT_CHECKS]) {
    t.ok(['MUST', 'SHOULD', 'decision', 'info'].includes(c.level), `${c.id}: ${c.level}`)
    t.ok(c.ledger.length > 20, `${c.id}: the ledger sentence`)
    t.ok(c.clauses.length > 0, `${c.id}: its clauses`)
    // OTC-06 is the spec's own schemas, judged as its MUST; every other check orbtest numbers is a decision.
    if (/^(OTC|OBC)-|-A\d/.test(c.id) && c.id !== 'OTC-06') {
      t.equal(c.level, 'decision', `${c.id}: a decision of orbtest's`)
    }
    for (const k of c.clauses) {
      t.ok(k.exercise.length > 5, `${c.id}.${k.key}: what exercises it`)
      if (k.level === 'decision') t.ok(k.basis !== undefined, `${c.id}.${k.key}: what it rests on`)
      if (k.level === 'decision' && c.level === 'MUST') {
        t.ok(
          (k.why ?? '').length > 20 || k.basis?.startsWith('OT-A') === true || k.basis?.startsWith('ORB-A') === true ||
            /^(OTC|OBC)-/.test(k.basis ?? ''),
          `${c.id}.${k.key}: why it is not failed`
        )
      }
    }
    for (const w of c.windows) t.ok(w in WINDOWS, `${c.id}: window ${w} is in the table`)
  }
})

t.test('CLIENT-09 the numbers a windows row gives the checks are the ones its value states (docs/judging.md prints the value)', async (t) => {
  for (const [id, row] of Object.entries(WINDOWS) as Array<[string, Window]>) {
    const stated = (row.value.match(/\d+(\.\d+)?/g) ?? []).map(Number)
    for (const [name, bound] of Object.entries(row.bounds ?? {})) {
      for (const n of [bound].flat()) t.ok(stated.includes(n), `${id}: ${name} ${n} is in "${row.value}"`)
    }
  }
  t.equal(WINDOWS['orbtile-rate'].n, LIMITS.requestsPerSecond, 'the rate is the spec\'s limits.requestsPerSecond')
  t.equal(WINDOWS['orbtile-rate'].bounds.burst, LIMITS.burst, 'the burst is the spec\'s limits.burst')
})

t.test('CLIENT-14 every clause a check judges has a reference fault that breaks it (trust/faults.ts)', async (t) => {
  const faulted = new Set(FAULTS.flatMap((f) => f.clauses))
  for (const c of [...CHECKS, ...ORB_CLIENT_CHECKS]) {
    for (const k of c.clauses) {
      if (k.level === 'info') continue
      t.ok(faulted.has(`${c.id}.${k.key}`), `${c.id}.${k.key}: a fault breaks it`)
    }
  }
  for (const clause of faulted) {
    const [id, key] = clause.split('.')
    const c = [...CHECKS, ...ORB_CLIENT_CHECKS].find((x) => x.id === id)
    t.ok(c?.clauses.some((k) => k.key === key), `${clause}: a clause of a check`)
  }
})

t.test('CLIENT-10 --list prints every check and tour; bad flags are usage errors', async (t) => {
  const s = sink()
  t.equal(await conformance(['--client', 'orbtile', '--list'], s.out), 0)
  for (const c of CHECKS) {
    t.match(s.text(), new RegExp(`^${c.id} +${c.level} +`, 'm'), `${c.id} listed with its level`)
    for (const k of c.clauses) t.match(s.text(), `.${k.key}: ${k.level}`, `${c.id}.${k.key} listed`)
  }
  t.match(s.text(), /ledger: Clients ignore unknown response fields/, 'with the ledger sentence')
  t.match(s.text(), /windows: ttl-seconds, ttl-default, measurement-error, served/, 'and the windows')
  for (const tour of TOURS) t.match(s.text(), `tour:${tour.name}`, `tour ${tour.name} listed`)
  const refused = async (args: string[], message: RegExp): Promise<void> => {
    await t.rejects(conformance(args, sink().out), { constructor: UsageError, message }, args.join(' '))
  }
  await refused(['--client', 'nope', '--', 'true'], /--client takes orbtile/)
  await refused(['--client', 'orbtile'], /give the client to judge after --/)
  await refused(['--client', 'orbtile', '--tour', 'nope', '--', 'true'], /--tour takes/)
  await refused(['--client', 'orbtile', '--grep', 'XX-', '--', 'true'], /selects no check/)
  await refused(['--client', 'orbtile', '--path', 'a:b', '--', 'true'], /--path takes/)
  await refused(['--client', 'orbtile', '--tour', 'none', '--scenarios', '0', '--', 'true'], /nothing to play/)
})

t.test(
  'OT-148 the picks rule as the checks apply it: one per single-select, unique, each index an option',
  async (t) => {
    const request = {
      kind: 'question' as const,
      id: 'q1',
      sessionId: 's',
      since: 0,
      content: {
        questions: [
          { multiSelect: false, options: [{}, {}] },
          { multiSelect: true, options: [{}, {}, {}] }
        ]
      }
    }
    t.equal(picksProblem([[0], [0, 2]], request), undefined, 'valid picks')
    t.match(picksProblem([[0, 1], [0]], request), /single-select/, 'two picks on a single-select')
    t.match(picksProblem([[2], [0]], request), /pick 2 of 2 options/, 'an index past the options')
    t.match(picksProblem([[0], [1, 1]], request), /repeated/, 'a repeated pick')
    t.match(picksProblem([[0]], request), /1 answers for 2 questions/, 'an answer missing')
    t.match(picksProblem([[0], []], request), /no pick/, 'an empty answer')
  }
)
