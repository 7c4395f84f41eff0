// The reliability campaign in the suite: a bounded, seeded fuzz run over the three servers of `orbtest up` (raw
// sockets included) with every check of `stress/fuzz.ts`, the generators' coverage of the spec documents, and proof
// that the raw lane's checks bite on servers that break the rules they hold.
import { createServer as createHttpServer, type Server } from 'node:http'
import { createServer as createNetServer, type AddressInfo, type Socket } from 'node:net'
import t from 'tap'
import type { Draft } from '../stress/draft.js'
import { CONTROL_UNFUZZED } from '../stress/gen-http.js'
import { operationsOf, schemaRoot } from '../stress/gen-openapi.js'
import { ORBTILE_ROUTES } from '../stress/gen-orbtile.js'
import { MUTATION_KINDS } from '../stress/mutate.js'
import { Planner } from '../stress/plan.js'
import { runRaw } from '../stress/raw-run.js'
import { RAW_SCENARIOS, type RawContext, type RawScenario } from '../stress/raw.js'
import { RunState } from '../stress/request.js'
import { formatReport, runCampaign } from '../stress/fuzz.js'
import { controlErrorShape, readDocument, responseFault, SERVER_NAMES, type Target } from '../stress/targets.js'

const SEED = Number(process.env.FC_SEED ?? 20261130)
// 8000 by default: npm test runs it beside the other files, where it reaches a few hundred requests a second, so that
// 30,000 would run into the time limit and what was sent would change with the machine's load. `npm run fuzz` runs
// more.
const REQUESTS = Number(process.env.FUZZ_REQUESTS ?? 8000)

t.test('FUZZ-01 a seeded campaign of thousands of requests over the three servers, raw sockets included, breaks no check', async (t) => {
  // The campaign runs beside busy test files: a server it waits on may go unscheduled for a while, so its 100 Continue
  // gets the silence budget (5 s) rather than 2 s.
  const report = await runCampaign({ requests: REQUESTS, seed: SEED, timeLimitMs: 45_000, continueMs: 5000 })
  const replay = `FC_SEED=${SEED} npx tap dist/test/fuzz.test.js, or ${report.replay}`
  if (!report.ok) t.comment(`${formatReport(report)}seed ${SEED}; replay with ${replay}`)
  t.ok(report.requestsSent >= Math.min(REQUESTS, 5000), `${report.requestsSent} requests sent (seed ${SEED})`)
  for (const server of SERVER_NAMES) t.ok(report.perServer[server].requests > 0, `${server} got requests`)
  for (const [name, check] of Object.entries(report.checks)) {
    const evidence = check.examples.map((e) => `#${e.index} ${e.server} ${e.label}: ${e.detail}`)
    t.equal(check.failures, 0, `${name}: ${check.description} (seed ${SEED}; replay: ${replay})`, { evidence })
  }
  t.comment(`${report.requestsPerSecond} requests/s; sockets idle ${report.process.idle.sockets}, after ${report.process.after.sockets}; RSS ${report.process.idle.rssKiB} → ${report.process.after.rssKiB} KiB`)
})

t.test('FUZZ-02 the generators reach every operation of the three documents, every mutation and every raw scenario, and replay by seed', async (t) => {
  const mix = { servers: SERVER_NAMES, rawShare: 0.2, mutatedShare: 0.45 }
  const where = { basePath: '/a/v1', receiverUrl: 'http://127.0.0.1:9/hook' }
  const planner = new Planner(SEED, mix, where)
  const again = new Planner(SEED, mix, where)
  const operations = new Set<string>()
  const mutations = new Set<string>()
  const raw = new Set<string>()
  const differ: number[] = []
  for (let i = 0; i < 6000; i++) {
    const plan = planner.lane(i) === 'raw' ? planner.raw(i) : planner.structured(i)
    if ('scenario' in plan) raw.add(`${plan.server} ${plan.scenario}`)
    else {
      operations.add(`${plan.server} ${plan.operation}`)
      if (plan.mutation !== undefined) mutations.add(plan.mutation.kind)
    }
    const replayed = 'scenario' in plan ? again.raw(i) : again.structured(i)
    if (i % 10 === 0 && JSON.stringify(replayed) !== JSON.stringify(plan)) differ.push(i)
  }
  t.same(differ, [], 'indices whose request differs in a second planner of the same seed')
  const ops = (server: string, path: string): string[] =>
    operationsOf(schemaRoot(readDocument(path))).map((op) => `${server} ${op.method} ${op.path}`)
  const expected = [
    ...ORBTILE_ROUTES.map((route) => `orbtile ${route.method} /a/v1${route.path}`),
    ...ops('orb', 'specs/orb-bot-api.openapi.json'),
    ...ops('control', 'src/control/openapi.json').filter((op) => !CONTROL_UNFUZZED.includes(op.slice(8)))
  ]
  t.same(expected.filter((op) => !operations.has(op)), [], 'operations never generated')
  t.same(MUTATION_KINDS.filter((kind) => !mutations.has(kind)), [], 'mutations never generated')
  const scenarios = SERVER_NAMES.flatMap((server) => RAW_SCENARIOS.map((scenario) => `${server} ${scenario}`))
  t.same(scenarios.filter((scenario) => !raw.has(scenario)), [], 'raw scenarios never generated')
})

