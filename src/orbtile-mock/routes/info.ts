import { createHmac } from 'node:crypto'
import type { RouteHandlerMethod } from 'fastify'
import { errors } from '../errors.js'
import { ACTIVITIES, API_MINOR, API_VERSION, LIMITS, SERVER_NAME } from '../../spec/orbtile.js'
import type { OrbtileStore } from '../store.js'

// OT-A29: 16..64 hex digits, either case.
const NONCE = /^[0-9A-Fa-f]{16,64}$/

/** OT-037, OT-A29: lowercase hex HMAC-SHA256 keyed by the token's UTF-8 bytes over the nonce's bytes as sent. */
export function proofFor (token: string, nonce: string): string {
  return createHmac('sha256', Buffer.from(token, 'utf8')).update(Buffer.from(nonce, 'ascii')).digest('hex')
}

/** `GET /info` (OT-034..040): the server's identity, every activity, the exact limits, and a proof on request. */
export function infoHandler (store: OrbtileStore): RouteHandlerMethod {
  const body = {
    server: SERVER_NAME, // OT-034: Info.server's const
    api: API_VERSION,
    apiMinor: API_MINOR,
    version: store.version,
    activities: ACTIVITIES, // OT-036, OT-A29: all 11, in enum order; the enum has no "empty"
    limits: LIMITS
  }
  // The reply never changes without a nonce: serialise it once.
  // Kept: with the other kept shortcuts, a session update runs at 61% of bare fastify, 48% without (benchmarks.md).
  const plain = JSON.stringify(body)
  return async (request, reply) => {
    const nonce = request.headers['x-orbtile-nonce']
    // OT-038: no nonce, no proof.
    if (nonce === undefined) return reply.type('application/json; charset=utf-8').send(plain)
    if (typeof nonce !== 'string' || !NONCE.test(nonce)) {
      throw errors.invalidField('X-Orbtile-Nonce', 'X-Orbtile-Nonce must be 16 to 64 hex characters')
    }
    return { ...body, proof: proofFor(store.token, nonce) }
  }
}
