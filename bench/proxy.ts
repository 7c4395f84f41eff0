// `orbtest proxy orbtile` in front of `orbtest orbtile` (GET /info), and `orbtest proxy orb` in front of `orbtest orb`
// (GET /api/bot/v1/app): straight to the fake and through the proxy, in alternating slices of the same rounds, so that
// both sides meet the machine's load of the moment. What a user of the proxy pays: the latency it adds at the median,
// and its throughput as a share of the fake's own. The proxies run without --judge, as relays alone; judging costs
// what `--judge` costs a fake (the judge's own row).
import { existsSync, readFileSync } from 'node:fs'
import { Agent, request } from 'node:http'
import { join } from 'node:path'
import {
  CLI, DEMO_TOKEN, launch, launchOrb, load, loadHttp, median, pairedRounds, ROUNDS, slicedRound, spawnServer, stop,
  type Kind, type Load, type OrbServer, type Paired, type Server
} from './harness.js'

/** Requests timed one at a time, on one kept-alive connection, per side and batch; batches alternate the sides. */
const LATENCY_REQUESTS = 200
const LATENCY_BATCHES = 10

export interface ProxyRow {
  /** `orbtest` is the side through the proxy, `baseline` the fake alone. */
  paired: Paired
  /** The median latency of a request alone on its connection, through the proxy and straight, in ms. */
  p50: { proxied: number, direct: number }
}

/** Starts the proxy in front of `upstream`'s discovery file; resolves once its ready file names its socket. */
async function startProxy (dir: string, discovery: string): Promise<Server> {
  const ready = join(dir, 'proxy.ready')
  const mine = join(dir, 'proxy.json')
  const args = ['proxy', 'orbtile', '--upstream', discovery, '--discovery', mine, '--ready-file', ready]
  const child = spawnServer([CLI, ...args], 'ignore')
  const started = performance.now()
  while (!existsSync(ready)) {
    if (child.exitCode !== null) throw new Error(`the proxy exited with ${child.exitCode}`)
    await new Promise((resolve) => setTimeout(resolve, 1))
  }
  const { proxy } = JSON.parse(readFileSync(ready, 'utf8')) as { proxy: { socketPath: string } }
  const readyMs = performance.now() - started
  return { kind: 'orbtest', child, socket: proxy.socketPath, token: undefined, control: undefined, readyMs }
}

/** The proxy's row: ROUNDS rounds of alternating slices, GET /info with the fake's token. */
export async function proxyRow (dir: string, slices: number, seconds: number): Promise<ProxyRow> {
  const fake = await launch('orbtest', dir, 900)
  const proxy = await startProxy(dir, join(dir, 'orbtest-900.json'))
  try {
    const headers = { authorization: `Bearer ${fake.token!}` }
    const sides: Record<Kind, Server> = { baseline: fake, orbtest: proxy }
    const run = async (kind: Kind, s: number): Promise<Load> =>
      await load(sides[kind], 'GET', '/a/v1/info', headers, undefined, { warm: 0, seconds: s })
    const rounds = []
    for (let round = 0; round < ROUNDS; round++) rounds.push(await slicedRound(run, slices, seconds))
    const times: Record<Kind, number[]> = { baseline: [], orbtest: [] }
    for (let batch = 0; batch < LATENCY_BATCHES; batch++) {
      for (const kind of batch % 2 === 0 ? ['baseline', 'orbtest'] as const : ['orbtest', 'baseline'] as const) {
        const target = { socketPath: sides[kind].socket, path: '/a/v1/info' }
        times[kind].push(...await timed(target, headers, LATENCY_REQUESTS))
      }
    }
    return { paired: pairedRounds(rounds), p50: { proxied: median(times.orbtest), direct: median(times.baseline) } }
  } finally {
    await stop(proxy)
    await stop(fake)
  }
}

/** Where one request goes: a Unix socket or a URL's host and port, and its path. */
type Target = { socketPath: string, path: string } | { url: string }

