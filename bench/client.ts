// The client suite's own costs: a fresh fake per scenario (in-process, against a bare fastify on a socket), and
// the whole suite on the Node reference adapter. Called from bench/index.ts; `--judge` throughput is measured there.
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Fastify from 'fastify'
import { startOrbtileMock } from '../src/orbtile-mock/index.js'

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!

/** Median milliseconds to a listening fake Orbtile in a folder of its own (what each scenario pays), and to a bare
 * fastify instance on a Unix socket in the same folder, alternating. */
export async function fakeStarts (runs = 30): Promise<{ fake: number, baseline: number }> {
  const fake: number[] = []
  const baseline: number[] = []
  for (let i = 0; i < runs; i++) {
    {
      const dir = mkdtempSync(join(tmpdir(), 'otb-fake-'))
      const started = performance.now()
      const app = Fastify()
      app.get('/a/v1/info', async () => ({ server: 'bare' }))
      await app.listen({ path: join(dir, 'bare.sock') })
      baseline.push(performance.now() - started)
      await app.close()
      rmSync(dir, { recursive: true, force: true })
    }
    {
      const dir = mkdtempSync(join(tmpdir(), 'otb-fake-'))
      const started = performance.now()
      const mock = await startOrbtileMock({
        discoveryPath: join(dir, 'home', 'adapter-api.json'),
        socketPath: join(dir, 'orbtile.sock'),
        pidCheck: 'off',
        tap: { request: () => undefined, exchange: () => {}, malformed: () => {} }
      })
      fake.push(performance.now() - started)
      await mock.close()
      rmSync(dir, { recursive: true, force: true })
    }
  }
  return { fake: median(fake), baseline: median(baseline) }
}

/** Seconds for the whole client suite (default flags, a fixed seed) on the Node reference adapter. */
export async function clientSuiteSeconds (cli: string, root: string):
Promise<{ seconds: number, code: number | null, summary: string }> {
  const started = performance.now()
  const adapter = join(root, 'examples', 'orbtile-adapter-node', 'adapter.mjs')
  const args = [cli, 'conformance', '--client', 'orbtile', '--seed', '1', '--', process.execPath, adapter]
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] })
  let out = ''
  child.stdout.on('data', (chunk: Buffer) => { out += chunk.toString() })
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve))
  const summary = out.split('\n').filter((l) => l.startsWith('# pass')).join(' ')
  return { seconds: (performance.now() - started) / 1000, code, summary }
}
