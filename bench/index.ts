/**
 * `npm run bench`: orbtest's fake Orbtile beside a bare fastify baseline on the same kind of Unix socket, measured
 * in the same run on the same machine and reported as ratios. Results also go to bench/results/latest.json.
 * Throughput is measured in rounds that alternate the two servers, and each side reports its median round, so that
 * drift in the machine's load hits both alike.
 * Tunables: BENCH_STARTS, BENCH_ROUNDS, BENCH_SECONDS, BENCH_CONNECTIONS, BENCH_WAKEUPS, BENCH_CLIENT_SUITE=0 (skip
 * the client suite run), BENCH_ONLY=judge (only the `--judge` row, every slice printed), BENCH_SLICE (the seconds
 * of its slices), BENCH_ONLY=startup (only the `orbtest up` start-up row), BENCH_ONLY=dashboard (only the
 * dashboard's rows), BENCH_DASHBOARD=0 (skip them: they need Chromium), BENCH_ONLY=proxy (only `orbtest proxy`'s row),
 * BENCH_PROF=DIR (CPU profiles of the servers).
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { Agent, createServer, request } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  ADAPTER, call, CLI, CONNECTIONS, cpuMs, KINDS, launch, launchOrb, load, loadHttp, median, medianRound,
  pairedRounds, percentile, prepareAdapter, ROUNDS, root, SECONDS, slicedRound, STARTS, stop, WAKEUPS,
  type Kind, type Load, type Paired, type Server, type SlicedRound
} from './harness.js'
import { dashboardRows, type DashboardRows } from './dashboard.js'
import { spread, upStartup, type Spread, type UpStartup } from './startup-up.js'
import { clientSuiteSeconds, fakeStarts } from './client.js'
import { judgeAlone } from './judge.js'
import { memoryLines, memoryRows } from './memory.js'
import { orbProxyRow, proxyLine, proxyRow } from './proxy.js'

/** `orbtest orbtile` against one bare fastify on a socket (bench/baseline-server.ts): spawn to ready file. */
const SESSION_PATH = `/a/v1/adapters/${ADAPTER}/sessions/s1`
/** The hot routes' slices per round and their length in seconds (BENCH_SLICES, BENCH_SLICE_S). */
const SLICES = Number(process.env.BENCH_SLICES ?? 5)
const SLICE_S = Number(process.env.BENCH_SLICE_S ?? 1)

async function startup (dir: string): Promise<UpStartup> {
  const times: Record<Kind, number[]> = { orbtest: [], baseline: [] }
  // Alternate the two so that drift of the machine's load hits both alike.
  for (let i = 0; i < STARTS; i++) {
    for (const kind of ['baseline', 'orbtest'] as const) {
      const server = await launch(kind, dir, i)
      times[kind].push(server.readyMs)
      await stop(server)
    }
  }
  const up = spread(times.orbtest)
  const baseline = spread(times.baseline)
  return { up, baseline, ratio: up.median / baseline.median }
}

/**
 * The Orbtile's hot routes: in each round a fresh orbtest and a fresh bare fastify run side by side on the server's
 * CPU, and each route is loaded in SLICES slices of SLICE_S seconds, the two in turn (the order turning), so that a
 * slice's pair shares the machine's state of the moment. A round's ratio is the median of its slices' ratios.
 */
async function throughputs (dir: string): Promise<{ info: Paired, sessions: Paired }> {
  const rounds: { info: SlicedRound[], sessions: SlicedRound[] } = { info: [], sessions: [] }
  // The baseline gets the very same bytes (headers of the same size) that orbtest needs; it just ignores them.
  const stand = { authorization: `Bearer ${'t'.repeat(43)}`, 'x-orbtile-adapter-token': 'a'.repeat(43) }
  const update = { activity: 'tool', toolLabel: 'npm test', statusDetail: 'running' }
  for (let round = 0; round < ROUNDS; round++) {
    const servers = {
      baseline: await launch('baseline', dir, 100 + round),
      orbtest: await launch('orbtest', dir, 100 + round)
    }
    try {
      const headers = { baseline: stand, orbtest: await prepareAdapter(servers.orbtest) }
      const auth = (kind: Kind): Record<string, string> =>
        ({ authorization: kind === 'baseline' ? stand.authorization : `Bearer ${servers.orbtest.token}` })
      const routes = {
        info: (kind: Kind, seconds: number) =>
          load(servers[kind], 'GET', '/a/v1/info', auth(kind), undefined, { warm: 0, seconds }),
        sessions: (kind: Kind, seconds: number) =>
          load(servers[kind], 'POST', SESSION_PATH, headers[kind], update, { warm: 0, seconds })
      }
      rounds.info.push(await slicedRound(routes.info, SLICES, SLICE_S))
      rounds.sessions.push(await slicedRound(routes.sessions, SLICES, SLICE_S))
    } finally {
      for (const kind of KINDS) await stop(servers[kind])
    }
  }
  return { info: pairedRounds(rounds.info), sessions: pairedRounds(rounds.sessions) }
}

