// `orbtest proxy orbtile` in front of a fake Orbtile that stands in for the real app: the adapter runs through the
// proxy (a real CLI process running the reference adapter), the fake judges the same traffic itself, and the two
// judges must agree.
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { createServer as createHttpServer, request } from 'node:http'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { renderHtml } from '../conformance/client/core/html.js'
import type { ClientRunReport, Millis, ServerFinding } from '../conformance/client/core/journal.js'
import { clientJson, clientJunit } from '../conformance/client/core/report.js'
import { CHECKS } from '../conformance/client/orbtile/checks/index.js'
import { startJudge } from '../conformance/client/orbtile/judge.js'
import { OrbtileModel } from '../conformance/client/orbtile/model.js'
import { serverFindings } from '../conformance/server/orbtile/passive.js'
import { markdownSummary, readRunReport } from '../conformance/summary.js'
import type { Fault } from '../src/orbtile-mock/faults.js'
import type { TapExchange } from '../src/shared/tap.js'
import { CLI } from './helpers/cli.js'
import { readDiscovery, scratch, startFake } from './helpers/fake.js'
import { judge as judged, Journal } from './helpers/journal.js'
import { exitOf, until } from './helpers/process.js'
import { exchangeOf as exchange } from './helpers/tap-exchange.js'
import { ROOT } from './helpers/root.js'

const ADAPTER = join(ROOT, 'examples', 'orbtile-adapter-node', 'adapter.mjs')

interface Report { checks: Array<{ id: string, verdict: string }>, server?: ServerFinding[] }
const read = (file: string): Report => JSON.parse(readFileSync(file, 'utf8')) as Report
const verdicts = (report: Report): Record<string, string> =>
  Object.fromEntries(report.checks.map((c) => [c.id, c.verdict]))

interface Through {
  proxy: Record<string, string>
  direct: Record<string, string>
  server: ServerFinding[] | undefined
  code: number | null
  stderr: string
}

/** The reference adapter (with `args`) through the proxy (with `flags`), in front of a fake (with `faults`). */
async function throughProxy (t: Test, args: string[], flags: string[] = [], faults: Fault[] = []): Promise<Through> {
  const dir = scratch(t)
  const direct = join(dir, 'direct.json')
  const judge = startJudge(direct, () => fake.token)
  const fake = await startFake(t, { autoAllow: true, tap: judge.tap, faults })
  const report = join(dir, 'proxy.json')
  const upstream = join(fake.dir, 'home', 'adapter-api.json')
  const mine = join(dir, 'mine', 'adapter-api.json')
  const proxy = spawn(process.execPath, [CLI, 'proxy', 'orbtile', '--upstream', upstream, '--discovery', mine,
    '--judge', report, ...flags, '--', process.execPath, ADAPTER, ...args], { stdio: ['ignore', 'ignore', 'pipe'] })
  t.teardown(() => { proxy.kill('SIGKILL') })
  let stderr = ''
  proxy.stderr!.on('data', (chunk: Buffer) => { stderr += chunk.toString() })
  // A clean adapter has made its sessions; a faulty one has been refused a few times.
  const busy = await until(() => judge.state().requests >= 6, 20_000)
  t.ok(busy, `the adapter's requests reached the app through the proxy (${judge.state().requests})`)
  proxy.kill('SIGTERM')
  const code = await exitOf(proxy)
  await fake.close()
  judge.finish()
  const proxied = read(report)
  return { proxy: verdicts(proxied), direct: verdicts(read(direct)), server: proxied.server, code, stderr }
}

t.test(
  'PROXY-01 a clean adapter through the proxy: its verdicts are those of the app\'s own judge of the traffic, exit 0',
  async (t) => {
    const r = await throughProxy(t, [])
    t.equal(r.code, 0, `exit 0 (${r.stderr.trim().split('\n').at(-1) ?? ''})`)
    // A timed check near its window's edge may be inconclusive for one judge and pass for the other (each measures
    // its own stalls); a failure is the verdict that must agree.
    const failed = (v: Record<string, string>): string[] => Object.keys(v).filter((id) => v[id] === 'fail')
    t.same(Object.keys(r.proxy).sort(), Object.keys(r.direct).sort(), 'the same checks, judged')
    t.same(failed(r.proxy), failed(r.direct), 'failing where the app\'s own judge fails')
    t.same(Object.entries(r.proxy).filter(([, v]) => v === 'fail'), [], 'no check failed')
    t.ok(Object.values(r.proxy).filter((v) => v === 'pass').length >= 10, 'and checks were exercised')
    t.same(r.server, [], 'the app\'s replies gave no server finding')
  }
)

