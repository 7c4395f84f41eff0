import { accessSync, constants, writeFileSync } from 'node:fs'
import { randomInt } from 'node:crypto'
import { delimiter, join } from 'node:path'
import { parseArgs } from 'node:util'
import { flagMessage, joinNegativeValues, UsageError } from '../../../src/cli/args.js'
import { playsTour, runClientSuite, type ClientSuite } from './engine.js'
import { renderHtml } from './html.js'
import type { CheckSummary, ClientRunReport, Level } from './journal.js'
import { clientJson, clientJunit, clientTapLine, clientTapSummary, scenarioComment } from './report.js'
import { clientRunPassed } from './verdict.js'
import { integer, readExpectations } from '../../flags.js'
import { chooseReporter, HumanReporter } from '../../human.js'
import { readRunReport } from '../../summary.js'

/** A client suite the command line can load by name, without loading the others. */
export interface ClientSuiteEntry {
  name: string
  /** The suite, for the run's options (`--webhook`, `--scopes`: the bot suite's). */
  load(options?: { webhook?: boolean, scopes?: readonly string[] }): Promise<ClientSuite<any>>
}

export const CLIENT_HELP = `Usage: orbtest conformance --client SUITE [flags] -- COMMAND [ARGS…]

Judges a client: for each scenario, orbtest starts a fresh fake, runs COMMAND against it, plays the scenario (the
user, the app, the wire), stops COMMAND (SIGTERM, then SIGKILL after 2 s) and checks everything it did against
the protocol's client rules. TAP on stdout; exit 0 when no required rule failed, 1 when one did, 2 for a usage
error or a command that cannot be run.

Suites:
  orbtile                  an Orbtile adapter: COMMAND gets HOME and TMPDIR (fresh folders) and ORBTILE_DISCOVERY
                           (the discovery file, also at the spec's path under HOME), with orbtest's own environment
  orb                      an Orb bot: COMMAND gets ORB_URL, ORB_TOKEN and ORB_APP_ID (an app made for it and
                           installed in the demo community), HOME and TMPDIR; with --webhook also PORT, and the
                           app's endpoint URL is http://127.0.0.1:PORT/orb/webhook

Flags:
  --scenarios N            generated scenarios after the tours (default 8; 0 for the tours alone)
  --tour NAME              play only this tour (repeatable; "none" for no tour; a long one plays only when named)
  --seed N                 the seed the scenarios are generated from (default: random, printed)
  --path P                 replay the one generated scenario at fast-check's path P (with its --seed)
  --jobs N                 scenarios played at once (default: all of them; each has its own fake and process)
  --shrink N               scenarios fast-check may play to shrink a failure (default 8; 0 to skip)
  --grep PREFIX            report only checks whose id starts with PREFIX (repeatable)
  --junit FILE             also write JUnit XML
  --json FILE              also write JSON (every check and its rule; every scenario's findings and whole
                           journal, each entry a finding cites marked)
  --html FILE              also write one self-contained page: each scenario as a timeline
  --expect-failures FILE   ids expected to fail, one per line: "OT-027 reason" (# starts a comment)
  --strict                 non-strict findings fail the run too: SHOULDs, and findings that rest on orbtest's
                           decisions, windows or stand-ins (inconclusive ones never fail)
  --reporter tap|human     TAP, or progress and a readable summary (default: human on a terminal, else TAP)
  --webhook                (orb) the bot has an endpoint URL: Orb's events come to it, genuine and forged
  --scopes LIST            (orb) the app's scopes, comma-separated (default: every scope)
  --list                   list the checks (level, the ledger sentence, each clause and what exercises it, the
                           windows) and the tours, and exit
  --help, -h               this help
`

const FLAGS = {
  client: { type: 'string' },
  scenarios: { type: 'string' },
  tour: { type: 'string', multiple: true },
  seed: { type: 'string' },
  path: { type: 'string' },
  jobs: { type: 'string' },
  shrink: { type: 'string' },
  grep: { type: 'string', multiple: true },
  junit: { type: 'string' },
  json: { type: 'string' },
  html: { type: 'string' },
  'expect-failures': { type: 'string' },
  strict: { type: 'boolean' },
  reporter: { type: 'string' },
  list: { type: 'boolean' },
  webhook: { type: 'boolean' },
  scopes: { type: 'string' },
  help: { type: 'boolean', short: 'h' }
} as const