// The fake Orb's message routes (throttles off) beside the bare baseline: fresh pairs each round, loaded in
// alternating slices as throughputs() does.
async function orbThroughputs (dir: string): Promise<{ post: Paired, read: Paired }> {
  const rounds: { post: SlicedRound[], read: SlicedRound[] } = { post: [], read: [] }
  for (let round = 0; round < ROUNDS; round++) {
    const servers = {
      baseline: await launchOrb('baseline', dir, round),
      orbtest: await launchOrb('orbtest', dir, round)
    }
    try {
      const messages = (kind: Kind): string => `${servers[kind].url}/api/bot/v1/messages`
      const routes = {
        post: (kind: Kind, seconds: number) => loadHttp(messages(kind), 'POST', servers[kind].child.pid,
          { channel: 'ch_general', content: 'tick' }, { warm: 0, seconds }),
        // By then the channel holds far more than a page: every read answers 50 messages.
        read: (kind: Kind, seconds: number) => loadHttp(`${messages(kind)}?channel=ch_general`, 'GET',
          servers[kind].child.pid, undefined, { warm: 0, seconds })
      }
      rounds.post.push(await slicedRound(routes.post, SLICES, SLICE_S))
      rounds.read.push(await slicedRound(routes.read, SLICES, SLICE_S))
    } finally {
      for (const kind of KINDS) {
        const exited = new Promise((resolve) => servers[kind].child.once('exit', resolve))
        servers[kind].child.kill('SIGTERM')
        await exited
      }
    }
  }
  return { post: pairedRounds(rounds.post), read: pairedRounds(rounds.read) }
}

const BOTS = Number(process.env.BENCH_BOTS ?? 100)

// A world with BOTS apps installed beside the demo ones, each allowed in ch_general.
function fanInWorld (dir: string): string {
  const world = JSON.parse(readFileSync(join(root, 'fixtures', 'orb-world.json'), 'utf8'))
  for (let i = 0; i < BOTS; i++) {
    const id = `app_bench_${i}`
    world.apps.push({
      id,
      name: `Bench ${i}`,
      token: `orb_bench_${String(i).padStart(34, '0')}`,
      scopes: ['messages:read']
    })
    world.installs.push({
      community: 'srv_orbit',
      app: id,
      role: { name: id, rights: ['send_messages'] },
      channels: ['ch_general']
    })
  }
  const file = join(dir, 'fan-in-world.json')
  writeFileSync(file, JSON.stringify(world))
  return file
}

function httpJson (
  url: string,
  method: string,
  headers: Record<string, string>,
  body?: unknown,
  agent?: Agent
): Promise<any> {
  const payload = body === undefined ? undefined : JSON.stringify(body)
  const target = new URL(url)
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname + target.search,
        method,
        agent,
        headers: { ...headers, ...(payload === undefined ? {} : { 'content-type': 'application/json' }) }
      },
      (res) => {
        let text = ''
        res.on('data', (chunk) => {
          text += chunk
        })
        res.on('end', () => resolve(text === '' ? undefined : JSON.parse(text)))
      }
    )
    req.on('error', reject)
    req.end(payload)
  })
}

/**
 * Event fan-in: BOTS bots long-poll their events while members post mentions of them through the control server
 * (10 at a time, for BENCH_SECONDS). Reports events delivered per second and the latency from sending the post to a
 * bot holding the event.
 */