t.test('PROXY-02 a faulty adapter through the proxy is caught under the rule it breaks (Origin: OT-014), exit 1', async (t) => {
  const r = await throughProxy(t, ['--fault', 'origin'])
  t.equal(r.proxy['OT-014'], 'fail', 'OT-014 fails')
  t.equal(r.direct['OT-014'], 'fail', 'as the app\'s own judge says')
  t.equal(r.code, 1, 'exit 1')
})

t.test(
  'PROXY-03 the proxy\'s socket and file are private; the token passes through; a new token and the app\'s quitting follow, and the judge\'s journal shows them',
  async (t) => {
    const fake = await startFake(t, { autoAllow: true })
    const dir = scratch(t)
    const mine = join(dir, 'adapter-api.json')
    const ready = join(dir, 'ready.json')
    const report = join(dir, 'report.json')
    const upstream = join(fake.dir, 'home', 'adapter-api.json')
    const first = fake.token
    const proxy = spawn(process.execPath, [CLI, 'proxy', 'orbtile', '--upstream', upstream, '--discovery', mine,
      '--ready-file', ready, '--judge', report], { stdio: 'ignore' })
    t.teardown(() => { proxy.kill('SIGKILL') })
    t.ok(await until(() => existsSync(ready), 10_000), 'the ready file is written')
    const file = readDiscovery(mine)
    t.equal(file.token, fake.token, 'the app\'s token, unchanged')
    t.not(file.socketPath, readDiscovery(upstream).socketPath, 'the proxy\'s own socket')
    t.equal(statSync(mine).mode & 0o777, 0o600, 'the discovery file is 0600')
    t.equal(statSync(file.socketPath).mode & 0o777, 0o600, 'the socket is 0600')
    t.equal(statSync(join(file.socketPath, '..')).mode & 0o777, 0o700, 'in a folder of its own, 0700')
    fake.control.regenerateToken()
    t.ok(await until(() => readDiscovery(mine).token === fake.token, 3000), 'a new token reaches the adapter\'s file')
    await fake.close()
    t.ok(await until(() => !existsSync(mine), 3000), 'the app quit: the adapter\'s file goes too')
    proxy.kill('SIGTERM')
    t.equal(await exitOf(proxy), 0, 'SIGTERM stops it, exit 0')
    t.notOk(existsSync(file.socketPath), 'its socket is removed')
    t.notOk(existsSync(ready), 'and the ready file')
    const text = readFileSync(report, 'utf8')
    const run = JSON.parse(text) as ClientRunReport
    const actions = run.scenarios[0]!.journal.flatMap((e) => e.kind === 'action' && e.actor === 'app' ? [e] : [])
    t.same(actions.map((a) => [a.name, a.data]), [
      ['regenerate', { token: '<discovery token 2>', leasesEnd: true }],
      ['away', { away: true }]
    ], 'the journal: the new token (every lease ended), then the app away, when the proxy saw them')
    t.notOk(text.includes(first) || text.includes(fake.token), 'no discovery token in the report')
  }
)

t.test('PROXY-09 the app\'s file changing under the proxy is journalled as the scenarios journal it, and kept in the timeline: a move is a restart, a file back with its old token ends no lease', async (t) => {
  const report = join(scratch(t), 'report.json')
  let token = 'discovery-token-one-0123456789'
  const judge = startJudge(report, () => token, { command: 'orbtest proxy orbtile', receiver: 'the proxy' })
  judge.begin()
  // Between the changes, more requests than a judged run's timeline keeps (the first 200, the last 50).
  const busy = (): void => { for (let i = 0; i < 150; i++) judge.tap.exchange(exchange({ connection: 1 })) }
  busy()
  judge.app({ kind: 'token', token })
  judge.app({ kind: 'away' })
  busy()
  judge.app({ kind: 'back', token })
  busy()
  // As the proxy does: the token it reads and the change it reports are one step.
  token = 'discovery-token-two-0123456789'
  judge.app({ kind: 'moved', token })
  busy()
  judge.app({ kind: 'away' })
  busy()
  token = 'discovery-token-three-0123456789'
  judge.app({ kind: 'back', token })
  busy()
  judge.app({ kind: 'moved', token })
  busy()
  judge.finish()
  const run = JSON.parse(readFileSync(report, 'utf8')) as ClientRunReport
  const actions = run.scenarios[0]!.journal.flatMap((e) => e.kind === 'action' && e.actor === 'app' ? [e] : [])
  t.same(actions.map((a) => [a.name, a.data]), [
    ['away', { away: true }],
    ['api-on', { away: false }],
    ['away', { away: true }],
    ['move', { token: '<discovery token 2>', leasesEnd: true, away: false }],
    ['away', { away: true }],
    ['restart', { token: '<discovery token 3>', leasesEnd: true, away: false }],
    ['away', { away: true }],
    ['move', { leasesEnd: true, away: false }]
  ], 'the same token is no change; away and back; a move is a restart, its token new or not')
})

