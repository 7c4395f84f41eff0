// A client slow to start still gets its whole scenario, timed from its first contact (OTC-19, OBC-10), and a voice
// seat taken late is still watched for 93 s (OBC-08). The reference faults of the voice tour are played here too,
// beside those 93 s (the trust campaign's other faults: test/trust.test.ts).
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { Writable } from 'node:stream'
import t from 'tap'
import type { JournalEntry } from '../conformance/client/core/journal.js'
import { conformance } from '../src/cli/main.js'
import { VOICE_TOUR_MS, VOICE_TOUR, type Scenario } from '../conformance/client/orb/scenario.js'
import { playOrbScenario } from '../conformance/client/orb/play.js'
import { campaign } from '../trust/campaign.js'
import { FAULTS } from '../trust/faults.js'
import { EVENTS_BOT, NODE_ADAPTER, run, SEED, settle, verdictOf } from './helpers/client-run.js'
import { ROOT } from './helpers/root.js'

// OBC-08: tour:voice with its /join delivered 4 s late, so that the bot sits down well after the member asked.
const lateSeat: Scenario = {
  ...VOICE_TOUR,
  steps: [{ atMs: 1000, actor: 'wire', name: 'late-command', ms: 4000 }, ...VOICE_TOUR.steps]
}
const late = playOrbScenario(lateSeat, [process.execPath, EVENTS_BOT], { name: 'late-seat', only: ['ORB-077'] })
// OBC-10: a bot that loads 3 s after Node starts, past the /join at 1.5 s into the tour: the steps wait for its first
// call. The 7 s between its start and the end of the start allowance (10 s) absorb a loaded machine's slow loads.
const slowStarter = (): ReturnType<typeof playOrbScenario> => playOrbScenario(
  { ...VOICE_TOUR, seatedMs: 2000 },
  [process.execPath, '-e', `setTimeout(() => import(${JSON.stringify(pathToFileURL(EVENTS_BOT).href)}), 3000)`],
  { name: 'slow-start', only: ['ORB-077'] }
)

// The faults only tour:voice shows (ORB-077), by the trust campaign's own rules.
const voiceFaults = campaign({
  root: ROOT,
  cli: join(ROOT, 'dist', 'cli', 'orbtest.js'),
  seeds: [SEED],
  scenarios: 0,
  load: false,
  long: true,
  only: 'long',
  jobs: 4
})

// A slow starter (OTC-19): tour:app's new token (1.2 s) and new socket (2.8 s) would have come before it ran.
const slowRun = run(
  ['--tour', 'app', '--scenarios', '0'],
  ['bash', '-c', `sleep 4.5; exec ${process.execPath} ${NODE_ADAPTER}`]
)

t.test('CLIENT-07 OTC-19: an adapter that takes 4.5 s to start still gets the whole of tour:app, timed from its first long poll', async (t) => {
  const r = await slowRun
  const bad = r.json.checks.filter((c) => c.violationCount > 0).map((c) => `${c.id}: ${c.reason ?? ''}`)
  t.same(bad, [], 'no finding: the slow start is no fault')
  t.equal(r.code, 0, 'exit 0')
  t.equal(verdictOf(r, 'OT-002'), 'pass', 'it reached the socket, the moved one too')
  // Counted from the adapter's start, the new token (1.2 s) and the new socket (2.8 s) would have come before it ran.
  const journal = (r.json.scenarios[0] as unknown as { journal: JournalEntry[] }).journal
  const actions = journal.filter((e) => e.kind === 'action')
  const first = actions.find((e) => e.actor === 'harness' && /first long poll/.test(e.text))
  const token = actions.find((e) => e.actor === 'app' && /new discovery token/.test(e.text))
  t.ok(first !== undefined && token !== undefined, 'the first long poll and the new token journaled')
  t.ok(token!.at - first!.at >= 1000, `the new token came ${Math.round(token!.at - first!.at)} ms after the first long poll`)
  settle(t, r)
})

t.test('OBC-08 a seat taken 4 s after the /join is still watched for 93 s, and ORB-077 is judged', async (t) => {
  const report = await late
  const finding = report.findings.find((f) => f.id === 'ORB-077')
  const entries = report.journal
  t.equal(finding?.verdict, 'pass', 'judged, and the reference bot passes', {
    actions: entries.filter((e) => e.kind === 'action').map((e) => `${Math.round(e.at)} ms ${e.actor}: ${e.text}`)
  })
  const cmd = entries.find((e) => e.kind === 'action' && e.name === 'command')
  const seated = entries.find((e) => e.kind === 'action' && e.name === 'seated')
  const exit = entries.find((e) => e.kind === 'action' && e.name === 'exit')
  t.ok(cmd !== undefined && seated !== undefined && exit !== undefined, 'the /join, the seat and the exit journaled')
  t.ok(seated!.at - cmd!.at >= 4000, `the seat came ${Math.round(seated!.at - cmd!.at)} ms after the /join`)
  t.ok(exit!.at - seated!.at >= VOICE_TOUR_MS, `and the bot was stopped ${Math.round(exit!.at - seated!.at)} ms after it`)
})

t.test('OBC-10 a bot up 3 s after its start gets the scenario from then on: the /join reaches it, and the journal says it was slow', async (t) => {
  const entries = (await slowStarter()).journal
  const said = (name: string): string | undefined => {
    const e = entries.find((x) => x.kind === 'action' && x.name === name)
    return e?.kind === 'action' ? e.text : undefined
  }
  const actions = entries.filter((e) => e.kind === 'action')
    .map((e) => `${Math.round(e.at)} ms ${e.actor}: ${e.text}`)
  t.match(said('slow-start') ?? '', /^the bot was up [3-9]\.\d s after its start$/, 'journaled', { actions })
  t.match(said('command') ?? '', /types \/join/, 'the /join was typed once the bot had registered it', { actions })
  t.ok(said('seated') !== undefined, 'and the bot took its seat', { actions })
})

t.test('ORB-077 each reference fault of the voice tour fails the clause it is a fault of', async (t) => {
  const r = await voiceFaults
  const long = FAULTS.filter((f) => f.long === true)
  t.ok(long.length > 0, 'the voice tour has reference faults')
  t.equal(r.runs.length, long.length, `${long.length} faults played`)
  for (const x of r.runs) {
    const f = x.fault!
    t.ok(x.detected, `${f.client} --fault ${f.fault} (tour:${f.tour}): ${f.clauses.join(', ')} broken and failed`, { args: x.args.join(' '), failed: x.failed, inconclusive: x.inconclusive })
    t.equal(x.code, 1, `${f.fault}: exit 1`)
  }
})

t.test('ORB-077 tour:voice is long, and --list says it is played only when --tour names it', async (t) => {
  let text = ''
  const sink = new Writable({ write (c, _e, d) { text += String(c); d() } })
  t.equal(await conformance(['--client', 'orb', '--list', '--', 'x'], sink), 0)
  t.match(text, /tour:voice .*\(long: played only with --tour voice\)/, '--list marks it long')
})
