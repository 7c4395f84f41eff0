import contentType from 'content-type'
import type { FastifyBodyParser, FastifyRequest } from 'fastify'
import { parseJsonObject } from '../shared/json-body.js'
import type { SecretComparer } from '../shared/secrets.js'
import type { TokenBuckets } from '../shared/token-bucket.js'
import type { Limits } from '../spec/orbtile.js'
import { errors } from './errors.js'
import { headerCount } from '../shared/http-server.js'
import type { Faults } from './faults.js'

/**
 * OT-A02: the order every request is checked in; the first failure answers.
 *
 *  1. checkHost         OT-A05                bad_request 400
 *  2. checkOrigin       OT-015                forbidden_origin 403
 *  3. checkApiEnabled   OT-155, OT-A03        api_disabled 503
 *  4. checkBearer       OT-016, OT-A29        unauthorized 401
 *  5. checkRoute        OT-153, OT-A01        not_found 404, bad_request 405
 *  6. checkRateLimit    OT-026, OT-A20        rate_limited 429
 *  7. checkBodyFraming  OT-025, OT-024, OT-017, OT-A05   length_required 411, payload_too_large 413,
 *                                             unsupported_media_type 415, bad_request 400 (no body)
 *  then parseBody       OT-154, OT-A05        bad_request 400
 *
 * Steps 1 to 7 read the head alone and run in one onRequest hook (HEAD_PIPELINE); parseBody is the body parser.
 * The route's own steps follow in the handlers, in the same order: 8. the path's ids (checkAdapterId, the
 * sessionId in routes/sessions.ts: invalid_field, reserved_id); 9. the lease and its token (Adapters.requireLease,
 * Adapters.checkReRegistration: adapter_not_registered, unauthorized); 10. the body's schema (validation.ts:
 * invalid_field); 11. state and limits (limit_exceeded, events_not_supported, poll_pending, invalid_cursor).
 */

/** What each route tells the pipeline about itself, through fastify's route `config`. */
export type RouteConfig =
  | { kind: 'route', adapterRoute: boolean }
  | { kind: 'method-not-allowed', allow: readonly string[] }

/** What the pipeline steps read from one fake. Made once per fake (pipelineContext), never per request. */
export interface PipelineContext {
  apiEnabled(): boolean
  /** The discovery token's UTF-8 bytes. */
  tokenBytes(): Buffer
  buckets: TokenBuckets
  rateLimit: 'on' | 'off'
  limits: Readonly<Pick<Limits, 'maxBodyBytes' | 'requestsPerSecond' | 'burst'>>
  /** Deliberate faults (faults.ts). */
  faults: Faults
  /** The fake's constant-time comparer, shared with the lease check. */
  secrets: SecretComparer
  /**
   * Clients send the same Content-Type on every request: the last one this fake accepted, so that the next equal
   * header is not parsed again (checkMediaType).
   */
  acceptedType: string | undefined
}

/** What pipelineContext reads from the fake's store. */
export interface PipelineSource {
  readonly apiEnabled: boolean
  readonly tokenBytes: Buffer
  readonly buckets: TokenBuckets
  readonly faults: Faults
  readonly secrets: SecretComparer
}

/** The context of one fake's pipeline: made once, when its app is built. */
export function pipelineContext (store: PipelineSource, rateLimit: 'on' | 'off', limits: PipelineContext['limits']):
PipelineContext {
  return {
    apiEnabled: () => store.apiEnabled,
    tokenBytes: () => store.tokenBytes,
    buckets: store.buckets,
    rateLimit,
    limits,
    faults: store.faults,
    secrets: store.secrets,
    acceptedType: undefined
  }
}

/**
 * A step looks at the request's head and either lets it through or throws the error that answers it. `route` is
 * what the matched route says of itself (undefined for no match), read once per request for all steps.
 */
export type PipelineStep = (request: FastifyRequest, ctx: PipelineContext, route: RouteConfig | undefined) => void

/** The bucket shared by `GET /info` and every request that names no adapter (OT-A20). */
export const SHARED_BUCKET = 'shared'

