// The fuzz campaign: `orbtest up` as a child, two lanes of clients (whole requests on kept-alive connections, raw
// scenarios on fresh ones), a ticker that moves the virtual clock so that throttles refill and long polls end, and
// the server's sockets and memory read before and after.
import { draftLabel, materialize } from './draft.js'
import { Planner, laneCursor, type Mix } from './plan.js'
import type { RawContext } from './raw.js'
import { runRaw } from './raw-run.js'
import { startReceiver } from './receiver.js'
import { KeptAliveClient } from './client.js'
import { RunState } from './request.js'
import { settleSockets, sleep, startServer, type ProcessSample, type ServerProcess } from './server.js'
import { Tally, type CheckResult, type ServerTally } from './tally.js'
import { SERVER_NAMES, targetsOf, type ServerName, type Target } from './targets.js'
import { WireSession } from './wire.js'

/** How to run a campaign. */
export interface CampaignOptions {
  requests: number
  seed: number
  servers?: readonly ServerName[]
  /** Clients of the whole-request lane (default 16). */
  concurrency?: number
  /** Clients of the raw lane (default 32: most of their time is spent waiting). */
  rawConcurrency?: number
  rawShare?: number
  mutatedShare?: number
  /** The run stops taking new requests after this long (default 10 minutes). */
  timeLimitMs?: number
  /** A well-formed request with no answer after this long is a silent drop (default 5 s). */
  silentMs?: number
  /** How long an `Expect: 100-continue` may wait for 100 Continue (default 2 s). */
  continueMs?: number
  /** How long the server may take to close the sockets of clients that left (default 5 s). */
  settleMs?: number
  /** The virtual clock moves `advanceMs` every `tickMs` of real time (defaults 100 ms and 10 s). */
  tickMs?: number
  advanceMs?: number
  /** Only these indices (a replay). */
  only?: readonly number[]
  /** Another checkout of orbtest to run (default this one). */
  root?: string
  log?: (line: string) => void
}

/** What a campaign found. */
export interface CampaignReport {
  ok: boolean
  seed: number
  requestsPlanned: number
  requestsSent: number
  servers: readonly ServerName[]
  durationMs: number
  requestsPerSecond: number
  stoppedByTimeLimit: boolean
  perServer: Record<ServerName, ServerTally>
  checks: Record<string, CheckResult>
  process: { pid: number, args: readonly string[], idle: ProcessSample, peak: ProcessSample, after: ProcessSample }
  ticks: { sent: number, failed: number }
  retries: number
  webhookDeliveries: number
  serverErrorLogLines: number
  replay: string
}

/** Runs a campaign against a fresh `orbtest up` and reports every check. */
export async function runCampaign (options: CampaignOptions): Promise<CampaignReport> {
  const o = {
    servers: SERVER_NAMES,
    concurrency: 16,
    rawConcurrency: 32,
    rawShare: 0.08,
    mutatedShare: 0.45,
    timeLimitMs: 600_000,
    silentMs: 5000,
    continueMs: 2000,
    settleMs: 5000,
    tickMs: 100,
    advanceMs: 10_000,
    ...options
  }
  const receiver = await startReceiver()
  const server = await startServer({
    ...(o.root === undefined ? {} : { root: o.root }),
    extraArgs: ['--auto-allow', '--pid-check', 'off', '--log-level', 'error']
  })
  try {
    return await campaign(o, server, receiver.url, receiver.deliveries)
  } finally {
    await server.stop()
    await receiver.close()
  }
}

type Resolved = Required<Omit<CampaignOptions, 'only' | 'root' | 'log'>> &
  Pick<CampaignOptions, 'only' | 'root' | 'log'>

/** What the lanes of one campaign share: the plan, the targets, what the run learnt, and the tally. */
interface Lanes {
  o: Resolved
  planner: Planner
  targets: Record<ServerName, Target>
  state: RunState
  tally: Tally
  retries: { count: number }
  /** The real time a request held `holdMs` of virtual time waits, at the ticker's pace. */
  realHoldMs: (holdMs: number) => number
}

