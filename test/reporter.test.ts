// A person at a terminal: `--reporter human` (the default on a terminal) shows progress and ends with a summary to
// act on, in colour only where the terminal takes it; TAP stays the output anywhere else. And `orbtest summary`,
// the same facts as Markdown for a CI job's page, with whatever text a report carries escaped.
import { execFile, spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import t from 'tap'
import { markdownSummary, mdCode, readRunReport } from '../conformance/summary.js'
import { NODE_ADAPTER } from './helpers/client-run.js'
import { ROOT } from './helpers/root.js'

const root = ROOT
const CLI = join(root, 'dist', 'cli', 'orbtest.js')
const run = promisify(execFile)
/** The terminal's escape character, which colour and the progress line start with. */
const ESC = '\u001b'

/** The CLI's output and exit code, with stdout a pipe. */
async function cli (args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number, out: string }> {
  try {
    const { stdout } = await run(process.execPath, [CLI, ...args], { env: { ...process.env, ...env }, timeout: 60_000 })
    return { code: 0, out: stdout }
  } catch (err) {
    const e = err as { code?: number, stdout?: string }
    return { code: e.code ?? 1, out: e.stdout ?? '' }
  }
}

/** The CLI under a pseudo-terminal (util-linux `script`): what a person at a terminal sees. */
async function onTerminal (args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number, out: string }> {
  const line = [process.execPath, CLI, ...args].map((w) => `'${w.replace(/'/g, "'\\''")}'`).join(' ')
  const base: NodeJS.ProcessEnv = { ...process.env, TERM: 'xterm-256color' }
  delete base.NO_COLOR
  delete base.FORCE_COLOR
  const child = spawn('script', ['-qec', `stty cols 120; ${line}`, '/dev/null'], {
    env: { ...base, ...env },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let out = ''
  child.stdout.on('data', (c: Buffer) => { out += c.toString('utf8') })
  const code = await new Promise<number>((resolve) => child.once('close', (c) => resolve(c ?? 1)))
  return { code, out }
}

const work = mkdtempSync(join(tmpdir(), 'orbtest-reporter-'))
t.teardown(() => rmSync(work, { recursive: true, force: true }))

// A fake Orbtile for the server suite's terminal runs.
const discovery = join(work, 'adapter-api.json')
const fake = spawn(process.execPath, [CLI, 'orbtile', '--discovery', discovery, '--socket', join(work, 'o.sock'),
  '--control-port', '0', '--ready-file', join(work, 'ready.json')], { stdio: 'ignore' })
t.teardown(() => fake.kill('SIGTERM'))
async function fakeReady (): Promise<void> {
  for (let i = 0; i < 200 && !existsSync(join(work, 'ready.json')); i++) {
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

const faulty = cli(['conformance', '--client', 'orbtile', '--reporter', 'human', '--tour', 'basic', '--scenarios', '0',
  '--', process.execPath, NODE_ADAPTER, '--fault', 'origin'])

t.test('HUM-01 --reporter human on the client suite: each failure with its id, Expected, Actual and replay; no TAP', async (t) => {
  const { code, out } = await faulty
  t.equal(code, 1, 'exit 1, as with TAP')
  t.notMatch(out, /TAP version|^ok \d/m, 'no TAP')
  t.match(out, /^✗ tour:basic [\d.]+ s {2}OT-014$/m, 'the scenario that failed, as it ended')
  t.match(out, /^✗ FAIL OT-014 no request carries an Origin header$/m, 'the failure by its id')
  t.match(out, /^ {4}expected: no Origin header$/m, 'Expected')
  t.match(out, /^ {4}actual: {3}Origin: http:\/\/localhost$/m, 'Actual')
  const replay = 'replay:   npx orbtest conformance --client orbtile --tour basic --scenarios 0 -- '
  const replayed = out.split('\n').some((l) => l.startsWith(`    ${replay}`) && l.endsWith('mjs --fault origin'))
  t.ok(replayed, 'the replay command')
  const end = /^\d+ passed, 1 failed, .*\(\d+\.\d s\)\n✗ FAILED: 1 required rule broken\n$/m
  t.match(out, end, 'the counts, then the verdict')
  t.notMatch(out, new RegExp(`${ESC}\\[`), 'no colour into a pipe')
})

t.test('HUM-02 on a terminal the server suite shows progress and a coloured summary by default; NO_COLOR and --reporter tap are heard', async (t) => {
  await fakeReady()
  const target = `orbtile:${discovery}`
  const human = await onTerminal(['conformance', '--target', target, '--grep', 'OT-01', '--seed', '1'])
  t.equal(human.code, 0, 'exit 0')
  const progress = new RegExp(`\\r${ESC}\\[2K${ESC}\\[2m\\[\\d+/\\d+\\] · running OT-01\\d`)
  t.match(human.out, progress, 'a progress line: done of total, the case running')
  t.match(human.out, / · \d+\.\d s/, 'and the time so far')
  t.ok(human.out.includes(`${ESC}[32m✓ PASSED: every required rule held${ESC}[0m`), 'the verdict in green and in words')
  t.notMatch(human.out, /^ok \d/m, 'no TAP')
  const once = ['conformance', '--target', target, '--grep', 'OT-015', '--seed', '1']
  const plain = await onTerminal(once, { NO_COLOR: '1' })
  t.match(plain.out, /✓ PASSED/, 'NO_COLOR: still the summary')
  t.notMatch(plain.out, new RegExp(`${ESC}\\[3\\dm`), 'without colour')
  const tap = await onTerminal([...once, '--reporter', 'tap'])
  t.match(tap.out, /^TAP version 14/m, '--reporter tap on a terminal: TAP')
  const piped = await cli(once)
  t.match(piped.out, /^TAP version 14/, 'into a pipe the default is TAP')
  const bad = await cli(['conformance', '--target', target, '--reporter', 'fancy'])
  t.equal(bad.code, 2, 'an unknown reporter is a usage error')
})

/** A client report whose texts try to break out of the Markdown. */
const hostile = {
  suite: 'orbtile',
  kind: 'client',
  title: 'Orbtile client conformance',
  command: ['./adapter', "it's"],
  seed: 5,
  ms: 1234,
  checks: [
    { id: 'OT-011', title: 'a | b', verdict: 'pass', exercised: 3, violationCount: 0 },
    {
      id: 'OT-014',
      title: 'no Origin',
      verdict: 'fail',
      exercised: 2,
      violationCount: 1,
      reason: '<script>alert(1)</script>\n# heading',
      expected: 'no `Origin`',
      actual: '``` | <img src=x>',
      where: { scenario: 'tour:basic', seq: 4 }
    },
    { id: 'OT-074', title: 'hue', verdict: 'non-strict', exercised: 1, violationCount: 1, reason: 'baseHue 210' }
  ]
}

t.test('SUM-01 orbtest summary: a report\'s text cannot rewrite the page, and a failure keeps its replay', async (t) => {
  const md = markdownSummary(readRunReport(hostile))
  t.notMatch(md, /<script>/, 'no markup from the report')
  t.match(md, /^&lt;script&gt;alert\(1\)&lt;\/script&gt; # heading$/m, 'escaped, on one line')
  t.match(md, /- \*\*Actual:\*\* ```` ``` \| <img src=x> ````/, 'what cannot be escaped stays inside a code span')
  t.match(md, /^\| OT-011 \| ✅ pass \| a \\\| b \|$/m, 'a pipe in a title keeps the table whole')
  t.match(md, /- \*\*Expected:\*\* `` no `Origin` ``/, 'a code span longer than the backticks inside it')
  t.match(md, /- \*\*Replay:\*\* `npx orbtest conformance --client orbtile --tour basic --scenarios 0 -- \.\/adapter 'it'\\''s'`/, 'the replay, its words quoted for a shell')
  t.match(md, /- \*\*OT-074\*\* \(⚠️ non-strict \(fails only with --strict\)\): baseHue 210/,
    'non-strict findings listed apart, not failing')
  t.equal(mdCode('a`b'), '``a`b``')
})

t.test('SUM-02 orbtest summary --github writes the page and the outputs; a bad report is exit 2', async (t) => {
  const report = join(work, 'r.json')
  writeFileSync(report, JSON.stringify(hostile))
  const page = join(work, 'summary.md')
  const outputs = join(work, 'outputs')
  writeFileSync(page, '')
  writeFileSync(outputs, '')
  const r = await cli(['summary', report, '--github'], { GITHUB_STEP_SUMMARY: page, GITHUB_OUTPUT: outputs })
  t.equal(r.code, 1, 'exit 1: a required rule failed')
  t.equal(r.out, '', 'nothing on stdout with --github')
  t.match(readFileSync(page, 'utf8'), /^## orbtest: Orbtile client conformance: ❌ failed/, 'the page')
  t.match(readFileSync(outputs, 'utf8'), /^passed=1\nfailed=1\nnon-strict=1\ninconclusive=0\nnot-exercised=0\ninformational=0\nverdict=fail\n$/, 'the outputs')
  writeFileSync(join(work, 'bad.json'), '{"cases": 3')
  t.equal((await cli(['summary', join(work, 'bad.json')])).code, 2, 'not JSON: exit 2')
  writeFileSync(join(work, 'other.json'), '{"hello": 1}')
  t.equal((await cli(['summary', join(work, 'other.json')])).code, 2, 'not a report: exit 2')
})

t.test('SUM-03 a server run\'s failure replays as its TAP block says: seed, runs, the case alone and its path', async (t) => {
  const server = {
    suite: 'orbtile',
    kind: 'server',
    title: 'Orbtile Adapter Protocol v1.2',
    target: 'orbtile:/tmp/a b.json',
    seed: 9,
    runs: 50,
    ms: 10,
    cases: [
      { id: 'OT-072', title: 'a property', verdict: 'fail', reason: 'no', replay: { seed: 9, path: '3:1' } },
      { id: 'OT-011', title: 'an example', verdict: 'fail', reason: 'no' },
      { id: 'OT-012', title: 'passes', verdict: 'pass' }
    ]
  }
  const md = markdownSummary(readRunReport(server))
  t.match(md, /`npx orbtest conformance --target 'orbtile:\/tmp\/a b\.json' --seed 9 --runs 50 --grep OT-072 --path 3:1`/, 'a property')
  t.match(md, /`npx orbtest conformance --target 'orbtile:\/tmp\/a b\.json' --seed 9 --grep OT-011`/, 'any other case')
  t.match(md, /\| 1 \| 2 \| 0 \| 0 \|/, 'the counts: passed, failed, skipped, informational')
})
