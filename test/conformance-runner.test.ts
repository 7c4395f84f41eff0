import { spawn } from 'node:child_process'
import { join } from 'node:path'
import t from 'tap'
import { startOrbtest } from '../src/orbtest.js'
import { ControlClient } from '../conformance/server/core/control.js'
import { defineCase } from '../conformance/server/core/case.js'
import { prepareOrbRun } from '../conformance/server/orb/run.js'
import { BOT } from '../conformance/server/orb/orb-case.js'
import type { OrbBotClient } from '../conformance/server/orb/transport.js'
import { runCases } from '../conformance/server/core/runner.js'
import { exactStatus } from '../conformance/server/core/strictness.js'
import { CLI } from './helpers/cli.js'
import { scratch } from './helpers/fake.js'

t.test(
  'SELF-07 a case that runs out of time is halted (no request, control call or wait gets through), its cleanups run, and the next case runs undisturbed',
  async (t) => {
    const fakes = await startOrbtest({ orbtile: false, orb: { port: 0 }, controlPort: 0, clockMode: 'virtual' })
    t.teardown(() => fakes.close())
    const control = new ControlClient(fakes.control.url)
    const run = await prepareOrbRun({ url: fakes.orb!.url, control })
    t.teardown(() => run.close())
    let sent = 0
    let cleaned = 0
    let lateCleanups = 0
    let unwound: unknown
    const cases = [
      defineCase<OrbBotClient>({
        id: 'ORB-020.loop',
        title: 'asks forever',
        level: 'required',
        async run (ctx) {
          ctx.cleanup(() => {
            cleaned++
          })
          try {
            for (;;) {
              await ctx.client.request({ path: `${BOT}/app` })
              await ctx.control!.orbState()
              sent++
            }
          } catch (err) {
            unwound = err
            ctx.cleanup(() => {
              lateCleanups++
            })
            throw err
          }
        }
      }),
      defineCase<OrbBotClient>({
        id: 'ORB-020.after',
        title: 'answers',
        level: 'required',
        async run (ctx) {
          const reply = await ctx.client.request({ path: `${BOT}/app` })
          if (reply.status !== 200) throw new Error(`status ${reply.status}`)
        }
      })
    ]
    const results = await runCases(cases, {
      transport: run.transport,
      control,
      seed: 1,
      runs: 1,
      grep: [],
      strict: true,
      slow: false,
      expectFailures: new Map(),
      caseTimeoutMs: 300
    })
    t.equal(results[0]!.verdict, 'fail')
    t.match(results[0]!.reason, /did not finish within 300 ms/)
    t.match(String(unwound), /CaseHalted/, 'the looping body met a halted request and unwound')
    t.equal(cleaned, 1, 'its cleanup ran once')
    t.equal(lateCleanups, 1, 'a cleanup offered while it unwound (before its cleanups ran) runs too')
    t.ok(sent > 0, `it had sent ${sent} requests`)
    const stopped = sent
    await new Promise((resolve) => setTimeout(resolve, 200))
    t.equal(sent, stopped, 'nothing more is sent once the case has ended')
    t.equal(results[1]!.verdict, 'pass', 'the next case runs as usual')
  }
)

t.test(
  'SELF-08 a slow case skipped on a real clock says how to get a virtual one: with --control, restart the target',
  async (t) => {
    const fakes = await startOrbtest({ orbtile: false, orb: { port: 0 }, controlPort: 0, clockMode: 'real' })
    t.teardown(() => fakes.close())
    const slow = defineCase<OrbBotClient>({
      id: 'ORB-099.slow',
      title: 'waits minutes',
      level: 'required',
      needs: ['slow'],
      async run () {}
    })
    const waits = defineCase<OrbBotClient>({
      id: 'ORB-099.wait',
      title: 'elapses a minute',
      level: 'required',
      async run (ctx) {
        await ctx.elapse(60_000)
      }
    })
    const options = {
      seed: 1,
      runs: 1,
      grep: [],
      strict: false,
      slow: false,
      expectFailures: new Map<string, string>()
    }
    const withControl = new ControlClient(fakes.control.url)
    const run = await prepareOrbRun({ url: fakes.orb!.url, control: withControl })
    t.teardown(() => run.close())
    const controlled = await runCases([slow, waits], { ...options, transport: run.transport, control: withControl })
    for (const result of controlled) {
      t.equal(result.verdict, 'skip', result.id)
      t.match(result.reason, /start the target with a virtual clock \(orbtest up --clock virtual\)/, result.id)
      t.notMatch(result.reason, /\(--control\)/, `${result.id}: --control is already given`)
    }
    const bare = await runCases([slow], { ...options, transport: run.transport, control: undefined })
    t.match(bare[0]!.reason, /give the target a virtual clock and its control API \(--control\)/)
  }
)