async function campaign (o: Resolved, server: ServerProcess, receiverUrl: string, deliveries: () => number):
Promise<CampaignReport> {
  const mix: Mix = { servers: o.servers, rawShare: o.rawShare, mutatedShare: o.mutatedShare }
  const planner = new Planner(o.seed, mix, { basePath: server.endpoints.basePath, receiverUrl })
  const targets = targetsOf(server.endpoints)
  const tally = new Tally()
  const lanes: Lanes = {
    o,
    planner,
    targets,
    state: new RunState(() => server.token()),
    tally,
    retries: { count: 0 },
    realHoldMs: (holdMs) => Math.ceil(holdMs * o.tickMs / o.advanceMs)
  }
  await sleep(300)
  const idle = server.sample()
  const started = Date.now()
  const ticks = { sent: 0, failed: 0 }
  const run = { running: true }
  const sampler = peakOf(server, idle, () => run.running)
  const ticker = tick(targets.control, o, () => run.running, ticks)
  const running = runLanes(lanes, started + o.timeLimitMs)
  const logger = o.log === undefined
    ? undefined
    : setInterval(() => {
      o.log!(`… ${tally.requests} requests, ${Math.round(tally.requests / ((Date.now() - started) / 1000))}/s`)
    }, 5000)
  await running
  const durationMs = Date.now() - started
  if (logger !== undefined) clearInterval(logger)
  run.running = false
  await ticker
  const peak = await sampler
  const after = await settleSockets(server, idle.sockets, o.settleMs)
  checkProcess(tally, server, idle, after, o.settleMs)
  const serverErrorLogLines = server.stderr().split('\n').filter((line) => /"level":(50|60)/.test(line)).length
  return {
    ok: tally.ok(),
    seed: o.seed,
    requestsPlanned: o.only?.length ?? o.requests,
    requestsSent: tally.requests,
    servers: o.servers,
    durationMs,
    requestsPerSecond: Math.round(tally.requests / (durationMs / 1000)),
    stoppedByTimeLimit: tally.requests < (o.only?.length ?? o.requests),
    perServer: tally.servers,
    checks: tally.checks,
    process: { pid: server.pid, args: server.args, idle, peak, after },
    ticks,
    retries: lanes.retries.count,
    webhookDeliveries: deliveries(),
    serverErrorLogLines,
    replay: replayCommand(o)
  }
}

/** The server's peak of sockets and memory, read each second while the run goes on. */
async function peakOf (server: ServerProcess, idle: ProcessSample, running: () => boolean): Promise<ProcessSample> {
  let peak = idle
  while (running()) {
    await sleep(1000)
    const now = server.sample()
    peak = { ...now, sockets: Math.max(peak.sockets, now.sockets), rssKiB: Math.max(peak.rssKiB, now.rssKiB) }
  }
  return peak
}

/** Both lanes' clients at once, each taking the next index of its lane until the plan or the time runs out. */
async function runLanes (lanes: Lanes, deadline: number): Promise<void> {
  const { o, planner } = lanes
  const structured = laneCursor(planner, 'structured', o.requests, o.only, deadline)
  const raw = laneCursor(planner, 'raw', o.requests, o.only, deadline)
  const rawCtx: RawContext = {
    targets: lanes.targets,
    state: lanes.state,
    silentMs: o.silentMs,
    continueMs: o.continueMs,
    realHoldMs: lanes.realHoldMs
  }
  await Promise.all([
    ...Array.from({ length: o.concurrency }, () => structuredWorker(lanes, structured)),
    ...Array.from({ length: o.rawConcurrency }, () => rawWorker(lanes, rawCtx, raw))
  ])
}

/** The process checks: the server is still alive, and holds no more sockets than when idle once clients left. */
function checkProcess (
  tally: Tally,
  server: ServerProcess,
  idle: ProcessSample,
  after: ProcessSample,
  settleMs: number
): void {
  if (!server.alive()) {
    tally.fail('server-alive', {
      index: -1, server: 'all', label: 'process', detail: `it exited: ${JSON.stringify(server.exit())}; stderr: ${server.stderr().slice(-400)}`
    })
  }
  if (after.sockets > idle.sockets) {
    tally.fail('sockets-return-to-idle', {
      index: -1, server: 'all', label: 'process', detail: `${idle.sockets} sockets when idle, still ${after.sockets} ${settleMs} ms after the last client left`
    })
  }
}