/** `n` requests one after the other on one kept-alive connection: each one's time, in ms. */
async function timed (target: Target, headers: Record<string, string>, n: number): Promise<number[]> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 })
  const out: number[] = []
  try {
    for (let i = 0; i < n; i++) {
      const t0 = performance.now()
      await new Promise<void>((resolve, reject) => {
        const where = 'url' in target ? new URL(target.url) : undefined
        const options = where === undefined
          ? { ...target, agent, headers: { host: 'localhost', ...headers } }
          : { hostname: where.hostname, port: where.port, path: where.pathname, agent, headers }
        const req = request(options, (res) => {
          res.resume()
          res.once('end', () => resolve())
        })
        req.once('error', reject)
        req.end()
      })
      out.push(performance.now() - t0)
    }
  } finally {
    agent.destroy()
  }
  return out
}

/** Starts `orbtest proxy orb` in front of `upstream`; resolves once its ready file names its URL. */
async function startOrbProxy (dir: string, upstream: string): Promise<OrbServer> {
  const ready = join(dir, 'orb-proxy.ready')
  const args = ['proxy', 'orb', '--upstream', upstream, '--listen', '0', '--ready-file', ready]
  const child = spawnServer([CLI, ...args], 'ignore')
  while (!existsSync(ready)) {
    if (child.exitCode !== null) throw new Error(`the proxy exited with ${child.exitCode}`)
    await new Promise((resolve) => setTimeout(resolve, 1))
  }
  const { proxy } = JSON.parse(readFileSync(ready, 'utf8')) as { proxy: { url: string } }
  return { child, url: proxy.url }
}

/** The Orb proxy's row: ROUNDS rounds of alternating slices, GET /api/bot/v1/app with the demo app's token. */
export async function orbProxyRow (dir: string, slices: number, seconds: number): Promise<ProxyRow> {
  const fake = await launchOrb('orbtest', dir, 950)
  const proxy = await startOrbProxy(dir, fake.url)
  try {
    const sides: Record<Kind, OrbServer> = { baseline: fake, orbtest: proxy }
    const run = async (kind: Kind, s: number): Promise<Load> =>
      await loadHttp(`${sides[kind].url}/api/bot/v1/app`, 'GET', sides[kind].child.pid, undefined,
        { warm: 0, seconds: s })
    const rounds = []
    for (let round = 0; round < ROUNDS; round++) rounds.push(await slicedRound(run, slices, seconds))
    const times: Record<Kind, number[]> = { baseline: [], orbtest: [] }
    const headers = { authorization: `Bearer ${DEMO_TOKEN}` }
    for (let batch = 0; batch < LATENCY_BATCHES; batch++) {
      for (const kind of batch % 2 === 0 ? ['baseline', 'orbtest'] as const : ['orbtest', 'baseline'] as const) {
        times[kind].push(...await timed({ url: `${sides[kind].url}/api/bot/v1/app` }, headers, LATENCY_REQUESTS))
      }
    }
    return { paired: pairedRounds(rounds), p50: { proxied: median(times.orbtest), direct: median(times.baseline) } }
  } finally {
    for (const side of [proxy, fake]) {
      const exited = new Promise((resolve) => side.child.once('exit', resolve))
      side.child.kill('SIGTERM')
      await exited
    }
  }
}

/** A row as the report prints it. */
export function proxyLine (r: ProxyRow, what = 'GET /info through proxy'): string {
  const pct = (x: number): string => `${(x * 100).toFixed(0)}%`
  const added = r.p50.proxied - r.p50.direct
  return `${what.padEnd(26)}proxied ${r.paired.orbtest.rps.toFixed(0)} req/s   straight ${r.paired.baseline.rps.toFixed(0)} req/s   ratio ${pct(r.paired.ratio.median)} (rounds ${pct(r.paired.ratio.min)}–${pct(r.paired.ratio.max)}; goal >= 80%)   one request alone: ${r.p50.proxied.toFixed(3)} vs ${r.p50.direct.toFixed(3)} ms at the median, added ${added.toFixed(3)} ms (goal < 1 ms)`
}
