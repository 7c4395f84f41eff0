import type { CheckFinding, ClauseCount, JournalEntry, Level, Millis, ScenarioReport, Violation } from './journal.js'
import { windowMs, type WindowId } from './windows.js'

export type { Level } from './journal.js'

/** One clause of a rule: what exactly is judged, how a violation of it counts, and what makes it arise. */
export interface Clause {
  /** Short, unique within the check: shown as `OT-147.withdrawn`. */
  key: string
  /** The clause, in the ledger's words. */
  text: string
  level: Level
  /** For a `decision` clause, what it rests on: a decision's id (`OT-A20`, `OTC-01`) or a window's. */
  basis?: string
  /** For a `decision` clause of a MUST rule, why its finding is not a failure, in words the report shows. */
  why?: string
  /** What makes its situation arise in a run (a tour, a step): the not-exercised note says it. */
  exercise: string
}

/**
 * One client rule as plain data: `--list`, the docs and the reports are all written from this object. `judge` makes
 * the function over the journal that judges one scenario (or one judged run): it is fed every entry in the order
 * they completed, with the suite's model `M` already updated for it.
 */
export interface CheckDef<M, R = unknown> {
  /** A ledger id (`OT-113`) or one of orbtest's own client decisions (`OTC-03`). */
  id: string
  title: string
  /** The rule's level as the spec states it (or `decision` for a rule of orbtest's). */
  level: Level
  /** The ledger sentence or sentences the check enforces. */
  ledger: string
  clauses: readonly Clause[]
  /** The rows of the windows table (windows.ts) its verdicts rest on. */
  windows: readonly WindowId[]
  /** What it reads of the journal (each suite says what that can be). */
  reads: R
  judge(): Judge<M>
  /**
   * For a rule about behaviour ("handled exactly as without it"): judges a tour's journal against its twin's, the
   * same world without the variant. Such a check's `judge` records nothing; the engine calls this once both are
   * played.
   */
  compare?(variant: ScenarioReport, twin: ScenarioReport, out: Outcomes): void
}

/** The function over the journal, as a fold: `observe` each entry; `open` judges what is still open at `end`. */
export interface Judge<M> {
  observe(entry: JournalEntry, model: M, out: Outcomes): void
  /**
   * What is still open at `end` (a heartbeat owed, an event never acknowledged), judged without changing the
   * judge's state: the live verdicts and the report call it alike, so they agree at every moment.
   */
  open?(model: M, end: Millis, out: Outcomes): void
}

/** What a judge records: the situations that arose, by clause, and what it saw in them. */
export interface Outcomes {
  /** The clause's situation arose `n` times and the rule held (or was judged). */
  exercised(clause: string, n?: number): void
  /** The clause was broken, as the journal proves. */
  violation(clause: string, v: Violation): void
  /** The clause's situation arose, and the judge cannot tell whether it held (the reason in `v.message`). */
  inconclusive(clause: string, v: Violation): void
  /** A line for the reader (what was seen, why something was not judged). */
  note(text: string): void
}

/**
 * Violations and inconclusive cases kept per check and scenario, besides the first of each clause (so that a MUST
 * broken after five cases of a decision is still the case the verdict cites); the rest are counted.
 */
export const KEPT = 5

let cited = 0
/**
 * Violations and inconclusive cases recorded by every check in this process so far: a reader that compares it
 * before and after feeding one entry learns whether that entry is cited, and keeps it as evidence.
 */
export function citedSoFar (): number {
  return cited
}

/** The outcomes of one check over one scenario: counts by clause and the first cases kept. */
export class Tally implements Outcomes {
  readonly clauses: Record<string, ClauseCount> = {}
  readonly violations: Violation[] = []
  readonly inconclusiveCases: Violation[] = []
  notes: string[] = []

  exercised (clause: string, n = 1): void {
    this.#count(clause).exercised += n
  }

  violation (clause: string, v: Violation): void {
    cited++
    const first = this.#count(clause).violations++ === 0
    if (first || this.violations.length < KEPT) this.violations.push({ ...v, clause })
  }

  inconclusive (clause: string, v: Violation): void {
    cited++
    const first = this.#count(clause).inconclusive++ === 0
    if (first || this.inconclusiveCases.length < KEPT) this.inconclusiveCases.push({ ...v, clause })
  }

  note (text: string): void {
    if (!this.notes.includes(text)) this.notes.push(text)
  }

  /** A copy to add the open cases to, leaving this one as the journal left it. */
  copy (): Tally {
    const t = new Tally()
    for (const [k, c] of Object.entries(this.clauses)) t.clauses[k] = { ...c }
    t.violations.push(...this.violations)
    t.inconclusiveCases.push(...this.inconclusiveCases)
    t.notes = [...this.notes]
    return t
  }

  #count (clause: string): ClauseCount {
    let c = this.clauses[clause]
    if (c === undefined) {
      c = { exercised: 0, violations: 0, inconclusive: 0 }
      this.clauses[clause] = c
    }
    return c
  }
}

/** A check judging one scenario: its judge, fed entry by entry, and the outcomes so far. */
export class CheckRun<M> {
  readonly def: CheckDef<M>
  readonly #judge: Judge<M>
  readonly #tally = new Tally()