/** `orbtest conformance --client …`: resolves to the exit code. */
export async function clientConformance (
  argv: readonly string[],
  suites: readonly ClientSuiteEntry[],
  out: NodeJS.WritableStream = process.stdout
): Promise<number> {
  const split = argv.indexOf('--')
  const flags = split < 0 ? argv : argv.slice(0, split)
  const command = split < 0 ? [] : argv.slice(split + 1)
  const values = parse(flags)
  if (values.help === true) {
    out.write(CLIENT_HELP)
    return 0
  }
  const name = values.client as string
  const entry = suites.find((s) => s.name === name)
  if (entry === undefined) throw new UsageError(`--client takes ${suites.map((s) => s.name).join(' or ')}, not ${JSON.stringify(name)}`)
  if ((values.webhook !== undefined || values.scopes !== undefined) && name !== 'orb') {
    throw new UsageError('--webhook and --scopes are for --client orb')
  }
  const scopes = typeof values.scopes === 'string'
    ? values.scopes.split(',').map((s) => s.trim()).filter(Boolean)
    : undefined
  const suite = await entry.load({ webhook: values.webhook === true, ...(scopes === undefined ? {} : { scopes }) })
  const grep = (values.grep as string[] | undefined) ?? []
  const shown = (checks: readonly CheckSummary[]): CheckSummary[] =>
    checks.filter((c) => grep.length === 0 || grep.some((g) => c.id.startsWith(g)))
  if (grep.length > 0 && !suite.checks.some((c) => grep.some((g) => c.id.startsWith(g)))) {
    throw new UsageError(`--grep ${grep.join(' ')} selects no check; see --list`)
  }
  if (values.list === true) {
    list(suite, out)
    return 0
  }
  if (command.length === 0) throw new UsageError('give the client to judge after --, for example: --client orbtile -- ./my-adapter')
  checkRunnable(command[0]!)
  const tours = values.tour as string[] | undefined
  for (const t of tours ?? []) {
    if (t !== 'none' && !suite.tours.some((x) => x.name === t)) throw new UsageError(`--tour takes ${suite.tours.map((x) => x.name).join(', ')} or none, not ${JSON.stringify(t)}`)
  }
  const seed =
    values.seed === undefined ? randomInt(2 ** 31) : integer(values.seed as string, 'seed', -(2 ** 31), 2 ** 31 - 1)
  const scenarios = values.scenarios === undefined ? 8 : integer(values.scenarios as string, 'scenarios', 0, 10_000)
  const path = values.path as string | undefined
  if (path !== undefined && !/^\d+(?::\d+)*$/.test(path)) {
    throw new UsageError(`--path takes fast-check's path, such as 3:0:1, not ${JSON.stringify(path)}`)
  }
  const expectFailures =
    values['expect-failures'] === undefined
      ? new Map<string, string>()
      : readExpectations(values['expect-failures'] as string)
  const plannedTours =
    path !== undefined ? 0 : suite.tours.filter((t) => playsTour(t, tours)).length
  const total = path !== undefined ? 1 : plannedTours + scenarios
  if (total === 0) throw new UsageError('nothing to play: --tour none with --scenarios 0')

  let reporter
  try {
    reporter = chooseReporter(values.reporter as string | undefined, out)
  } catch (err) {
    throw new UsageError((err as Error).message)
  }
  const selected = suite.checks.filter((c) => grep.length === 0 || grep.some((g) => c.id.startsWith(g)))
  const plays = path === undefined
    ? `${plannedTours} tours and ${scenarios} generated scenarios`
    : `the scenario at path ${path}`
  const human = reporter === 'human' ? new HumanReporter(out, total) : undefined
  if (human === undefined) out.write(`TAP version 14\n# ${suite.title}: ${JSON.stringify(command.join(' '))}; seed ${seed}; ${plays}\n`)
  else human.header(suite.title, `${command.join(' ')} · seed ${seed} · ${plays}`)
  // Ctrl-C (or SIGTERM to orbtest) stops the clients under way, closes their fakes and removes their folders.
  const interrupt = new AbortController()
  const unwatch = watchSignals(interrupt)
  const report = await runClientSuite(suite, {
    signal: interrupt.signal,
    command,
    seed,
    scenarios,
    ...(path === undefined ? {} : { path }),
    ...(tours === undefined ? {} : { tours: tours.filter((t) => t !== 'none') }),
    ...(values.jobs === undefined ? {} : { jobs: integer(values.jobs as string, 'jobs', 1, 64) }),
    shrinkRuns: values.shrink === undefined ? 8 : integer(values.shrink as string, 'shrink', 0, 1000),
    strict: values.strict === true,
    expectFailures,
    onStart: (name) => human?.start(name),
    onScenario: (s, done, all) => {
      if (human === undefined) {
        out.write(scenarioComment(s, done, all))
        return
      }
      human.grow(all)
      human.done(s.name, s.findings.filter((f) => f.violationCount > 0).map((f) => f.id), s.ms)
    }
  }).finally(() => {
    unwatch()
  })
  if (interrupt.signal.aborted) {
    out.write(`# interrupted after ${report.scenarios.length} of ${total} scenarios: clients stopped, folders removed\n`)
    return 130
  }
  const checks = shown(report.checks)
  const suiteFlags = [
    ...(values.webhook === true ? ['--webhook'] : []),
    ...(typeof values.scopes === 'string' ? ['--scopes', values.scopes] : [])
  ]
  const json = clientJson(report, checks, suite.checks, suiteFlags)
  const note = (text: string): void => { out.write(human === undefined ? `# ${text}\n` : `${text}\n`) }
  if (human === undefined) {
    out.write(`1..${selected.length}\n`)
    checks.forEach((c, i) => out.write(clientTapLine(c, i + 1)))
  }
  for (const id of expectFailures.keys()) {
    const c = report.checks.find((x) => x.id === id)
    if (c === undefined) note(`--expect-failures names ${id}, which this suite has no check for`)
    else if (c.verdict === 'pass') note(`${id} was expected to fail and passed: take it out of the expected-failures file`)
  }
  if (human === undefined) out.write(clientTapSummary(report, checks))
  else human.end(readRunReport(JSON.parse(json)))
  if (values.junit !== undefined) writeFileSync(values.junit as string, clientJunit(report, checks))
  if (values.json !== undefined) writeFileSync(values.json as string, json)
  if (values.html !== undefined) writeFileSync(values.html as string, renderHtml({ ...report, checks }))
  if (neverReached(report)) {
    note(`the client never reached the fake in any scenario (${report.scenarios[0]?.exit ?? 'no scenario'}): nothing was judged; does it read ${name === 'orbtile' ? 'ORBTILE_DISCOVERY' : 'ORB_URL and ORB_TOKEN (and PORT with --webhook)'}?`)
    return 2
  }
  return clientRunPassed({ ...report, checks }) ? 0 : 1
}

