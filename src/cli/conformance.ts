import { randomInt } from 'node:crypto'
import { accessSync, constants } from 'node:fs'
import { delimiter, join } from 'node:path'
import type { ClientSuite } from '../../conformance/client/core/engine.js'
import {
  judgeClient as judgeClientRun, listChecks, plannedPlays, shownCheck
} from '../../conformance/client/core/run.js'
import { chooseReporter } from '../../conformance/human.js'
import { CLIENT_SUITES, SUITES } from '../../conformance/index.js'
import { listCases, runServerSuite, suiteFor } from '../../conformance/run.js'
import { UsageError } from '../shared/usage-error.js'
import type { CommandInput, Outcome } from './command.js'
import type { CLIENT_FLAGS, SERVER_FLAGS } from './command-flags.js'
import type { Flags } from './flags.js'

/** A seed for a run that was given none (printed with the run, so that it can be played again). */
const randomSeed = (): number => randomInt(2 ** 31)

/** `orbtest conformance --target …`: a server suite's run, or its `--list`. */
export async function judgeServer (flags: Flags<typeof SERVER_FLAGS>, out: NodeJS.WritableStream): Promise<Outcome> {
  const grep = flags.grep ?? []
  if (flags.list === true) {
    await listCases(SUITES, flags.target, grep, out)
    return 'ok'
  }
  const target = flags.target
  if (target === undefined) {
    throw new UsageError("--target is required (orbtile, orbtile:PATH, unix:SOCKET, or an Orb's http(s):// origin)")
  }
  const suite = await suiteFor(SUITES, target).load()
  const passed = await runServerSuite(suite, {
    target,
    token: flags.token,
    config: flags.config,
    control: flags.control,
    readOnly: flags['read-only'] === true,
    slow: flags.slow === true,
    strict: flags.strict === true,
    grep,
    seed: flags.seed ?? randomSeed(),
    runs: flags.runs,
    path: flags.path,
    expectFailures: flags['expect-failures'] ?? new Map(),
    reporter: chooseReporter(flags.reporter, out),
    junit: flags.junit,
    json: flags.json
  }, out)
  return passed ? 'ok' : 'failed'
}

/** `orbtest conformance --client SUITE … -- COMMAND`: a client suite's run against the command, or its `--list`. */
export async function judgeClient (
  { flags, command }: CommandInput<typeof CLIENT_FLAGS>,
  out: NodeJS.WritableStream
): Promise<Outcome> {
  const suite = await loadClientSuite(flags)
  const grep = flags.grep ?? []
  if (grep.length > 0 && !suite.checks.some((c) => shownCheck(c.id, grep))) {
    throw new UsageError(`--grep ${grep.join(' ')} selects no check; see --list`)
  }
  if (flags.list === true) {
    listChecks(suite, out)
    return 'ok'
  }
  if (command.length === 0) throw new UsageError('give the client to judge after --, for example: --client orbtile -- ./my-adapter')
  checkRunnable(command[0]!)
  const tours = chosenTours(suite, flags.tour)
  const scenarios = flags.scenarios ?? 8
  if (plannedPlays(suite, { path: flags.path, tours, scenarios }).total === 0) {
    throw new UsageError('nothing to play: --tour none with --scenarios 0')
  }
  // Ctrl-C (or SIGTERM to orbtest) stops the clients under way, closes their fakes and removes their folders.
  const interrupt = new AbortController()
  const unwatch = watchSignals(interrupt)
  try {
    const outcome = await judgeClientRun(suite, {
      command,
      seed: flags.seed ?? randomSeed(),
      scenarios,
      path: flags.path,
      tours,
      jobs: flags.jobs,
      shrinkRuns: flags.shrink ?? 8,
      strict: flags.strict === true,
      expectFailures: flags['expect-failures'] ?? new Map(),
      signal: interrupt.signal,
      grep,
      reporter: chooseReporter(flags.reporter, out),
      suiteFlags: [
        ...(flags.webhook === true ? ['--webhook'] : []),
        ...(flags.scopes === undefined ? [] : ['--scopes', flags.scopes])
      ],
      junit: flags.junit,
      json: flags.json,
      html: flags.html
    }, out)
    // A client that never reached its fake was not judged: a command that cannot run as the suite runs it.
    return outcome === 'passed' ? 'ok' : outcome === 'never-reached' ? 'refused' : outcome
  } finally {
    unwatch()
  }
}

/** The suite `--client` names, for the bot suite's own flags. */
async function loadClientSuite (flags: Flags<typeof CLIENT_FLAGS>): Promise<ClientSuite<unknown>> {
  const name = flags.client
  const entry = CLIENT_SUITES.find((s) => s.name === name)
  if (entry === undefined) {
    throw new UsageError(`--client takes ${CLIENT_SUITES.map((s) => s.name).join(' or ')}, not ${JSON.stringify(name)}`)
  }
  if ((flags.webhook !== undefined || flags.scopes !== undefined) && name !== 'orb') {
    throw new UsageError('--webhook and --scopes are for --client orb')
  }
  const scopes = flags.scopes?.split(',').map((s) => s.trim()).filter(Boolean)
  return await entry.load({ webhook: flags.webhook === true, ...(scopes === undefined ? {} : { scopes }) })
}

/** The tours `--tour` names, as the engine takes them: undefined for the default ones, none for `none`. */
function chosenTours (suite: ClientSuite<unknown>, named: readonly string[] | undefined): string[] | undefined {
  for (const t of named ?? []) {
    if (t !== 'none' && !suite.tours.some((x) => x.name === t)) {
      throw new UsageError(`--tour takes ${suite.tours.map((x) => x.name).join(', ')} or none, not ${JSON.stringify(t)}`)
    }
  }
  return named?.filter((t) => t !== 'none')
}

/** A command that cannot be run is a usage error (exit 2), not a failing client. */
function checkRunnable (program: string): void {
  const candidates = program.includes('/')
    ? [program]
    : (process.env.PATH ?? '')
        .split(delimiter)
        .filter(Boolean)
        .map((dir) => join(dir, program))
  if (candidates.some(executable)) return
  throw new UsageError(`cannot run ${JSON.stringify(program)}: ${program.includes('/') ? 'no executable file there' : 'not found on PATH'}`)
}

/** Whether a file can be run: one missing, not executable or under a file that is not a folder cannot. */
function executable (file: string): boolean {
  try {
    accessSync(file, constants.X_OK)
    return true
  } catch (err) {
    if (['ENOENT', 'EACCES', 'ENOTDIR'].includes((err as NodeJS.ErrnoException).code ?? '')) return false
    throw err
  }
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
