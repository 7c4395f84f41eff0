import type { CheckDef, CheckInfo, Tally } from '../client/check.js'
import type { Millis } from '../client/journal.js'
import type { OrbModel } from './model.js'

/** A check of the bot suite. */
export type OrbCheck = CheckDef<OrbModel>

/** Makes a check definition from its info and a class whose instances judge one scenario. */
export function check (info: CheckInfo, make: (info: CheckInfo) => Tally<OrbModel>): OrbCheck {
  return { ...info, create: () => make(info) }
}

/** Where a violation happened: the entry's number and time. */
export const at = (e: { seq: number, at: Millis }): { seq: number, at: Millis } => ({ seq: e.seq, at: e.at })
