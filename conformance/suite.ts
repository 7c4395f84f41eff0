import type { ConformanceCase, RecordingClient } from './case.js'
import type { ControlClient } from './control.js'
import type { SuiteTransport } from './runner.js'

/** What the command line gives a suite to find its target with. The core checks the rest of the flags. */
export interface SuiteArgs {
  /** The `--target` value, as typed. */
  target: string
  token?: string
  config?: string
  control?: ControlClient
  slow: boolean
  readOnly: boolean
}

/** A suite's target, found and checked, ready for the runner. */
export interface PreparedSuite<C extends RecordingClient> {
  /** The TAP header's line: what is tested where, and what the run cannot do. The core adds seed and runs. */
  about(seedAndRuns: string): string
  /** What reports name as the target (a socket path, an origin). */
  target: string
  transport: SuiteTransport<C>
  /** How long one case may take on this target (a real clock waits out throttles and TTLs). */
  caseTimeoutMs: number
  /** Ends what the suite set up for the run (its apps, its webhook receiver). */
  close(): Promise<void>
}

/**
 * One conformance suite as the core sees it: its cases and how it reaches a target. The core (runner, cli, report)
 * knows nothing else of a suite, so a new one (a client suite) plugs in by giving these.
 */
export interface Suite<C extends RecordingClient> {
  /** The suite's name in reports and JSON indexes (`orbtile`, `orb`). */
  name: string
  /** The JUnit suite title. */
  title: string
  cases: ReadonlyArray<ConformanceCase<C>>
  /** Finds the target, checks that it answers and can be used (TargetError or UsageError otherwise). */
  prepare(args: SuiteArgs): Promise<PreparedSuite<C>>
}

/** How the command line finds a suite without loading it: a cheap test of the target, then the module. */
export interface SuiteEntry {
  name: string
  /** Whether `--target` names this suite's kind of server. */
  accepts(target: string): boolean
  load(): Promise<Suite<any>>
}

export { TargetError } from './errors.js'
