import type { FastifyReply } from 'fastify'
import { closeIfBodyUnread, rawJsonResponse } from '../shared/http-server.js'
import { ERROR_STATUS, type ErrorCode } from '../spec/orbtile.js'

// The status table is the spec's data (src/spec/orbtile.ts); re-exported for the conformance suite's imports.
export { ERROR_STATUS, type ErrorCode } from '../spec/orbtile.js'

/** The body of every error reply (OT-149). */
export interface ErrorBody {
  error: { code: ErrorCode, message: string, field?: string }
}

/** An error the fake answers with. Routes and pipeline steps throw these (built by `errors`); one handler replies. */
export class OrbtileError extends Error {
  readonly code: ErrorCode
  readonly status: number
  readonly field: string | undefined
  readonly headers: Readonly<Record<string, string>>

  constructor (code: ErrorCode, message: string, options: ErrorDetails = {}) {
    super(message)
    this.name = 'OrbtileError'
    this.code = code
    // Only a 405 overrides the table's status (OT-A01: wrong method is 405 with code bad_request).
    this.status = options.status ?? ERROR_STATUS[code]
    this.field = options.field
    this.headers = {
      // OT-A01: 401 carries the challenge.
      ...(code === 'unauthorized' ? { 'www-authenticate': 'Bearer' } : {}),
      ...options.headers
    }
  }

  /** The reply's body, exactly the spec's shape (OT-149). */
  body (): ErrorBody {
    const error: ErrorBody['error'] = { code: this.code, message: this.message }
    if (this.field !== undefined) error.field = this.field
    return { error }
  }
}

/** What an error carries besides its code and message. */
export interface ErrorDetails {
  field?: string | undefined
  status?: number
  headers?: Record<string, string>
}

/** One way the fake answers with an error: its code, its status, and when it fires (with the ledger ids). */
export interface ErrorKind<C extends ErrorCode = ErrorCode> {
  readonly code: C
  readonly status: number
  readonly when: string
}

/** A builder of one kind of error, carrying what it builds. */
export type ErrorBuilder<C extends ErrorCode, A extends unknown[]> = ((...args: A) => OrbtileError) & ErrorKind<C>

function kind<C extends ErrorCode, A extends unknown[]> (
  code: C,
  when: string,
  details: (...args: A) => ErrorDetails & { message: string },
  status: number = ERROR_STATUS[code]
): ErrorBuilder<C, A> {
  const build = (...args: A): OrbtileError => {
    const { message, field, headers } = details(...args)
    return new OrbtileError(code, message, { field, headers, status })
  }
  return Object.assign(build, { code, status, when })
}

/**
 * The registry of the fake's errors: one builder per spec error code (and the 405 variant of bad_request), each
 * with its status (OT-A01's table) and when it fires. Routes, pipeline steps and domain code throw only these.
 */
