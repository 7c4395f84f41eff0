import { chooseReporter, HumanReporter } from './human.js'
import { readRunReport } from './summary.js'
import { randomInt } from 'node:crypto'
import { writeFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { flagMessage, joinNegativeValues, UsageError } from '../src/cli/args.js'
import { ControlClient } from './server/core/control.js'
import { jsonIndex, junitXml, tapHeader, tapLine, tapSummary } from './report.js'
import type { CaseResult, ConformanceCase } from './server/core/case.js'
import { runCases, runPassed, selectCases } from './server/core/runner.js'
import type { SuiteEntry } from './server/core/suite.js'
import type { ClientSuiteEntry } from './client/core/cli.js'
import { integer, readExpectations } from './flags.js'

export { TargetError } from './server/core/suite.js'

export const CONFORMANCE_HELP = `Usage: orbtest conformance --target TARGET [flags]
       orbtest conformance --client SUITE [flags] -- COMMAND [ARGS…]   (see --client orbtile --help)

Runs property-based conformance cases against a server that claims to speak the Orbtile Adapter Protocol v1.2
(orbtile, orbtile:PATH, unix:SOCKET targets) or the Orb bot API (http:// and https:// targets).
TAP on stdout; exit 0 when every required case passes, 1 when one fails, 2 for a usage error or a target that
cannot be reached.

Targets:
  orbtile                  the discovery file at its usual place ($ORBTILE_DISCOVERY, else under $HOME)
  orbtile:PATH             the discovery file at PATH (socketPath, basePath and token are read from it)
  unix:SOCKET              a Unix socket; give the token with --token (base path /a/v1)
  http(s)://HOST:PORT      an Orb; with --control (orbtest's fake) the suite sets up apps of its own, otherwise
                           --config FILE names the apps, community and channels to use

Flags:
  --target TARGET          what to test (required, except with --list)
  --token TOKEN            the discovery token, for unix: targets
  --config FILE            for an Orb without a control API: tokens, community, channels, webhook receiver address
                           (see conformance/server/orb/orb-target.example.json; "$NAME" values come from the
                           environment)
  --control URL            the target's orbtest control API (printed by orbtest up); cases that play the user or
                           the community's members, and cases that need time (with a virtual clock), need it;
                           a fake started with --clock virtual needs it, or its throttles never lift (the run stops)
  --read-only              skip the cases that change what the target holds (posts, command syncs, voice seats,
                           music); for an Orb shared with people
  --list                   list the cases (id, level, needs, title) and exit; with --target, only that suite's
  --grep PREFIX            run only cases whose id starts with PREFIX (repeatable)
  --seed N                 the seed every property starts from (default: random, printed)
  --runs N                 property runs per case (default 20)
  --path P                 fast-check's replay path of one failing case (with its --seed, --runs and --grep)
  --junit FILE             also write JUnit XML
  --json FILE              also write a JSON index (every case, the exchanges of the failures)
  --expect-failures FILE   ids expected to fail, one per line: "OT-072 reason" (# starts a comment)
  --strict                 orbtest's own decisions (OT-A…, ORB-A…) fail the run too; without them they are
                           informational
  --slow                   also run cases that take minutes in real time (lease silences, 600 s expiries, 4097
                           requests at 20/s); without it they are skipped unless the target's clock is virtual
                           (--control to a target started with --clock virtual), and cases that need time wait
                           seconds of real time at most
  --reporter tap|human     TAP, or progress and a readable summary (default: human on a terminal, else TAP)
  --help, -h               this help
`

type Values = Record<string, string | boolean | string[] | undefined>

const FLAGS = {
  target: { type: 'string' },
  token: { type: 'string' },
  config: { type: 'string' },
  control: { type: 'string' },
  'read-only': { type: 'boolean' },
  list: { type: 'boolean' },
  grep: { type: 'string', multiple: true },
  seed: { type: 'string' },
  path: { type: 'string' },
  runs: { type: 'string' },
  junit: { type: 'string' },
  json: { type: 'string' },
  'expect-failures': { type: 'string' },
  strict: { type: 'boolean' },
  slow: { type: 'boolean' },
  reporter: { type: 'string' },
  help: { type: 'boolean', short: 'h' }
} as const

/**
 * `orbtest conformance …` over the given suites: resolves to the exit code. The suite is the first whose `accepts`
 * takes the target; the core knows nothing else of it.
 */
export async function conformance (
  argv: readonly string[],
  suites: readonly SuiteEntry[],
  out: NodeJS.WritableStream = process.stdout,
  clients: readonly ClientSuiteEntry[] = []
): Promise<number> {
  // `--client SUITE -- COMMAND…` judges a client instead of a server: its own flags, its own runner.
  const flags = argv.indexOf('--') < 0 ? argv : argv.slice(0, argv.indexOf('--'))
  if (flags.some((a) => a === '--client' || a.startsWith('--client='))) {
    const { clientConformance } = await import('./client/core/cli.js')
    return await clientConformance(argv, clients, out)
  }
  const values = parseFlags(argv)
  if (values.help === true) {
    out.write(CONFORMANCE_HELP)
    return 0
  }
  const grep = (values.grep as string[] | undefined) ?? []
  const spec = values.target as string | undefined
  const entry = spec === undefined ? undefined : suites.find((s) => s.accepts(spec))
  if (values.list === true) {
    const listed = spec === undefined ? suites : entry === undefined ? suites.slice(0, 1) : [entry]
    const cases = await Promise.all(listed.map(async (s) => (await s.load()).cases))
    if (cases.every((c) => selectCases(c, grep).length === 0)) {
      throw new UsageError(`--grep ${grep.join(' ')} selects no case`)
    }
    for (const c of cases.flatMap((all) => selectCases(all, grep))) out.write(listLine(c))
    return 0
  }
  const seed =
    values.seed === undefined ? randomInt(2 ** 31) : integer(values.seed as string, 'seed', -(2 ** 31), 2 ** 31 - 1)
  const runs = values.runs === undefined ? 20 : integer(values.runs as string, 'runs', 1, 100_000)
  if (spec === undefined) { throw new UsageError("--target is required (orbtile, orbtile:PATH, unix:SOCKET, or an Orb's http(s):// origin)") }
  // A target no suite takes falls to the first suite, which says what it accepts.
  const suite = await (entry ?? suites[0]!).load()
  const expectFailures =
    values['expect-failures'] === undefined
      ? new Map<string, string>()
      : readExpectations(values['expect-failures'] as string)
  const control = values.control === undefined ? undefined : new ControlClient(checkUrl(values.control as string))
  // A typo in --grep must not pass as a green run of nothing.
  const selected = selectCases(suite.cases, grep)
  const prepared = await suite.prepare({
    target: spec,
    ...(values.token === undefined ? {} : { token: values.token as string }),
    ...(values.config === undefined ? {} : { config: values.config as string }),
    ...(control === undefined ? {} : { control }),
    slow: values.slow === true,
    readOnly: values['read-only'] === true
  })
  try {
    if (selected.length === 0) throw new UsageError(`--grep ${grep.join(' ')} selects no case; see --list`)
    let reporter
    try {
      reporter = chooseReporter(values.reporter as string | undefined, out)
    } catch (err) {
      throw new UsageError((err as Error).message)
    }
    const human = reporter === 'human' ? new HumanReporter(out, selected.length) : undefined
    const about = prepared.about(`seed ${seed}; ${runs} runs per property`)
    if (human === undefined) out.write(tapHeader(selected.length, about))
    else human.header(suite.title, about)
    const started = performance.now()
    const results = await runCases(suite.cases, {
      transport: prepared.transport,
      control,
      seed,
      runs,
      grep,
      strict: values.strict === true,
      slow: values.slow === true,
      readOnly: values['read-only'] === true,
      expectFailures,
      caseTimeoutMs: prepared.caseTimeoutMs,
      ...(values.path === undefined ? {} : { path: values.path as string }),
      onStart: (c) => human?.start(c.id),
      onResult: (result, index) => {
        if (human === undefined) out.write(tapLine(result, index + 1, runs))
        else {
          const failed = result.verdict === 'fail' && result.expectedFailure === undefined
          human.done(`${result.id} ${result.title}`, failed ? [result.id] : [], result.ms)
        }
      }
    })
    return finishRun(results, {
      suite: suite.name,
      title: suite.title,
      target: prepared.target,
      seed,
      runs,
      started,
      expectFailures,
      values,
      out,
      human
    })
  } finally {
    await prepared.close()
  }
}

function parseFlags (argv: readonly string[]): Values {
  const valued = new Set(
    Object.entries(FLAGS)
      .filter(([, flag]) => flag.type === 'string')
      .map(([name]) => name)
  )
  try {
    return parseArgs({ args: joinNegativeValues(argv, valued), strict: true, allowPositionals: false, options: FLAGS })
      .values
  } catch (err) {
    throw new UsageError(flagMessage(err as Error))
  }
}

/** One line of --list: id, level, needs, title (the bytes users diff between versions). */
function listLine (c: ConformanceCase<any>): string {
  const needs = [...(c.needs ?? []), ...(c.writes === true ? ['writes'] : [])].join(',')
  return `${c.id.padEnd(12)} ${c.level.padEnd(9)} ${needs.padEnd(14)} ${c.title}\n`
}

interface Finish {
  suite: string
  title: string
  target: string
  seed: number
  runs: number
  started: number
  expectFailures: Map<string, string>
  values: Values
  out: NodeJS.WritableStream
  human: HumanReporter | undefined
}

function finishRun (results: CaseResult[], o: Finish): number {
  const { out, expectFailures, values, human } = o
  const note = (text: string): void => { out.write(human === undefined ? `# ${text}\n` : `${text}\n`) }
  for (const id of expectFailures.keys()) {
    if (!results.some((r) => r.id === id || r.id.split('.')[0] === id)) note(`--expect-failures names ${id}, which this run has no case for`)
  }
  for (const r of results) {
    if (r.verdict === 'pass' && expectFailures.has(r.id)) note(`${r.id} was expected to fail and passed: take it out of the expected-failures file`)
  }
  const ms = performance.now() - o.started
  const requests = results.reduce((n, r) => n + r.exchanges.length, 0)
  const about = { suite: o.suite, kind: 'server', title: o.title, seed: o.seed, runs: o.runs, target: o.target }
  // The JSON index, made only when a reader needs it: the --json file, or the human reporter's summary.
  const json = values.json !== undefined || human !== undefined
    ? jsonIndex(results, { ...about, ms: Math.round(ms), requests })
    : ''
  if (human === undefined) out.write(tapSummary(results, ms, requests))
  else human.end(readRunReport(JSON.parse(json)))
  if (values.junit !== undefined) writeFileSync(values.junit as string, junitXml(results, o.title, ms))
  if (values.json !== undefined) writeFileSync(values.json as string, json)
  return runPassed(results) ? 0 : 1
}

function checkUrl (raw: string): string {
  try {
    const url = new URL(raw)
    if (url.protocol !== 'http:') throw new Error('not http')
    // `orbtest up` prints the control API as …/control; the client adds that part itself.
    return raw.replace(/\/+$/, '').replace(/\/control$/, '')
  } catch {
    throw new UsageError(`--control must be an http:// URL, not ${JSON.stringify(raw)}`)
  }
}
