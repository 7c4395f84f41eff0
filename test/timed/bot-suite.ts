// The bot suite (`--client orb`, events mode and --webhook) judging the reference bots: both pass every check that
// applies under five seeds, and each deliberate fault of either fails the check named for it. The runs start at once
// and the tests read their results; the bots mostly wait, so many run side by side.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { group } from './group.js'
import { ORB_CLIENT_CHECKS } from '../../conformance/orb-client/checks.js'
import { EVENTS_BOT, pool, run, SEED, settle, WEBHOOK_BOT, type Run } from '../helpers/client-run.js'
import { ROOT } from '../helpers/root.js'

const t = group()

const seeds = [SEED, SEED + 1, SEED + 2, SEED + 3, SEED + 4]
const EVENTS = ['orb']
const WEBHOOK = ['orb', '--webhook']

/**
 * The tours and two generated scenarios under the first seed, one generated scenario under each other seed. Fewer at
 * once than before (the tours eight at a time, every seed's run and twelve faults at once: some forty bots): that
 * saturated both cores for the group's first fifteen seconds, as it did the adapters' group (client-reference.ts).
 */
const plays = (seed: number): string[] =>
  seed === SEED ? ['--scenarios', '2', '--jobs', '4'] : ['--scenarios', '1', '--tour', 'none']
const reference = (client: string[], bot: string): Promise<Run[]> => pool(seeds, 3, async (seed) =>
  await run(['--seed', String(seed), ...plays(seed)], [process.execPath, bot], client))
const eventRuns = reference(EVENTS, EVENTS_BOT)
const webhookRuns = reference(WEBHOOK, WEBHOOK_BOT)

/** Each fault of a reference bot (its --fault switch), the tour that exercises it, and the check it must fail. */
const FAULTS: ReadonlyArray<{ bot: 'events' | 'webhook', fault: string, tour: string, id: string }> = [
  { bot: 'events', fault: 'after-not-next', tour: 'basic', id: 'ORB-048' },
  { bot: 'events', fault: 'cursor-before-handling', tour: 'restart', id: 'ORB-048' },
  { bot: 'events', fault: 'not-idempotent', tour: 'repeat', id: 'ORB-048' },
  { bot: 'events', fault: 'ignore-retry-after', tour: 'throttle', id: 'ORB-100' },
  { bot: 'events', fault: 'crash-on-null-body', tour: 'basic', id: 'ORB-036' },
  { bot: 'events', fault: 'empty-on-null', tour: 'basic', id: 'ORB-036' },
  { bot: 'events', fault: 'everyone', tour: 'basic', id: 'ORB-032' },
  { bot: 'events', fault: 'flood', tour: 'basic', id: 'ORB-032' },
  { bot: 'events', fault: 'post-elsewhere', tour: 'basic', id: 'ORB-032' },
  { bot: 'events', fault: 'piecemeal-commands', tour: 'basic', id: 'ORB-065' },
  { bot: 'events', fault: 'no-fallback', tour: 'late', id: 'ORB-071' },
  { bot: 'events', fault: 'late-respond', tour: 'basic', id: 'ORB-071' },
  { bot: 'events', fault: 'token-in-query', tour: 'basic', id: 'ORB-002' },
  { bot: 'events', fault: 'null-as-false', tour: 'passport', id: 'ORB-088' },
  { bot: 'webhook', fault: 'no-signature-check', tour: 'attack', id: 'ORB-095' },
  { bot: 'webhook', fault: 'parsed-body', tour: 'attack', id: 'ORB-095' },
  { bot: 'webhook', fault: 'no-tolerance', tour: 'attack', id: 'ORB-095' },
  { bot: 'webhook', fault: 'accept-unsigned', tour: 'attack', id: 'ORB-095' },
  { bot: 'webhook', fault: 'acts-on-duplicates', tour: 'attack', id: 'ORB-096' },
  { bot: 'webhook', fault: 'first-v1-only', tour: 'deliveries', id: 'ORB-097' },
  { bot: 'webhook', fault: 'notice-on-mention', tour: 'deliveries', id: 'ORB-097' },
  { bot: 'webhook', fault: 'late-notice', tour: 'deliveries', id: 'ORB-097' },
  { bot: 'webhook', fault: 'no-notice', tour: 'deliveries', id: 'ORB-097' },
  { bot: 'webhook', fault: 'crash-on-null-body', tour: 'deliveries', id: 'ORB-036' }
]
// Eight at a time: the bots and their fakes mostly wait on timers, and the longest tour (attack) takes 20 s.
const faultRuns = pool(FAULTS, 8, async (f) => await run(
  ['--seed', String(SEED), '--tour', f.tour, '--scenarios', '0'],
  [process.execPath, f.bot === 'events' ? EVENTS_BOT : WEBHOOK_BOT, '--fault', f.fault],
  f.bot === 'events' ? EVENTS : WEBHOOK
))

