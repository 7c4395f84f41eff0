import fc from 'fast-check'
import { adapterId, type CaseContext } from '../../orbtile-case.js'
import { minimal, register, type Registered } from '../../adapters.js'
import { expectStatus } from '../../expect.js'
import type { Reply, RequestOptions } from '../../transport.js'

// What several topics of the transport area share: the limits the ledger lists, the requests of a registered
// adapter, generators of what a header must not be, and raw HTTP/1.1 bytes for the framing cases.

/** OT-035: the limits `GET /info` advertises, as the ledger lists them. */
export const LIMITS = {
  maxBodyBytes: 65536,
  maxSessionsPerAdapter: 32,
  maxAdapters: 8,
  requestsPerSecond: 20,
  burst: 60,
  maxPendingRequestsPerAdapter: 32,
  maxEvents: 128,
  maxRequestIDs: 4096,
  maxLongPolls: 4
} as const

/** A SessionUpdate that creates a session with the fewest fields. */
export const SESSION = { title: 'orbtest conformance', activity: 'idle' } as const

/** JSON with object keys sorted, so that two values compare whatever their key order. */
export const canonical = (value: unknown): string => JSON.stringify(value, (_key, v: unknown) =>
  v !== null && typeof v === 'object' && !Array.isArray(v)
    ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
    : v)

/** `POST /adapters/{id}/sessions/{sessionId}` with the adapter's lease token. */
export const session = (
  ctx: CaseContext,
  a: Registered,
  sessionId: string,
  body: unknown,
  extra: RequestOptions = {}
): Promise<Reply> =>
  ctx.client.request({
    method: 'POST',
    path: `/adapters/${a.id}/sessions/${sessionId}`,
    headers: a.headers,
    body,
    ...extra
  })

/** `POST /adapters/{id}/events` with the adapter's lease token. */
export const poll = (ctx: CaseContext, a: Registered, body: unknown = {}, extra: RequestOptions = {}): Promise<Reply> =>
  ctx.client.request({ method: 'POST', path: `/adapters/${a.id}/events`, headers: a.headers, body, ...extra })

/** A registration with the fewest fields and event capabilities (`tap` unless told). */
export const withEvents = (capabilities: string[] = ['tap']): Record<string, unknown> =>
  ({ ...minimal(), capabilities })

/** Registers an adapter with the tap capability (allowed, with the control API); unregistered when the case ends. */
export const tapAdapter = (ctx: CaseContext, label: string): Promise<Registered> =>
  register(ctx, withEvents(), { label })

/** `PUT /adapters/{id}` of one fresh id the case never registers, with the given body and headers. */
export function freshPut (ctx: CaseContext, label: string): (options: RequestOptions) => Promise<Reply> {
  const id = adapterId(ctx, label)
  return (options) => ctx.client.request({ method: 'PUT', path: `/adapters/${id}`, ...options })
}

/** Property runs for a costly property: the run's number, but at most `max`. */
export const capped = (ctx: CaseContext, max: number): fc.Parameters<unknown> =>
  ctx.fc({ numRuns: Math.min(ctx.fc().numRuns ?? 100, max) })

/** GET /info; fails unless it answers 200. */
export async function infoOk (ctx: CaseContext): Promise<Reply> {
  const reply = await ctx.client.request({ path: '/info' })
  expectStatus(reply, 200, 'GET /info')
  return reply
}

/** The body of GET /info, whatever the status. */
export const infoBody = async (ctx: CaseContext): Promise<any> => (await ctx.client.request({ path: '/info' })).json

/** Printable ASCII (what an HTTP header value may hold), `min` to `max` characters. */
export const printable = (min: number, max: number): fc.Arbitrary<string> =>
  fc.string({
    unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
    minLength: min,
    maxLength: max
  })

/** A well-formed X-Orbtile-Nonce: 16 to 64 hex characters (OT-037). */
export const NONCE = /^[0-9A-Fa-f]{16,64}$/

/** Any Authorization value but `Bearer <the discovery token>`: other tokens, near misses, other schemes, no scheme. */
export function wrongAuthorization (token: string): fc.Arbitrary<string> {
  return fc.oneof(
    printable(1, 80)
      .filter((s) => /^[\x21-\x7e]+$/.test(s) && s !== token)
      .map((s) => `Bearer ${s}`),
    fc
      .tuple(fc.nat({ max: token.length - 1 }), fc.constantFrom(...'aZ09-_x'))
      .map(([i, ch]) => token.slice(0, i) + ch + token.slice(i + 1))
      .filter((t) => t !== token)
      .map((t) => `Bearer ${t}`),
    fc.constantFrom(
      `Bearer ${token}x`,
      `Bearer ${token.slice(0, -1)}`,
      `Bearer x${token}`,
      `Basic ${token}`,
      `Token ${token}`,
      `Digest ${token}`,
      `Bearer: ${token}`
    )
  )
}

/** Raw bytes of a request as an adapter would send it, over a fresh connection that closes after the reply. */
export const rawHead = (ctx: CaseContext, method: string, path: string, extra = ''): string =>
  `${method} ${ctx.client.target.basePath}${path} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer {token}\r\n${extra}Connection: close\r\n\r\n`

/** The JSON body of a raw reply, or undefined. */
export function rawJson (raw: string): any {
  const at = raw.indexOf('\r\n\r\n')
  if (at < 0) return undefined
  try {
    return JSON.parse(raw.slice(at + 4))
  } catch {
    return undefined
  }
}
