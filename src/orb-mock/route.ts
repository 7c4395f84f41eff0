import type { FastifyReply, FastifyRequest, HTTPMethods } from 'fastify'
import type { AppState } from './records.js'
import type { OrbServices } from './services.js'
import type { Scope } from './world.js'

/** What a route handler receives: the calling app (bot routes), and the request's parts validated by the spec. */
export interface RouteCall<Q = Record<string, unknown>, B = Record<string, unknown>, P = Record<string, unknown>> {
  /** The app whose token called; null on public routes. */
  app: AppState
  query: Q
  body: B
  params: P
  request: FastifyRequest
  reply: FastifyReply
}

/** One operation of the Orb bot API as the fake serves it. */
export interface OrbRoute {
  method: HTTPMethods
  /** The path exactly as the spec document writes it, for example `/api/bot/v1/messages/{id}`. */
  path: string
  /** `bot` routes need the app's bearer token (ORB-003); `public` ones do not (ORB-010). */
  auth: 'bot' | 'public'
  /** ORB-006, ORB-A07: the scope the route needs, if any. */
  scope?: Scope
  /** The route's own work, past the pipeline's checks: the community's gates, then the answer. */
  handler: (call: RouteCall<any, any, any>) => unknown
}

/** What every route module is given: the fake's services, and whether its throttles are on. */
export interface RouteContext extends OrbServices {
  /** `off` switches the fake's throttles off, for load tests (ORB-A03 stays the default). */
  readonly rateLimit: 'on' | 'off'
}