async function fanIn (dir: string): Promise<{ bots: number; eventsPerSecond: number; median: number; p99: number }> {
  const { child, url, control: controlUrl } = await launchOrb('orbtest', dir, 1100, ['--world', fanInWorld(dir)])
  const orb = { url }
  const control = { url: controlUrl! }
  const agent = new Agent({ keepAlive: true, maxSockets: BOTS + 20 })
  const sent = new Map<number, bigint>()
  const latencies: number[] = []
  let delivered = 0
  // A flag the bots' loops read after each poll; set by the timer below.
  const state = { running: true }
  const bots = Array.from({ length: BOTS }, async (_, i) => {
    const auth = { authorization: `Bearer orb_bench_${String(i).padStart(34, '0')}` }
    let next = 0
    while (state.running) {
      const reply = await httpJson(
        `${orb.url}/api/bot/v1/events?after=${next}&wait=2&limit=100`,
        'GET',
        auth,
        undefined,
        agent
      )
      const now = process.hrtime.bigint()
      for (const event of reply.events as Array<{ data: { message: { body: string } } }>) {
        const n = Number(event.data.message.body.split('#')[1])
        const at = sent.get(n)
        if (at !== undefined) latencies.push(Number(now - at) / 1e6)
        delivered++
      }
      next = reply.next
    }
  })
  await new Promise((resolve) => setTimeout(resolve, 300)) // every bot holds its poll
  let n = 0
  const start = process.hrtime.bigint()
  const until = Date.now() + SECONDS * 1000
  const posters = Array.from({ length: 10 }, async () => {
    while (Date.now() < until) {
      const k = n++
      sent.set(k, process.hrtime.bigint())
      await httpJson(`${control.url}/control/orb/messages`, 'POST', { host: new URL(control.url).host }, { server: 'srv_orbit', channel: 'ch_general', member: 'mem_bo', content: `<@app_bench_${k % BOTS}> #${k}` }, agent)
    }
  })
  await Promise.all(posters)
  await new Promise((resolve) => setTimeout(resolve, 200)) // the last events reach their bots
  const seconds = Number(process.hrtime.bigint() - start) / 1e9
  state.running = false
  await Promise.all(bots)
  agent.destroy()
  const exited = new Promise((resolve) => child.once('exit', resolve))
  child.kill('SIGTERM')
  await exited
  return { bots: BOTS, eventsPerSecond: delivered / seconds, median: median(latencies), p99: percentile(latencies, 99) }
}

/**
 * Webhook deliveries: a local receiver answers 204 to every delivery while the developer's test events are fired
 * through the control server (10 at a time, for BENCH_SECONDS). Reports deliveries received per second.
 */
async function webhookRate (dir: string): Promise<{ deliveriesPerSecond: number }> {
  let received = 0
  const receiver = createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      received++
      res.writeHead(204).end()
    })
  })
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve))
  const port = (receiver.address() as AddressInfo).port
  const { child, control: controlUrl } = await launchOrb('orbtest', dir, 1000)
  const control = { url: controlUrl! }
  const agent = new Agent({ keepAlive: true, maxSockets: 20 })
  const host = { host: new URL(control.url).host }
  await httpJson(`${control.url}/control/orb/apps/app_demo/endpoint`, 'PUT', host, { url: `http://127.0.0.1:${port}/hook` }, agent)
  const start = process.hrtime.bigint()
  const until = Date.now() + SECONDS * 1000
  let fired = 0
  const pendingDeliveries = (): number => fired - received
  await Promise.all(Array.from({ length: 10 }, async () => {
    while (Date.now() < until) {
      fired++
      await httpJson(`${control.url}/control/orb/apps/app_demo/test-event`, 'POST', host, undefined, agent)
    }
  }))
  // Wait until every fired event has reached the receiver (or a second has passed).
  for (let i = 0; i < 1000 && pendingDeliveries() > 0; i++) await new Promise((resolve) => setTimeout(resolve, 1))
  const seconds = Number(process.hrtime.bigint() - start) / 1e9
  agent.destroy()
  const exited = new Promise((resolve) => child.once('exit', resolve))
  child.kill('SIGTERM')
  await exited
  await new Promise((resolve) => receiver.close(resolve))
  return { deliveriesPerSecond: received / seconds }
}

