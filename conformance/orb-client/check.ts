import type { CheckDef, Outcomes } from '../client/check.js'
import type { JournalEntry, JournalExchange, Millis } from '../client/journal.js'
import { windowMs } from '../client/windows.js'
import type { OrbModel } from './model.js'

/** A check of the bot suite: every check reads every entry (a bot's traffic is light). */
export type OrbCheck = CheckDef<OrbModel, Record<string, never>>

/** Where a violation happened: the entry's number and time. */
export const at = (e: { seq: number, at: Millis }): { seq: number, at: Millis } => ({ seq: e.seq, at: e.at })

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
 * its way before the bot read that reply (the `on-its-way` excuse, widened by the measurement error).
 */
export function onItsWay (model: OrbModel, since: Millis, at: Millis): boolean {
  return at - since < windowMs('on-its-way') + model.error(since, at)
}

/** The marks of a delivery or event the bot could only have from it (its event id, its message id, its text). */
export function carries (e: JournalExchange, marks: readonly string[]): string | undefined {
  return marks.find((m) => m.length >= 4 && (e.target.includes(m) || (e.body ?? '').includes(m)))
}

/** A journal entry is an action of this name. */
export function isAction (e: JournalEntry, name: string): e is Extract<JournalEntry, { kind: 'action' }> {
  return e.kind === 'action' && e.name === name
}
