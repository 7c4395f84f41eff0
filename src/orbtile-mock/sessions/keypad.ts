import { ControlError } from '../../shared/control-error.js'
import type { Registration } from '../registration.js'
import type { PendingRequest, Session } from './agent.js'
import type { NewEvent } from './events.js'
import type { QuestionRequest } from './update.js'

/**
 * What the user's hands do on the keypad, as rules without state: what a tap opens, and what a decision says. The
 * session registry looks the session or request up, and emits the event. Refusals are the control API's
 * ControlError (not_found, conflict, bad_request), as these are the user's actions, not an adapter's requests.
 */

/** The user's answer to a pending request, as the control API takes it. */
export interface KeypadAnswer {
  decision?: unknown
  picks?: unknown
}

/**
 * OT-055, OT-144, OT-A15: what a tap on a session's key opens. With the `tap` capability and `eventOnly` nothing
 * opens; otherwise the session's openURL (only while the registration still lists its scheme) and its pid.
 */
export function tapOutcome (session: Session, registration: Registration | null | undefined):
{ tapCapable: boolean, opened: string | null, activated: number | null } {
  const tapCapable = registration?.capabilities.includes('tap') === true
  const opens = !tapCapable || registration?.tapBehavior !== 'eventOnly'
  const url = session.fields.openURL
  const scheme = url?.split(':')[0]?.toLowerCase()
  const listed = scheme !== undefined && registration?.urlSchemes.includes(scheme) === true
  const opened = opens && url !== null && listed ? url : null
  return { tapCapable, opened, activated: opens ? session.fields.pid : null }
}

/** OT-145, OT-146: the event a decision on `request` makes; refuses an answer that does not fit the request. */
export function decisionEvent (request: PendingRequest, session: Session, answer: KeypadAnswer): NewEvent {
  const { sessionId, expiresAt } = request
  const base = { sessionId, host: session.fields.host, requestId: request.id, expiresAt }
  if (request.kind === 'approval') {
    if (answer.decision !== 'allow' && answer.decision !== 'deny') {
      throw new ControlError('bad_request', 'an approval takes {"decision": "allow" | "deny"}')
    }
    return { type: 'approval', ...base, decision: answer.decision }
  }
  return { type: 'question', ...base, picks: checkPicks(request.content as QuestionRequest, answer.picks) }
}

// OT-146: one array per question, 1..4 unique indices each, every index below the option count, one for single-select.
function checkPicks (request: Pick<QuestionRequest, 'questions'>, picks: unknown): number[][] {
  const bad = (message: string): never => { throw new ControlError('bad_request', message) }
  if (!Array.isArray(picks) || picks.length !== request.questions.length) {
    bad(`picks must hold one array per question (${request.questions.length})`)
  }
  return (picks as unknown[]).map((pick, i) => {
    const question = request.questions[i]!
    if (!Array.isArray(pick) || pick.length < 1 || pick.length > 4) bad(`picks[${i}] must hold 1 to 4 option indices`)
    const indices = pick as unknown[]
    if (!indices.every((n) => Number.isInteger(n) && (n as number) >= 0 && (n as number) < question.options.length)) {
      bad(`picks[${i}] may only hold indices 0..${question.options.length - 1}`)
    }
    if (new Set(indices).size !== indices.length) bad(`picks[${i}] repeats an index`)
    if (question.multiSelect !== true && indices.length !== 1) {
      bad(`question ${i} is single-select: pick exactly one option`)
    }
    return indices as number[]
  })
}
