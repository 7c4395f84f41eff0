import type { CheckDef } from '../../core/check.js'
import type { JournalExchange, Millis } from '../../core/journal.js'
import type { OrbtileModel } from '../model.js'

/**
 * A check of the Orbtile suite. Every check reads every entry and passes over what is not its own: a check shown
 * only some routes would silently miss entries it must see, for a saving too small to measure (each check turns a
 * heartbeat away in a few property reads, once the exchange's view is made).
 */
export type OrbtileCheck = CheckDef<OrbtileModel, Record<string, never>>

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