// Long-poll wake-up: a poll is held, the user taps (through the control server), and the time from sending the
// tap to the poll's answer is measured. It includes the control request, so it bounds the wake-up from above.
async function wakeups (dir: string): Promise<{ median: number, p99: number }> {
  const server = await launch('orbtest', dir, 200)
  const headers = await prepareAdapter(server)
  const samples: number[] = []
  let after = 0
  for (let i = 0; i < WAKEUPS; i++) {
    const poll = call({
      socketPath: server.socket,
      method: 'POST',
      path: `/a/v1/adapters/${ADAPTER}/events`,
      headers,
      body: { after, ack: after, waitSeconds: 2 }
    })
    await new Promise((resolve) => setTimeout(resolve, 2))
    const start = process.hrtime.bigint()
    await call({ url: server.control, method: 'POST', path: `/control/orbtile/adapters/${ADAPTER}/sessions/s1/tap` })
    const reply = await poll
    samples.push(Number(process.hrtime.bigint() - start) / 1e6)
    after = reply.json.lastSequence
  }
  await stop(server)
  return { median: median(samples), p99: percentile(samples, 99) }
}

/**
 * The `--judge` row's shape: JUDGE_SETS sets of three fresh fakes, each loaded JUDGE_SLICES times for JUDGE_SLICE_S.
 * Ten slices in all by default, since the goal sits within a few points of what the row measures.
 */
const JUDGE_SETS = Math.max(2, Math.ceil(ROUNDS / 2))
const JUDGE_SLICES = 5
const JUDGE_SLICE_S = Number(process.env.BENCH_SLICE ?? 1)
const HEARTBEAT = { activity: 'tool', toolLabel: 'npm test', statusDetail: 'running' }
const JUDGE_KINDS = ['plain', 'judged', 'control'] as const
type JudgeKind = (typeof JUDGE_KINDS)[number]

interface JudgeRow {
  judged: Load
  plain: Load
  /** Median, lowest and highest of the slices' judged/unjudged ratios. */
  ratio: number
  min: number
  max: number
  /** The same median for a second unjudged fake: what the row cannot tell apart from nothing. */
  control: number
  /** Server CPU per request over each set's whole run (its pauses included), summed over the sets. */
  cpuUs: Record<JudgeKind, number>
}

/**
 * Session updates with `--judge` on against the same fake without it (issue goal: at least 90%): what journaling
 * and the client checks cost on the hot route. Three fakes run side by side on the server's CPU: two unjudged, one
 * judged. Each slice loads the three in turn, the order turning from slice to slice so that each goes first, second
 * and last equally often, and the row is the median of the slices' own ratios: a slice's three runs share the
 * machine's state of the moment, where processes started minutes apart may not (on a shared machine whole rounds
 * of separate processes differed by half). The second unjudged fake is a control. Fresh sets of processes sample
 * what one process's luck (its heap's layout, where it was placed) may add.
 */
