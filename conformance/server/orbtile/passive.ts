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

/** The first of a validator's errors, as a person reads it. */
function firstError (def: string, value: unknown): string | undefined {
  const validate = validatorFor(def)
  if (validate(value)) return undefined
  const e = validate.errors?.[0]
  if (e === undefined) return `not a ${def}`
  return `${e.instancePath === '' ? '' : `${e.instancePath} `}${e.message ?? ''}`.trim()
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
  const body = parsed(x.reply)
  if (x.status >= 400) {
    errorFindings(x, body, add)
    return found
  }
  const reply = REPLIES[routeOf(x.method, x.target).route]
  if (reply === undefined || x.status >= 300) return found
  const problem = body === undefined ? 'not JSON' : firstError(reply.def, body.value)
  if (problem !== undefined) add(reply.id, 'MUST', `the reply is not a ${reply.def}: ${problem}`)
  return found
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
  if (status !== x.status) add('OT-A01', 'decision', `${code} answered with ${x.status}, not ${status}`)
  const retry = x.replyHeaders['retry-after']
  if (x.status === 429 && (retry === undefined || !/^[1-9]\d*$/.test(retry))) {
    add('OT-A20', 'decision', `a 429 without a Retry-After of whole seconds (${retry ?? 'none'})`)
  }
}