t.test('OT-113 PROXY-09 a session\'s silence while the proxy saw the app away is not the adapter\'s fault', async (t) => {
  const id = 'com.example.proxy'
  const lease = 'adapter-token-0123456789'
  const headers = { host: 'localhost', 'content-type': 'application/json', authorization: 'Bearer discovery-token-0' }
  const silent = (away: boolean): string => {
    const j = new Journal(headers)
    j.action(0, 'harness', 'start')
    j.exchange({
      method: 'PUT',
      path: `/a/v1/adapters/${id}`,
      body: { name: 'Proxy', palette: { baseHue: 250 } },
      reply: { adapter: { id }, enabled: true, keypadDecisions: true, warnings: [], adapterToken: lease },
      at: 5,
      end: 10
    })
    const session = (at: Millis, body: Record<string, unknown>): void => {
      const path = `/a/v1/adapters/${id}/sessions/s1`
      j.exchange({ path, headers: { 'x-orbtile-adapter-token': lease }, body, reply: { session: {} }, at })
    }
    session(100, { ttlSeconds: 10 })
    if (away) {
      j.action(4000, 'app', 'away', { away: true })
      j.action(9000, 'app', 'api-on', { away: false })
    }
    session(16_000, {})
    j.action(17_000, 'harness', 'stop')
    const model = new OrbtileModel('discovery-token-0', Date.now())
    return judged(CHECKS.find((c) => c.id === 'OT-113')!, model, j.entries, 17_000).verdict
  }
  t.equal(silent(false), 'fail', '16 s of silence with ttlSeconds 10, the app there all along')
  t.not(silent(true), 'fail', 'the same silence while the app was away for 5 s of it')
})

t.test('PROXY-04 a usage mistake or an app that is not there: one line, exit 2', async (t) => {
  const dir = scratch(t)
  const run = async (args: string[]): Promise<{ code: number | null, stderr: string }> => {
    const child = spawn(process.execPath, [CLI, 'proxy', 'orbtile', ...args], { stdio: ['ignore', 'ignore', 'pipe'] })
    let stderr = ''
    child.stderr!.on('data', (chunk: Buffer) => { stderr += chunk.toString() })
    return { code: await exitOf(child), stderr }
  }
  const nowhere = await run(['--upstream', join(dir, 'none.json'), '--discovery', join(dir, 'mine.json')])
  t.equal(nowhere.code, 2, 'no app: exit 2')
  t.match(nowhere.stderr, /^orbtest: no discovery file of an Orbtile app at .*none\.json/, nowhere.stderr)
  t.equal(nowhere.stderr.trim().split('\n').length, 1, 'one line')
  const neither = await run(['--upstream', join(dir, 'none.json')])
  t.equal(neither.code, 2, 'neither --discovery nor a COMMAND: exit 2')
  t.match(neither.stderr, /give --discovery PATH/)
})

/** An app that answers every request 200 with `{}`: its /info is no Info. Its discovery file is `file`. */
async function brokenApp (t: Test, dir: string): Promise<string> {
  const socketPath = join(dir, 'broken.sock')
  const app = createHttpServer((_req, res) => { res.writeHead(200, { 'content-type': 'application/json' }).end('{}') })
  app.listen(socketPath)
  await once(app, 'listening')
  t.teardown(() => { app.close() })
  const file = join(dir, 'broken.json')
  writeFileSync(file, JSON.stringify({ api: 1, basePath: '/a/v1', socketPath, token: 't'.repeat(43) }))
  return file
}

