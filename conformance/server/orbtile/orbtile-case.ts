import {
  defineCase as defineAnyCase,
  type CaseContext as AnyCaseContext,
  type ConformanceCase as AnyConformanceCase
} from '../core/case.js'
import type { OrbtileClient } from './transport.js'

export { CaseFailure, CaseSkip, SHORT_REAL_WAIT_MS } from '../core/case.js'

/** What an Orbtile case runs with: the core's context around the suite's Unix-socket client. */
export type CaseContext = AnyCaseContext<OrbtileClient>

/** One case of the Orbtile suite. */
export type ConformanceCase = AnyConformanceCase<OrbtileClient>

/** Defines an Orbtile case (the core's `defineCase` with the suite's client). */
export const defineCase = (c: ConformanceCase): ConformanceCase => defineAnyCase(c)

/**
 * A fresh adapter id for the case: lowercase reverse-DNS under org.orbtest.conformance, unique to the run (the user's
 * settings for an id outlive its leases, OT-A09, so a second run must not meet the first run's choices).
 */
export function adapterId (ctx: AnyCaseContext<OrbtileClient>, label = 'a'): string {
  // uid is `r<run>-<label><serial>`; the id keeps the run as its own label.
  return `org.orbtest.conformance.${ctx.uid(label).replace('-', '.')}`
}
