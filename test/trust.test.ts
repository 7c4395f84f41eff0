// The trust campaign, bounded (trust/campaign.ts; `npm run trust` plays it whole, and CI plays every fault under one
// seed after npm test, in .ci/run): every clean client under a fixed seed, the reference ones with --strict, none
// failing any check; and, of each reference client, one fault for each tour it plays, caught on the clause it is a
// fault of. The faults of the long tour (tour:voice, 93 s) are played beside the suite's other long runs, in
// test/client-start.test.ts.
import t from 'tap'
import { join } from 'node:path'
import { campaign, campaignText, type CampaignReport } from '../trust/campaign.js'
import { CLIENTS } from '../trust/clients.js'
import { FAULTS } from '../trust/faults.js'
import { SEED } from './helpers/client-run.js'
import { ROOT } from './helpers/root.js'

const report: Promise<CampaignReport> = campaign({
  root: ROOT,
  cli: join(ROOT, 'dist', 'cli', 'orbtest.js'),
  seeds: [SEED],
  // The tours only: generated scenarios are the whole campaign's (`npm run trust`), which plays 8 in each clean run.
  scenarios: 0,
  load: false,
  long: false,
  faults: 'one-per-tour',
  jobs: 12
})

t.test('TRUST-01 no clean client fails a check: the reference clients with --strict, the others as a newcomer runs them', async (t) => {
  const r = await report
  t.comment(campaignText(r))
  for (const u of r.unavailable) t.comment(`not judged here: ${u.client}: ${u.why}`)
  const clean = r.runs.filter((x) => x.kind === 'clean')
  for (const c of CLIENTS.filter((c) => !r.unavailable.some((u) => u.client === c.name))) {
    const runs = clean.filter((x) => x.client === c.name)
    t.equal(runs.length, 1, `${c.name}: played`)
    for (const x of runs) {
      t.same(x.failed, [], `${c.name}: no check failed${c.reference ? ' (with --strict)' : ''}`)
      t.equal(x.error, undefined, `${c.name}: a report was written`)
      t.equal(x.code, 0, `${c.name}: exit 0`)
    }
  }
})

t.test('TRUST-02 of each reference client, a fault of each tour fails the clause it is a fault of', async (t) => {
  const r = await report
  const faults = r.runs.filter((x) => x.kind === 'fault')
  const ready = FAULTS.filter((f) => f.long !== true && !r.unavailable.some((u) => u.client === f.client))
  const tours = new Set(ready.map((f) => `${f.client} ${f.tour}`))
  t.equal(faults.length, tours.size, `${tours.size} faults played, one for each reference client's tour`)
  const played = new Set(faults.map((x) => `${x.fault!.client} ${x.fault!.tour}`))
  t.same(played, tours, 'every tour of every reference client')
  for (const x of faults) {
    const f = x.fault!
    t.ok(x.detected, `${f.client} --fault ${f.fault} (tour:${f.tour}): ${f.clauses.join(', ')} broken and failed`, { args: x.args.join(' '), failed: x.failed, inconclusive: x.inconclusive })
    // Exit 1; or 2 for a fault that keeps the client from ever reaching the fake (nothing else was judged).
    t.ok(x.code === 1 || (x.code === 2 && f.clauses.includes('OT-002.reach')), `${f.fault}: exit ${x.code}`)
  }
})
