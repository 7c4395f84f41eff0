import type fc from 'fast-check'
import type { ControlClient } from './control.js'

/** One request and its reply, as the report shows them. Credentials are never kept. */
export interface Exchange {
  method: string
  target: string
  headers: Record<string, string>
  body?: string
  status: number
  replyHeaders: Record<string, string>
  reply: string
}

/** What a suite's client must offer the runner: the exchanges it recorded, and redaction of what it knows is secret. */
export interface RecordingClient {
  readonly exchanges: Exchange[]
  /** Text for a report with every credential this client knows replaced. */
  redact(text: string): string
  /** While halted, every request (and every wait for a throttle) fails with CaseHalted before it is sent. */
  halt(halted: boolean): void
  close(): void
  /**
   * SUITE-01: why the target's time seems not to pass, once a throttled reply was waited out in real time as often
   * as the client retries and still came. The run's later cases are then not run.
   */
  readonly stalled?: string | undefined
  /**
   * Whether the case this client belongs to holds orbtest's decided details (statuses, codes) exactly: set by the
   * runner before the case runs (strictness.ts); a reply the client gets carries it too.
   */
  exact: boolean
}

/** What a case's request meets once the case has run out of time: the case is over and sends nothing more. */
export class CaseHalted extends Error {
  constructor () {
    super('the case ran out of time; it sends nothing more')
    this.name = 'CaseHalted'
  }
}

/** What a case can be told apart by in a report. */
export type Verdict = 'pass' | 'fail' | 'skip' | 'informational'

/**
 * `required`: a [server] or [both] requirement of the spec; a failure fails the run.
 * `decision`: one of the project's decisions where the spec is silent (OT-A…); a failure is informational unless
 * `--strict`.
 */
export type CaseLevel = 'required' | 'decision'

/** What a case may need of the target beyond the protocol itself. */
export type Need = 'control' | 'slow'

/** A failed expectation: what was expected, what came, and the request that showed it. */
export class CaseFailure extends Error {
  readonly expected: string
  readonly actual: string
  constructor (message: string, expected: unknown, actual: unknown) {
    super(message)
    this.name = 'CaseFailure'
    this.expected = typeof expected === 'string' ? expected : JSON.stringify(expected)
    this.actual = typeof actual === 'string' ? actual : JSON.stringify(actual)
  }
}

/**
 * A case cannot run against this target (a capability it lacks, a limit it is at); reported as skip with the reason.
 */
export class CaseSkip extends Error {
  constructor (reason: string) {
    super(reason)
    this.name = 'CaseSkip'
  }
}

/** Everything a case runs with. */
export interface CaseContext<C extends RecordingClient> {
  /** The suite's client of the target; every exchange is kept for the report. */
  readonly client: C
  /** The target's control API, when `--control` named one (cases that need it are skipped otherwise). */
  readonly control: ControlClient | undefined
  /** fast-check parameters for this case: the run's seed and runs per property. */
  fc<T>(overrides?: fc.Parameters<T>): fc.Parameters<T>
  /** A name unique to this run and case, for things a case creates (`r1a2b3c-label7`). */
  uid(label?: string): string
  /** Runs `fn` when the case ends, pass or fail, newest first: cases clean up after themselves. */
  cleanup(fn: () => unknown): void
  /** A note for the report (what was checked, which branch ran). */
  note(text: string): void
  /**
   * Lets `ms` of the target's time pass: a virtual clock (through the control API) is advanced at once; otherwise
   * real time passes, when it is short (up to 15 s) or the run allows slow cases (--slow). A longer wait without
   * either skips the case with that reason.
   */
  elapse(ms: number): Promise<void>
  /** Whether the target's time moves only when advanced (its control API says its clock is virtual). */
  virtualTime(): Promise<boolean>
  /** The run is --read-only: a case not marked `writes` leaves out any step that would change the target. */
  readonly readOnly: boolean
}

/** Real waits up to this long run in every run; longer ones only with --slow. */
export const SHORT_REAL_WAIT_MS = 15_000

/** One conformance case. Its id is the ledger id it proves; several cases of one id add a suffix (`OT-072.b`). */
export interface ConformanceCase<C extends RecordingClient> {
  id: string
  /** What the case checks, in a line. */
  title: string
  level: CaseLevel
  needs?: readonly Need[]
  /** The case changes what the target holds (posts, syncs commands, takes seats): `--read-only` skips it. */
  writes?: boolean
  run(ctx: CaseContext<C>): Promise<void>
}

/** A case id: a ledger id (`OT-072`, `ORB-031`, `ORB-A03`), with an optional suffix (`.b`, `.model`). */
export const CASE_ID = /^(?:OT|ORB)-(?:A)?\d{2,3}(?:\.[a-z0-9]+)?$/

/** Defines a case (an identity function that checks the id's shape at start-up). */
export function defineCase<C extends RecordingClient> (c: ConformanceCase<C>): ConformanceCase<C> {
  if (!CASE_ID.test(c.id)) throw new Error(`conformance: bad case id ${c.id}`)
  return c
}

/** The requirement id a case proves (its id without a suffix). */
export const requirementOf = (id: string): string => id.split('.')[0]!

/** What the report keeps of one case's run. */
export interface CaseResult {
  id: string
  title: string
  level: CaseLevel
  verdict: Verdict
  /** Why it was skipped, or the failure's message. */
  reason?: string
  expected?: string
  actual?: string
  /** fast-check's seed and path, for a property that failed. */
  replay?: { seed: number, path: string }
  /** A curl command that repeats the last request of the case (the token read from the discovery file). */
  curl?: string
  /** An expected failure, with the reason from --expect-failures. */
  expectedFailure?: string
  notes: string[]
  exchanges: Exchange[]
  ms: number
}