async function judgeThroughput (dir: string): Promise<JudgeRow> {
  const slices: Record<JudgeKind, Load[]> = { plain: [], judged: [], control: [] }
  const cpu: Record<JudgeKind, number> = { plain: 0, judged: 0, control: 0 }
  const answered: Record<JudgeKind, number> = { plain: 0, judged: 0, control: 0 }
  const ratios: number[] = []
  const controls: number[] = []
  const path = `/a/v1/adapters/${ADAPTER}/sessions/s1`
  for (let set = 0; set < JUDGE_SETS; set++) {
    const n = 300 + set * 3
    const servers: Record<JudgeKind, Server> = {
      plain: await launch('orbtest', dir, n),
      judged: await launch('orbtest', dir, n + 1, ['--judge', join(dir, `judge-${set}.json`)]),
      control: await launch('orbtest', dir, n + 2)
    }
    try {
      const headers = {
        plain: await prepareAdapter(servers.plain),
        judged: await prepareAdapter(servers.judged),
        control: await prepareAdapter(servers.control)
      }
      const heartbeats = (kind: JudgeKind, warm: number, seconds: number): Promise<Load> =>
        load(servers[kind], 'POST', path, headers[kind], HEARTBEAT, { warm, seconds })
      for (const kind of JUDGE_KINDS) await heartbeats(kind, 2, 0)
      const before = JUDGE_KINDS.map((kind) => cpuMs(servers[kind].child.pid) ?? 0)
      for (let slice = 0; slice < JUDGE_SLICES; slice++) {
        const order = [0, 1, 2].map((i) => JUDGE_KINDS[(i + slice + set) % 3]!)
        const got: Partial<Record<JudgeKind, Load>> = {}
        for (const kind of order) {
          got[kind] = await heartbeats(kind, 0, JUDGE_SLICE_S)
          slices[kind].push(got[kind])
          answered[kind] += got[kind].requests
        }
        const [j, p, c] = [got.judged!, got.plain!, got.control!]
        ratios.push(j.rps / p.rps)
        controls.push(c.rps / p.rps)
        if (process.env.BENCH_ONLY === 'judge') {
          process.stdout.write(`set ${set + 1} slice ${slice + 1}: judged ${(ratios.at(-1)! * 100).toFixed(1)}%, control ${(controls.at(-1)! * 100).toFixed(1)}% (${j.rps.toFixed(0)} / ${p.rps.toFixed(0)} / ${c.rps.toFixed(0)} req/s; CPU ${j.cpuUs?.toFixed(1) ?? '?'} / ${p.cpuUs?.toFixed(1) ?? '?'} / ${c.cpuUs?.toFixed(1) ?? '?'} µs)\n`)
        }
      }
      JUDGE_KINDS.forEach((kind, i) => { cpu[kind] += (cpuMs(servers[kind].child.pid) ?? 0) - before[i]! })
    } finally {
      for (const kind of JUDGE_KINDS) await stop(servers[kind])
    }
  }
  const perRequest = (kind: JudgeKind): number => (cpu[kind] * 1000) / Math.max(1, answered[kind])
  return {
    judged: medianRound(slices.judged),
    plain: medianRound(slices.plain),
    ratio: median(ratios),
    min: Math.min(...ratios),
    max: Math.max(...ratios),
    control: median(controls),
    cpuUs: { plain: perRequest('plain'), judged: perRequest('judged'), control: perRequest('control') }
  }
}

/** A hot route's row: the median rounds, the rounds' ratios, the server's CPU per request. */
function routeLine (name: string, p: Paired, goal: string): string {
  const pct = (x: number): string => `${(x * 100).toFixed(0)}%`
  const cpu = p.cpuUs === undefined
    ? ''
    : `  CPU/request ${p.cpuUs.orbtest.toFixed(1)} vs ${p.cpuUs.baseline.toFixed(1)} µs (${(p.cpuUs.orbtest / p.cpuUs.baseline).toFixed(2)}x)`
  return `${name.padEnd(26)}orbtest ${p.orbtest.rps.toFixed(0)} req/s   bare fastify ${p.baseline.rps.toFixed(0)} req/s   ratio ${pct(p.ratio.median)} (rounds ${pct(p.ratio.min)}–${pct(p.ratio.max)}; ${goal})${cpu}  p99 ${p.orbtest.p99}/${p.baseline.p99} ms, non-2xx ${p.orbtest.non2xx}/${p.baseline.non2xx}`
}

const ms = (s: Spread): string => `${s.median.toFixed(0)} ms (${s.min.toFixed(0)}–${s.max.toFixed(0)})`

/** The `orbtest orbtile` start-up row as the report prints it. */
function startupLine (u: UpStartup): string {
  return `${'start-up to ready file'.padEnd(26)}orbtest orbtile ${ms(u.up)}   bare fastify on a socket ${ms(u.baseline)}   ratio ${u.ratio.toFixed(2)}x  (goal <= 1.3x)`
}

/** The `orbtest up` start-up row as the report prints it. */
function upLine (u: UpStartup): string {
  return `${'orbtest up to ready file'.padEnd(26)}orbtest up ${ms(u.up)}   three bare fastify listeners ${ms(u.baseline)}   ratio ${u.ratio.toFixed(2)}x  (goal <= 1.3x)`
}