// OBC-11: the same fault, but the restarted process never fetches again (it sleeps until its stop): the command
// it took before the kill was lost, yet no later fetch went past it, so the run ends before ORB-048 can judge a skip.
const markDir = mkdtempSync(join(tmpdir(), 'orbtest-restart-'))
const unjudgedRun = run(['--seed', String(SEED), '--tour', 'restart', '--scenarios', '0'], ['bash', '-c',
  `if [ -e "${markDir}/started" ]; then exec sleep 120; fi; : > "${markDir}/started"; ` +
  `exec "${process.execPath}" "${EVENTS_BOT}" --fault cursor-before-handling`], EVENTS)

// The app made with fewer scopes: without `passport`, the bot's check is refused and ORB-088 has nothing to judge.
const narrowRun = run(['--tour', 'passport', '--scenarios', '0', '--scopes', 'messages:read,messages:write'],
  [process.execPath, EVENTS_BOT], EVENTS)

// Bad bots, started with the rest.
const node = (script: string): string[] => [process.execPath, '-e', script]
const badStarted = performance.now()
const badRuns = Promise.all([
  // A bot that exits at once.
  run(['--tour', 'basic', '--scenarios', '0'], node('process.exit(0)'), EVENTS),
  // A webhook bot that never listens on its port.
  run(['--tour', 'deliveries', '--scenarios', '0'], node('setInterval(() => {}, 1000)'), WEBHOOK),
  // One that answers every connection with bytes that are not HTTP.
  run(['--tour', 'deliveries', '--scenarios', '0'], node(
    "require('net').createServer((s) => { s.on('error', () => {}); s.end('garbage\\r\\n\\r\\n') })" +
      ".listen(Number(process.env.PORT), '127.0.0.1')"
  ), WEBHOOK),
  // One that takes every delivery and never answers.
  run(['--tour', 'deliveries', '--scenarios', '0'], node(
    "require('http').createServer(() => {}).listen(Number(process.env.PORT), '127.0.0.1')"
  ), WEBHOOK),
  // A bot that posts 40 messages at once.
  run(['--tour', 'basic', '--scenarios', '0'], node(`
    const post = () => fetch(process.env.ORB_URL + '/api/bot/v1/messages', {
      method: 'POST',
      body: JSON.stringify({ channel: 'ch_general', content: 'spam' }),
      headers: { authorization: 'Bearer ' + process.env.ORB_TOKEN, 'content-type': 'application/json' }
    }).catch(() => {})
    Promise.all(Array.from({ length: 40 }, post)).then(() => setInterval(() => {}, 1000))`), EVENTS)
])

const findings = (r: Run): string[] =>
  r.json.checks.filter((c) => c.violationCount > 0).map((c) => `${c.id}: ${c.reason ?? ''}`)

for (const [name, runs, exercised] of [
  ['events-mode', eventRuns,
    ['ORB-001', 'ORB-002', 'ORB-032', 'ORB-036', 'ORB-048', 'ORB-065', 'ORB-071', 'ORB-088', 'ORB-100', 'OBC-06']],
  ['webhook', webhookRuns, ['ORB-001', 'ORB-002', 'ORB-032', 'ORB-036', 'ORB-095', 'ORB-096', 'ORB-097', 'OBC-06']]
] as const) {
  t.test(`BOT-01 the ${name} reference bot passes every check that applies, under five seeds`, async (t) => {
    const all = await runs
    for (const [i, r] of all.entries()) {
      t.same(findings(r), [], `seed ${seeds[i]!}: no finding (${r.json.scenarios.length} scenarios)`)
      t.equal(r.code, 0, `seed ${seeds[i]!}: exit 0`)
      settle(t, r)
    }
    const toured = all[0]!
    t.notOk(toured.json.scenarios.some((s) => s.name === 'tour:voice'), 'the long tour:voice is not played by default')
    const seen = toured.json.checks.filter((c) => c.verdict === 'pass').map((c) => c.id)
    t.same(seen, exercised, 'the tours exercise the rules of this mode')
  })
}

