// `orbtest orbtile --judge FILE`: the client rules judged live on the traffic of a normal run, over the real socket,
// with the report written at stop; and the journal's bounds, which keep such a run's memory flat.
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { JournalRecorder, Secrets } from '../conformance/client/core/recorder.js'
import { startJudge } from '../conformance/client/orbtile/judge.js'
import { CLI } from './helpers/cli.js'
import { ROOT } from './helpers/root.js'

const root = ROOT
const NODE_ADAPTER = join(root, 'examples', 'orbtile-adapter-node', 'adapter.mjs')

interface Judged {
  code: number | null
  live: { checks: Array<{ id: string; verdict: string }>; requests: number }
  report: string
}

/** Runs the fake with --judge, an adapter against it for a while, then stops both. */
async function judged (adapterArgs: string[], reportName: string): Promise<Judged> {
  const dir = mkdtempSync(join(tmpdir(), 'orbtest-judge-test-'))
  const discovery = join(dir, 'home', 'adapter-api.json')
  const ready = join(dir, 'ready.json')
  const report = join(dir, reportName)
  const fake = spawn(
    process.execPath,
    [
      CLI,
      'orbtile',
      '--discovery',
      discovery,
      '--socket',
      join(dir, 'o.sock'),
      '--auto-allow',
      '--control-port',
      '0',
      '--ready-file',
      ready,
      '--judge',
      report,
      '--log-level',
      'silent'
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] }
  )
  let adapter: ChildProcess | undefined
  try {
    for (let i = 0; i < 400 && !existsSync(ready); i++) await new Promise((resolve) => setTimeout(resolve, 25))
    const { control } = JSON.parse(readFileSync(ready, 'utf8')) as { control: { url: string } }
    adapter = spawn(process.execPath, [NODE_ADAPTER, ...adapterArgs], {
      env: { ...process.env, ORBTILE_DISCOVERY: discovery, HOME: dir, TMPDIR: dir },
      stdio: 'ignore'
    })
    // Until the adapter is at work (its start can take seconds on a loaded machine), then a while longer.
    const judge = async (): Promise<Judged['live']> =>
      (await (await fetch(`${control.url}/control/judge`)).json()) as Judged['live']
    for (let i = 0; i < 100 && (await judge()).requests < 3; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    await new Promise((resolve) => setTimeout(resolve, 1500))
    const live = await judge()
    adapter.kill('SIGTERM')
    await new Promise((resolve) => adapter!.once('exit', resolve))
    const exit = new Promise<number | null>((resolve) => fake.once('exit', (code) => resolve(code)))
    fake.kill('SIGTERM')
    return { code: await exit, live, report: readFileSync(report, 'utf8') }
  } finally {
    adapter?.kill('SIGKILL')
    fake.kill('SIGKILL')
    rmSync(dir, { recursive: true, force: true })
  }
}