// OT-A05: `localhost`, with or without a port.
const LOCALHOST = /^localhost(?::\d{1,5})?$/i

/** Step 1, OT-A05: exactly one Host header, and it must be `localhost` (RFC 9112 §3.2). */
export function checkHost (request: FastifyRequest): void {
  const host = request.headers.host
  if (host === undefined || host === '') throw errors.badRequest('the Host header is required (Host: localhost)')
  if (headerCount(request.raw, 'host') > 1) throw errors.badRequest('the request carries more than one Host header')
  // RFC 9112 §3.2.2: an absolute-form target's authority replaces Host. Adapters send paths (origin-form) only.
  if (request.raw.url?.charCodeAt(0) !== 0x2f) {
    throw errors.badRequest('the request target must be a path (origin-form), not an absolute URL')
  }
  if (!LOCALHOST.test(host)) throw errors.badRequest(`the Host header must be localhost, not ${JSON.stringify(host)}`)
}

/** Step 2, OT-015: any Origin header at all, even an empty or `null` one, is refused: only local processes call. */
export function checkOrigin (request: FastifyRequest, ctx: PipelineContext): void {
  if (request.headers.origin !== undefined && !ctx.faults.has('origin-allowed')) {
    throw errors.forbiddenOrigin('requests with an Origin header are refused; adapters never send one')
  }
}

/** Step 3, OT-155, OT-A03: while the user has the API switched off, every request answers api_disabled. */
export function checkApiEnabled (_request: FastifyRequest, ctx: PipelineContext): void {
  if (!ctx.apiEnabled()) throw errors.apiDisabled()
}

/** Step 4, OT-016, OT-A29: `Authorization: Bearer <discovery token>` on every request, /info included. */
export function checkBearer (request: FastifyRequest, ctx: PipelineContext): void {
  const header = request.headers.authorization
  if (header === undefined) {
    throw errors.unauthorized('the Authorization header is missing; send Bearer <token from the discovery file>')
  }
  if (headerCount(request.raw, 'authorization') > 1) {
    throw errors.unauthorized('send one Authorization header, not several')
  }
  const match = /^Bearer +(\S+) *$/i.exec(header)
  if (match === null) throw errors.unauthorized('the Authorization scheme must be Bearer')
  if (!ctx.secrets.matches(match[1]!, ctx.tokenBytes())) {
    throw errors.unauthorized('the bearer token does not match the discovery file')
  }
}

/** Step 5, OT-153, OT-A01: unknown paths are not_found; a known path with another method is 405 with Allow. */
export function checkRoute (request: FastifyRequest, _ctx: PipelineContext, route: RouteConfig | undefined): void {
  if (route === undefined) throw errors.notFound(`no route ${request.method} ${request.url.split('?')[0]}`)
  if (route.kind === 'method-not-allowed') throw errors.methodNotAllowed(route.allow)
}

/** Step 6, OT-026, OT-A20: one token per request from the adapter's bucket, or from the shared one. */
export function checkRateLimit (request: FastifyRequest, ctx: PipelineContext, route: RouteConfig | undefined): void {
  if (ctx.rateLimit === 'off') return
  const params = request.params as { adapterId?: string }
  const key = route?.kind === 'route' && route.adapterRoute && params.adapterId !== undefined
    ? `adapter:${params.adapterId}`
    : SHARED_BUCKET
  const taken = ctx.buckets.take(key)
  if (!taken.ok) {
    const { requestsPerSecond, burst } = ctx.limits
    const seconds = taken.retryAfterSeconds
    throw errors.rateLimited(`over ${requestsPerSecond} requests/s (burst ${burst}); retry after ${seconds} s`, seconds)
  }
}

/**
 * Step 7, OT-025, OT-024, OT-017, OT-A05: decided from the head alone, before a byte of the body is read. A body
 * sent without Content-Length is length_required; one over maxBodyBytes is payload_too_large; a body that is not
 * `application/json` (charset utf-8 allowed) is unsupported_media_type; a PUT or POST without one is bad_request.
 */
