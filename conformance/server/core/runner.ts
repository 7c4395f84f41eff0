import { randomBytes } from 'node:crypto'
import {
  CaseFailure,
  CaseHalted,
  CaseSkip,
  requirementOf,
  SHORT_REAL_WAIT_MS,
  type CaseContext,
  type CaseResult,
  type ConformanceCase,
  type Exchange,
  type RecordingClient
} from './case.js'
import type { ControlClient } from './control.js'

/** How a suite reaches its target: a fresh client per case, and a curl command that repeats one exchange. */
export interface SuiteTransport<C extends RecordingClient> {
  client(): C
  curl(exchange: Exchange): string
}

export interface RunOptions<C extends RecordingClient> {
  transport: SuiteTransport<C>
  control: ControlClient | undefined
  /** The seed every property starts from (a random one is chosen and printed when absent). */
  seed: number
  /** Property runs per case. */
  runs: number
  /** fast-check's replay path for the one case being replayed (with --seed and --grep). */
  path?: string
  /** Id prefixes to run (all when empty). */
  grep: readonly string[]
  /** Decisions (OT-A…) fail the run too. */
  strict: boolean
  /** Cases that take minutes in real time run too. */
  slow: boolean
  /** Cases that change what the target holds are skipped. */
  readOnly?: boolean
  /** Ids expected to fail, with the reason. */
  expectFailures: ReadonlyMap<string, string>
  /** Milliseconds a case may take before it fails. */
  caseTimeoutMs?: number
  /** Called after each case, for streaming reporters. */
  onResult?: (result: CaseResult, index: number, total: number) => void
  /** A case is about to run (for a person's progress line). */
  onStart?: (c: { id: string, title: string }, index: number, total: number) => void
}

/** The cases a run selects, in suite order. */
export function selectCases<T extends { id: string }> (cases: readonly T[], grep: readonly string[]): T[] {
  if (grep.length === 0) return [...cases]
  return cases.filter((c) => grep.some((prefix) => c.id.startsWith(prefix) || requirementOf(c.id) === prefix))
}

/** Runs the selected cases one after another (they share one target) and returns every result. */
export async function runCases<C extends RecordingClient> (
  cases: readonly ConformanceCase<C>[],
  options: RunOptions<C>
): Promise<CaseResult[]> {
  const selected = selectCases(cases, options.grep)
  const results: CaseResult[] = []
  let serial = 0
  // Adapter ids are fresh per run: the user's settings for an id outlive its leases (OT-A09), so a second run on the
  // same target must not meet the first run's allow and keypad choices.
  const run = randomBytes(3).toString('hex')
  // SUITE-01: once a case finds that the target's time does not pass, the cases after it are not run.
  /** The case that found it. */
  let stalled: string | undefined
  for (const [index, c] of selected.entries()) {
    options.onStart?.(c, index, selected.length)
    const result = stalled === undefined
      ? await runOne(c, options, run, () => serial++, () => { stalled = c.id })
      : notRun(c, `not run: ${stalled} found that the target's time does not seem to pass (SUITE-01)`)
    results.push(result)
    options.onResult?.(result, index, selected.length)
  }
  return results
}

/** The result of a case a run skips without starting it. */
function notRun (c: { id: string, title: string, level: CaseResult['level'] }, reason: string): CaseResult {
  return { id: c.id, title: c.title, level: c.level, verdict: 'skip', reason, notes: [], exchanges: [], ms: 0 }
}

/** What one case's run holds while it runs. */
interface CaseState {
  notes: string[]
  cleanups: Array<() => unknown>
  /** Out of time: its requests, control calls and waits fail at once. */
  halted: boolean
  /** Its body and cleanups are over: a cleanup offered now has nothing of its own to clean. */
  ended: boolean
  /** The exchange a failure is reported with: the last one before the case's cleanups ran. */
  failedAt: number
}

/** How long a case may take when its suite names no limit. */
const DEFAULT_CASE_TIMEOUT_MS = 60_000

