import type { FastifyReply } from 'fastify'
import { rawJsonResponse } from '../shared/http-server.js'

/**
 * An error the fake Orb answers with (ORB-101, ORB-102, ORB-A01): `{"error":{"message","code"}}` where `code` is the
 * HTTP status itself.
 */
export class OrbError extends Error {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>

  constructor (status: number, message: string, headers: Record<string, string> = {}) {
    super(message)
    this.name = 'OrbError'
    this.status = status
    this.headers = headers
  }

  body (): { error: { message: string, code: number } } {
    return { error: { message: this.message, code: this.status } }
  }
}

/** The messages the spec gives for each status, used where nothing more precise can be said. */
export const orbErrors = {
  bad: (detail: string) => new OrbError(400, detail),
  // ORB-003: the spec's own words.
  unauthorized: () => new OrbError(401, 'Missing or invalid token'),
  // ORB-005: the spec's words, then what exactly is missing.
  forbidden: (detail: string) => new OrbError(403, `A scope or the community's role does not allow this: ${detail}`),
  // ORB-102: another app's or another community's things are "not found" too.
  notFound: (detail = 'No such thing for this app') => new OrbError(404, detail),
  methodNotAllowed: (allow: readonly string[]) => new OrbError(405, `Method not allowed; this path allows ${allow.join(', ')}`, { allow: allow.join(', ') }),
  conflict: (detail: string) => new OrbError(409, detail),
  gone: (detail: string) => new OrbError(410, detail),
  unsupportedMediaType: () => new OrbError(415, 'The body must be application/json'),
  // ORB-099, ORB-A03: an integer Retry-After, never early.
  throttled: (retryAfterSeconds: number, detail: string) => new OrbError(429, `Too many requests: ${detail}; retry after ${retryAfterSeconds} s`, { 'retry-after': String(retryAfterSeconds) }),
  internal: () => new OrbError(500, 'Unexpected fault in the fake Orb; see its log')
}

export function sendOrbError (reply: FastifyReply, err: OrbError): FastifyReply {
  return reply.code(err.status).headers(err.headers).type('application/json').send(err.body())
}

/** A whole 400 response in the Orb's error shape, for bytes no route ever sees. */
export function rawOrbBadRequest (message: string): string {
  return rawJsonResponse(400, 'Bad Request', { error: { message, code: 400 } })
}