t.test('CLIENT-07 --judge shows the verdicts live at GET /control/judge and writes the report at stop', async (t) => {
  const [bad, good] = await Promise.all([judged(['--fault', 'origin'], 'report.json'), judged([], 'report.tap')])
  const verdict = (j: Judged, id: string): string | undefined => j.live.checks.find((c) => c.id === id)?.verdict
  t.ok(bad.live.requests >= 1, `the judge saw the adapter's requests (${bad.live.requests}, each refused for its Origin)`)
  t.equal(verdict(bad, 'OT-014'), 'fail', 'an Origin header fails OT-014 while the run goes on')
  t.equal(bad.code, 1, 'the fake exits 1 on a violation')
  const report = JSON.parse(bad.report) as { checks: Array<{ id: string; verdict: string }> }
  t.equal(report.checks.find((c) => c.id === 'OT-014')?.verdict, 'fail', 'the JSON report says so')
  t.notOk(
    report.checks.some((c) => c.id === 'OT-022' || c.id === 'OTC-03'),
    'checks that need the scenario are left out (OTC-09)'
  )
  t.equal(verdict(good, 'OT-011'), 'pass', 'a conforming adapter passes OT-011')
  t.equal(good.code, 0, 'and the fake exits 0')
  t.match(good.report, /^TAP version 14\n/, 'a report named .tap is TAP')
  t.notMatch(good.report, /^not ok (?!.*# TODO)/m, 'with no failure (an informational finding aside)')
})

t.test('CLIENT-08 a bounded journal keeps its first and last entries and every pinned one; secrets never reach it', async (t) => {
  const secrets = new Secrets()
  secrets.add('s3cr3t-token-value-0123456789', 'adapter token')
  const journal = new JournalRecorder(secrets, 10)
  for (let i = 0; i < 1000; i++) {
    const entry = journal.add({
      kind: 'output',
      at: i,
      stream: 'stdout',
      line: `line ${i} s3cr3t-token-value-0123456789`
    })
    if (i === 7) journal.pin(entry.seq)
  }
  const kept = journal.entries()
  t.ok(kept.length <= 11, `${kept.length} entries kept of 1000`)
  t.ok(
    kept.some((e) => e.seq === 7),
    'the pinned entry is kept'
  )
  t.equal(kept.at(-1)?.seq, 999, 'the last entry is kept')
  t.equal(journal.dropped, 1000 - kept.length, 'the rest are counted as dropped')
  t.notOk(JSON.stringify(kept).includes('s3cr3t'), 'no secret in what is kept')
  const opening = new JournalRecorder(secrets, 10, 5)
  for (let i = 0; i < 1000; i++) opening.add({ kind: 'output', at: i, stream: 'stdout', line: `line ${i}` })
  const seqs = opening.entries().map((e) => e.seq)
  t.same(seqs.slice(0, 5), [0, 1, 2, 3, 4], 'with `first`, how the run began is kept too')
  t.equal(seqs.at(-1), 999, 'and still the last')
  t.ok(seqs.length <= 25, `${seqs.length} entries in all`)
  t.match(JSON.stringify(kept), /<adapter token 1>/, 'its label instead')
})

t.test('CLIENT-16 the live verdicts of --judge are the report\'s: a decision applied and acknowledged shows as exercised at once', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'orbtest-judge-live-'))
  t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })
  const file = join(dir, 'report.json')
  const discovery = 'discovery-token-0123456789'
  const judge = startJudge(file, () => discovery)
  const id = 'com.example.live'
  const lease = 'adapter-token-0123456789'
  let n = 0
  const send = (path: string, body: unknown, reply: unknown, method = 'POST'): void => {
    const text = JSON.stringify(body)
    const at = judge.tap.now!()
    judge.tap.exchange({
      request: ++n,
      connection: 1,
      method,
      target: `/a/v1${path}`,
      httpVersion: '1.1',
      headers: {
        host: 'localhost',
        'content-type': 'application/json',
        authorization: `Bearer ${discovery}`,
        'x-orbtile-adapter-token': lease
      },
      body: Buffer.from(text),
      parsedBody: body,
      bodyText: text,
      contentLength: text.length,
      status: 200,
      replyHeaders: {},
      reply: JSON.stringify(reply),
      finished: true,
      notes: [],
      startedAt: at,
      sentAt: at
    })
  }
  const registered = { adapter: { id }, keypadDecisions: true, adapterToken: lease }
  send(`/adapters/${id}`, { name: 'Live', capabilities: ['approvals'] }, registered, 'PUT')
  const approval = { id: 'a1', toolName: 'Bash', commandSummary: 'ls' }
  send(`/adapters/${id}/sessions/s1`, { approval }, { session: {} })
  const expiresAt = Date.now() / 1000 + 600
  const event = {
    sequence: 1, type: 'approval', sessionId: 's1', host: 'h', requestId: 'a1', decision: 'allow', expiresAt
  }
  send(`/adapters/${id}/events`, { after: 0, ack: 0 }, { events: [event], lastSequence: 1, acknowledged: 0 })
  send(`/adapters/${id}/sessions/s1`, { approval: null }, { session: {} })
  send(`/adapters/${id}/events`, { after: 1, ack: 1 }, { events: [], lastSequence: 1, acknowledged: 1 })
  const live = judge.state().checks
  t.equal(live.find((c) => c.id === 'OT-139')?.verdict, 'pass', 'OT-139: exercised and held, while the run goes on')
  judge.finish()
  const report = JSON.parse(readFileSync(file, 'utf8')) as {
    checks: Array<{ id: string, verdict: string, exercised: number }>
  }
  t.same(
    report.checks.map((c) => [c.id, c.verdict, c.exercised]),
    live.map((c) => [c.id, c.verdict, c.exercised]),
    'every check as the live view had it'
  )
})
