import type { Fault } from '../../../../src/orbtile-mock/faults.js'
import type { ConformanceCase } from '../orbtile-case.js'
import { fieldCases, fieldDecisions } from './registration/fields.js'
import { iconCases, iconDecisions } from './registration/icon.js'
import { idCases } from './registration/ids.js'
import { leaseDecisions } from './registration/lease-decisions.js'
import { tokenCases } from './registration/leases.js'
import { paletteDecisions } from './registration/palette-decisions.js'
import { paletteCases } from './registration/palette.js'
import { replyCases, replyDecisions } from './registration/replies.js'

/**
 * Registration, palette, icon, URL schemes, capabilities, leases and the user's settings: the [server] and [both]
 * requirements of ledger 1.2 (OT-018..023), OT-028 and 1.5 (OT-041..088), and the decisions OT-A06..A15.
 *
 * Every lease a case starts is ended when the case ends (or by the case itself). Rules over inputs are properties
 * whose oracle is the spec's own schema: a body is accepted exactly when `AdapterRegistration` accepts it.
 * The cases live by topic in ./registration/; this keeps them in the order a run takes them.
 */
export const registrationCases: ConformanceCase[] = [
  ...idCases, // OT-041..044
  ...tokenCases, // OT-018..028
  ...fieldCases, // OT-045..055
  ...replyCases, // OT-056..061
  ...iconCases, // OT-062..069
  ...paletteCases, // OT-071..088
  // Decisions
  ...leaseDecisions, // OT-A06..A08
  ...replyDecisions, // OT-A09..A11
  ...paletteDecisions, // OT-A12, A13
  ...iconDecisions, // OT-A14
  ...fieldDecisions // OT-A15
]

/** Which cases each fault of this area must make fail. */
export const registrationFaults: Partial<Record<Fault, string[]>> = {
  'reserved-id-allowed': ['OT-044'],
  'lease-token-ignored': ['OT-020', 'OT-021', 'OT-A06'],
  'hue-edge': ['OT-072', 'OT-073', 'OT-A12.b']
}
