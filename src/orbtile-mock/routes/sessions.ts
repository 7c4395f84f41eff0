import type { FastifyRequest, RouteHandlerMethod } from 'fastify'
import { checkAdapterId } from '../adapter-id.js'
import type { Adapters } from '../adapters.js'
import { errors } from '../errors.js'
import type { Sessions } from '../sessions/registry.js'
import { validatorFor } from '../../spec/orbtile.js'
import { adapterToken } from './adapters.js'

type Params = { adapterId: string, sessionId?: string }

// OT-A02 steps 8 and 9 for every route under /adapters/{id}/…: the ids, then the lease and its token.
function leaseOf (adapters: Adapters, request: FastifyRequest) {
  const { adapterId, sessionId } = request.params as Params
  checkAdapterId(adapterId)
  // OT-090: session ids are 1..128 of [A-Za-z0-9._:-].
  if (sessionId !== undefined && !validatorFor('SessionID')(sessionId)) {
    throw errors.invalidField('sessionId', 'sessionId must be 1 to 128 characters of A-Z a-z 0-9 . _ : -')
  }
  const record = adapters.requireLease(adapterId, adapterToken(request))
  return { adapterId, sessionId, registration: record.registration! }
}

/** `POST /adapters/{adapterId}/sessions/{sessionId}` (OT-089..113). */
export function sessionHandler (adapters: Adapters, sessions: Sessions): RouteHandlerMethod {
  // The hot route: not an async function, so fastify sends its value at once (a promise a request saved).
  // Kept: with the other kept shortcuts, a session update runs at 61% of bare fastify, 48% without (benchmarks.md).
  return (request) => {
    const { adapterId, sessionId, registration } = leaseOf(adapters, request)
    return sessions.post(adapterId, sessionId!, request.body, registration)
  }
}

/** `PUT /adapters/{adapterId}/sessions` (OT-114..119, OT-A19). */
export function batchHandler (adapters: Adapters, sessions: Sessions): RouteHandlerMethod {
  return async (request) => {
    const { adapterId, registration } = leaseOf(adapters, request)
    return sessions.batch(adapterId, request.body, registration)
  }
}

/** `POST /adapters/{adapterId}/events` (OT-131..146). */
export function eventsHandler (adapters: Adapters, sessions: Sessions): RouteHandlerMethod {
  return async (request, reply) => {
    const { adapterId, registration } = leaseOf(adapters, request)
    return await sessions.poll(adapterId, request.body, registration, reply)
  }
}
