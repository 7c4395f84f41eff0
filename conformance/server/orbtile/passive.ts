// What an Orbtile server's replies show on their own, read off traffic it did not choose (`orbtest proxy`): each
// reply against the spec's schema for its route, each error against the spec's Error, and the few rules a single
// exchange proves. A finding is certain from the exchange alone; what rests on orbtest's decisions is marked so.
import type { TapExchange } from '../../../src/shared/tap.js'
import type { ServerFinding } from '../../client/core/journal.js'
import { ERROR_STATUS, validatorFor } from '../../../src/spec/orbtile.js'
import { routeOf } from '../../client/orbtile/model.js'

export type { ServerFinding }

/** The spec's reply for a route's success, and the rule that names it. */
const REPLIES: Record<string, { def: string, id: string }> = {
  info: { def: 'Info', id: 'OT-034' },
  register: { def: 'RegistrationReply', id: 'OT-041' },
  session: { def: 'SessionReply', id: 'OT-089' },
  events: { def: 'EventsReply', id: 'OT-131' }
}

const CODES: ReadonlySet<string> = new Set(Object.keys(ERROR_STATUS))

/** The first of a validator's errors: where, and as a person reads it. */
function firstError (def: string, value: unknown): { path: string, text: string } | undefined {
  const validate = validatorFor(def)
  if (validate(value)) return undefined
  const e = validate.errors?.[0]
  if (e === undefined) return { path: '', text: `not a ${def}` }
  return { path: e.instancePath, text: `${e.instancePath === '' ? '' : `${e.instancePath} `}${e.message ?? ''}`.trim() }
}

function parsed (text: string): { value: unknown } | undefined {
  try {
    return { value: JSON.parse(text) as unknown }
  } catch {
    return undefined
  }
}

/** What one exchange shows of the server; none for a reply that never came whole (nothing to read). */
export function serverFindings (x: TapExchange): ServerFinding[] {
  if (!x.finished) return []
  const what = `${x.method} ${x.target} -> ${x.status}`
  const found: ServerFinding[] = []
  const add = (id: string, level: ServerFinding['level'], message: string): void => {
    found.push({ id, level, request: x.request, what, message })
  }
  if (x.headers.origin !== undefined && x.status < 300) {
    add('OT-015', 'MUST', 'a request with an Origin header was served; the spec refuses it with forbidden_origin')
  }
  // A reply without a body (to HEAD, a 204 or a 304) shows no schema to hold it to.
  if (x.method === 'HEAD' || x.status === 204 || x.status === 304) return found
  const body = parsed(x.reply)
  if (x.status >= 400) {
    errorFindings(x, body, add)
    return found
  }
  const reply = REPLIES[routeOf(x.method, x.target).route]
  if (reply === undefined || x.status >= 300) return found
  const problem = body === undefined ? undefined : firstError(reply.def, body.value)
  if (body === undefined) add(reply.id, 'MUST', `the reply is not a ${reply.def}: not JSON`)
  else if (problem !== undefined) {
    add(ruleOf(reply, problem.path), 'MUST', `the reply is not a ${reply.def}: ${problem.text}`)
  }
  return found
}

/** The rule a schema failure breaks: Info's limits are OT-035's; the rest of a reply is its route's rule. */
function ruleOf (reply: { def: string, id: string }, path: string): string {
  return reply.def === 'Info' && path.startsWith('/limits') ? 'OT-035' : reply.id
}

/** An error's body (OT-149), its code (OT-150), the status for that code (OT-A01) and a 429's Retry-After (OT-A20). */
function errorFindings (
  x: TapExchange,
  body: { value: unknown } | undefined,
  add: (id: string, level: ServerFinding['level'], message: string) => void
): void {
  const error = (body?.value as { error?: { code?: unknown, message?: unknown } } | undefined)?.error
  const shaped = typeof error === 'object' && error !== null
  if (!shaped || typeof error.message !== 'string' || typeof error.code !== 'string') {
    add('OT-149', 'MUST', 'the error reply is not {"error": {"code", "message"}}')
    return
  }
  const code = error.code
  if (!CODES.has(code)) {
    add('OT-150', 'MUST', `the error code ${JSON.stringify(code)} is not one of the spec's`)
    return
  }
  const status = ERROR_STATUS[code as keyof typeof ERROR_STATUS]
  // OT-A01 answers a method a route does not have with 405 and bad_request.
  const allowed = x.status === status || (code === 'bad_request' && x.status === 405)
  if (!allowed) add('OT-A01', 'decision', `${code} answered with ${x.status}, not ${status}`)
  const retry = x.replyHeaders['retry-after']
  if (x.status === 429 && (retry === undefined || !/^[1-9]\d*$/.test(retry))) {
    add('OT-A20', 'decision', `a 429 without a Retry-After of whole seconds (${retry ?? 'none'})`)
  }
}