/** The command that runs the same campaign again. */
function replayCommand (o: Resolved): string {
  const root = o.root === undefined ? '' : ` --root ${o.root}`
  return `node --import tsx stress/fuzz.ts --requests ${o.requests} --seed ${o.seed} --servers ${o.servers.join(',')} --concurrency ${o.concurrency}${root}`
}

/** A client of the whole-request lane: one kept-alive connection per server, a planned request at a time. */
async function structuredWorker (lanes: Lanes, next: () => number | undefined): Promise<void> {
  const { o, planner, targets, state, tally } = lanes
  const clients = Object.fromEntries(o.servers.map((name) => [name, new KeptAliveClient(targets[name])])) as
    Partial<Record<ServerName, KeptAliveClient>>
  try {
    for (let index = next(); index !== undefined; index = next()) {
      const draft = planner.structured(index)
      const target = targets[draft.server]
      const label = draftLabel(draft)
      const where = { index, server: draft.server, label }
      tally.sent(draft.server, label)
      const request = materialize(draft, target, state)
      const timeout = o.silentMs + lanes.realHoldMs(request.holdMs ?? 0)
      const got = await clients[draft.server]!.send(request, timeout)
      if (got.retried) lanes.retries.count++
      if (got.malformed !== undefined) tally.fail('well-formed-responses', { ...where, detail: got.malformed })
      if (got.response !== undefined) {
        tally.response(target, index, label, got.response)
        state.learn(target.name, request, got.response)
      } else {
        tally.status(draft.server, 'none')
        tally.fail('no-silent-drop', { ...where, detail: `${request.method} ${request.target.slice(0, 120)}: ${got.failure}` })
      }
    }
  } finally {
    for (const client of Object.values(clients)) client.close()
  }
}

/** A client of the raw lane: a planned scenario at a time, each on a fresh connection. */
async function rawWorker (lanes: Lanes, rawCtx: RawContext, next: () => number | undefined): Promise<void> {
  const { planner, targets, tally } = lanes
  for (let index = next(); index !== undefined; index = next()) {
    const plan = planner.raw(index)
    const target = targets[plan.server]
    const label = `raw ${plan.scenario}`
    const where = { index, server: plan.server, label }
    tally.sent(plan.server, label)
    try {
      const out = await runRaw(plan, rawCtx)
      for (const response of out.responses) tally.response(target, index, label, response)
      if (out.responses.length === 0) tally.status(plan.server, out.left ? 'client-left' : 'none')
      for (const failure of out.failures) tally.fail(failure.check, { ...where, detail: failure.detail })
      for (const drop of out.drops) tally.fail('no-silent-drop', { ...where, detail: drop })
      if (out.malformed !== undefined && !out.failures.some((f) => f.check === 'head-error-without-body')) {
        tally.fail('well-formed-responses', { ...where, detail: out.malformed })
      }
    } catch (err) {
      tally.status(plan.server, 'none')
      tally.fail('no-silent-drop', { ...where, detail: `could not connect: ${(err as Error).message}` })
    }
  }
}

// Moves the virtual clock: throttles refill, long polls end, leases and sessions age.
async function tick (control: Target, o: Resolved, running: () => boolean, ticks: { sent: number, failed: number }):
Promise<void> {
  let session: WireSession | undefined
  const body = JSON.stringify({ ms: o.advanceMs })
  const bytes = `POST /control/clock/advance HTTP/1.1\r\nHost: ${control.host}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`
  while (running()) {
    await sleep(o.tickMs)
    try {
      if (session === undefined || session.closed) session = await WireSession.open(control.address)
      session.write(bytes, 'POST')
      const ok = await session.responses(1, o.silentMs) === 'ok' && session.parser.responses.shift()?.status === 200
      if (ok) ticks.sent++
      else {
        ticks.failed++
        session.destroy()
      }
    } catch {
      ticks.failed++
    }
  }
  session?.destroy()
}
