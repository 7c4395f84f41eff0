// What every check of the bot suite shares: its type and a few helpers. A file of its own beside checks.ts, which
// gathers every check: the files of checks it gathers import these, and in checks.ts they would make an import cycle.
import type { CheckDef } from '../core/check.js'
import type { JournalEntry, JournalExchange, Millis } from '../core/journal.js'
import type { OrbModel } from './model.js'

/** A check of the bot suite: every check reads every entry (a bot's traffic is light). */
export type OrbCheck = CheckDef<OrbModel, Record<string, never>>

/** Where a violation happened: the entry's number and time. */
export const at = (e: { seq: number, at: Millis }): { seq: number, at: Millis } => ({ seq: e.seq, at: e.at })

/** The marks of a delivery or event the bot could only have from it (its event id, its message id, its text). */
export function carries (e: JournalExchange, marks: readonly string[]): string | undefined {
  return marks.find((m) => m.length >= 4 && (e.target.includes(m) || (e.body ?? '').includes(m)))
}

/** A journal entry is an action of this name. */
export function isAction (e: JournalEntry, name: string): e is Extract<JournalEntry, { kind: 'action' }> {
  return e.kind === 'action' && e.name === name
}

export { judged, onItsWay } from '../core/check.js'