t.test(
  'SUITE-01 a target whose time does not pass (a virtual-clock fake run without --control) fails the run at the first case that finds it, and the cases after it are not run; a second run is refused before it starts',
  async (t) => {
    const dir = scratch(t)
    const discoveryPath = join(dir, 'd.json')
    const fakes = await startOrbtest({
      orbtile: { discoveryPath, socketPath: join(dir, 'o.sock') },
      orb: false,
      controlPort: 0,
      clockMode: 'virtual'
    })
    t.teardown(() => fakes.close())
    const conformance = ['conformance', '--target', `orbtile:${discoveryPath}`, '--seed', '1', '--reporter', 'tap']
    const first = await cli(conformance)
    t.equal(first.code, 1, 'the run fails')
    const failed = first.stdout.split('\n').filter((line) => line.startsWith('not ok '))
    t.equal(failed.length, 1, 'one case fails: the one that found it')
    const finder = /^not ok \d+ - (\S+)/.exec(failed[0] ?? '')?.[1]
    const why = /its time does not seem to pass, as with a fake started with --clock virtual and run without --control/
    t.match(first.stdout, why)
    t.match(failed[0], /^not ok \d+ - \S+ [^#]*$/, 'a decision that finds it fails too (not informational)')
    const after = first.stdout.split('\n').slice(first.stdout.split('\n').indexOf(failed[0]!) + 1)
      .filter((line) => /^ok \d+ /.test(line))
    t.ok(after.length > 100, `the later cases are reported (${after.length})`)
    t.ok(after.every((line) => line.includes(`# SKIP not run: ${finder!} found that the target's time does not seem to pass`)),
      'each later case is not run, and says why')
    const requests = Number(/# \d+ cases, (\d+) requests/.exec(first.stdout)?.[1])
    t.ok(requests < 200, `the run stopped early (${requests} requests)`)
    // The bucket the first run emptied never refills: the second run's check of the target finds it at once.
    const second = await cli(conformance)
    t.equal(second.code, 2, 'the second run does not start')
    t.match(second.stderr, /^orbtest: the target still throttled a request after its Retry-After was waited out 5 /)
  }
)

/** Runs the CLI to its end. */
function cli (args: string[]): Promise<{ code: number | null, stdout: string, stderr: string }> {
  const child = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk: Buffer) => { stdout += chunk.toString('utf8') })
  child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString('utf8') })
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })))
}

t.test(
  'OT-A01 ORB-A01 strictness belongs to the case: a decision case holds decided details, a required one does not, and a --strict run holds both, with two runs at once in one process',
  async (t) => {
    const fakes = await startOrbtest({ orbtile: false, orb: { port: 0 }, controlPort: 0, clockMode: 'virtual' })
    t.teardown(() => fakes.close())
    const control = new ControlClient(fakes.control.url)
    const seen: Record<string, boolean[]> = {}
    // Each case reads its strictness from its client and from a reply, before and after requests of its own, while
    // the other run's cases do the same: what one case reads is never the other's.
    const probe = (run: string, id: string, level: 'required' | 'decision') => defineCase<OrbBotClient>({
      id,
      title: 'reads its strictness',
      level,
      async run (ctx) {
        const got: boolean[] = []
        for (let i = 0; i < 5; i++) {
          got.push(exactStatus(ctx.client))
          const reply = await ctx.client.request({ path: `${BOT}/app` })
          got.push(exactStatus(reply))
          await new Promise((resolve) => setTimeout(resolve, 1))
        }
        seen[`${run} ${id}`] = got
      }
    })
    const options = { seed: 1, runs: 1, grep: [], slow: false, expectFailures: new Map<string, string>(), control }
    const runs = await Promise.all([false, true].map(async (strict) => {
      const name = strict ? 'strict' : 'plain'
      const cases = [probe(name, 'ORB-020.required', 'required'), probe(name, 'ORB-A06.decision', 'decision')]
      const run = await prepareOrbRun({ url: fakes.orb!.url, control })
      t.teardown(() => run.close())
      return runCases(cases, { ...options, strict, transport: run.transport })
    }))
    t.same(runs.flat().map((r) => r.verdict), ['pass', 'pass', 'pass', 'pass'])
    const all = (value: boolean): boolean[] => Array.from({ length: 10 }, () => value)
    t.same(seen, {
      'plain ORB-020.required': all(false),
      'plain ORB-A06.decision': all(true),
      'strict ORB-020.required': all(true),
      'strict ORB-A06.decision': all(true)
    }, 'the required case of the plain run alone is loose, at every read')
  }
)