async function runOne<C extends RecordingClient> (
  c: ConformanceCase<C>,
  options: RunOptions<C>,
  run: string,
  nextSerial: () => number,
  onStall: () => void
): Promise<CaseResult> {
  const started = performance.now()
  const client = options.transport.client()
  const state: CaseState = { notes: [], cleanups: [], halted: false, ended: false, failedAt: -1 }
  const base: CaseResult = {
    id: c.id,
    title: c.title,
    level: c.level,
    verdict: 'pass',
    notes: state.notes,
    exchanges: client.exchanges,
    ms: 0
  }
  const finish = (result: Partial<CaseResult>): CaseResult => {
    const done = { ...base, ...result, ms: Math.round(performance.now() - started) }
    return finished(done, c, options, client, state.failedAt)
  }
  const skipped = await skipReason(c, options)
  if (skipped !== undefined) {
    client.close()
    return finish({ verdict: 'skip', reason: skipped })
  }
  const ctx = caseContext(options, client, state, run, nextSerial)
  // OT-A01's exact statuses bind decision cases, and every case of a --strict run.
  client.exact = options.strict || c.level === 'decision'
  const outcome = await runBody(c, ctx, options, state)
  state.ended = true
  for (const fn of state.cleanups.reverse()) {
    try {
      await fn()
    } catch {
      state.notes.push('a cleanup step failed; the target may hold debris of this case')
    }
  }
  client.close()
  if (client.stalled !== undefined) onStall()
  return finish(outcome)
}

/**
 * A finished case's result as a report shows it: no credential, whatever a failure quotes; a failure with the curl
 * command of the exchange it failed at, and the reason it was expected to fail if it was.
 */
function finished<C extends RecordingClient> (
  done: CaseResult,
  c: ConformanceCase<C>,
  options: RunOptions<C>,
  client: C,
  failedAt: number
): CaseResult {
  for (const key of ['reason', 'expected', 'actual'] as const) {
    if (done[key] !== undefined) done[key] = client.redact(done[key]!)
  }
  done.notes = done.notes.map((note) => client.redact(note))
  const last = failedAt >= 0 ? client.exchanges[failedAt] : undefined
  if (done.verdict === 'fail' || done.verdict === 'informational') {
    if (last !== undefined) done.curl = options.transport.curl(last)
    const expected = options.expectFailures.get(c.id) ?? options.expectFailures.get(requirementOf(c.id))
    if (expected !== undefined) done.expectedFailure = expected
  }
  return done
}

/** Why a case is skipped before it starts: it needs what the run lacks, or it writes in a read-only run. */
async function skipReason<C extends RecordingClient> (
  c: ConformanceCase<C>,
  options: RunOptions<C>
): Promise<string | undefined> {
  // A slow case runs with --slow, or at once where time is virtual.
  const virtual = options.control !== undefined && (await options.control.virtualClock())
  const missing = (c.needs ?? []).find(
    (need) => (need === 'control' && options.control === undefined) || (need === 'slow' && !options.slow && !virtual)
  )
  if (missing !== undefined) {
    return missing === 'control'
      ? "needs the target's control API (--control URL)"
      : `takes minutes in real time: run with --slow, or ${virtualHint(options.control)}`
  }
  if (c.writes === true && options.readOnly === true) {
    return 'changes what the target holds (posts, syncs, seats); --read-only skips it'
  }
  return undefined
}

/** What a case runs with: its client, the control API scoped to it, its seeds, names, notes, cleanups and clock. */
function caseContext<C extends RecordingClient> (
  options: RunOptions<C>,
  client: C,
  state: CaseState,
  run: string,
  nextSerial: () => number
): CaseContext<C> {
  // A case that runs out of time is halted: its requests, control calls and waits fail at once, so that it stops
  // before its cleanups run and never reaches into the cases after it.
  const control = options.control?.scoped(() => { if (state.halted) throw new CaseHalted() })
  return {
    client,
    control,
    fc: (overrides = {}) => ({
      numRuns: options.runs,
      ...overrides,
      seed: options.seed,
      ...(options.path === undefined ? {} : { path: options.path })
    }),
    uid: (label = 'x') =>
      `r${run}-${label
        .toLowerCase()
        .replace(/[^a-z0-9-]/g, '-')
        .slice(0, 20)}${nextSerial()}`,
    // A cleanup offered after the case ended (a halted case still unwinding) has nothing of its own to clean.
    cleanup: (fn) => {
      if (!state.ended) state.cleanups.push(fn)
    },
    note: (text) => {
      state.notes.push(text)
    },
    virtualTime: async () => options.control !== undefined && (await options.control.virtualClock()),
    readOnly: options.readOnly === true,
    elapse: async (ms) => {
      if (control !== undefined && (await control.virtualClock())) {
        await control.advance(ms)
        return
      }
      if (ms > SHORT_REAL_WAIT_MS && !options.slow) throw new CaseSkip(`needs ${Math.round(ms / 1000)} s of the target's time: run with --slow, or ${virtualHint(options.control)}`)
      await new Promise((resolve) => setTimeout(resolve, ms))
      if (state.halted) throw new CaseHalted()
    }
  }
}