  constructor (def: CheckDef<M>) {
    this.def = def
    this.#judge = def.judge()
  }

  observe (entry: JournalEntry, model: M): void {
    this.#judge.observe(entry, model, this.#tally)
  }

  /** The finding at `end`: what the journal showed, and what is still open then. Changes nothing. */
  finding (model: M, end: Millis): CheckFinding {
    const tally = this.#tally.copy()
    this.#judge.open?.(model, end, tally)
    return findingOf(this.def, tally)
  }
}

/**
 * The verdict of one check over one scenario, from its clauses: a violation of a MUST clause fails; of a SHOULD or
 * a decision, it is non-strict; a case the judge could not settle is inconclusive; the rule held in every case
 * that arose is a pass; none arose is not exercised.
 */
export function findingOf (def: CheckDef<any>, t: Tally): CheckFinding {
  const level = (key: string): Level => clauseOf(def, key).level
  const counts = Object.entries(t.clauses)
  const sum = (f: (c: ClauseCount) => number): number => counts.reduce((n, [, c]) => n + f(c), 0)
  const broken = counts.filter(([, c]) => c.violations > 0).map(([k]) => level(k))
  const exercised = sum((c) => c.exercised + c.violations + c.inconclusive)
  const base = {
    id: def.id,
    title: def.title,
    exercised,
    violationCount: sum((c) => c.violations),
    inconclusiveCount: sum((c) => c.inconclusive),
    clauses: t.clauses,
    violations: [...t.violations].sort((a, b) => rank(level(a.clause!)) - rank(level(b.clause!))),
    inconclusive: t.inconclusiveCases,
    ...(t.notes.length === 0 ? {} : { note: t.notes.join('; ') })
  }
  if (def.level === 'info') return { ...base, verdict: 'informational' }
  if (broken.includes('MUST')) return { ...base, verdict: 'fail' }
  if (broken.length > 0) return { ...base, verdict: 'non-strict' }
  if (base.inconclusiveCount > 0) return { ...base, verdict: 'inconclusive' }
  if (exercised > 0) return { ...base, verdict: 'pass' }
  const needs = def.clauses.map((c) => c.exercise).filter((e, i, all) => all.indexOf(e) === i)
  return { ...base, verdict: 'not-exercised', note: t.notes.length > 0 ? base.note! : `needs ${needs.join('; or ')}` }
}

/** MUST violations first: the one a report shows is the one that decides. */
function rank (level: Level): number {
  return level === 'MUST' ? 0 : level === 'SHOULD' ? 1 : 2
}

/** The findings of the checks that compare a tour with its twin (ClientSuite.compare). */
export function compareTwins (
  defs: ReadonlyArray<CheckDef<any>>,
  variant: ScenarioReport,
  twin: ScenarioReport
): CheckFinding[] {
  return defs.filter((d) => d.compare !== undefined).map((d) => {
    const tally = new Tally()
    d.compare!(variant, twin, tally)
    return findingOf(d, tally)
  })
}

/** `+1.234 s`, how the reports give a time in a scenario. */
export function seconds (ms: Millis): string {
  return `${(ms / 1000).toFixed(3)} s`
}

/** A clause of a check, by key (a typo is a bug: it throws). */
export function clauseOf (def: CheckDef<any>, key: string): Clause {
  const clause = def.clauses.find((c) => c.key === key)
  if (clause === undefined) throw new Error(`${def.id} has no clause ${key}`)
  return clause
}

/**
 * Why a request early after a 429 may not have ignored it, if it may not (OTC-11): HTTP/1.1 sends a request on the
 * 429's own connection only once that reply was read, but one on another connection may have left before the client
 * read it, however late it came (a starved client's own queue can hold it for seconds). On the same connection, an
 * early request within the judge's own stalls is not settled either.
 */
export function unsureRetry (
  closed: { end: Millis, connection: number },
  e: { at: Millis, connection: number },
  early: Millis,
  model: { lag(from: Millis, to: Millis): Millis }
): string | undefined {
  if (e.connection !== closed.connection) {
    return 'sent on another connection: it may have left before the client read the 429 (only its own connection shows that)'
  }
  return early <= windowMs('timer-slack') + model.lag(closed.end, e.at)
    ? 'early by less than the judge\'s own stalls (a client kept from a CPU is only later)'
    : undefined
}

/** Records a case that is a violation unless `unsure` says why it may not be: then it is inconclusive. */
export function judged (
  out: Outcomes,
  clause: string,
  v: { seq?: number, at?: Millis, message: string, expected: string, actual: string },
  unsure: string | undefined
): void {
  if (unsure === undefined) out.violation(clause, v)
  else out.inconclusive(clause, { ...v, message: `${v.message}; not judged: ${unsure}` })
}

/**
 * Whether a request at `at`, on another connection than a reply handed to the socket at `since`, may have been on
 * its way before the client read that reply: within the `on-its-way` excuse, widened by the judge's stalls and by
 * the time the client was busy (running, or waiting for a CPU) in between. Such a request is inconclusive.
 */
export function onItsWay (model: { inFlight(from: Millis, to: Millis): Millis }, since: Millis, at: Millis): boolean {
  return at - since < windowMs('on-its-way') + model.inFlight(since, at)
}