t.test('BOT-02 each deliberate fault of the reference bots fails the check named for it', async (t) => {
  const results = await faultRuns
  for (const [i, f] of FAULTS.entries()) {
    const r = results[i]!
    const c = r.json.checks.find((x) => x.id === f.id)!
    t.equal(c.verdict, 'fail', `${f.bot} bot, ${f.fault}: ${f.id} fails (${c.reason ?? c.note ?? 'no reason'})`)
    t.equal(r.code, 1, `${f.bot} bot, ${f.fault}: exit 1`)
    settle(t, r)
  }
  const events = FAULTS.filter((f) => f.bot === 'events').length
  t.ok(events >= 12, `${events} distinct faults of the events-mode bot`)
  t.ok(FAULTS.length - events >= 10, `${FAULTS.length - events} of the webhook bot`)
})

t.test('BOT-02 OBC-11 a command lost in a restart is judged only once a later fetch goes past it', async (t) => {
  const r = await unjudgedRun
  const c = r.json.checks.find((x) => x.id === 'ORB-048')!
  t.not(c.verdict, 'fail', `ORB-048 does not fail (${c.verdict}: ${c.reason ?? c.note ?? ''})`)
  t.ok(existsSync(join(markDir, 'started')), 'the bot was started, and restarted into its sleep')
  t.equal(r.json.checks.find((x) => x.id === 'ORB-071')?.verdict, 'fail', 'the command was indeed never answered')
  settle(t, r)
  rmSync(markDir, { recursive: true, force: true })
})

t.test('BOT-03 every [client] and [both] id of part 2 has a check or a line in the coverage file', async (t) => {
  const root = ROOT
  const ledger = readFileSync(join(root, 'conformance', 'orb', 'requirements.json'), 'utf8')
  const requirements = (JSON.parse(ledger) as { requirements: Record<string, { kind: string }> }).requirements
  const coverage = JSON.parse(readFileSync(join(root, 'conformance', 'orb-client', 'coverage.json'), 'utf8')) as {
    partial: Record<string, string>
    notJudged: Record<string, string>
  }
  const ids = Object.entries(requirements).filter(([, r]) => r.kind === 'client' || r.kind === 'both').map(([id]) => id)
  const checked = new Set(ORB_CLIENT_CHECKS.map((c) => c.id))
  t.same(ids.filter((id) => !checked.has(id) && coverage.notJudged[id] === undefined), [], 'rules with neither')
  t.ok(ids.length >= 15, `${ids.length} client and both rules in part 2`)
  for (const [id, why] of [...Object.entries(coverage.partial), ...Object.entries(coverage.notJudged)]) {
    t.ok(why.length > 40, `${id}: says why`)
  }
})

t.test('BOT-04 bad bots get a verdict, never a hung run', async (t) => {
  const [quitter, deaf, garbage, hang, flood] = await badRuns
  const check = (r: Run, id: string): Run['json']['checks'][number] => r.json.checks.find((c) => c.id === id)!
  t.equal(check(quitter, 'OBC-06').verdict, 'fail', 'exits at once: OBC-06 fails')
  t.match(check(quitter, 'OBC-06').reason, /ended before its stop/)
  t.equal(check(deaf, 'ORB-097').verdict, 'fail', 'never listens: ORB-097 fails')
  t.match(check(deaf, 'ORB-097').reason, /ECONNREFUSED/, 'with the reason')
  t.equal(check(garbage, 'ORB-097').verdict, 'fail', 'answers garbage: ORB-097', { got: garbage.tap.slice(0, 2000) })
  t.equal(check(hang, 'ORB-097').verdict, 'fail', 'never answers: ORB-097 fails')
  t.match(check(hang, 'ORB-097').reason, /no complete reply within 5000 ms/)
  t.equal(check(flood, 'ORB-032').verdict, 'fail', 'floods: ORB-032 fails')
  for (const r of [quitter, deaf, garbage, hang, flood]) {
    t.equal(r.code, 1, 'exit 1')
    settle(t, r)
  }
  t.ok(performance.now() - badStarted < 60_000, 'every run ended within its scenario, the delivery timeout and the stop grace')
})

t.test('BOT-05 --scopes makes the app with those scopes alone; a name that is not a scope is a usage error', async (t) => {
  const r = await narrowRun
  t.equal(r.json.checks.find((c) => c.id === 'ORB-088')?.verdict, 'not-exercised',
    'without passport the check is refused (403), so no holds: null is ever answered')
  t.same(findings(r), [], 'and the bot, which says it could not check, breaks no rule')
  t.equal(r.code, 0, 'exit 0')
  settle(t, r)
  await t.rejects(run(['--scopes', 'messages:read,admin'], [process.execPath, EVENTS_BOT], EVENTS),
    /--scopes: admin is not a scope of the bot API/, 'an unknown scope is refused before anything runs')
})
