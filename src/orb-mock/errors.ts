import type { FastifyReply } from 'fastify'
import { closeIfBodyUnread, rawJsonResponse } from '../shared/http-server.js'
import { orbErrorBody } from '../spec/orb.js'

/**
 * Every error the fake Orb answers, by name: its status and when it is answered. The one registry of them: routes,
 * gates and pipeline steps throw through `orbErrors`, never with a status of their own. ORB-102 gives 400 to 429
 * their meaning; 405, 413, 415 and 500 are HTTP's own (ORB-A23).
 */
export const ORB_ERRORS = {
  bad: { status: 400, when: 'the request is not valid: its query, path or body breaks the spec\'s schema, or a rule the schema cannot state (ORB-102, ORB-A02, ORB-A23)' },
  unauthorized: { status: 401, when: 'a bot route without `Authorization: Bearer <token>` naming a live app token (ORB-003, ORB-A22)' },
  forbidden: { status: 403, when: 'a scope the app lacks, or the community\'s role or allow-list does not allow this (ORB-005, ORB-A02, ORB-A08)' },
  notFound: {
    status: 404,
    when: "no such route, or no such thing for this app; other apps' and other communities' things count as not found (ORB-102, ORB-A23)"
  },
  methodNotAllowed: { status: 405, when: 'a known path with a method it does not serve; `Allow` lists those it does (ORB-A23)' },
  conflict: { status: 409, when: 'an interaction answered already, a full voice channel, a seat held elsewhere, or grant without a voice server (ORB-067, ORB-075, ORB-A16)' },
  gone: { status: 410, when: 'the member stopped waiting for an answer, or the call or seat is gone (ORB-068, ORB-076, ORB-080, ORB-A16)' },
  tooLarge: { status: 413, when: 'a body over the fake\'s limit of 1 MiB, refused before it is read' },
  unsupportedMediaType: { status: 415, when: 'a body whose Content-Type is not application/json (ORB-A23)' },
  throttled: { status: 429, when: 'over a rate-limit window; `Retry-After` says how many seconds to wait (ORB-031, ORB-099, ORB-A03)' },
  internal: { status: 500, when: 'an unexpected fault in the fake; it is logged and the fake keeps serving' }
} as const satisfies Record<string, { status: number, when: string }>

/** The name of an error in the registry. */
export type OrbErrorName = keyof typeof ORB_ERRORS

/**
 * An error the fake Orb answers with (ORB-101, ORB-102, ORB-A01): `{"error":{"message","code"}}` where `code` is the
 * HTTP status itself. Made only by `orbErrors`.
 */
export class OrbError extends Error {
  readonly kind: OrbErrorName
  readonly status: number
  readonly headers: Readonly<Record<string, string>>

  constructor (kind: OrbErrorName, message: string, headers: Record<string, string> = NO_HEADERS) {
    super(message)
    this.name = 'OrbError'
    this.kind = kind
    this.status = ORB_ERRORS[kind].status
    this.headers = headers
  }

  /** ORB-101, ORB-A01: the error body. */
  body (): { error: { message: string, code: number } } {
    return orbErrorBody(this.status, this.message)
  }
}

const NO_HEADERS: Readonly<Record<string, string>> = Object.freeze({})

/** The builders of every error in ORB_ERRORS; the messages are the spec's where it gives any. */
export const orbErrors = {
  bad: (detail: string) => new OrbError('bad', detail),
  // ORB-003: the spec's own words.
  unauthorized: () => new OrbError('unauthorized', 'Missing or invalid token'),
  // ORB-005: the spec's words, then what exactly is missing.
  forbidden: (detail: string) => new OrbError('forbidden', `A scope or the community's role does not allow this: ${detail}`),
  // ORB-102: another app's or another community's things are "not found" too.
  notFound: (detail = 'No such thing for this app') => new OrbError('notFound', detail),
  methodNotAllowed: (allow: readonly string[]) => {
    const methods = allow.join(', ')
    return new OrbError('methodNotAllowed', `Method not allowed; this path allows ${methods}`, { allow: methods })
  },
  conflict: (detail: string) => new OrbError('conflict', detail),
  gone: (detail: string) => new OrbError('gone', detail),
  tooLarge: (limitBytes: number) => new OrbError('tooLarge', `The body is over ${limitBytes} bytes`),
  unsupportedMediaType: () => new OrbError('unsupportedMediaType', 'The body must be application/json'),
  // ORB-099, ORB-A03: an integer Retry-After, never early.
  throttled: (retryAfterSeconds: number, detail: string) =>
    new OrbError('throttled', `Too many requests: ${detail}; retry after ${retryAfterSeconds} s`, { 'retry-after': String(retryAfterSeconds) }),
  internal: () => new OrbError('internal', 'Unexpected fault in the fake Orb; see its log')
} as const satisfies Record<OrbErrorName, (...args: never[]) => OrbError>

/** A refusal whose status a decision table gives (ORB-A02): 400, 403 or 404, with the builder's words. */
export function refusal (status: 400 | 403 | 404, detail: string): OrbError {
  if (status === 403) return orbErrors.forbidden(detail)
  if (status === 404) return orbErrors.notFound(detail)
  return orbErrors.bad(detail)
}

/** Writes an error reply: the registry's status, the error's headers and the Orb's body. */
export function sendOrbError (reply: FastifyReply, err: OrbError): FastifyReply {
  closeIfBodyUnread(reply)
  return reply.code(err.status).headers(err.headers).type('application/json').send(err.body())
}

/** A whole 400 response in the Orb's error shape, for bytes no route ever sees. */
export function rawOrbBadRequest (message: string): string {
  return rawJsonResponse(400, 'Bad Request', orbErrors.bad(message).body())
}
