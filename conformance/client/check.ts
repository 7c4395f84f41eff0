import type { CheckFinding, CheckLevel, JournalEntry, Millis, Violation } from './journal.js'

/** Violations kept per check and scenario; the rest are counted. */
export const KEPT_VIOLATIONS = 5

/**
 * One client rule, judged from outside: it watches the journal go by (entries in the order they completed, with
 * the suite's model `M` of the protocol state already updated for each) and says what it saw when the run ends.
 * A check is made afresh for every scenario (and once for a judged run), so it keeps what it needs in itself.
 */
export interface ClientCheck<M> {
  observe(entry: JournalEntry, model: M): void
  /** The run is over at `end`: what is still open (a heartbeat owed, an event never acknowledged) is judged now. */
  finish(model: M, end: Millis): void
  finding(): CheckFinding
  /** Violations so far (cheap: read after every entry). */
  readonly violationCount: number
}

/** What `--list` and the reports know of a check before it runs. */
export interface CheckInfo {
  /** A ledger id (`OT-113`) or one of orbtest's own client decisions (`OTC-03`). */
  id: string
  title: string
  level: CheckLevel
  /** What a run must contain for the rule to be judged, for the not-exercised note. */
  exercise: string
}

export interface CheckDef<M> extends CheckInfo {
  create(): ClientCheck<M>
}

/**
 * The usual body of a check: counts what the rule applied to, keeps the first violations, and turns them into a
 * finding by the check's level. Checks extend it and call `applied()` and `violate()`.
 */
export abstract class Tally<M> implements ClientCheck<M> {
  readonly #info: CheckInfo
  #exercised = 0
  #count = 0
  /** Violations that rest on a decision of orbtest's (a stand-in for what the wire cannot show): informational. */
  #weak = 0
  readonly #kept: Violation[] = []
  /** Extra text for the finding (what was seen), set by the check. */
  protected note: string | undefined

  constructor (info: CheckInfo) {
    this.#info = info
  }

  abstract observe (entry: JournalEntry, model: M): void
  finish (_model: M, _end: Millis): void {}

  /** The rule applied once more (a request checked, an event handled). */
  protected applied (n = 1): void {
    this.#exercised += n
  }

  get violationCount (): number {
    return this.#count
  }

  /**
   * Records a violation. `weak` marks one judged through a stand-in of orbtest's (OTC-01): it counts as a decision,
   * informational unless --strict, whatever the check's level.
   */
  protected violate (v: Violation, weak = false): void {
    violations++
    this.#count++
    if (weak) this.#weak++
    if (this.#kept.length >= KEPT_VIOLATIONS) return
    this.#kept.push(weak ? { ...v, message: `${v.message} [a decision of orbtest's]` } : v)
  }

  finding (): CheckFinding {
    const { id, title, level, exercise } = this.#info
    const base = { id, title, exercised: this.#exercised, violations: [...this.#kept], violationCount: this.#count }
    if (level === 'info') return { ...base, verdict: 'informational', note: this.note ?? '' }
    if (this.#count > this.#weak) {
      return { ...base, verdict: level === 'required' ? 'fail' : level === 'should' ? 'non-strict' : 'informational' }
    }
    if (this.#count > 0) return { ...base, verdict: 'informational' }
    if (this.#exercised === 0) return { ...base, verdict: 'not-exercised', note: this.note ?? exercise }
    return { ...base, verdict: 'pass', ...(this.note === undefined ? {} : { note: this.note }) }
  }
}

let violations = 0
/**
 * Violations recorded by every check in this process so far: a reader that compares it before and after feeding
 * one entry to its checks learns whether that entry broke a rule, without asking each check.
 */
export function violationsSoFar (): number {
  return violations
}

/** `+1.234 s`, how the reports give a time in a scenario. */
export function seconds (ms: Millis): string {
  return `${(ms / 1000).toFixed(3)} s`
}
