import type { CheckDef } from '../../core/check.js'
import type { JournalExchange, Millis } from '../../core/journal.js'
import type { OrbtileModel, RouteKind } from '../model.js'

/**
 * What an Orbtile check reads: a busy judged run is mostly one route, and every check a heartbeat skips is time
 * saved. The observer shows a check only what it says here.
 */
export interface OrbtileReads {
  /** The routes whose exchanges it reads; every route when undefined. */
  routes?: readonly RouteKind[]
  /** Whether it reads the entries that are not exchanges (actions, output, malformed bytes): by default only a
   *  check that reads every route does. */
  others?: boolean
  /** Of single session updates, it reads only those that set or clear an approval or a question. */
  requestsOnly?: boolean
}

export type OrbtileCheck = CheckDef<OrbtileModel, OrbtileReads>

/** What a per-request rule found wrong with one request, and the clause it breaks. */
export interface Problem { clause: string, message: string, expected: string, actual: string }

/** A check judged on each request alone: every exchange exercises `clause`, and `test` says what is wrong. */
export function perRequest (
  def: Omit<OrbtileCheck, 'judge' | 'reads'>,
  clause: string,
  test: (e: JournalExchange, model: OrbtileModel) => Problem | undefined
): OrbtileCheck {
  return {
    ...def,
    reads: {},
    judge: () => ({
      observe (entry, model, out) {
        if (entry.kind !== 'exchange') return
        const problem = test(entry, model)
        if (problem === undefined) {
          out.exercised(clause)
          return
        }
        out.violation(problem.clause, at(entry, problem))
      }
    })
  }
}

/** A violation at an exchange, with the request named in its message. */
export function at (
  e: JournalExchange,
  p: { message: string, expected: string, actual: string }
): { seq: number, at: Millis, message: string, expected: string, actual: string } {
  return {
    seq: e.seq,
    at: e.at,
    message: `${e.method} ${e.target}: ${p.message}`,
    expected: p.expected,
    actual: p.actual
  }
}

export { judged, onItsWay } from '../../core/check.js'
