/**
 * `npm run bench`: orbtest's fakes beside a bare fastify baseline, measured in the same run on the same machine,
 * reported as ratios. Run after `npm run build` (the npm script does it). Results also go to bench/results/.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import autocannon from 'autocannon'

const here = dirname(fileURLToPath(import.meta.url))
const root = join(here, '..', '..')
const CLI = join(root, 'dist', 'src', 'cli', 'index.js')
const BASELINE = join(here, 'baseline-server.js')
const STARTS = Number(process.env.BENCH_STARTS ?? 9)
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5)
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10)

interface Server {
  child: ChildProcess
  socket: string
  token: string | undefined
  readyMs: number
}

async function launch (kind: 'orbtest' | 'baseline', dir: string, n: number): Promise<Server> {
  const socket = join(dir, `${kind}-${n}.sock`)
  const ready = join(dir, `${kind}-${n}.ready`)
  const discovery = join(dir, `${kind}-${n}.json`)
  const args = kind === 'orbtest'
    ? [CLI, 'orbtile', '--socket', socket, '--discovery', discovery, '--control-port', '0', '--ready-file', ready, '--rate-limit', 'off', '--log-level', 'silent']
    : [BASELINE, '--socket', socket, '--ready-file', ready]
  const started = process.hrtime.bigint()
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'inherit'] })
  while (!existsSync(ready)) {
    if (child.exitCode !== null) throw new Error(`${kind} exited with ${child.exitCode}`)
    await new Promise((resolve) => setTimeout(resolve, 1))
  }
  const readyMs = Number(process.hrtime.bigint() - started) / 1e6
  const token = kind === 'orbtest' ? (JSON.parse(readFileSync(discovery, 'utf8')) as { token: string }).token : undefined
  return { child, socket, token, readyMs }
}

async function stop (server: Server): Promise<void> {
  const exited = new Promise((resolve) => server.child.once('exit', resolve))
  server.child.kill('SIGTERM')
  await exited
}

const median = (xs: number[]): number => {
  const sorted = [...xs].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

async function startup (dir: string): Promise<{ orbtest: number, baseline: number }> {
  const times = { orbtest: [] as number[], baseline: [] as number[] }
  // Alternate the two so that drift of the machine's load hits both alike.
  for (let i = 0; i < STARTS; i++) {
    for (const kind of ['baseline', 'orbtest'] as const) {
      const server = await launch(kind, dir, i)
      times[kind].push(server.readyMs)
      await stop(server)
    }
  }
  return { orbtest: median(times.orbtest), baseline: median(times.baseline) }
}

async function throughput (server: Server): Promise<{ rps: number, p50: number, p99: number, non2xx: number }> {
  const result = await autocannon({
    url: 'http://localhost/a/v1/info',
    socketPath: server.socket,
    connections: CONNECTIONS,
    duration: SECONDS,
    headers: { host: 'localhost', ...(server.token === undefined ? {} : { authorization: `Bearer ${server.token}` }) }
  })
  return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, non2xx: result.non2xx }
}

async function info (dir: string): Promise<{ orbtest: Awaited<ReturnType<typeof throughput>>, baseline: Awaited<ReturnType<typeof throughput>> }> {
  const out: Record<string, Awaited<ReturnType<typeof throughput>>> = {}
  for (const kind of ['baseline', 'orbtest'] as const) {
    const server = await launch(kind, dir, 100)
    await throughput({ ...server }) // warm-up, not counted
    out[kind] = await throughput(server)
    await stop(server)
  }
  return { orbtest: out.orbtest!, baseline: out.baseline! }
}

const dir = mkdtempSync(join(tmpdir(), 'otb-'))
try {
  const s = await startup(dir)
  const t = await info(dir)
  const startRatio = s.orbtest / s.baseline
  const rpsRatio = t.orbtest.rps / t.baseline.rps
  const lines = [
    `orbtest bench (node ${process.version}, ${STARTS} starts each, ${SECONDS} s x ${CONNECTIONS} connections of GET /info)`,
    '',
    `start-up to ready file   orbtest ${s.orbtest.toFixed(0)} ms   bare fastify ${s.baseline.toFixed(0)} ms   ratio ${startRatio.toFixed(2)}x  (goal <= 1.5x)`,
    `GET /info over socket    orbtest ${t.orbtest.rps.toFixed(0)} req/s   bare fastify ${t.baseline.rps.toFixed(0)} req/s   ratio ${(rpsRatio * 100).toFixed(0)}%  (goal >= 70%)`,
    `  latency p50/p99        orbtest ${t.orbtest.p50}/${t.orbtest.p99} ms   bare fastify ${t.baseline.p50}/${t.baseline.p99} ms   non-2xx: ${t.orbtest.non2xx}/${t.baseline.non2xx}`
  ]
  process.stdout.write(`${lines.join('\n')}\n`)
  const results = join(root, 'bench', 'results')
  mkdirSync(results, { recursive: true })
  writeFileSync(join(results, 'latest.json'), `${JSON.stringify({ date: new Date().toISOString(), node: process.version, startup: s, info: t, ratios: { startup: startRatio, info: rpsRatio } }, null, 2)}\n`)
} finally {
  rmSync(dir, { recursive: true, force: true })
}
