// Each deliberate fault of the Node reference adapter fails the check named for it: proof that the client checks bite.
import { rmSync } from 'node:fs'
import { group } from './group.js'
import { CHECKS } from '../../conformance/orbtile-client/checks/index.js'
import { NODE_ADAPTER, pool, run, SEED, settle } from '../helpers/client-run.js'

const t = group()

/**
 * Each fault of the Node reference adapter (its --fault switch), the tour that exercises it, and the check it must
 * fail. `strict` marks the faults whose finding is a SHOULD (non-strict), a decision of orbtest's, or rests on one
 * (OTC-01's stand-in for "applied"): those fail the run only with --strict, so they run with it, and also once
 * without it to show they are reported but do not fail the run.
 */
const FAULTS: ReadonlyArray<{ fault: string; tour: string; id: string; strict?: true }> = [
  { fault: 'no-host', tour: 'basic', id: 'OT-011' },
  { fault: 'origin', tour: 'basic', id: 'OT-014' },
  { fault: 'info-no-content-type', tour: 'basic', id: 'OT-012' },
  { fault: 'batch-no-adapter-token', tour: 'basic', id: 'OT-019' },
  { fault: 'ignore-retry-after', tour: 'wire', id: 'OT-027' },
  { fault: 'flood', tour: 'basic', id: 'OT-027' },
  { fault: 'two-polls', tour: 'basic', id: 'OT-134' },
  { fault: 'ack-on-receipt', tour: 'decisions', id: 'OT-139', strict: true },
  { fault: 'apply-expired', tour: 'decisions', id: 'OT-147', strict: true },
  { fault: 'apply-bad-picks', tour: 'decisions', id: 'OT-148', strict: true },
  { fault: 'reuse-request-id', tour: 'decisions', id: 'OT-128' },
  { fault: 'missed-heartbeat', tour: 'heartbeat', id: 'OT-113' },
  { fault: 'hardcoded-socket', tour: 'basic', id: 'OT-002' },
  { fault: 'stale-discovery', tour: 'app', id: 'OT-005' },
  { fault: 'log-token', tour: 'basic', id: 'OT-022' },
  { fault: 'token-file', tour: 'basic', id: 'OT-022' },
  { fault: 'crash-on-unknown-field', tour: 'wire', id: 'OT-008' },
  { fault: 'icon-dropped', tour: 'app', id: 'OT-064' },
  { fault: 'cursor-past', tour: 'decisions', id: 'OT-138' },
  { fault: 'ack-decreases', tour: 'decisions', id: 'OT-138' },
  { fault: 'hue-205', tour: 'basic', id: 'OT-074', strict: true },
  { fault: 'trust-impostor', tour: 'impostor', id: 'OT-039' },
  { fault: 'unknown-palette-key', tour: 'basic', id: 'OT-A10', strict: true },
  { fault: 'crash', tour: 'basic', id: 'OTC-03' },
  { fault: 'garbage', tour: 'basic', id: 'OTC-02' },
  { fault: 'connections', tour: 'basic', id: 'OTC-04', strict: true },
  { fault: 'ignore-sigterm', tour: 'basic', id: 'OTC-05', strict: true },
  { fault: 'invalid-body', tour: 'decisions', id: 'OTC-06' },
  { fault: 'freeze-on-unknown-field', tour: 'wire', id: 'OT-008' }
]

// One SHOULD and one decision stand for the rest without --strict: the strict runs show each of them bites.
const soft = FAULTS.filter((f) => f.fault === 'hue-205' || f.fault === 'unknown-palette-key')
// Every run starts at once, six at a time (at ten, a fresh clone once missed apply-expired), and the tests read them:
// the adapters mostly wait on the tours' clocks.
const plays = [...FAULTS, ...soft.map((f) => ({ ...f, strict: undefined }))]
const play = async (f: (typeof plays)[number]): Promise<Awaited<ReturnType<typeof run>>> => await run(
  ['--seed', String(SEED), '--tour', f.tour, '--scenarios', '0', ...(f.strict === true ? ['--strict'] : [])],
  [process.execPath, NODE_ADAPTER, '--fault', f.fault]
)
// A fault whose finding waits on a window the judge widens by its own stalls (OTC-17) is played after the others,
// alone: beside five other runs judged in this process, on a slow machine, the judge was starved enough to abstain
// from freeze-on-unknown-field (OT-008) in one fresh-clone run after another (#19).
const ALONE = new Set(['freeze-on-unknown-field'])
// Even alone, a fresh clone's loaded run missed it about one time in four (docs/client-conformance.md, OTC-23): it
// must be caught in one of two plays. A broken check misses both.
const playAlone = async (f: (typeof plays)[number]): Promise<Awaited<ReturnType<typeof run>>> => {
  const first = await play(f)
  if (first.json.checks.find((c) => c.id === f.id)?.verdict === 'fail') return first
  rmSync(first.dir, { recursive: true, force: true })
  return await play(f)
}
const strictRuns = pool(plays.filter((f) => !ALONE.has(f.fault)), 6, play).then(async (crowd) => {
  const results: Array<Awaited<ReturnType<typeof run>>> = []
  let next = 0
  for (const f of plays) results.push(ALONE.has(f.fault) ? await playAlone(f) : crowd[next++]!)
  return results
})

t.test('CLIENT-03 each deliberate fault of the Node adapter fails the check named for it', async (t) => {
  const results = (await strictRuns).slice(0, FAULTS.length)
  for (const [i, f] of FAULTS.entries()) {
    const r = results[i]!
    const c = r.json.checks.find((x) => x.id === f.id)!
    t.equal(c.verdict, 'fail', `${f.fault}: ${f.id} fails${f.strict === true ? ' with --strict' : ''} (${c.reason ?? c.note ?? 'no reason'})`)
    t.equal(r.code, 1, `${f.fault}: exit 1`)
    settle(t, r)
  }
  t.same(
    [...new Set(FAULTS.map((f) => f.fault))].length,
    FAULTS.length,
    `${FAULTS.length} distinct faults across ${new Set(FAULTS.map((f) => f.id)).size} checks`
  )
})

t.test('CLIENT-03 without --strict, a finding that is a SHOULD or a decision is reported and the run passes', async (t) => {
  const results = (await strictRuns).slice(FAULTS.length)
  for (const [i, f] of soft.entries()) {
    const r = results[i]!
    const level = CHECKS.find((c) => c.id === f.id)!.level
    const c = r.json.checks.find((x) => x.id === f.id)!
    const expected = level === 'should' ? 'non-strict' : 'informational'
    t.equal(c.verdict, expected, `${f.fault}: ${f.id} is ${expected}`)
    t.ok(c.violationCount > 0, `${f.fault}: with its violation`)
    t.equal(r.code, 0, `${f.fault}: exit 0`)
    settle(t, r)
  }
})
