// `orbtest proxy orbtile` in front of `orbtest orbtile` (GET /info), and `orbtest proxy orb` in front of `orbtest orb`
// (GET /api/bot/v1/app): straight to the fake and through the proxy, in alternating slices of the same rounds, so that
// both sides meet the machine's load of the moment. What a user of the proxy pays: the latency it adds at the median,
// and its throughput as a share of the fake's own. The proxies run without --judge, as relays that read the app's
// replies; judging costs what `--judge` costs a fake (the judge's own row). A plain byte relay (plain-relay.ts) is
// measured the same way against the same fake: the ceiling of any relay on the fake's core.
import { existsSync, readFileSync } from 'node:fs'
import type { ChildProcess } from 'node:child_process'
import { Agent, request } from 'node:http'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import {
  CLI, DEMO_TOKEN, launch, launchOrb, load, loadHttp, median, pairedRounds, ROUNDS, slicedRound, spawnServer, stop,
  type Kind, type Load, type OrbServer, type Paired, type Server
} from './harness.js'

/** Requests timed one at a time, on one kept-alive connection, per side and batch; batches alternate the sides. */
const LATENCY_REQUESTS = 200
const LATENCY_BATCHES = 10

/** The plain relay's script, beside this module in dist/bench. */
const PLAIN_RELAY = join(dirname(fileURLToPath(import.meta.url)), 'plain-relay.js')

export interface ProxyRow {
  /** `orbtest` is the side through the proxy, `baseline` the fake alone. */
  paired: Paired
  /** `orbtest` is the side through the plain relay, `baseline` the fake alone. */
  plain: Paired
  /** The median latency of a request alone on its connection, through the proxy and straight, in ms. */
  p50: { proxied: number, direct: number }
}

/** Spawns a relay (pinned as the servers are) and waits for its ready file: what the file holds. */
async function spawnRelay<T> (args: string[], ready: string): Promise<{ child: ChildProcess, ready: T }> {
  const child = spawnServer(args, 'ignore')
  while (!existsSync(ready)) {
    if (child.exitCode !== null) throw new Error(`${args.slice(0, 3).join(' ')} exited with ${child.exitCode}`)
    await new Promise((resolve) => setTimeout(resolve, 1))
  }
  return { child, ready: JSON.parse(readFileSync(ready, 'utf8')) as T }
}

/** Starts the proxy in front of `upstream`'s discovery file; resolves once its ready file names its socket. */
async function startProxy (dir: string, discovery: string): Promise<Server> {
  const ready = join(dir, 'proxy.ready')
  const mine = join(dir, 'proxy.json')
  const args = [CLI, 'proxy', 'orbtile', '--upstream', discovery, '--discovery', mine, '--ready-file', ready]
  const { child, ready: { proxy } } = await spawnRelay<{ proxy: { socketPath: string } }>(args, ready)
  return { kind: 'orbtest', child, socket: proxy.socketPath, token: undefined, control: undefined, readyMs: 0 }
}

/** Starts the plain relay in front of the fake's socket. */
async function startPlainRelay (dir: string, upstream: string): Promise<Server> {
  const ready = join(dir, 'plain.ready')
  const args = [PLAIN_RELAY, join(dir, 'plain.sock'), upstream, ready]
  const { child, ready: { socket } } = await spawnRelay<{ socket: string }>(args, ready)
  return { kind: 'orbtest', child, socket, token: undefined, control: undefined, readyMs: 0 }
}

/** ROUNDS rounds of alternating slices: the fake alone (`baseline`) and through a relay (`orbtest`). */
async function throughputs (run: (kind: Kind, seconds: number) => Promise<Load>, slices: number, seconds: number):
Promise<Paired> {
  const rounds = []
  for (let round = 0; round < ROUNDS; round++) rounds.push(await slicedRound(run, slices, seconds))
  return pairedRounds(rounds)
}

