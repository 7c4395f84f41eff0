// What an Orb's replies show on their own, read off a bot's traffic through `orbtest proxy orb`: each success reply
// against the spec document's schema for its operation, each error against the spec's Error body, and a 429's
// Retry-After. A finding is certain from the exchange alone; what rests on orbtest's decisions is marked so.
import type { TapExchange } from '../../../src/shared/tap.js'
import type { ServerFinding } from '../../client/core/journal.js'
import { ORB_SPEC, orbReplyValidator } from '../../../src/spec/orb.js'
import { PROXY_ANSWERED, UNREAD, type DeliveryIn } from '../../../src/proxy/orb.js'
import { verifySignature } from './receiver.js'

/** The rule that states each operation's success reply, where the ledger gives one. */
const REPLY_RULES: Readonly<Record<string, string>> = {
  'GET /api/orb/directory': 'ORB-011',
  'GET /api/bot/v1/app': 'ORB-020',
  'POST /api/bot/v1/messages': 'ORB-024',
  'GET /api/bot/v1/messages': 'ORB-034',
  'DELETE /api/bot/v1/messages/{id}': 'ORB-039',
  'GET /api/bot/v1/events': 'ORB-043',
  'GET /api/bot/v1/commands': 'ORB-055'
}

/** Each path of the document as a pattern of its own (`{id}` stands for one segment). */
const PATHS: ReadonlyArray<{ path: string, pattern: RegExp }> = Object.keys(ORB_SPEC.paths).map((path) => ({
  path,
  pattern: new RegExp(`^${path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}$`)
}))

/** The document's `METHOD path` of a request, or undefined for one the document does not define. */
export function orbOperationOf (method: string, target: string): string | undefined {
  const path = target.split('?', 1)[0]!
  const found = PATHS.find((p) => p.pattern.test(path))
  if (found === undefined || ORB_SPEC.paths[found.path]?.[method.toLowerCase()] === undefined) return undefined
  return `${method.toUpperCase()} ${found.path}`
}

function parsed (text: string): { value: unknown } | undefined {
  try {
    return { value: JSON.parse(text) as unknown }
  } catch {
    return undefined
  }
}

type Add = (id: string, level: ServerFinding['level'], message: string) => void

/** What one exchange shows of the Orb; none for a reply that never came whole, or one the proxy made itself. */
export function orbServerFindings (x: TapExchange): ServerFinding[] {
  // Nor for one whose body the proxy could not read (cut at its copy's limit, or in an encoding it does not read).
  if (!x.finished || x.notes.some((n) => n.startsWith(PROXY_ANSWERED) || n.startsWith(UNREAD))) return []
  const found: ServerFinding[] = []
  const what = `${x.method} ${x.target.split('?', 1)[0]!} -> ${x.status}`
  const add: Add = (id, level, message) => { found.push({ id, level, request: x.request, what, message }) }
  // Outside the API (a favicon, a health page), the spec says nothing of the reply; a bodiless one shows nothing.
  if (!x.target.startsWith('/api/') || x.method === 'HEAD' || x.status === 204 || x.status === 304) return found
  const body = parsed(x.reply)
  if (x.status >= 400) errorFindings(x, body, add)
  else if (x.status === 200) replyFindings(x, body, add)
  return found
}

/** A success reply against its operation's schema in the document, where the ledger states that reply. */
function replyFindings (x: TapExchange, body: { value: unknown } | undefined, add: Add): void {
  const operation = orbOperationOf(x.method, x.target)
  const rule = operation === undefined ? undefined : REPLY_RULES[operation]
  if (operation === undefined || rule === undefined) return
  const [method, path] = operation.split(' ') as [string, string]
  const validate = orbReplyValidator(method, path)
  if (validate === undefined) return
  if (body === undefined) {
    add(rule, 'MUST', 'the reply is not JSON')
  } else if (!validate(body.value)) {
    const e = validate.errors?.[0]
    const where = e === undefined ? '' : `${e.instancePath === '' ? '/' : e.instancePath} ${e.message ?? ''}`
    add(rule, 'MUST', `the reply breaks the spec's schema: ${where}`.trim())
  }
}

/** An error's body (ORB-101), its code for its status (ORB-A01) and a 429's Retry-After (ORB-099). */
function errorFindings (x: TapExchange, body: { value: unknown } | undefined, add: Add): void {
  const error = (body?.value as { error?: { code?: unknown, message?: unknown } } | undefined)?.error
  const shaped = typeof error === 'object' && error !== null
  if (!shaped || typeof error.message !== 'string' || !Number.isInteger(error.code)) {
    add('ORB-101', 'MUST', 'the error reply is not {"error": {"message": <string>, "code": <integer>}}')
  } else if (error.code !== x.status) {
    add('ORB-A01', 'decision', `the error's code is ${String(error.code)}, not its status ${x.status}`)
  }
  const retry = x.replyHeaders['retry-after']
  if (x.status === 429 && (retry === undefined || !/^\d+$/.test(retry.trim()))) {
    add('ORB-099', 'MUST', `a 429 without an integer Retry-After (${retry ?? 'none'})`)
  }
}

/**
 * What the Orb's webhook deliveries show (through `orbtest proxy orb --webhook-to`): each a POST of an Event without
 * `cursor` (ORB-090), signed under the app's token (ORB-091), with its event and its attempt named, an attempt never
 * named twice (ORB-092). Without the token, the signature is not judged.
 */
export function orbDeliveryReader (token: string): (d: DeliveryIn) => ServerFinding[] {
  const attempts = new Set<string>()
  let n = 0
  return (d) => {
    n++
    const found: ServerFinding[] = []
    const event = d.headers['x-orb-event']
    const attempt = d.headers['x-orb-delivery']
    const add: Add = (id, level, message) => {
      found.push({ id, level, request: 0, what: `delivery ${n} (${event ?? 'no X-Orb-Event'})`, message })
    }
    if (event === undefined || attempt === undefined) {
      add('ORB-092', 'MUST', 'a delivery without X-Orb-Event or X-Orb-Delivery')
    } else if (attempts.has(attempt)) {
      add('ORB-092', 'MUST', `a second delivery named ${attempt}: each attempt has its own`)
    }
    if (attempt !== undefined) attempts.add(attempt)
    const signed = token === '' ? undefined : verifySignature(d.headers['x-orb-signature'], d.raw, token)
    if (signed?.ok === false) add('ORB-091', 'MUST', `a delivery not signed under the app's token: ${signed.why}`)
    const body = parsed(d.body)?.value
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      add('ORB-090', 'MUST', 'a delivery whose body is no JSON Event')
    } else if ('cursor' in body) {
      add('ORB-090', 'MUST', 'a delivered Event carries a cursor; only GET /events gives one')
    }
    return found
  }
}