export const errors = {
  badRequest: kind('bad_request', 'OT-A05, OT-154: the request cannot be read: a missing, repeated or foreign Host, ' +
    'an undecodable target, a body that is not one JSON object (or none on PUT/POST); a long poll whose client left',
  (message: string) => ({ message })),
  methodNotAllowed: kind('bad_request', 'OT-153, OT-A01: a known path with a method it does not serve; with Allow',
    (allow: readonly string[]) => ({
      message: `method not allowed; this route accepts ${allow.join(', ')}`,
      headers: { allow: allow.join(', ') }
    }), 405),
  invalidField: kind('invalid_field', 'OT-A25: a path parameter, header or body field the spec refuses, named in ' +
    '`field` (the first in the request\'s order)', (field: string, message: string) => ({ message, field })),
  unauthorized: kind('unauthorized', 'OT-016, OT-020, OT-A06: no, several or a wrong bearer token; a missing or ' +
    'wrong X-Orbtile-Adapter-Token during a lease (field names the header); with WWW-Authenticate: Bearer',
  (message: string, field?: string) => ({ message, field })),
  forbiddenOrigin: kind('forbidden_origin', 'OT-015: the request has an Origin header, whatever its value',
    (message: string) => ({ message })),
  reservedId: kind('reserved_id', 'OT-043, OT-044: an adapter id without a dot, or in com.orbtile\'s namespace',
    (message: string) => ({ message })),
  notFound: kind('not_found', 'OT-153, OT-A01: no route has the path',
    (message: string = 'no such route') => ({ message })),
  adapterNotRegistered: kind('adapter_not_registered', 'OT-152, OT-A06: an adapter route of an id with no live ' +
    'lease; a held poll whose lease ended', (message: string) => ({ message })),
  lengthRequired: kind('length_required', 'OT-025: a body sent chunked, without Content-Length',
    (message: string) => ({ message })),
  payloadTooLarge: kind('payload_too_large', 'OT-024: a Content-Length over maxBodyBytes, refused before reading',
    (message: string) => ({ message })),
  unsupportedMediaType: kind('unsupported_media_type', 'OT-017, OT-A05: a body whose Content-Type is not ' +
    'application/json (charset utf-8 allowed)', (message: string) => ({ message })),
  limitExceeded: kind('limit_exceeded', 'OT-028..030, OT-A21, OT-A22: maxAdapters live leases, ' +
    'maxSessionsPerAdapter, maxPendingRequestsPerAdapter, maxRequestIDs or maxLongPolls reached',
  (message: string) => ({ message })),
  eventsNotSupported: kind('events_not_supported', 'OT-142: an events poll from a registration without event capabilities',
    (message: string) => ({ message })),
  pollPending: kind('poll_pending', 'OT-133, OT-140: an events poll while another of the same adapter is held',
    (message: string) => ({ message })),
  invalidCursor: kind('invalid_cursor', 'OT-137, OT-A23: ack above after, or after beyond the highest delivered',
    (message: string) => ({ message })),
  rateLimited: kind('rate_limited', 'OT-026, OT-A20: the adapter\'s (or the shared) bucket is empty; with Retry-After',
    (message: string, retryAfterSeconds: number) => ({
      message,
      headers: { 'retry-after': String(retryAfterSeconds) }
    })),
  apiDisabled: kind('api_disabled', 'OT-155, OT-A03: the user has switched the Adapter API off (socket left open)',
    (message: string = 'the Adapter API is turned off in Orbtile settings') => ({ message })),
  internal: kind('internal', 'OT-156: a fault of the fake itself; logged, never a stack trace in the reply',
    () => ({ message: 'the fake hit an unexpected fault; it logged the details and keeps serving' }))
}

type Builders = Record<string, ErrorBuilder<ErrorCode, any[]>>
type Uncovered<B extends Builders> = Exclude<ErrorCode, B[keyof B]['code']>

// Compiles only when every spec code has a builder: a missing one shows up as `missing: '<code>'`.
type Covering<B extends Builders> = B & ([Uncovered<B>] extends [never] ? unknown : { missing: Uncovered<B> })

function kindsOf<B extends Builders> (builders: Covering<B>): ErrorKind[] {
  return Object.values(builders).map(({ code, status, when }) => Object.freeze({ code, status, when }))
}

/** Every error the fake answers with, as data: code, status and when it fires, for tests and the docs. */
export const ORBTILE_ERRORS: readonly ErrorKind[] = Object.freeze(kindsOf(errors))

/**
 * Writes an error reply: the registry's status, its headers, and exactly the spec's body. A request refused before
 * its body was read is not read on beyond a small drain (closeIfBodyUnread, docs/reliability.md).
 */
export function sendError (reply: FastifyReply, err: OrbtileError): FastifyReply {
  closeIfBodyUnread(reply)
  return reply.code(err.status).headers(err.headers).type('application/json').send(err.body())
}

/**
 * A whole `400 bad_request` response as raw bytes, for requests Node's HTTP parser refuses before any route sees
 * them (malformed framing, oversized headers, CONNECT): even those get the spec's JSON body, never Node's bare 400.
 */
export function rawBadRequest (message: string): string {
  return rawJsonResponse(400, 'Bad Request', errors.badRequest(message).body())
}
