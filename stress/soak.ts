// The soak: every route of the three servers driven at its limits for M minutes, on a real clock (the rate
// buckets, posting windows, TTLs, leases and webhook retries run on wall time, as a soak should), while the
// server's RSS and descriptors are sampled every few seconds.
//
//   node --import tsx stress/soak.ts --minutes M [--seed S] [--json FILE] [--sample-seconds N] [--root CHECKOUT]
//
// Goals: RSS at the end within 10 % of RSS after the first minute; no descriptor growth (once the clients have left,
// no more descriptors than when idle); and the fuzz's checks (no 5xx, errors in shape, no silent drop, alive).
// Exit 0 when every goal holds, 1 when one fails, 2 for bad usage.
import { writeFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'
import { startReceiver } from './receiver.js'
import { describeSample, histogram } from './report.js'
import { RunState } from './request.js'
import { settleSockets, sleep, startServer, type ProcessSample } from './server.js'
import { Soak } from './soak-core.js'
import { people } from './soak-control.js'
import { orbBot, webhookBot } from './soak-orb.js'
import { orbtileAdapter, SOAK_ADAPTERS, type PendingRequest } from './soak-orbtile.js'
import { ORBTILE_ROUTES } from './gen-orbtile.js'
import { CHECKS, Tally, type CheckResult } from './tally.js'
import { readDocument, targetsOf } from './targets.js'

/** How to run a soak. */
export interface SoakOptions {
  minutes: number
  seed: number
  sampleSeconds?: number
  root?: string
  log?: (line: string) => void
}

/** What a soak measured. */
export interface SoakReport {
  ok: boolean
  seed: number
  minutes: number
  requests: number
  requestsPerSecond: number
  statuses: Record<string, Record<string, number>>
  routes: Record<string, number>
  samples: ProcessSample[]
  idle: ProcessSample
  afterFirstMinute: ProcessSample
  atEnd: ProcessSample
  settled: ProcessSample
  rssChange: number
  webhookDeliveries: number
  checks: Record<string, CheckResult>
}

/** The soak's goals: the fuzz's checks of every answer, and its own of the process over time. */
export const SOAK_GOALS: Readonly<Record<string, string>> = {
  ...Object.fromEntries(['no-5xx', 'error-shape', 'no-silent-drop', 'well-formed-responses', 'server-alive']
    .map((name) => [name, CHECKS[name]!])),
  'rss-steady': 'RSS at the end within 10 % of RSS after the first minute',
  'no-descriptor-growth': 'once the clients have left, no more descriptors (nor sockets) than when idle',
  'every-route-driven': 'every route of the three servers was driven'
}

/** Runs a soak against a fresh `orbtest up --clock real`. */
export async function runSoak (options: SoakOptions): Promise<SoakReport> {
  const receiver = await startReceiver({ failEvery: 5 })
  const server = await startServer({
    ...(options.root === undefined ? {} : { root: options.root }),
    clock: 'real',
    extraArgs: ['--pid-check', 'off', '--lease-silence', '20', '--log-level', 'error']
  })
  try {
    const tally = new Tally(SOAK_GOALS)
    const started = Date.now()
    const until = started + options.minutes * 60_000
    const soak = new Soak({
      targets: targetsOf(server.endpoints),
      state: new RunState(() => server.token()),
      tally,
      until,
      silentMs: 5000,
      seed: options.seed
    })
    await sleep(300)
    const idle = server.sample()
    const samples: ProcessSample[] = [idle]
    const sampler = (async () => {
      while (Date.now() < until) {
        await soak.pause((options.sampleSeconds ?? 5) * 1000)
        samples.push(server.sample())
        options.log?.(`… ${Math.round((Date.now() - started) / 1000)} s: ${describeSample(samples.at(-1)!)}, ${tally.requests} requests`)
      }
    })()
    const pending: PendingRequest[] = []
    await Promise.all([
      sampler,
      ...SOAK_ADAPTERS.map((id) => orbtileAdapter(soak, id, pending)),
      orbBot(soak),
      webhookBot(soak, receiver.url),
      people(soak, pending, 45_000)
    ])
    const atEnd = server.sample()
    soak.closeClients()
    const settled = await settleSockets(server, idle.sockets, 10_000)
    const afterFirstMinute = samples.find((s) => s.atMs - started >= 60_000) ?? samples.at(-1)!
    const rssChange = (atEnd.rssKiB - afterFirstMinute.rssKiB) / afterFirstMinute.rssKiB
    const goal = (name: string, ok: boolean, detail: string): void => {
      if (!ok) tally.fail(name, { index: -1, server: 'all', label: 'process', detail })
    }
    goal('rss-steady', Math.abs(rssChange) <= 0.1, `RSS ${afterFirstMinute.rssKiB} KiB after the first minute, ${atEnd.rssKiB} KiB at the end (${(rssChange * 100).toFixed(1)} %)`)
    goal('no-descriptor-growth', settled.fds <= idle.fds && settled.sockets <= idle.sockets, `idle: ${describeSample(idle)}; after the clients left: ${describeSample(settled)}`)
    goal('server-alive', server.alive(), `it exited: ${JSON.stringify(server.exit())}; stderr: ${server.stderr().slice(-400)}`)
    const routes = Object.fromEntries([...soak.routes].sort())
    const missing = allRoutes(server.endpoints.basePath).filter((route) => routes[route] === undefined)
    goal('every-route-driven', missing.length === 0, `never driven: ${missing.join(', ')}`)
    const seconds = (Date.now() - started) / 1000
    return {
      ok: tally.ok(),
      seed: options.seed,
      minutes: options.minutes,
      requests: tally.requests,
      requestsPerSecond: Math.round(tally.requests / seconds),
      statuses: Object.fromEntries(Object.entries(tally.servers).map(([name, t]) => [name, t.statuses])),
      routes,
      samples,
      idle,
      afterFirstMinute,
      atEnd,
      settled,
      rssChange,
      webhookDeliveries: receiver.deliveries(),
      checks: tally.checks
    }
  } finally {
    await server.stop()
    await receiver.close()
  }
}

/** Every route of the three servers, as the soak labels them. */
function allRoutes (base: string): string[] {
  const doc = (path: string): string[] => Object.entries(readDocument(path).paths as Record<string, object>)
    .flatMap(([p, ops]) => Object.keys(ops).filter((m) => m !== 'parameters').map((m) => `${m.toUpperCase()} ${p}`))
  return [
    ...ORBTILE_ROUTES.map((route) => `${route.method} ${base}${route.path}`),
    ...doc('specs/orb-bot-api.openapi.json'),
    ...doc('src/control/openapi.json')
  ]
}

/** The summary a soak prints. */
export function formatSoak (report: SoakReport): string {
  const mib = (kib: number): string => `${(kib / 1024).toFixed(1)} MiB`
  const lines = [
    `orbtest soak: seed ${report.seed}, ${report.minutes} min, ${report.requests} requests (${report.requestsPerSecond}/s), ${report.webhookDeliveries} webhook deliveries`,
    ...Object.entries(report.statuses).map(([name, statuses]) => `  ${name.padEnd(8)} ${histogram(statuses)}`),
    `  idle            ${describeSample(report.idle)}`,
    `  after 1 minute  ${describeSample(report.afterFirstMinute)}`,
    `  at the end      ${describeSample(report.atEnd)}  (RSS ${(report.rssChange * 100).toFixed(1)} % since the first minute)`,
    `  clients gone    ${describeSample(report.settled)}`,
    `  RSS every sample: ${report.samples.map((s) => mib(s.rssKiB)).join(' ')}`,
    `  descriptors every sample: ${report.samples.map((s) => s.fds).join(' ')}`,
    'Goals:'
  ]
  for (const [name, check] of Object.entries(report.checks)) {
    lines.push(`  ${check.failures === 0 ? 'ok  ' : 'FAIL'} ${name}: ${check.description}${check.failures === 0 ? '' : ` (${check.failures} failures)`}`)
    for (const e of check.examples) lines.push(`         ${e.server} ${e.label}: ${e.detail}`)
  }
  lines.push(report.ok
    ? 'Every goal held.'
    : `Some goals failed. Seed ${report.seed}; run again with: node --import tsx stress/soak.ts --minutes ${report.minutes} --seed ${report.seed}`)
  return `${lines.join('\n')}\n`
}

async function main (argv: string[]): Promise<number> {
  let values: Record<string, string | boolean | undefined>
  try {
    values = parseArgs({
      args: argv,
      options: {
        minutes: { type: 'string' },
        seed: { type: 'string' },
        json: { type: 'string' },
        'sample-seconds': { type: 'string' },
        root: { type: 'string' }
      }
    }).values
  } catch (err) {
    process.stderr.write(`soak: ${(err as Error).message}\n`)
    return 2
  }
  const minutes = Number(values.minutes)
  const seed = Number(values.seed ?? 20261130)
  const sampleSeconds = Number(values['sample-seconds'] ?? 5)
  if (!Number.isFinite(minutes) || minutes <= 0 || minutes > 24 * 60 || !Number.isInteger(seed) ||
    !Number.isInteger(sampleSeconds) || sampleSeconds < 1) {
    process.stderr.write('Usage: node --import tsx stress/soak.ts --minutes M [--seed S] [--json FILE] [--sample-seconds N] [--root DIR]\n')
    return 2
  }
  const report = await runSoak({
    minutes,
    seed,
    sampleSeconds,
    ...(typeof values.root === 'string' ? { root: resolve(values.root) } : {}),
    log: (line) => process.stderr.write(`${line}\n`)
  })
  process.stdout.write(formatSoak(report))
  if (typeof values.json === 'string') writeFileSync(values.json, `${JSON.stringify(report, null, 2)}\n`)
  return report.ok ? 0 : 1
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => process.exit(130))
  main(process.argv.slice(2)).then((code) => { process.exitCode = code }, (err: unknown) => {
    process.stderr.write(`soak: ${(err as Error).stack ?? String(err)}\n`)
    process.exitCode = 2
  })
}
