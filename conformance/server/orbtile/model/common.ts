/**
 * Plain models of the spec for the sessions area's model-based cases, written from the ledger (OT-089..146 and the
 * proposals OT-A17..A23, OT-A30), independent of the fake's code:
 *
 * - sessions and batches (sessions-model.ts, sessions-commands.ts): merge semantics, creation rules, one pending
 *   request per session, the request-id namespace, batch replace and its atomicity;
 * - the events cursor (events-model.ts, events-commands.ts): sequences, the cumulative ack, `after`, invalid cursors,
 *   taps and decisions via the user.
 *
 * Commands run against any target through a CaseContext; every reply is checked against the model, and with the
 * control API the target's stored sessions and requests too. This file holds what both models share.
 */
import fc from 'fast-check'
import { CaseFailure } from '../orbtile-case.js'
import { approval, question } from '../agent-sessions.js'
import type { Reply } from '../transport.js'

/** The session ids a model run uses. */
export const SIDS = ['a', 'b', 'c'] as const

/** The request ids a model run uses. */
export const RIDS = ['r1', 'r2', 'r3', 'r4'] as const

/** A request's kind, as the SessionUpdate field that carries it. */
export type Kind = 'approval' | 'question'
export const KINDS: readonly Kind[] = ['approval', 'question']

/** A request as sent: its id and its content (the same id with other content is `variant`). */
export interface Req {
  id: string
  variant: boolean
}

/** The body of a request as sent (its variant has other content under the same id). */
export const requestBody = (kind: Kind, r: Req): Record<string, unknown> =>
  kind === 'approval'
    ? approval(r.id, r.variant ? { commandSummary: 'rm -rf build' } : {})
    : question(
      r.id,
      r.variant ? { questions: [{ text: 'Which remote?', options: [{ label: 'origin' }, { label: 'fork' }] }] } : {}
    )

/** Any of the run's session ids. */
export const sidArb = fc.constantFrom(...SIDS)

/** Fails the command: what it sent, what the model expected, and the reply. */
export const fail = (what: string, expected: unknown, reply: Reply): never => {
  throw new CaseFailure(what, expected, `${reply.status} ${reply.text.slice(0, 400)}`)
}
