import type { OrbFault } from '../../../../src/orb-mock/faults.js'
import type { ConformanceCase } from '../../core/case.js'
import type { OrbBotClient } from '../transport.js'
import { cursorCases, cursorDecisions } from './events/cursor.js'
import { eventFieldCases, eventFieldDecisions } from './events/event-fields.js'
import { interactionCases, interactionDecisions } from './events/interactions.js'
import { queueCases, queueDecisions } from './events/queue.js'
import { rotationDecisions } from './events/token-rotation.js'
import { webhookCases, webhookDecisions } from './events/webhooks.js'

// Events (ORB-043..054), interactions (ORB-066..072), webhooks (ORB-090..098) and the decisions around them (ORB-A05,
// A09..A11, A13, A14, A22). Events of the full app accumulate across the run: every case starts from the current end.
// The cases live by topic in ./events/; this keeps them in ledger order: the spec's sections, then the decisions.

export const eventsCases: Array<ConformanceCase<OrbBotClient>> = [
  // 2.5 Events
  ...cursorCases, // ORB-043..047
  ...queueCases, // ORB-049..051
  ...eventFieldCases, // ORB-052..054
  // 2.7 Interactions
  ...interactionCases, // ORB-066..072
  // 2.11 Webhooks
  ...webhookCases, // ORB-090..098
  // Decisions
  ...queueDecisions, // ORB-A05
  ...cursorDecisions, // ORB-A09
  ...eventFieldDecisions, // ORB-A10
  ...webhookDecisions, // ORB-A11
  ...interactionDecisions, // ORB-A13, A14
  ...rotationDecisions // ORB-A22
]

/** Which cases each fault of the fake Orb must make fail. */
export const eventsFaults: Partial<Record<OrbFault, string[]>> = {
  'cursor-off-by-one': ['ORB-045', 'ORB-045.follow'],
  'signature-parsed-body': ['ORB-091'],
  'no-webhook-retry': ['ORB-093'],
  'late-respond-accepted': ['ORB-068']
}