/**
 * A client that never reached the fake in any scenario (no request, and, a webhook bot, no delivery taken) is a
 * command that cannot run as the suite runs it (a wrong path, a variable it does not read), not a client to judge.
 */
function neverReached (report: ClientRunReport): boolean {
  const reached = (e: ClientRunReport['scenarios'][number]['journal'][number]): boolean =>
    e.kind === 'exchange' || e.kind === 'malformed' ||
    (e.kind === 'action' && e.name === 'delivery' &&
      (typeof e.data?.status === 'number' || !/ECONNREFUSED/.test(String(e.data?.error))))
  return report.scenarios.length > 0 && !report.scenarios.some((s) => s.journal.some(reached))
}

const SHOWN_LEVEL: Record<Level, string> = { MUST: 'MUST', SHOULD: 'SHOULD', decision: 'decision', info: 'info' }

/**
 * `--list`: each check as plain data says it (level, the ledger sentence, its clauses, its windows), then the tours.
 */
function list (suite: ClientSuite<unknown>, out: NodeJS.WritableStream): void {
  for (const c of suite.checks) {
    out.write(`${c.id.padEnd(12)} ${SHOWN_LEVEL[c.level].padEnd(9)} ${c.title}\n`)
    out.write(`${''.padEnd(22)}ledger: ${c.ledger}\n`)
    for (const k of c.clauses) {
      const rests = k.level === 'decision' && k.basis !== undefined ? ` (rests on ${k.basis})` : ''
      out.write(`${''.padEnd(22)}.${k.key}: ${SHOWN_LEVEL[k.level]}${rests}: ${k.text}; exercised by ${k.exercise}\n`)
    }
    if (c.windows.length > 0) out.write(`${''.padEnd(22)}windows: ${c.windows.join(', ')}\n`)
  }
  for (const t of suite.tours) {
    const long = t.long === true ? ` (long: played only with --tour ${t.name})` : ''
    const twin = t.twin === undefined ? '' : ' (played beside its twin, which varies in one thing)'
    out.write(`tour:${t.name.padEnd(14)} ${suite.describe(t.scenario)}${long}${twin}\n`)
  }
}

function parse (argv: readonly string[]): Record<string, string | boolean | string[] | undefined> {
  const valued = new Set(Object.entries(FLAGS).filter(([, f]) => f.type === 'string').map(([n]) => n))
  try {
    return parseArgs({ args: joinNegativeValues(argv, valued), strict: true, allowPositionals: false, options: FLAGS })
      .values
  } catch (err) {
    throw new UsageError(flagMessage(err as Error))
  }
}

/** A command that cannot be run is a usage error (exit 2), not a failing client. */
function checkRunnable (program: string): void {
  const candidates = program.includes('/')
    ? [program]
    : (process.env.PATH ?? '')
        .split(delimiter)
        .filter(Boolean)
        .map((dir) => join(dir, program))
  for (const file of candidates) {
    try {
      accessSync(file, constants.X_OK)
      return
    } catch {}
  }
  throw new UsageError(`cannot run ${JSON.stringify(program)}: ${program.includes('/') ? 'no executable file there' : 'not found on PATH'}`)
}

/** The runs under way in this process: one listener per signal stops them all, however many run at once. */
const interrupts = new Set<AbortController>()

function onSignal (): void {
  // Once, as `process.once` would: a second Ctrl-C finds no listener and ends the process.
  process.off('SIGINT', onSignal)
  process.off('SIGTERM', onSignal)
  for (const interrupt of interrupts) interrupt.abort()
}

function watchSignals (interrupt: AbortController): () => void {
  if (interrupts.size === 0) {
    process.on('SIGINT', onSignal)
    process.on('SIGTERM', onSignal)
  }
  interrupts.add(interrupt)
  return () => {
    interrupts.delete(interrupt)
    if (interrupts.size === 0) {
      process.off('SIGINT', onSignal)
      process.off('SIGTERM', onSignal)
    }
  }
}