/** The dashboard's rows as the report prints them. */
function dashboardLine (d: DashboardRows): string[] {
  return [
    `${'session update, 10 pages'.padEnd(26)}10 dashboard streams ${d.watched.rps.toFixed(0)} req/s   same fake with none ${d.alone.rps.toFixed(0)} req/s   ratio ${(d.ratio * 100).toFixed(0)}%  (goal >= 95%; slices ${(d.min * 100).toFixed(0)}–${(d.max * 100).toFixed(0)}%)  server CPU per request ${d.cpuUs.watched.toFixed(1)} vs ${d.cpuUs.alone.toFixed(1)} µs; each stream ${d.framesPerSecond.toFixed(1)} frames/s, ${(d.bytesPerSecond / 1024).toFixed(1)} KiB/s`,
    `${'dashboard first paint'.padEnd(26)}median ${d.firstPaint.median.toFixed(0)} ms, max ${d.firstPaint.max.toFixed(0)} ms (goal < 300 ms); first frame drawn: median ${d.firstFrame.median.toFixed(0)} ms, max ${d.firstFrame.max.toFixed(0)} ms`,
    `${'change on screen'.padEnd(26)}an adapter's update sent → shown on the page: median ${d.onScreen.median.toFixed(1)} ms, p99 ${d.onScreen.p99.toFixed(1)} ms  (goal < 100 ms)`
  ]
}