/** The proxy's row: ROUNDS rounds of alternating slices, GET /info with the fake's token; the plain relay's too. */
export async function proxyRow (dir: string, slices: number, seconds: number): Promise<ProxyRow> {
  const fake = await launch('orbtest', dir, 900)
  const proxy = await startProxy(dir, join(dir, 'orbtest-900.json'))
  const plainRelay = await startPlainRelay(dir, fake.socket)
  try {
    const headers = { authorization: `Bearer ${fake.token!}` }
    const through = (relay: Server) => async (kind: Kind, s: number): Promise<Load> =>
      await load(kind === 'baseline' ? fake : relay, 'GET', '/a/v1/info', headers, undefined, { warm: 0, seconds: s })
    const paired = await throughputs(through(proxy), slices, seconds)
    const plain = await throughputs(through(plainRelay), slices, seconds)
    const times: Record<Kind, number[]> = { baseline: [], orbtest: [] }
    for (let batch = 0; batch < LATENCY_BATCHES; batch++) {
      for (const kind of batch % 2 === 0 ? ['baseline', 'orbtest'] as const : ['orbtest', 'baseline'] as const) {
        const target = { socketPath: (kind === 'baseline' ? fake : proxy).socket, path: '/a/v1/info' }
        times[kind].push(...await timed(target, headers, LATENCY_REQUESTS))
      }
    }
    return { paired, plain, p50: { proxied: median(times.orbtest), direct: median(times.baseline) } }
  } finally {
    await stop(plainRelay)
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
  const args = [CLI, 'proxy', 'orb', '--upstream', upstream, '--listen', '0', '--ready-file', ready]
  const { child, ready: { proxy } } = await spawnRelay<{ proxy: { url: string } }>(args, ready)
  return { child, url: proxy.url }
}

/** The Orb proxy's row: ROUNDS rounds of alternating slices, GET /api/bot/v1/app with the demo app's token. */
export async function orbProxyRow (dir: string, slices: number, seconds: number): Promise<ProxyRow> {
  const fake = await launchOrb('orbtest', dir, 950)
  const proxy = await startOrbProxy(dir, fake.url)
  const plainReady = join(dir, 'orb-plain.ready')
  const plainArgs = [PLAIN_RELAY, '0', new URL(fake.url).port, plainReady]
  const plainRelay = await spawnRelay<{ url: string }>(plainArgs, plainReady)
  try {
    const through = (relay: OrbServer) => async (kind: Kind, s: number): Promise<Load> => {
      const side = kind === 'baseline' ? fake : relay
      return await loadHttp(`${side.url}/api/bot/v1/app`, 'GET', side.child.pid, undefined, { warm: 0, seconds: s })
    }
    const paired = await throughputs(through(proxy), slices, seconds)
    const plain = await throughputs(through({ child: plainRelay.child, url: plainRelay.ready.url }), slices, seconds)
    const times: Record<Kind, number[]> = { baseline: [], orbtest: [] }
    const headers = { authorization: `Bearer ${DEMO_TOKEN}` }
    for (let batch = 0; batch < LATENCY_BATCHES; batch++) {
      for (const kind of batch % 2 === 0 ? ['baseline', 'orbtest'] as const : ['orbtest', 'baseline'] as const) {
        const side = kind === 'baseline' ? fake : proxy
        times[kind].push(...await timed({ url: `${side.url}/api/bot/v1/app` }, headers, LATENCY_REQUESTS))
      }
    }
    return { paired, plain, p50: { proxied: median(times.orbtest), direct: median(times.baseline) } }
  } finally {
    for (const child of [plainRelay.child, proxy.child, fake.child]) {
      const exited = new Promise((resolve) => child.once('exit', resolve))
      child.kill('SIGTERM')
      await exited
    }
  }
}

/** A row as the report prints it. */
export function proxyLine (r: ProxyRow, what = 'GET /info through proxy'): string {
  const pct = (x: number): string => `${(x * 100).toFixed(0)}%`
  const us = (x: number | undefined): string => x === undefined ? '?' : x.toFixed(1)
  const added = r.p50.proxied - r.p50.direct
  return `${what.padEnd(26)}proxied ${r.paired.orbtest.rps.toFixed(0)} req/s   straight ${r.paired.baseline.rps.toFixed(0)} req/s   ratio ${pct(r.paired.ratio.median)} (rounds ${pct(r.paired.ratio.min)}–${pct(r.paired.ratio.max)}; goal >= 80%; a plain byte relay ${pct(r.plain.ratio.median)}, rounds ${pct(r.plain.ratio.min)}–${pct(r.plain.ratio.max)})   CPU per exchange: fake ${us(r.paired.cpuUs?.baseline)} µs, proxy ${us(r.paired.cpuUs?.orbtest)} µs, plain relay ${us(r.plain.cpuUs?.orbtest)} µs   one request alone: ${r.p50.proxied.toFixed(3)} vs ${r.p50.direct.toFixed(3)} ms at the median, added ${added.toFixed(3)} ms (goal < 1 ms)`
}