/** A bare node:http server: plain-text 400s, two Hosts and absolute-form targets accepted, no body limit. */
async function bareHttp (): Promise<Server> {
  const server = createHttpServer((request, response) => {
    request.resume()
    request.on('end', () => response.end('{}'))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return server
}

/** A server that reads everything and never answers nor closes. */
async function blackHole (): Promise<{ port: number, close: () => Promise<void> }> {
  const sockets = new Set<Socket>()
  const server = createNetServer({ allowHalfOpen: true }, (socket) => {
    sockets.add(socket)
    socket.resume()
    socket.on('close', () => sockets.delete(socket))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise((resolve) => {
      for (const socket of sockets) socket.destroy()
      server.close(() => resolve())
    })
  }
}

t.test('FUZZ-03 the raw checks bite: against servers that break the rules, each raw scenario reports its check failed', async (t) => {
  const http = await bareHttp()
  const hole = await blackHole()
  t.teardown(async () => {
    http.closeAllConnections()
    await new Promise((resolve) => http.close(resolve))
    await hole.close()
  })
  // Each plays the control server (its Host rules, no earlier pipeline steps), whatever the scenario names.
  const target = (port: number): Target => ({
    name: 'control',
    address: { port },
    host: `127.0.0.1:${port}`,
    base: '',
    bodyLimit: 1024,
    errorShape: controlErrorShape
  })
  const targets = (port: number): RawContext['targets'] =>
    ({ orbtile: target(port), orb: target(port), control: target(port) })
  const draft: Draft = {
    server: 'control',
    operation: 'POST /control/orb/messages',
    method: 'POST',
    path: '/control/orb/messages',
    query: '',
    body: { server: 'srv_orbit', channel: 'ch_general', member: 'mem_ada', content: 'hi' },
    auth: { kind: 'none' },
    headers: []
  }
  const context = (port: number): RawContext => ({
    targets: targets(port), state: new RunState(() => 'token'), silentMs: 800, continueMs: 300, realHoldMs: () => 0
  })
  const cases: Array<[RawScenario, 'http' | 'hole', number, string]> = [
    ['duplicate-host', 'http', 0, 'duplicate-host-400'],
    ['absolute-form', 'http', 0, 'absolute-form-refused'],
    ['over-limit', 'http', 0, 'over-limit-413'],
    ['bad-chunk', 'hole', 0, 'framing-error-answered'],
    ['bad-coding', 'hole', 1, 'framing-error-answered'],
    ['malformed-head', 'hole', 4, 'parse-error-answered'],
    ['header-overflow', 'hole', 0, 'parse-error-answered'],
    ['left-mid-body', 'hole', 1, 'left-mid-body-closed'],
    ['expect-continue', 'hole', 0, 'expect-100-continue']
  ]
  const httpPort = (http.address() as AddressInfo).port
  // Each on its own connection, all at once: most of them wait out a timeout.
  const outcomes = await Promise.all(cases.map(([scenario, kind, variant]) => runRaw(
    { scenario, server: 'control', variant, pick: 0.5, drafts: [draft] },
    context(kind === 'http' ? httpPort : hole.port)
  )))
  cases.forEach(([scenario, kind, , check], i) => {
    const against = kind === 'http' ? 'a bare node:http server' : 'a black hole'
    const out = outcomes[i]!
    t.ok(out.failures.some((f) => f.check === check), `${scenario} against ${against} fails ${check}`, { out })
  })
  // A bare node:http server reads nothing after an Upgrade request it ignores: the request after it is dropped.
  const dropping: Array<[RawScenario, number]> = [
    ['slow-head', hole.port], ['http10', hole.port], ['pipelined', hole.port], ['ignored-upgrade', httpPort]
  ]
  const dropped = await Promise.all(dropping.map(([scenario, port]) => runRaw(
    { scenario, server: 'control', variant: 0, pick: 0.5, drafts: [draft, draft] },
    context(port)
  )))
  dropping.forEach(([scenario], i) => t.ok(dropped[i]!.drops.length > 0, `${scenario} is a silent drop there`))
  // A bare server's 400 for bytes that are not HTTP is no JSON: the shape check bites.
  // Variant 13: GET with a header line that has no colon.
  const plan = {
    scenario: 'malformed-head' as const, server: 'control' as const, variant: 13, pick: 0, drafts: [draft]
  }
  const out = await runRaw(plan, context(httpPort))
  const faults = out.responses.map((r) => responseFault(target(httpPort), r))
  t.ok(faults.some((fault) => fault !== undefined), 'a plain-text 400 fails error-shape', { faults })
})
