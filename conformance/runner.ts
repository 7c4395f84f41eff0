import { randomBytes } from 'node:crypto'
import { CaseFailure, CaseSkip, requirementOf, SHORT_REAL_WAIT_MS, type CaseContext, type CaseResult, type ConformanceCase, type Exchange, type RecordingClient } from './case.js'
import type { ControlClient } from './control.js'
import { curlFor, OrbtileClient, type OrbtileTarget } from './orbtile/transport.js'
import { setExactStatus } from './strictness.js'

/** How a suite reaches its target: a fresh client per case, and a curl command that repeats one exchange. */
export interface SuiteTransport<C extends RecordingClient> {
  client(): C
  curl(exchange: Exchange): string
}

/** The Orbtile suite's transport: HTTP/1.1 over the target's Unix socket. */
export function orbtileTransport (target: OrbtileTarget, waitOut?: (seconds: number) => Promise<void>): SuiteTransport<OrbtileClient> {
  return { client: () => new OrbtileClient(target, waitOut), curl: (exchange) => curlFor(exchange, target) }
}

export interface RunOptions<C extends RecordingClient = OrbtileClient> {
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
  /** Runs before a case's cleanups (a suite's own debris, such as webhook deliveries still arriving). */
  afterCase?: () => Promise<void>
}

/** The cases a run selects, in suite order. */
export function selectCases<T extends { id: string }> (cases: readonly T[], grep: readonly string[]): T[] {
  if (grep.length === 0) return [...cases]
  return cases.filter((c) => grep.some((prefix) => c.id.startsWith(prefix) || requirementOf(c.id) === prefix))
}

/** Runs the selected cases one after another (they share one target) and returns every result. */
export async function runCases<C extends RecordingClient> (cases: readonly ConformanceCase<C>[], options: RunOptions<C>): Promise<CaseResult[]> {
  const selected = selectCases(cases, options.grep)
  const results: CaseResult[] = []
  let serial = 0
  // Adapter ids are fresh per run: the user's settings for an id outlive its leases (OT-A09), so a second run on the
  // same target must not meet the first run's allow and keypad choices.
  const run = randomBytes(3).toString('hex')
  for (const [index, c] of selected.entries()) {
    const result = await runOne(c, options, run, () => serial++)
    results.push(result)
    options.onResult?.(result, index, selected.length)
  }
  return results
}

async function runOne<C extends RecordingClient> (c: ConformanceCase<C>, options: RunOptions<C>, run: string, nextSerial: () => number): Promise<CaseResult> {
  const started = performance.now()
  const client = options.transport.client()
  const notes: string[] = []
  const cleanups: Array<() => unknown> = []
  const base: CaseResult = { id: c.id, title: c.title, level: c.level, verdict: 'pass', notes, exchanges: client.exchanges, ms: 0 }
  // The exchange a failure is reported with: the last one before the case's cleanups ran.
  let failedAt = -1
  const finish = (result: Partial<CaseResult>): CaseResult => {
    const done = { ...base, ...result, ms: Math.round(performance.now() - started) }
    // No credential reaches a report, whatever a failure quotes.
    for (const key of ['reason', 'expected', 'actual'] as const) if (done[key] !== undefined) done[key] = client.redact(done[key]!)
    const last = failedAt >= 0 ? client.exchanges[failedAt] : undefined
    if (done.verdict === 'fail' || done.verdict === 'informational') {
      if (last !== undefined) done.curl = options.transport.curl(last)
      const expected = options.expectFailures.get(c.id) ?? options.expectFailures.get(requirementOf(c.id))
      if (expected !== undefined) done.expectedFailure = expected
    }
    return done
  }
  // A slow case runs with --slow, or at once where time is virtual.
  const virtual = options.control !== undefined && await options.control.virtualClock()
  const missing = (c.needs ?? []).find((need) => (need === 'control' && options.control === undefined) || (need === 'slow' && !options.slow && !virtual))
  if (missing !== undefined) {
    client.close()
    return finish({ verdict: 'skip', reason: missing === 'control' ? 'needs the target\'s control API (--control URL)' : 'takes minutes in real time: run with --slow, or give the target a virtual clock (--control)' })
  }
  if (c.writes === true && options.readOnly === true) {
    client.close()
    return finish({ verdict: 'skip', reason: 'changes what the target holds (posts, syncs, seats); --read-only skips it' })
  }
  const ctx: CaseContext<C> = {
    client,
    control: options.control,
    fc: (overrides = {}) => ({ numRuns: options.runs, ...overrides, seed: options.seed, ...(options.path === undefined ? {} : { path: options.path }) }),
    adapterId: (label = 'a') => `org.orbtest.conformance.r${run}.${label.toLowerCase().replace(/[^a-z0-9-]/g, '-').slice(0, 20)}${nextSerial()}`,
    uid: (label = 'x') => `r${run}-${label.toLowerCase().replace(/[^a-z0-9-]/g, '-').slice(0, 20)}${nextSerial()}`,
    cleanup: (fn) => { cleanups.push(fn) },
    note: (text) => { notes.push(text) },
    virtualTime: async () => options.control !== undefined && await options.control.virtualClock(),
    elapse: async (ms) => {
      if (options.control !== undefined && await options.control.virtualClock()) {
        await options.control.advance(ms)
        return
      }
      if (ms > SHORT_REAL_WAIT_MS && !options.slow) throw new CaseSkip(`needs ${Math.round(ms / 1000)} s of the target's time: give it a virtual clock (--control) or run with --slow`)
      await new Promise((resolve) => setTimeout(resolve, ms))
    }
  }
  let outcome: Partial<CaseResult>
  let timer: NodeJS.Timeout | undefined
  // OT-A01's exact statuses bind decision cases, and every case of a --strict run.
  setExactStatus(options.strict || c.level === 'decision')
  try {
    await Promise.race([
      c.run(ctx),
      new Promise((_resolve, reject) => {
        timer = setTimeout(() => reject(new CaseFailure(`the case did not finish within ${options.caseTimeoutMs ?? 60_000} ms`, 'a finished case', 'no end')), options.caseTimeoutMs ?? 60_000)
      })
    ])
    outcome = { verdict: 'pass' }
  } catch (err) {
    failedAt = client.exchanges.length - 1
    outcome = failure(err)
    if (outcome.verdict === 'fail' && c.level === 'decision' && !options.strict) outcome.verdict = 'informational'
  } finally {
    clearTimeout(timer)
  }
  if (options.afterCase !== undefined) await options.afterCase().catch(() => undefined)
  for (const fn of cleanups.reverse()) {
    try {
      await fn()
    } catch {
      notes.push('a cleanup step failed; the target may hold debris of this case')
    }
  }
  client.close()
  return finish(outcome)
}

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
    reason: inner?.message ?? (cause instanceof Error ? `${firstLine(message)}: ${firstLine(cause.message)}` : firstLine(message))
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
