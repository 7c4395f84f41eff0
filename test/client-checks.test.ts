// The client suite's list of checks against the ledger: every [client] and [both] rule of part 1 is judged, and what
// cannot be judged whole is said; the command line's --list and its refusals.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import t from 'tap'
import { conformance } from '../conformance/index.js'
import { CHECKS } from '../conformance/orbtile-client/checks/index.js'
import { picksProblem } from '../conformance/orbtile-client/checks/decisions.js'
import { TOURS } from '../conformance/orbtile-client/scenario.js'
import { UsageError } from '../src/cli/args.js'
import { ROOT } from './helpers/root.js'

const root = ROOT
const requirements = (
  JSON.parse(readFileSync(join(root, 'conformance', 'orbtile', 'requirements.json'), 'utf8')) as {
    requirements: Record<string, { kind: string }>
  }
).requirements
const coverage = (
  JSON.parse(readFileSync(join(root, 'conformance', 'orbtile-client', 'coverage.json'), 'utf8')) as {
    partial: Record<string, string>
  }
).partial

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

t.test(
  'CLIENT-09 every [client] and [both] id of part 1 has a check; partial ones say what is not judged',
  async (t) => {
    const clientIds = Object.entries(requirements)
      .filter(([, r]) => r.kind === 'client' || r.kind === 'both')
      .map(([id]) => id)
    const checked = new Set(CHECKS.map((c) => c.id))
    t.same(
      clientIds.filter((id) => !checked.has(id)),
      [],
      'client rules without a check'
    )
    t.ok(clientIds.length >= 25, `${clientIds.length} client and both rules in part 1`)
    t.same(
      Object.keys(coverage).filter((id) => !checked.has(id)),
      [],
      'coverage notes name checked ids'
    )
    t.ok(
      Object.values(coverage).every((why) => why.length > 40),
      'each says what is left out'
    )
    const ids = CHECKS.map((c) => c.id)
    t.same(
      ids.filter((id, i) => ids.indexOf(id) !== i),
      [],
      'check ids are unique'
    )
    for (const c of CHECKS) {
      const ledger = requirements[c.id]
      if (/^OT-\d/.test(c.id)) {
        t.ok(ledger?.kind === 'client' || ledger?.kind === 'both', `${c.id} is a client rule of the ledger`)
      }
      if (/^OT-A/.test(c.id) || /^OTC-/.test(c.id)) {
        t.ok(['decision', 'required'].includes(c.level), `${c.id}: ${c.level}`)
      }
    }
  }
)

t.test('CLIENT-10 --list prints every check and tour; bad flags are usage errors', async (t) => {
  const s = sink()
  t.equal(await conformance(['--client', 'orbtile', '--list'], s.out), 0)
  for (const c of CHECKS) t.match(s.text(), new RegExp(`^${c.id} +${c.level} +`, 'm'), `${c.id} listed`)
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