/** Runs the case's body against its time limit; a body out of time is halted and given a grace period to unwind. */
async function runBody<C extends RecordingClient> (
  c: ConformanceCase<C>,
  ctx: CaseContext<C>,
  options: RunOptions<C>,
  state: CaseState
): Promise<Partial<CaseResult>> {
  const client = ctx.client
  const timeoutMs = options.caseTimeoutMs ?? DEFAULT_CASE_TIMEOUT_MS
  let outcome: Partial<CaseResult>
  let timer: NodeJS.Timeout | undefined
  const body = (async () => { await c.run(ctx) })()
  let bodyDone = false
  body.then(() => { bodyDone = true }, () => { bodyDone = true })
  let timedOut = false
  try {
    await Promise.race([
      body,
      new Promise((_resolve, reject) => {
        timer = setTimeout(() => {
          timedOut = true
          reject(new CaseFailure(`the case did not finish within ${timeoutMs} ms`, 'a finished case', 'no end'))
        }, timeoutMs)
      })
    ])
    outcome = { verdict: 'pass' }
  } catch (err) {
    state.failedAt = client.exchanges.length - 1
    outcome = failure(err)
    // SUITE-01: a run that cannot go on fails, whatever the level of the case that found it.
    const informational = c.level === 'decision' && !options.strict && client.stalled === undefined
    if (outcome.verdict === 'fail' && informational) outcome.verdict = 'informational'
  } finally {
    clearTimeout(timer)
  }
  if (timedOut) await unwindHalted(body, () => bodyDone, client, state)
  return outcome
}

/** Halts a body out of time: it fails at its next request or wait; its cleanups run once it has, or after a grace. */
async function unwindHalted (
  body: Promise<void>,
  bodyDone: () => boolean,
  client: RecordingClient,
  state: CaseState
): Promise<void> {
  const halt = (on: boolean): void => {
    state.halted = on
    client.halt(on)
  }
  halt(true)
  let grace: NodeJS.Timeout | undefined
  await Promise.race([
    body.catch(() => undefined),
    new Promise((resolve) => {
      grace = setTimeout(resolve, HALT_GRACE_MS)
    })
  ])
  clearTimeout(grace)
  if (!bodyDone()) {
    state.notes.push(
      `the case was still unwinding ${HALT_GRACE_MS / 1000} s after its time ran out; its cleanups ran anyway`
    )
  }
  halt(false)
}

/** How a run gets a virtual clock: a control API to one, or (when the control API has a real clock) a restart. */
function virtualHint (control: ControlClient | undefined): string {
  return control === undefined
    ? 'give the target a virtual clock and its control API (--control)'
    : 'start the target with a virtual clock (orbtest up --clock virtual)'
}

/** How long a halted case is given to unwind before its cleanups run. */
const HALT_GRACE_MS = 10_000

// fast-check reports `{ seed: N, path: "…" }` in its message; a CaseFailure thrown inside a property is its cause.
function failure (err: unknown): Partial<CaseResult> {
  const cause = (err as { cause?: unknown }).cause
  // fast-check wraps what a property threw: a skip met inside a property is still a skip.
  if (err instanceof CaseSkip) return { verdict: 'skip', reason: err.message }
  if (cause instanceof CaseSkip) return { verdict: 'skip', reason: cause.message }
  const message = err instanceof Error ? err.message : String(err)
  const replay = /seed: (-?\d+), path: "([^"]+)"/.exec(message)
  const inner = err instanceof CaseFailure ? err : cause instanceof CaseFailure ? cause : undefined
  const result: Partial<CaseResult> = {
    verdict: 'fail',
    reason:
      inner?.message ??
      (cause instanceof Error ? `${firstLine(message)}: ${firstLine(cause.message)}` : firstLine(message))
  }
  if (inner !== undefined) {
    result.expected = inner.expected
    result.actual = inner.actual
  }
  if (replay !== null) result.replay = { seed: Number(replay[1]), path: replay[2]! }
  const counterexample = /Counterexample: (.*)/.exec(message)
  if (counterexample !== null && inner === undefined) result.actual = counterexample[1]!.slice(0, 2000)
  return result
}

const firstLine = (text: string): string => text.split('\n', 1)[0]!.slice(0, 500)

/** Whether a run passed: no required case (nor, with --strict, decision) failed unless it was expected to. */
export function runPassed (results: readonly CaseResult[]): boolean {
  return results.every((r) => r.verdict !== 'fail' || r.expectedFailure !== undefined)
}
