// ORB-077 on the long tour:voice: the reference events-mode bot keeps its voice seat with heartbeats, and its
// silent-seat fault fails the check; a seat taken late is still watched for 93 s (OBC-08). The three runs wait out
// the tour's 93 s side by side, started when this module is imported (at the start of test/_timed.test.ts); they
// need almost no CPU. Their tests are the last group, and OBC-10's slow starter is played in its own test.
import { pathToFileURL } from 'node:url'
import type { Test } from 'tap'
import { VOICE_TOUR_MS, VOICE_TOUR, type Scenario } from '../../conformance/orb-client/scenario.js'
import { playOrbScenario } from '../../conformance/orb-client/world.js'
import { EVENTS_BOT, run, SEED, settle, verdictOf } from '../helpers/client-run.js'

const voice = ['--seed', String(SEED), '--tour', 'voice', '--scenarios', '0']
const [clean, silent] = [
  run(voice, [process.execPath, EVENTS_BOT], ['orb']),
  run(voice, [process.execPath, EVENTS_BOT, '--fault', 'silent-seat'], ['orb'])
]
// OBC-08: tour:voice with its /join delivered 4 s late, so that the bot sits down well after the member asked.
const lateSeat: Scenario = {
  ...VOICE_TOUR,
  steps: [{ atMs: 1000, actor: 'wire', name: 'late-command', ms: 4000 }, ...VOICE_TOUR.steps]
}
const late = playOrbScenario(lateSeat, [process.execPath, EVENTS_BOT], { name: 'late-seat', only: ['ORB-077'] })
// OBC-10: a bot that takes 6 s to start, past the 5 s it was once given, still gets the /join its steps hold. Node
// starts at once and loads the bot 6 s later. Started with the others at the file's start, beside the first group's
// spawns, its first request reached the judge over 10 s after its start (twice, once with Node started after a
// shell's sleep): it is played when its test begins, the last group, with only the voice tour's runs still waiting.
const slowStarter = (): ReturnType<typeof playOrbScenario> => playOrbScenario(
  { ...VOICE_TOUR, seatedMs: 2000 },
  [process.execPath, '-e', `setTimeout(() => import(${JSON.stringify(pathToFileURL(EVENTS_BOT).href)}), 6000)`],
  { name: 'slow-start', only: ['ORB-077'] }
)

export function voiceTests (t: Test): void {
  t.test('ORB-077 a bot seated for 93 s with a heartbeat every 30 s passes; one that never sends one fails', async (t) => {
    const ok = await clean
    t.equal(verdictOf(ok, 'ORB-077'), 'pass', 'the reference bot keeps its seat')
    t.equal(ok.code, 0, 'exit 0')
    const bad = await silent
    const check = bad.json.checks.find((c) => c.id === 'ORB-077')!
    t.equal(check.verdict, 'fail', 'silent-seat fails ORB-077')
    t.match(check.reason ?? '', /no heartbeat for call_\S+ for 9\d\.\d+ s before the bot stopped/, 'with the gap')
    t.equal(bad.code, 1, 'exit 1')
    for (const r of [ok, bad]) settle(t, r)
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

  t.test('OBC-10 a bot up 6 s after its start gets the scenario from then on: the /join reaches it, and the journal says it was slow', async (t) => {
    const entries = (await slowStarter()).journal
    const said = (name: string): string | undefined => {
      const e = entries.find((x) => x.kind === 'action' && x.name === name)
      return e?.kind === 'action' ? e.text : undefined
    }
    const actions = entries.filter((e) => e.kind === 'action')
      .map((e) => `${Math.round(e.at)} ms ${e.actor}: ${e.text}`)
    t.match(said('slow-start') ?? '', /^the bot was up [6-9]\.\d s after its start$/, 'journaled', { actions })
    t.match(said('command') ?? '', /types \/join/, 'the /join was typed once the bot had registered it', { actions })
    t.ok(said('seated') !== undefined, 'and the bot took its seat', { actions })
  })

  t.test('ORB-077 tour:voice is long, and --list says it is played only when --tour names it', async (t) => {
    const { conformance } = await import('../../conformance/index.js')
    let out = ''
    const sink = new (await import('node:stream')).Writable({ write (c, _e, d) { out += String(c); d() } })
    t.equal(await conformance(['--client', 'orb', '--list', '--', 'x'], sink), 0)
    t.match(out, /tour:voice .*\(long: played only with --tour voice\)/, '--list marks it long')
  })
}
