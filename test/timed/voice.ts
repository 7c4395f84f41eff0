// ORB-077 on the long tour:voice: the reference events-mode bot keeps its voice seat with heartbeats, and its
// silent-seat fault fails the check. The two runs wait out the tour's 93 s side by side, started when this module
// is imported (at the start of test/_timed.test.ts); they need almost no CPU. Their tests are the last group.
import { rmSync } from 'node:fs'
import type { Test } from 'tap'
import { EVENTS_BOT, run, SEED, verdictOf } from '../helpers/client-run.js'

const voice = ['--seed', String(SEED), '--tour', 'voice', '--scenarios', '0']
const [clean, silent] = [
  run(voice, [process.execPath, EVENTS_BOT], ['orb']),
  run(voice, [process.execPath, EVENTS_BOT, '--fault', 'silent-seat'], ['orb'])
]

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
    for (const r of [ok, bad]) rmSync(r.dir, { recursive: true, force: true })
  })

  t.test('ORB-077 tour:voice is long, and --list says it is played only when --tour names it', async (t) => {
    const { conformance } = await import('../../conformance/index.js')
    let out = ''
    const sink = new (await import('node:stream')).Writable({ write (c, _e, d) { out += String(c); d() } })
    t.equal(await conformance(['--client', 'orb', '--list', '--', 'x'], sink), 0)
    t.match(out, /tour:voice .*\(long: played only with --tour voice\)/, '--list marks it long')
  })
}
