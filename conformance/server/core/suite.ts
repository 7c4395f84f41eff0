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

/** How long a case may take with --slow on a real clock: a slow case waits out TTLs and throttle windows. */
export const SLOW_CASE_TIMEOUT_MS = 20 * 60_000

/** How long one case may take: by the target's clock, and SLOW_CASE_TIMEOUT_MS with --slow on a real one. */
export function caseTimeoutMs (slow: boolean, virtual: boolean, limits: { real: number, virtual: number }): number {
  if (slow && !virtual) return SLOW_CASE_TIMEOUT_MS
  return virtual ? limits.virtual : limits.real
}

/** How a suite's client waits out a Retry-After: by advancing a virtual clock, else (undefined) by real sleep. */
export function clockWait (
  control: ControlClient | undefined,
  virtual: boolean
): ((seconds: number) => Promise<void>) | undefined {
  if (!virtual || control === undefined) return undefined
  return async (seconds) => { await control.advance(seconds * 1000) }
}

/** A suite's areas' fault maps in one (for the self-test): each fault's cases, in order, without repeats. */
export function mergeFaultCases<F extends string> (
  ...maps: Array<Partial<Record<F, string[]>>>
): Partial<Record<F, string[]>> {
  const out: Partial<Record<F, string[]>> = {}
  for (const [fault, ids] of maps.flatMap((map) => Object.entries(map) as Array<[F, string[]]>)) {
    out[fault] = [...new Set([...(out[fault] ?? []), ...ids])]
  }
  return out
}

export { TargetError } from './errors.js'