export function checkBodyFraming (request: FastifyRequest, ctx: PipelineContext): void {
  const length = request.headers['content-length']
  const chunked = request.headers['transfer-encoding'] !== undefined
  if (length === undefined && chunked) {
    throw errors.lengthRequired('send the body with a Content-Length header, not chunked')
  }
  const bytes = length === undefined ? 0 : Number(length)
  if (bytes > ctx.limits.maxBodyBytes) {
    throw errors.payloadTooLarge(`the body is ${bytes} bytes; the limit is ${ctx.limits.maxBodyBytes}`)
  }
  if (bytes > 0) checkMediaType(request.headers['content-type'], ctx)
  // OT-A05: every PUT and POST needs a JSON object, and a head without a body cannot hold one.
  else if (request.method === 'PUT' || request.method === 'POST') {
    throw errors.badRequest('the body is empty; send a JSON object')
  }
}

// OT-017, OT-A05: `application/json`, with no charset or utf-8. An accepted header is remembered per fake.
// Kept: with the other kept shortcuts, a session update runs at 61% of bare fastify, 48% without (benchmarks.md).
function checkMediaType (header: string | undefined, ctx: PipelineContext): void {
  if (header !== undefined && header === ctx.acceptedType) return
  const refuse = (): never => {
    const given = header === undefined ? 'untyped' : JSON.stringify(header)
    throw errors.unsupportedMediaType(`the body must be application/json, not ${given}`)
  }
  if (header === undefined) refuse()
  let parsed: contentType.ParsedMediaType
  try {
    parsed = contentType.parse(header!)
  } catch {
    return refuse()
  }
  if (parsed.type !== 'application/json') refuse()
  const charset = parsed.parameters.charset
  if (charset !== undefined && charset.toLowerCase() !== 'utf-8') refuse()
  ctx.acceptedType = header
}

/** OT-A02 steps 1 to 7, in order; the first failure answers. */
export const HEAD_PIPELINE: readonly PipelineStep[] = [
  checkHost,
  checkOrigin,
  checkApiEnabled,
  checkBearer,
  checkRoute,
  checkRateLimit,
  checkBodyFraming
]

/** Runs the head pipeline; throws the first step's error. */
export function runHeadPipeline (request: FastifyRequest, ctx: PipelineContext, route: RouteConfig | undefined): void {
  for (const step of HEAD_PIPELINE) step(request, ctx, route)
  ;(request as unknown as Admitted).orbtileToken = ctx.tokenBytes()
}

/** The discovery token's bytes a request was let in with, by runHeadPipeline (a request decoration). */
interface Admitted { orbtileToken: Buffer | null }

/**
 * The token bytes the head pipeline checked this request's bearer against; null before it passed. A registration
 * commits only while the token is still this one (routes/adapters.ts).
 */
export function admittedToken (request: FastifyRequest): Buffer | null {
  return (request as unknown as Admitted).orbtileToken
}

/**
 * After step 7, OT-154, OT-A05: the body parser for every type (step 7 has refused other types already). A body
 * must be one JSON object; a bodiless request other than PUT or POST has none (OT-012 has clients send
 * Content-Type: application/json on every request, a DELETE included).
 */
export const parseBody: FastifyBodyParser<Buffer> = (request, body, done) => {
  parseBodyShown(request, body, done)
}

/** parseBody, telling `shown` of each body as it was decoded (the tap journals the same text the fake parsed). */
export function parseBodyShown (
  request: FastifyRequest,
  body: Buffer,
  done: (err: Error | null, value?: unknown) => void,
  shown?: (request: FastifyRequest, text: string) => void
): void {
  if (body.length === 0 && request.method !== 'PUT' && request.method !== 'POST') {
    done(null, undefined)
    return
  }
  const parsed = parseJsonObject(body)
  if (parsed.ok) {
    shown?.(request, parsed.text)
    done(null, parsed.value)
  } else {
    done(errors.badRequest(parsed.detail))
  }
}
