/**
 * Time in the cases (OT-026, OT-112, OT-127, OT-129, OT-A08, OT-A21, OT-A22…): `ctx.elapse` advances a virtual
 * clock, or lets real time pass (short waits in every run, minutes only with --slow; the case is skipped otherwise).
 * On a real clock no case claims that something happened at an exact instant: a state due at a deadline is looked at
 * a little after it, and a state due before a deadline well before it.
 */
import { CaseSkip, type CaseContext } from './orbtile-case.js'

/** On a real clock, how long after a deadline its outcome is looked at (timers fire late, requests take time). */
export const REAL_SLACK_MS = 2000

/** On a real clock, how long before a deadline the state before it is looked at. */
export const REAL_MARGIN_MS = 5000

/** Lets the target's time pass until `performance.now()` reaches `at` (nothing when it has). */
export async function elapseUntil (ctx: CaseContext, at: number): Promise<void> {
  const left = at - performance.now()
  if (left > 0) await ctx.elapse(left)
}

/**
 * Runs the part of a case that waits minutes in real time. Skipped (no --slow), the case says what it checked before.
 */
export async function slowPart (checked: string, rest: () => Promise<void>): Promise<void> {
  try {
    await rest()
  } catch (err) {
    if (err instanceof CaseSkip) throw new CaseSkip(`checked in real time: ${checked}; the rest ${err.message}`)
    throw err
  }
}
