import type { Fault } from '../../../../src/orbtile-mock/faults.js'
import type { ConformanceCase } from '../orbtile-case.js'
import { batchCases, batchDecisions } from './sessions/batch.js'
import { eventCases, eventDecisions } from './sessions/events.js'
import { expiryCases } from './sessions/expiry.js'
import { otherFieldCases, pidDecisions } from './sessions/fields-other.js'
import { textDecisions, textFieldCases } from './sessions/fields-text.js'
import { limitDecisions } from './sessions/limits.js'
import { pollCases, pollDecisions } from './sessions/polls.js'
import { requestCases, requestDecisions } from './sessions/requests.js'
import { ttlCases, ttlDecisions } from './sessions/ttl.js'
import { updateCases, updateDecisions } from './sessions/updates.js'

/**
 * The sessions area: sessions, merge and TTL, batches, approvals and questions, the events poll (OT-089..148).
 * The cases live by topic in ./sessions/; this keeps them in ledger order: the spec's sections, then the decisions.
 */
export const sessionsCases: ConformanceCase[] = [
  // 1.6 Sessions, merge semantics and TTL
  ...updateCases, // OT-089..092.b, OT-A17.model
  ...textFieldCases, // OT-093..104
  ...otherFieldCases, // OT-105..111
  ...ttlCases, // OT-112, OT-112.b
  // 1.7 Batch replace
  ...batchCases, // OT-114..119, OT-A19.model
  // 1.8 Approvals, questions and request ids
  ...requestCases, // OT-120..126
  ...expiryCases, // OT-127..130
  // 1.9 Events poll, cursor and ack semantics, long polls
  ...pollCases, // OT-131..137, OT-A23.model
  ...eventCases, // OT-140..146
  // Decisions (OT-A16..A24, OT-A30)
  ...pidDecisions, // OT-A16
  ...updateDecisions, // OT-A17, A18
  ...ttlDecisions, // OT-A18.b
  ...batchDecisions, // OT-A19
  ...limitDecisions, // OT-A20, A21
  ...requestDecisions, // OT-A22
  ...pollDecisions, // OT-A23
  ...textDecisions, // OT-A24
  ...eventDecisions // OT-A30
]

/** Which cases each fault of this area must make fail. */
export const sessionsFaults: Partial<Record<Fault, string[]>> = {
  'sessions-off-by-one': ['OT-029', 'OT-A21', 'OT-A19'],
  'no-merge': ['OT-092', 'OT-092.b', 'OT-A17.model'],
  'batch-not-atomic': ['OT-A19', 'OT-A19.model'],
  'cursor-from-zero': ['OT-131', 'OT-143', 'OT-A23', 'OT-A23.b', 'OT-A23.model'],
  'ack-decreases': ['OT-136', 'OT-A23.model'],
  'no-poll-pending': ['OT-133', 'OT-133.b']
}
