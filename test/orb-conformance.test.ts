import t from 'tap'
import { startOrbtest } from '../src/orbtest.js'
import type { OrbMock } from '../src/orb-mock/index.js'
import { ORB_FAULTS, type OrbFault } from '../src/orb-mock/faults.js'
import { ControlClient } from '../conformance/server/core/control.js'
import { ORB_CASES, ORB_FAULT_CASES } from '../conformance/server/orb/index.js'
import { prepareOrbRun } from '../conformance/server/orb/run.js'
import { runCases, runPassed } from '../conformance/server/core/runner.js'
import { type CaseResult } from '../conformance/server/core/case.js'
import { checkCoverage } from './helpers/coverage.js'
import type { Teardown } from './helpers/fake.js'

const SEED = Number(process.env.FC_SEED ?? 20261130)
// While developing cases: ORB_CONFORMANCE_GREP=ORB-03,ORB-A02 runs only those in the whole-suite test.
const DEV_GREP = (process.env.ORB_CONFORMANCE_GREP ?? '').split(',').filter((g) => g !== '')

/** Runs the Orb suite (or the cases `grep` names) against a fresh fake Orb with its control API and a virtual clock. */
async function suiteAgainstFake (
  tt: Teardown,
  options: { faults?: OrbFault[]; grep?: string[]; runs?: number; world?: (world: WorldSnapshot) => void } = {}
): Promise<CaseResult[]> {
  const fakes = await startOrbtest({
    orbtile: false,
    orb: { port: 0, faults: options.faults ?? [] },
    controlPort: 0,
    clockMode: 'virtual'
  })
  tt.teardown(() => fakes.close())
  const before = snapshot(fakes.orb!)
  const control = new ControlClient(fakes.control.url)
  const run = await prepareOrbRun({ url: fakes.orb!.url, control })
  try {
    return await runCases(ORB_CASES, {
      transport: run.transport,
      control,
      seed: SEED,
      runs: options.runs ?? 10,
      grep: options.grep ?? [],
      strict: true,
      slow: false,
      expectFailures: new Map()
    })
  } finally {
    await run.close()
    options.world?.({ before, after: snapshot(fakes.orb!) })
  }
}

interface WorldSnapshot { before: unknown, after: unknown }

// What a person sharing the fake would notice: apps, installs, channels and seats, the chain and voice server, the
// live messages, every app's commands and endpoint. The suite's history (event logs, delivery logs, interactions,
// the players it cleared) is not debris.
function snapshot (orb: OrbMock): unknown {
  const { apps, servers, installs, chain, voice } = orb.control.state() as Record<string, unknown>
  const messages = [...orb.store.messages.values()]
    .filter((m) => !m.deleted)
    .map((m) => `${m.id} ${m.author.id} ${m.channel}`)
  const commands = [...orb.store.apps.values()].map((a) => [a.id, a.commands.map((c) => c.name)])
  return { apps, servers, installs, chain, voice, messages, commands }
}

const describe = (results: readonly CaseResult[]): string =>
  results.filter((r) => r.verdict === 'fail').map((r) => `${r.id}: ${r.reason} | expected ${r.expected} | actual ${r.actual}${r.replay === undefined ? '' : ` | replay --seed ${r.replay.seed} --path ${r.replay.path}`}`).join('\n')

t.test('SELF-04 the whole Orb suite passes against a fresh fake Orb, strict, with no skips', async (t) => {
  const started = performance.now()
  let world: WorldSnapshot | undefined
  const results = await suiteAgainstFake(t, {
    grep: DEV_GREP,
    world: (w) => {
      world = w
    }
  })
  t.ok(results.length > 0, `${results.length} cases ran`)
  t.ok(runPassed(results), describe(results))
  t.same(
    results.filter((r) => r.verdict === 'skip').map((r) => `${r.id}: ${r.reason}`),
    [],
    'nothing skipped when the control API is there'
  )
  t.same(
    world?.after,
    world?.before,
    'the run leaves the fake as it found it: apps, installs, seats, messages, commands'
  )
  const requests = results.reduce((n, r) => n + r.exchanges.length, 0)
  t.comment(`${results.length} cases, ${requests} requests, ${((performance.now() - started) / 1000).toFixed(1)} s`)
})

t.test(
  'SELF-05 the Orb suite bites: each deliberate fault of the fake Orb makes its named cases fail',
  { skip: DEV_GREP.length > 0 ? 'ORB_CONFORMANCE_GREP is set' : false },
  async (t) => {
    const faults = Object.entries(ORB_FAULT_CASES) as Array<[OrbFault, string[]]>
    // A fault the self-test never switches on proves nothing: every fault of the fake names the cases it must fail.
    const uncovered = (Object.keys(ORB_FAULTS) as OrbFault[]).filter(
      (fault) => (ORB_FAULT_CASES[fault] ?? []).length === 0
    )
    t.same(uncovered, [], 'faults of the fake Orb that no case is named for')
    t.ok(faults.length >= 8, `${faults.length} faults are covered (the issue asks for at least 8)`)
    for (const [fault, ids] of faults) {
      t.ok(ORB_FAULTS[fault] !== undefined, `${fault} is a fault of the fake Orb`)
      const results = await suiteAgainstFake(t, { faults: [fault], grep: ids })
      for (const id of ids) {
        const result = results.find((r) => r.id === id)
        t.equal(
          result?.verdict,
          'fail',
          `fault ${fault} fails ${id}${result?.verdict === 'fail' ? '' : ` (it was ${result?.verdict ?? 'not run'})`}`
        )
      }
    }
  }
)

t.test(
  'SELF-06 every Orb [server] and [both] requirement has a case, or the coverage file says why it cannot be tested from outside',
  async (t) => {
    checkCoverage(t, 'orb', ORB_CASES, 'ORB')
  }
)
