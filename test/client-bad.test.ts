// Bad clients get a verdict and never a hung run; a failing generated scenario shrinks and replays; no report holds
// a token.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import t from 'tap'
import { conformance } from '../src/cli/main.js'
import { STOP_GRACE_MS } from '../conformance/client/core/process.js'
import { START_ALLOWANCE_MS } from '../conformance/client/orbtile/play.js'
import { UsageError } from '../src/shared/usage-error.js'
import { NODE_ADAPTER, run, SEED, verdictOf } from './helpers/client-run.js'
import { ROOT } from './helpers/root.js'

const root = ROOT

// Every run starts at once, and each test reads its own: the clients mostly wait on the scenarios' clocks.
const started = performance.now()
const listeners = (): number[] => [process.listenerCount('SIGINT'), process.listenerCount('SIGTERM')]
const before = listeners()
// Sampled every 20 ms while the runs below are under way: the most listeners above `before` seen at once. (One
// sample at 1.5 s once came before a loaded machine had started any run's scenario, and read none.)
const most = [0, 0]
const sampler = setInterval(() => {
  listeners().forEach((n, i) => { most[i] = Math.max(most[i]!, n - before[i]!) })
}, 20)
sampler.unref()
/** A client that never connects sleeps this long: a run that waited for it would be seen. */
const SLEEP_S = 120
const badRuns = Promise.all([
  // A client that never connects: OT-002 fails; the run ends with the scenario.
  run(['--tour', 'basic', '--scenarios', '0'], ['sleep', String(SLEEP_S)]),
  // A client that exits at once.
  run(['--tour', 'basic', '--scenarios', '0'], ['true'])
])
const shrinkRun = run(
  ['--seed', String(SEED), '--tour', 'none', '--scenarios', '2', '--shrink', '3'],
  [process.execPath, NODE_ADAPTER, '--fault', 'origin']
)
const reportDir = mkdtempSync(join(tmpdir(), 'orbtest-client-test-'))
t.teardown(() => { rmSync(reportDir, { recursive: true, force: true }) })
const tokenRun = run(
  ['--tour', 'app', '--scenarios', '0', '--html', join(reportDir, 'r.html'), '--junit', join(reportDir, 'r.xml')],
  [process.execPath, NODE_ADAPTER, '--fault', 'log-token']
)

t.test('CLIENT-04 bad clients get a verdict, never a hung run; one that never reaches the fake is a command that cannot run', async (t) => {
  const [silent, quitter] = await badRuns
  t.equal(verdictOf(silent, 'OT-002'), 'non-strict', 'never connects: OT-002 says so (it rests on the start allowance)')
  t.match(silent.tap, /no request reached the socket/, 'with the reason')
  t.equal(verdictOf(quitter, 'OTC-03'), 'non-strict', 'exits at once: OTC-03 says so')
  for (const r of [silent, quitter]) {
    t.equal(r.code, 2, 'exit 2: nothing was judged')
    t.match(r.tap, /the client never reached the fake in any scenario .*does it read ORBTILE_DISCOVERY\?/,
      'and the run says why')
  }
  // The scenario's own clock: 10 s for a first connection (OTC-19), tour:basic's 3 s, the stop's grace, and slack
  // for a loaded machine. The wall clock only shows that nothing waited for the sleeping client.
  const [scenario] = silent.json.scenarios
  const bound = START_ALLOWANCE_MS + 3000 + STOP_GRACE_MS + 3000
  t.ok(scenario!.ms <= bound, `the silent client's scenario ended at ${scenario!.ms} ms, within ${bound}`)
  t.ok(performance.now() - started < SLEEP_S * 500, 'both runs ended long before the silent client would have')
  await t.rejects(
    conformance(
      ['--client', 'orbtile', '--', join(root, 'no-such-adapter')],
      new Writable({
        write (_c, _e, d) {
          d()
        }
      })
    ),
    UsageError,
    'a command that cannot run is a usage error (exit 2)'
  )
  for (const r of [silent, quitter]) rmSync(r.dir, { recursive: true, force: true })
})

t.test('CLIENT-05 a failing generated scenario shrinks, and its seed and path replay it', async (t) => {
  const first = await shrinkRun
  const check = first.json.checks.find((c) => c.id === 'OT-014')!
  t.equal(check.verdict, 'fail', 'OT-014 fails')
  t.ok(check.replay !== undefined && check.shrunk !== undefined, 'with the failing scenario and the smallest one')
  t.match(first.tap, /replay: "--seed \d+ --path \d+ --tour none"/, 'the TAP block gives the replay flags')
  t.match(first.tap, /smallest: "--seed \d+ --path [\d:]+ --tour none"/, 'and those of the smallest failure')
  t.ok(
    first.json.scenarios.some((s) => s.name.startsWith('shrunk:')),
    'the shrunk scenario is in the report'
  )
  const again = await run(
    ['--seed', String(check.shrunk!.seed), '--path', check.shrunk!.path],
    [process.execPath, NODE_ADAPTER, '--fault', 'origin']
  )
  t.equal(verdictOf(again, 'OT-014'), 'fail', 'the replay fails the same check')
  t.same(
    again.json.scenarios.map((s) => s.name),
    [`generated:${check.shrunk!.path}`],
    'and plays that scenario alone'
  )
  for (const r of [first, again]) rmSync(r.dir, { recursive: true, force: true })
})

t.test('CLIENT-06 no report holds a token, even from an adapter that logs its own, across new tokens and restarts', async (t) => {
  const dir = reportDir
  const html = join(dir, 'r.html')
  const junit = join(dir, 'r.xml')
  const r = await tokenRun
  const texts = [
    readFileSync(join(r.dir, 'report.json'), 'utf8'),
    readFileSync(html, 'utf8'),
    readFileSync(junit, 'utf8'),
    r.tap
  ]
  for (const text of texts) {
    t.notMatch(text, /"adapterToken":\s*"[A-Za-z0-9_-]{43}"/, 'no adapter token in a reply')
    t.notMatch(text, /Bearer [A-Za-z0-9_-]{20,}/, 'no bearer token')
    t.notMatch(text, /token(?:"|&quot;):\s*(?:"|&quot;)[A-Za-z0-9_-]{20,}/, 'no new discovery token in an action')
  }
  t.match(texts[0], /<adapter token 1>/, 'tokens are shown by their labels')
  t.match(texts[0], /<discovery token 2>/, 'a regenerated discovery token too')
  t.match(texts[2], /<testsuite name="[^"]+" tests="\d+" failures="[1-9]/, 'JUnit has the failure')
  rmSync(dir, { recursive: true, force: true })
  rmSync(r.dir, { recursive: true, force: true })
})

t.test('CLIENT-12 runs under way at once in one process share one SIGINT and one SIGTERM listener', async (t) => {
  await Promise.all([badRuns, shrinkRun, tokenRun])
  clearInterval(sampler)
  // Four runs were under way; each had its own pair once, and twelve at once warned of a leak.
  t.equal(most[0], 1, `SIGINT: at most ${most[0]!} more than the ${before[0]!} before the runs`)
  t.equal(most[1], 1, `SIGTERM: at most ${most[1]!} more than the ${before[1]!} before the runs`)
  t.same(listeners(), before, 'and none once they ended')
})
