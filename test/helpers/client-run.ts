// Runs the client suite in-process against a client command, with its JSON report read back, for the client tests.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import type { ClauseCount } from '../../conformance/client/core/journal.js'
import { conformance } from '../../src/cli/main.js'
import { ROOT } from './root.js'

export const SEED = Number(process.env.FC_SEED ?? 20261201)
const root = ROOT
export const NODE_ADAPTER = join(root, 'examples', 'orbtile-adapter-node', 'adapter.mjs')
export const PYTHON_ADAPTER = join(root, 'examples', 'orbtile-adapter-python', 'adapter.py')

export interface Run {
  code: number
  tap: string
  json: {
    checks: Array<{
      id: string
      verdict: string
      violationCount: number
      clauses: Record<string, ClauseCount>
      reason?: string
      note?: string
      replay?: { seed: number; path: string }
      shrunk?: { seed: number; path: string }
    }>
    scenarios: Array<{ name: string; exit: string; ms: number }>
  }
  dir: string
}

export const EVENTS_BOT = join(root, 'examples', 'orb-bot-events', 'bot.mjs')
export const WEBHOOK_BOT = join(root, 'examples', 'orb-bot-webhook', 'bot.mjs')

/** One client run, in-process, with its JSON report read back (`client`: the suite and its flags). */
/** The runs' folders not yet settled: removed when the test file's process exits, so that none is left behind. */
const unsettled = new Set<string>()
process.once('exit', () => {
  for (const dir of unsettled) rmSync(dir, { recursive: true, force: true })
})

export async function run (args: string[], command: string[], client: string[] = ['orbtile']): Promise<Run> {
  const dir = mkdtempSync(join(tmpdir(), 'orbtest-client-test-'))
  unsettled.add(dir)
  let tap = ''
  const out = new Writable({
    write (chunk, _enc, done) {
      tap += String(chunk)
      done()
    }
  })
  const json = join(dir, 'report.json')
  const code = await conformance(['--client', ...client, '--json', json, ...args, '--', ...command], out)
  const report = JSON.parse(readFileSync(json, 'utf8')) as Run['json']
  return { code, tap, json: report, dir }
}

/**
 * A run's folder goes once its test has read it, unless the test has failed: then its report, with the journal of
 * every scenario with a finding, stays for a person to read, and the test says where.
 */
export function settle (t: { passing(): boolean, comment(...args: unknown[]): void }, r: Run): void {
  unsettled.delete(r.dir)
  if (t.passing()) rmSync(r.dir, { recursive: true, force: true })
  else t.comment(`the report, with the journals of the scenarios with findings, is kept: ${join(r.dir, 'report.json')}`)
}

export const verdictOf = (r: Run, id: string): string | undefined => r.json.checks.find((c) => c.id === id)?.verdict

/**
 * Runs what it is given `jobs` at a time, in the order given; each call's promise is its own, so that a run the
 * harness could not finish fails only the test that reads it.
 */
export function limiter (jobs: number): <R>(fn: () => Promise<R>) => Promise<R> {
  let running = 0
  const waiting: Array<() => void> = []
  return async <R>(fn: () => Promise<R>): Promise<R> => {
    if (running < jobs) running++
    else await new Promise<void>((resolve) => { waiting.push(resolve) })
    try {
      return await fn()
    } finally {
      // The slot goes to the next in line, or is given back.
      const next = waiting.shift()
      if (next === undefined) running--
      else next()
    }
  }
}

/** Runs `jobs` at a time: enough to keep two cores busy while adapters mostly wait on long polls. */
export async function pool<T, R> (items: readonly T[], jobs: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length)
  let next = 0
  await Promise.all(
    Array.from({ length: jobs }, async () => {
      while (next < items.length) {
        const i = next++
        out[i] = await fn(items[i]!)
      }
    })
  )
  return out
}
