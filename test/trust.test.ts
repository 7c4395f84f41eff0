// The trust campaign, bounded (trust/campaign.ts). npm test judges the clients written outside the project, from the
// spec and the docs alone (the Java bot aside: a JVM for each of its scenarios costs some 11 CPU seconds a run), and
// plays the first fault of each reference client, caught on the clause it is a fault of. The whole campaign, every
// clean client (the reference ones with --strict) and every fault, is `npm run trust`, which CI plays after npm test
// (.ci/run). The faults of the long tour (tour:voice, 93 s) are played beside the suite's other long runs, in
// test/client-start.test.ts.
import t from 'tap'
import { join } from 'node:path'
import { campaign, campaignText, type CampaignReport } from '../trust/campaign.js'
import { CLIENTS } from '../trust/clients.js'
import { FAULTS } from '../trust/faults.js'
import { SEED } from './helpers/client-run.js'
import { ROOT } from './helpers/root.js'

const OUTSIDE = CLIENTS.filter((c) => !c.reference && c.name !== 'bot-java').map((c) => c.name)
const FAULTY = [...new Set(FAULTS.map((f) => f.client))]

const report: Promise<CampaignReport> = campaign({
  root: ROOT,
  cli: join(ROOT, 'dist', 'cli', 'orbtest.js'),
  seeds: [SEED],
  // The tours only: generated scenarios are the whole campaign's (`npm run trust`), which plays 8 in each clean run.
  scenarios: 0,
  load: false,
  long: false,
  clients: [...OUTSIDE, ...FAULTY],
  clean: OUTSIDE,
  faults: 'one-per-client',
  jobs: OUTSIDE.length + FAULTY.length
})

t.test('TRUST-01 no client written outside the project fails a check, judged as a newcomer runs it', async (t) => {
  const r = await report
  t.comment(campaignText(r))
  for (const u of r.unavailable) t.comment(`not judged here: ${u.client}: ${u.why}`)
  const clean = r.runs.filter((x) => x.kind === 'clean')
  t.same(clean.map((x) => x.client).sort(), OUTSIDE.filter((c) => !r.unavailable.some((u) => u.client === c)).sort(),
    'each is played once, and no reference client')
  for (const x of clean) {
    t.same(x.failed, [], `${x.client}: no check failed`)
    t.equal(x.error, undefined, `${x.client}: a report was written`)
    t.equal(x.code, 0, `${x.client}: exit 0`)
  }
})

t.test('TRUST-02 of each reference client, its first fault fails the clause it is a fault of', async (t) => {
  const r = await report
  const faults = r.runs.filter((x) => x.kind === 'fault')
  const ready = FAULTY.filter((c) => !r.unavailable.some((u) => u.client === c))
  t.same(faults.map((x) => x.fault!.client).sort(), ready.sort(), 'one fault of each reference client')
  for (const x of faults) {
    const first = FAULTS.find((f) => f.client === x.fault!.client && f.long !== true)
    t.equal(x.fault, first, `${x.fault!.client}: its first fault, ${first!.fault}`)
  }
  for (const x of faults) {
    const f = x.fault!
    t.ok(x.detected, `${f.client} --fault ${f.fault} (tour:${f.tour}): ${f.clauses.join(', ')} broken and failed`, { args: x.args.join(' '), failed: x.failed, inconclusive: x.inconclusive })
    // Exit 1; or 2 for a fault that keeps the client from ever reaching the fake (nothing else was judged).
    t.ok(x.code === 1 || (x.code === 2 && f.clauses.includes('OT-002.reach')), `${f.fault}: exit ${x.code}`)
  }
})
