import { timingSafeEqual } from 'node:crypto'
import contentType from 'content-type'
import type { FastifyRequest } from 'fastify'
import type { TokenBuckets } from '../shared/token-bucket.js'
import { errors, OrbtileError } from './errors.js'
import type { Faults } from './faults.js'

/** What each route tells the pipeline about itself, through fastify's route `config`. */
export type RouteConfig =
  | { kind: 'route', adapterRoute: boolean }
  | { kind: 'method-not-allowed', allow: readonly string[] }

/** What the pipeline steps read from the fake. */
export interface PipelineContext {
  apiEnabled(): boolean
  /** The discovery token's UTF-8 bytes. */
  tokenBytes(): Buffer
  buckets: TokenBuckets
  rateLimit: 'on' | 'off'
  limits: Readonly<{ maxBodyBytes: number, requestsPerSecond: number, burst: number }>
  /** Deliberate faults (faults.ts). */
  faults: Faults
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

/** How many times a header appears in the request head. Node keeps only the first Host or Authorization. */
function occurrences (request: FastifyRequest, lowerName: string): number {
  const raw = request.raw.rawHeaders
  let n = 0
  for (let i = 0; i < raw.length; i += 2) if (raw[i]!.length === lowerName.length && raw[i]!.toLowerCase() === lowerName) n++
  return n
}

/** OT-A02 step 1 and OT-A05: exactly one Host header, and it must be `localhost` (RFC 9112 §3.2). */
export function checkHost (request: FastifyRequest): void {
  const host = request.headers.host
  if (host === undefined || host === '') throw errors.badRequest('the Host header is required (Host: localhost)')
  if (occurrences(request, 'host') > 1) throw errors.badRequest('the request carries more than one Host header')
  if (!LOCALHOST.test(host)) throw errors.badRequest(`the Host header must be localhost, not ${JSON.stringify(host)}`)
}

/** OT-015: any Origin header at all, even an empty or `null` one, is refused: only local processes may call. */
export function checkOrigin (request: FastifyRequest, ctx: PipelineContext): void {
  if (request.headers.origin !== undefined && !ctx.faults.has('origin-allowed')) {
    throw new OrbtileError('forbidden_origin', 'requests with an Origin header are refused; adapters never send one')
  }
}

/** OT-155, OT-A03: while the user has the API switched off, every request answers api_disabled. */
export function checkApiEnabled (_request: FastifyRequest, ctx: PipelineContext): void {
  if (!ctx.apiEnabled()) throw new OrbtileError('api_disabled', 'the Adapter API is turned off in Orbtile settings')
}

/** OT-016, OT-A29: `Authorization: Bearer <discovery token>` on every request, /info included. */
export function checkBearer (request: FastifyRequest, ctx: PipelineContext): void {
  const header = request.headers.authorization
  if (header === undefined) throw errors.unauthorized('the Authorization header is missing; send Bearer <token from the discovery file>')
  if (occurrences(request, 'authorization') > 1) throw errors.unauthorized('send one Authorization header, not several')
  const match = /^Bearer +(\S+) *$/i.exec(header)
  if (match === null) throw errors.unauthorized('the Authorization scheme must be Bearer')
  if (!secretMatches(match[1]!, ctx.tokenBytes())) throw errors.unauthorized('the bearer token does not match the discovery file')
}

/** OT-153, OT-A01: unknown paths are not_found; a known path with another method is 405 with Allow. */
export function checkRoute (request: FastifyRequest, _ctx: PipelineContext, route: RouteConfig | undefined): void {
  if (route === undefined) throw errors.notFound(`no route ${request.method} ${request.url.split('?')[0]}`)
  if (route.kind === 'method-not-allowed') throw errors.methodNotAllowed(route.allow)
}

/** OT-026, OT-A20: one token per request from the adapter's bucket, or from the shared one. */
export function checkRateLimit (request: FastifyRequest, ctx: PipelineContext, route: RouteConfig | undefined): void {
  if (ctx.rateLimit === 'off') return
  const params = request.params as { adapterId?: string }
  const key = route?.kind === 'route' && route.adapterRoute && params.adapterId !== undefined
    ? `adapter:${params.adapterId}`
    : SHARED_BUCKET
  const taken = ctx.buckets.take(key)
  if (!taken.ok) {
    const { requestsPerSecond, burst } = ctx.limits
    throw new OrbtileError('rate_limited', `over ${requestsPerSecond} requests/s (burst ${burst}); retry after ${taken.retryAfterSeconds} s`, {
      headers: { 'retry-after': String(taken.retryAfterSeconds) }
    })
  }
}

/**
 * OT-025, OT-024, OT-017 (OT-A02 step 7): decided from the head alone, before a byte of the body is read.
 * A body sent without Content-Length is length_required; one over maxBodyBytes is payload_too_large; a body
 * that is not `application/json` (charset utf-8 allowed, OT-A05) is unsupported_media_type.
 */
export function checkBodyFraming (request: FastifyRequest, ctx: PipelineContext): void {
  const length = request.headers['content-length']
  const chunked = request.headers['transfer-encoding'] !== undefined
  if (length === undefined && chunked) {
    throw new OrbtileError('length_required', 'send the body with a Content-Length header, not chunked')
  }
  const bytes = length === undefined ? 0 : Number(length)
  if (bytes > ctx.limits.maxBodyBytes) {
    throw new OrbtileError('payload_too_large', `the body is ${bytes} bytes; the limit is ${ctx.limits.maxBodyBytes}`)
  }
  if (bytes > 0) checkMediaType(request.headers['content-type'])
  // OT-A05: every PUT and POST needs a JSON object, and a head without a body cannot hold one.
  else if (request.method === 'PUT' || request.method === 'POST') throw errors.badRequest('the body is empty; send a JSON object')
}

// Clients send the same Content-Type on every request: remember the last verdict rather than parse it again.
let lastAcceptedType: string | undefined

function checkMediaType (header: string | undefined): void {
  if (header !== undefined && header === lastAcceptedType) return
  const refuse = (): never => {
    throw new OrbtileError('unsupported_media_type', `the body must be application/json, not ${header === undefined ? 'untyped' : JSON.stringify(header)}`)
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
  lastAcceptedType = header
}

/** OT-A02: the order the checks run in; the first failure answers. Body parsing and later steps follow in routes. */
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
}

/**
 * Compares a secret in time that does not depend on where it differs. Only the length can leak, and token lengths
 * are public (43 characters, OT-018), so a length mismatch answers at once.
 */
export function secretMatches (given: string, expected: Buffer): boolean {
  if (Buffer.byteLength(given) !== expected.length) return false
  // Every request compares one or two secrets: write into a reused buffer rather than allocate one per compare.
  // Both secrets are 43 bytes (OT-018), so one buffer of that length serves all.
  if (scratch.length !== expected.length) scratch = Buffer.allocUnsafeSlow(expected.length)
  scratch.write(given, 'utf8')
  return timingSafeEqual(scratch, expected)
}

let scratch = Buffer.allocUnsafeSlow(43)
