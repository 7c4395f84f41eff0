// Bad clients get a verdict and never a hung run; a failing generated scenario shrinks and replays; no report holds
// a token.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import t from 'tap'
import { conformance } from '../conformance/index.js'
import { UsageError } from '../src/cli/args.js'
import { NODE_ADAPTER, run, SEED, verdictOf } from './helpers/client-run.js'

const root = join(import.meta.dirname, '..')

// Every run starts at once, and each test reads its own: the clients mostly wait on the scenarios' clocks.
const started = performance.now()
const badRuns = Promise.all([
  // A client that never connects: OT-002 fails; the run ends with the scenario.
  run(['--tour', 'basic', '--scenarios', '0'], ['sleep', '30']),
  // A client that exits at once.
  run(['--tour', 'basic', '--scenarios', '0'], ['true'])
])
const shrinkRun = run(
  ['--seed', String(SEED), '--tour', 'none', '--scenarios', '2', '--shrink', '3'],
  [process.execPath, NODE_ADAPTER, '--fault', 'origin']
)
const reportDir = mkdtempSync(join(tmpdir(), 'orbtest-client-test-'))
const tokenRun = run(
  ['--tour', 'app', '--scenarios', '0', '--html', join(reportDir, 'r.html'), '--junit', join(reportDir, 'r.xml')],
  [process.execPath, NODE_ADAPTER, '--fault', 'log-token']
)

t.test('CLIENT-04 bad clients get a verdict, never a hung run', async (t) => {
  const [silent, quitter] = await badRuns
  t.equal(verdictOf(silent, 'OT-002'), 'fail', 'never connects: OT-002 fails')
  t.match(silent.tap, /no request reached the socket/, 'with the reason')
  t.equal(verdictOf(quitter, 'OTC-03'), 'fail', 'exits at once: OTC-03 fails')
  t.ok(performance.now() - started < 20_000, 'both runs ended within the scenario and the stop grace')
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