const dir = mkdtempSync(join(tmpdir(), 'otb-'))
try {
  if (process.env.BENCH_ONLY === 'startup') {
    const s = await startup(dir)
    process.stdout.write(`${startupLine(s)}\n`)
    const u = await upStartup(dir)
    process.stdout.write(`${upLine(u)}\n`)
    process.exit(0)
  }
  if (process.env.BENCH_ONLY === 'memory') {
    process.stdout.write(`${memoryLines(await memoryRows(dir)).join('\n')}\n`)
    process.exit(0)
  }
  if (process.env.BENCH_ONLY === 'routes') {
    const t = await throughputs(dir)
    const o = await orbThroughputs(dir)
    process.stdout.write(`${[routeLine('GET /info', t.info, 'goal >= 90%'), routeLine('POST session update', t.sessions, 'goal >= 75% every round; CPU <= 1.3x'), routeLine('Orb POST /messages', o.post, 'goal >= 85%'), routeLine('Orb GET /messages (50)', o.read, 'goal >= 50%')].join('\n')}\n`)
    process.exit(0)
  }
  if (process.env.BENCH_ONLY === 'proxy') {
    process.stdout.write(`${proxyLine(await proxyRow(dir, SLICES, SLICE_S))}\n`)
    process.stdout.write(`${proxyLine(await orbProxyRow(dir, SLICES, SLICE_S), 'GET /app through proxy')}\n`)
    process.exit(0)
  }
  if (process.env.BENCH_ONLY === 'dashboard') {
    process.stdout.write(`${dashboardLine(await dashboardRows(dir)).join('\n')}\n`)
    process.exit(0)
  }
  if (process.env.BENCH_ONLY === 'judge') {
    // The one row, for work on the judge: nothing is written to bench/results.
    const j = await judgeThroughput(dir)
    const a = judgeAlone()
    process.stdout.write(`judge alone: ${a.checks.toFixed(2)} µs per heartbeat with every check, ${a.none.toFixed(2)} µs with none\n`)
    process.stdout.write(`session update, --judge: judged ${j.judged.rps.toFixed(0)} req/s, unjudged ${j.plain.rps.toFixed(0)} req/s, ratio ${(j.ratio * 100).toFixed(0)}% (slices ${(j.min * 100).toFixed(0)}–${(j.max * 100).toFixed(0)}%; unjudged control ${(j.control * 100).toFixed(0)}%); server CPU per request over the runs ${j.cpuUs.judged.toFixed(1)} vs ${j.cpuUs.plain.toFixed(1)} µs (control ${j.cpuUs.control.toFixed(1)})\n`)
    process.exit(0)
  }
  const s = await startup(dir)
  const u = await upStartup(dir)
  const t = await throughputs(dir)
  const w = await wakeups(dir)
  const o = await orbThroughputs(dir)
  const f = await fanIn(dir)
  const h = await webhookRate(dir)
  const j = await judgeThroughput(dir)
  const ja = judgeAlone()
  const px = await proxyRow(dir, SLICES, SLICE_S)
  const opx = await orbProxyRow(dir, SLICES, SLICE_S)
  const d = process.env.BENCH_DASHBOARD === '0' ? undefined : await dashboardRows(dir)
  const m = await memoryRows(dir)
  const fs = await fakeStarts()
  const cs = process.env.BENCH_CLIENT_SUITE === '0' ? undefined : await clientSuiteSeconds(CLI, root)
  const ratios = {
    startup: s.ratio,
    info: t.info.ratio.median,
    sessions: t.sessions.ratio.median,
    orbPost: o.post.ratio.median,
    orbRead: o.read.ratio.median
  }
  const lines = [
    `orbtest bench (node ${process.version}; ${STARTS} starts each; ${ROUNDS} paired rounds of ${SLICES} alternating ${SLICE_S} s slices x ${CONNECTIONS} connections per route; ${WAKEUPS} wake-ups)`,
    '',
    startupLine(s),
    upLine(u),
    routeLine('GET /info', t.info, 'goal >= 90%'),
    routeLine('POST session update', t.sessions, 'goal >= 75% every round; CPU <= 1.3x'),
    `${'long-poll wake-up'.padEnd(26)}median ${w.median.toFixed(2)} ms   p99 ${w.p99.toFixed(2)} ms  (goal: median < 5 ms; includes the control request)`,
    routeLine('Orb POST /messages', o.post, 'goal >= 85%'),
    routeLine('Orb GET /messages (50)', o.read, 'goal >= 50%'),
    `${'Orb event fan-in'.padEnd(26)}${f.bots} bots long-polling: ${f.eventsPerSecond.toFixed(0)} events/s delivered; post sent → event held by its bot: median ${f.median.toFixed(2)} ms, p99 ${f.p99.toFixed(2)} ms`,
    `${'Orb webhooks'.padEnd(26)}${h.deliveriesPerSecond.toFixed(0)} signed deliveries/s to a local receiver`,
    `${'session update, --judge'.padEnd(26)}judged ${j.judged.rps.toFixed(0)} req/s   same fake unjudged ${j.plain.rps.toFixed(0)} req/s   ratio ${(j.ratio * 100).toFixed(0)}%  (goal >= 90%; slices ${(j.min * 100).toFixed(0)}–${(j.max * 100).toFixed(0)}%, a second unjudged fake ${(j.control * 100).toFixed(0)}%)  server CPU per request ${j.cpuUs.judged.toFixed(1)} vs ${j.cpuUs.plain.toFixed(1)} µs`,
    proxyLine(px),
    proxyLine(opx, 'GET /app through proxy'),
    `${'judge alone'.padEnd(26)}${ja.checks.toFixed(2)} µs per heartbeat with every check   ${ja.none.toFixed(2)} µs with none (journal, model and views)   ratio ${(ja.checks / ja.none).toFixed(2)}x`,
    ...(d === undefined ? [`${'dashboard'.padEnd(26)}skipped (BENCH_DASHBOARD=0)`] : dashboardLine(d)),
    ...memoryLines(m),
    `${'fresh fake per scenario'.padEnd(26)}median ${fs.fake.toFixed(1)} ms in-process   bare fastify on a socket ${fs.baseline.toFixed(1)} ms   ratio ${(fs.fake / fs.baseline).toFixed(2)}x  (goal: median < 50 ms)`,
    cs === undefined
      ? `${'client suite (Node)'.padEnd(26)}skipped (BENCH_CLIENT_SUITE=0)`
      : `${'client suite (Node)'.padEnd(26)}${cs.seconds.toFixed(1)} s for the default run (exit ${cs.code}; ${cs.summary.replace(/^# /, '')})  (goal < 90 s)`
  ]
  process.stdout.write(`${lines.join('\n')}\n`)
  const results = join(root, 'bench', 'results')
  mkdirSync(results, { recursive: true })
  writeFileSync(join(results, 'latest.json'), `${JSON.stringify({ date: new Date().toISOString(), node: process.version, startup: s, ...t, wakeup: w, orb: o, fanIn: f, webhooks: h, judge: j, judgeAlone: ja, proxy: px, orbProxy: opx, dashboard: d, memory: m, upStartup: u, fakeStart: fs, clientSuite: cs, ratios }, null, 2)}\n`)
} finally {
  rmSync(dir, { recursive: true, force: true })
}
