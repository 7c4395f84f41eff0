import type { FastifyReply } from 'fastify'
import { announcesBody, rawJsonResponse } from '../shared/http-server.js'

/**
 * OT-A01: every code of the spec's `Error` enum and the HTTP status it answers with. The spec names the codes but no
 * statuses; this table is the ledger's decision. A test keeps it in step with the spec's enum.
 */
export const ERROR_STATUS = {
  bad_request: 400,
  invalid_field: 400,
  unauthorized: 401,
  forbidden_origin: 403,
  reserved_id: 403,
  not_found: 404,
  adapter_not_registered: 404,
  length_required: 411,
  payload_too_large: 413,
  unsupported_media_type: 415,
  limit_exceeded: 409,
  events_not_supported: 409,
  poll_pending: 409,
  invalid_cursor: 400,
  rate_limited: 429,
  api_disabled: 503,
  internal: 500
} as const

export type ErrorCode = keyof typeof ERROR_STATUS

/** The body of every error reply (OT-149). */
export interface ErrorBody {
  error: { code: ErrorCode, message: string, field?: string }
}

/** An error the fake answers with. Routes and pipeline steps throw these; one handler turns them into replies. */
export class OrbtileError extends Error {
  readonly code: ErrorCode
  readonly status: number
  readonly field: string | undefined
  readonly headers: Readonly<Record<string, string>>

  constructor (code: ErrorCode, message: string, options: { field?: string, status?: number, headers?: Record<string, string> } = {}) {
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

  body (): ErrorBody {
    const error: ErrorBody['error'] = { code: this.code, message: this.message }
    if (this.field !== undefined) error.field = this.field
    return { error }
  }
}

/** Shorthand constructors for the errors raised in more than one place. */
export const errors = {
  badRequest: (message: string) => new OrbtileError('bad_request', message),
  invalidField: (field: string, message: string) => new OrbtileError('invalid_field', message, { field }),
  unauthorized: (message: string, field?: string) => new OrbtileError('unauthorized', message, field === undefined ? {} : { field }),
  notFound: (message = 'no such route') => new OrbtileError('not_found', message),
  methodNotAllowed: (allow: readonly string[]) =>
    new OrbtileError('bad_request', `method not allowed; this route accepts ${allow.join(', ')}`, { status: 405, headers: { allow: allow.join(', ') } }),
  internal: () => new OrbtileError('internal', 'the fake hit an unexpected fault; it logged the details and keeps serving')
}

/**
 * Writes an error reply: the registry's status, its headers, and exactly the spec's body. A refused request whose
 * body was never read closes its connection, so the fake does not swallow a body it has already refused.
 */
export function sendError (reply: FastifyReply, err: OrbtileError): FastifyReply {
  if (reply.request.body === undefined && announcesBody(reply.request.raw)) reply.header('connection', 'close')
  return reply.code(err.status).headers(err.headers).type('application/json').send(err.body())
}

/**
 * A whole `400 bad_request` response as raw bytes, for requests Node's HTTP parser refuses before any route sees
 * them (malformed framing, oversized headers, CONNECT): even those get the spec's JSON body, never Node's bare 400.
 */
export function rawBadRequest (message: string): string {
  return rawJsonResponse(400, 'Bad Request', errors.badRequest(message).body())
}