t.test('PROXY-05 an app whose /info is no Info gives a server finding (OT-034), fatal only with --strict-server', async (t) => {
  const dir = scratch(t)
  const upstream = await brokenApp(t, dir)
  for (const strict of [false, true]) {
    const ready = join(dir, `ready-${String(strict)}.json`)
    const proxy = spawn(process.execPath, [CLI, 'proxy', 'orbtile', '--upstream', upstream, '--discovery',
      join(dir, `mine-${String(strict)}.json`), '--ready-file', ready, ...(strict ? ['--strict-server'] : [])],
    { stdio: ['ignore', 'ignore', 'pipe'] })
    t.teardown(() => { proxy.kill('SIGKILL') })
    let stderr = ''
    proxy.stderr!.on('data', (chunk: Buffer) => { stderr += chunk.toString() })
    t.ok(await until(() => existsSync(ready), 10_000), 'the proxy is ready')
    const { socketPath } = (JSON.parse(readFileSync(ready, 'utf8')) as { proxy: { socketPath: string } }).proxy
    const status = await new Promise<number>((resolve, reject) => {
      request({ socketPath, path: '/a/v1/info', headers: { authorization: `Bearer ${'t'.repeat(43)}` } }, (res) => {
        res.resume()
        res.once('end', () => resolve(res.statusCode ?? 0))
      }).once('error', reject).end()
    })
    t.equal(status, 200, 'the app\'s answer came back through the proxy')
    proxy.kill('SIGTERM')
    const code = await exitOf(proxy)
    t.match(stderr, /the app's replies: 1 server finding\(s\)[\s\S]*OT-034 \(MUST\)/, 'OT-034, on a line of its own')
    t.equal(code, strict ? 1 : 0, strict ? 'exit 1 with --strict-server' : 'exit 0 without it')
  }
})

const EVENTS = '/a/v1/adapters/a.b/events'
const ERROR = (code: string): string => JSON.stringify({ error: { code, message: 'm' } })
const RATE = ERROR('rate_limited')

t.test(
  'PROXY-06 a reply is held to its route\'s schema, an error to the spec\'s Error; orbtest\'s tables give decisions',
  async (t) => {
    const ids = (x: Partial<TapExchange>): string[] => serverFindings(exchange(x)).map((f) => `${f.id} ${f.level}`)
    const events = (list: unknown[]): string => JSON.stringify({ events: list, lastSequence: 0, acknowledged: 0 })
    t.same(ids({}), ['OT-034 MUST'], 'an /info reply that is not an Info')
    t.same(ids({ method: 'POST', target: EVENTS, reply: events([]) }), [], 'a well-formed EventsReply')
    const zero = events([{ sequence: 0, type: 'tap', sessionId: 's' }])
    t.same(ids({ method: 'POST', target: EVENTS, reply: zero }), ['OT-131 MUST'], 'an event numbered 0')
    t.same(ids({ status: 404, reply: 'not found' }), ['OT-149 MUST'], 'an error that is not an Error')
    t.same(ids({ status: 400, reply: ERROR('oops') }), ['OT-150 MUST'], 'a code the spec has not')
    t.same(ids({ status: 400, reply: ERROR('not_found') }), ['OT-A01 decision'], 'not_found as 400')
    t.same(ids({ status: 429, reply: RATE }), ['OT-A20 decision'], 'a 429 without Retry-After')
    t.same(ids({ status: 429, reply: RATE, replyHeaders: { 'retry-after': '1' } }), [], 'with it')
    t.same(ids({ headers: { origin: 'https://x' }, status: 403, reply: ERROR('forbidden_origin') }), [], 'Origin refused')
    t.same(ids({ finished: false, status: 200, reply: '' }), [], 'a reply cut before it came: nothing to read')
  }
)

t.test('PROXY-08 each form of the report shows the server\'s findings: JSON, HTML, JUnit, summary', async (t) => {
  const finding = { what: 'GET /a/v1/info -> 200', message: 'the reply is not an Info: <b>' }
  const server: ServerFinding[] = [{ id: 'OT-034', level: 'MUST', request: 3, ...finding }]
  const report: ClientRunReport = {
    suite: 'orbtile',
    title: 'Orbtile Adapter Protocol v1.2: client rules judged on live traffic (orbtest proxy orbtile)',
    command: [],
    seed: 0,
    strict: false,
    checks: [],
    scenarios: [],
    ms: 10,
    server
  }
  const json = JSON.parse(clientJson(report, [], [])) as { server?: ServerFinding[] }
  t.same(json.server, server, 'JSON: the findings as they are')
  const html = renderHtml(report)
  t.match(html, /<h2 id="server">The server: 1 finding\(s\)<\/h2>/, 'HTML: a section of its own')
  t.match(html, /the reply is not an Info: &lt;b&gt;/, 'its text escaped')
  const junit = /<testsuite name="[^"]*: the server" tests="1" failures="0"[\s\S]*OT-034 request 3/
  t.match(clientJunit(report, []), junit, 'JUnit: a testsuite of its own, no failure')
  const markdown = markdownSummary(readRunReport(json))
  t.match(markdown, /judged: live traffic \(`orbtest proxy orbtile`\)/, 'Markdown: judged through the proxy')
  t.match(markdown, /### The server: 1 finding\(s\)\n\n- \*\*OT-034\*\* \(MUST\)/, 'Markdown: the findings listed')
})
