import type { Server } from 'node:http'
import type { Duplex } from 'node:stream'
import type { FastifyInstance } from 'fastify'
import type { Clock } from '../shared/clock.js'
import { installTap as installWireTap, type WireTap } from '../shared/tap.js'
import { errors } from './errors.js'

export { tapBody, tapBodyText, type TapExchange, type TapHead, type WirePlan } from '../shared/tap.js'

/** The fake Orbtile's wire tap (src/shared/tap.ts), for the adapter suite and `orbtest up --judge`. */
export type OrbtileTap = WireTap

/** Installs the tap on the fake Orbtile; a 429 the wire plays is the app's `rate_limited` (OT-026). */
export function installTap (app: FastifyInstance<Server>, tap: OrbtileTap, clock: Clock):
(err: Error & { code?: string, rawPacket?: unknown }, socket: Duplex) => void {
  return installWireTap(app, tap, clock, (retryAfter) =>
    errors.rateLimited('the wire answered 429 before the app saw the request', retryAfter))
}
