// The `orbtest up` start-up row: spawn to ready file for `orbtest up` (the fake Orbtile on its socket, the fake Orb
// and the control server on loopback ports) against three bare fastify servers opening the same three listeners
// (bench/baseline-up-server.ts), alternated so that drift hits both alike; min, median and max of each.
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { CLI, here, median, spawnServer, STARTS } from './harness.js'

const BASELINE_UP = join(here, 'baseline-up-server.js')

export interface Spread { min: number, median: number, max: number }
export interface UpStartup { up: Spread, baseline: Spread, ratio: number }

export const spread = (xs: number[]): Spread => ({ min: Math.min(...xs), median: median(xs), max: Math.max(...xs) })

async function readyAfter (args: readonly string[], ready: string): Promise<number> {
  const started = process.hrtime.bigint()
  const child = spawnServer(args, 'ignore')
  while (!existsSync(ready)) {
    if (child.exitCode !== null) throw new Error(`${args[0]} exited with ${child.exitCode}`)
    await new Promise((resolve) => setTimeout(resolve, 1))
  }
  const ms = Number(process.hrtime.bigint() - started) / 1e6
  const exited = new Promise((resolve) => child.once('exit', resolve))
  child.kill('SIGTERM')
  await exited
  return ms
}

export async function upStartup (dir: string): Promise<UpStartup> {
  const times: { up: number[], baseline: number[] } = { up: [], baseline: [] }
  for (let i = 0; i < STARTS; i++) {
    const socket = (kind: string): string => join(dir, `${kind}-up-${i}.sock`)
    const ready = (kind: string): string => join(dir, `${kind}-up-${i}.ready`)
    const baseline = [BASELINE_UP, '--socket', socket('b'), '--ready-file', ready('b')]
    times.baseline.push(await readyAfter(baseline, ready('b')))
    times.up.push(await readyAfter([
      CLI, 'up', '--socket', socket('o'), '--discovery', join(dir, `o-up-${i}.json`), '--orb-port', '0',
      '--control-port', '0', '--ready-file', ready('o'), '--log-level', 'silent'
    ], ready('o')))
  }
  const up = spread(times.up)
  const baseline = spread(times.baseline)
  return { up, baseline, ratio: up.median / baseline.median }
}
