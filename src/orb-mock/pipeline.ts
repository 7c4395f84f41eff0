import type { Server } from 'node:http'
import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestHookHandler, RouteOptions } from 'fastify'
import { orbErrors, type OrbError } from './errors.js'
import type { OrbFaults } from './faults.js'
import type { AppState } from './records.js'
import type { OrbRoute, RouteCall } from './route.js'
import { operation, type OperationValidator } from './spec.js'
import type { OrbStore } from './store.js'
import { headerCount, inviteBody } from '../shared/http-server.js'
import type { Scope } from './world.js'

// The fake Orb's request pipeline: the steps every request meets, in order, each a function below; the first that
// refuses answers. `registerPipeline` composes them once, at start-up, so that a request pays only for its steps.

/** What the pipeline's steps read from the fake. */
export interface PipelineContext {
  store: OrbStore
  faults: OrbFaults
}

/** The steps in the order a request meets them, with the ledger ids they implement and the statuses they answer. */
export const ORB_PIPELINE = [
  { step: 'checkHost', ledger: ['RFC 9112 §3.2'], statuses: [400], runs: 'on every request, first' },
  { step: 'checkRoute', ledger: ['ORB-001', 'ORB-A23'], statuses: [404, 405], runs: 'for a request no route matches' },
  { step: 'checkBearer', ledger: ['ORB-003', 'ORB-A22'], statuses: [401], runs: 'on bot routes, from the head' },
  { step: 'checkScope', ledger: ['ORB-005', 'ORB-006', 'ORB-A07'], statuses: [403], runs: 'on routes with a scope' },
  { step: 'parseJsonBody', ledger: ['ORB-A23'], statuses: [400, 413, 415], runs: 'when a body comes' },
  { step: 'validateRequest', ledger: ['ORB-A23'], statuses: [400], runs: 'on every route' },
  {
    step: 'route handler',
    ledger: ['ORB-A02', 'ORB-A03', 'ORB-A08', 'ORB-102'],
    statuses: [400, 403, 404, 409, 410, 429],
    runs: 'on every route'
  }
] as const

// ---------------------------------------------------------------------------------------------------------------
// Step 0: one authority

/** RFC 9112 §3.2: a request with more than one Host header is 400, whatever the headers say. */
export function checkHost (request: FastifyRequest): void {
  if (headerCount(request.raw, 'host') > 1) throw orbErrors.bad('The request carries more than one Host header')
}

// ---------------------------------------------------------------------------------------------------------------
// Step 1: the route

/** Which methods a path serves: undefined for a path no route has. */
export type AllowedMethods = (path: string) => readonly string[] | undefined

/** ORB-001, ORB-A23: a request no route matched: a known path with another method is 405 with Allow, else 404. */
export function checkRoute (request: FastifyRequest, allowed: AllowedMethods): never {
  const path = request.url.split('?', 1)[0]!
  const allow = allowed(path)
  if (allow !== undefined) throw orbErrors.methodNotAllowed(allow)
  throw orbErrors.notFound(`No route ${request.method} ${path}`)
}

/** The methods each route path serves, matched against a request's path (`{id}` stands for one segment). */
export function allowedMethods (routes: readonly OrbRoute[]): AllowedMethods {
  const allowed = new Map<string, string[]>()
  for (const route of routes) allowed.set(route.path, [...(allowed.get(route.path) ?? []), route.method as string])
  const patterns = [...allowed].map(([path, allow]) => ({
    pattern: new RegExp(`^${path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{\w+\}/g, '[^/]+')}$`),
    allow
  }))
  return (path) => patterns.find(({ pattern }) => pattern.test(path))?.allow
}

// ---------------------------------------------------------------------------------------------------------------
// Steps 2 and 3: the token and the scope, from the head, before a byte of the body is read

const BEARER = /^Bearer +(\S+) *$/i

/** ORB-003, ORB-A22: `Authorization: Bearer <token>` naming a live app token, else 401 with the spec's words. */
export function checkBearer (request: FastifyRequest, store: OrbStore): AppState {
  const header = request.headers.authorization
  const match = header === undefined ? null : BEARER.exec(header)
  const app = match === null ? undefined : store.appByToken(match[1]!)
  if (app === undefined) throw orbErrors.unauthorized()
  return app
}

/** ORB-005, ORB-006, ORB-A07: the first gate, the scope the developer asked for, else 403. */
export function checkScope (app: AppState, scope: Scope): void {
  if (!app.scopes.has(scope)) throw orbErrors.forbidden(`the ${scope} scope is required`)
}

// ---------------------------------------------------------------------------------------------------------------
// Step 4: the body

/** A body larger than this is refused before it is read (413); the largest valid body (50 commands) is far below it. */
export const BODY_LIMIT = 1024 * 1024

/**
 * ORB-A23: JSON bodies only; fastify answers any other type from this being the one parser (415, `bodyError`). A
 * bodiless request that still says application/json, as many clients do on every call, has no body rather than a
 * broken one; a route that needs a body says so (400). JSON.parse keeps a "__proto__" key as an ordinary own key:
 * an unknown field, ignored like any other.
 */
export function parseJsonBody (
  _request: FastifyRequest,
  text: string | Buffer,
  done: (err: Error | null, body?: unknown) => void
): void {
  if (text === '') {
    done(null, undefined)
    return
  }
  try {
    done(null, JSON.parse(text as string))
  } catch {
    done(orbErrors.bad('The body is not valid JSON'), undefined)
  }
}

/** ORB-A23: fastify's own refusals of a body, as the Orb's errors; undefined for anything else. */
export function bodyError (err: unknown): OrbError | undefined {
  switch ((err as { code?: string }).code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return orbErrors.unsupportedMediaType()
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return orbErrors.tooLarge(BODY_LIMIT)
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return orbErrors.bad('The body is empty; send a JSON object')
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return orbErrors.bad('The body is not valid JSON')
  }
  if (err instanceof SyntaxError) return orbErrors.bad('The body is not valid JSON')
  return undefined
}

// ---------------------------------------------------------------------------------------------------------------
// Step 5: the query, path and body against the spec's own schemas

/**
 * ORB-A23 and each operation's schema: the query (converted), the path and the body, in that order, else 400; what
 * passes is the handler's call.
 */
export function validateRequest (
  validator: OperationValidator,
  request: FastifyRequest,
  reply: FastifyReply,
  app: AppState
): RouteCall {
  return {
    app,
    query: validator.query(request.query),
    params: validator.params(request.params),
    body: validator.body(request.body),
    request,
    reply
  }
}

// Step 6 is each route's handler: the community's gates (gates.ts), the throttles and the answer.

// ---------------------------------------------------------------------------------------------------------------
// The composition

/** The calling app, as steps 2 and 3 leave it on the request for the handler. */
interface WithCaller { orbApp: AppState | null }

/** One route with its steps composed: the token and the scope as its `onRequest` hook, then validation and handler. */
export function composeRoute (route: OrbRoute, ctx: PipelineContext): RouteOptions<Server> {
  const validator = operation(route.method as string, route.path)
  // The scope a request needs; under the `music-scope-unchecked` fault, music asks none (ORB-084).
  const scope = route.scope === 'music' && ctx.faults.has('music-scope-unchecked') ? undefined : route.scope
  const head: onRequestHookHandler<Server> = (request, reply, done) => {
    try {
      const caller = checkBearer(request, ctx.store)
      if (scope !== undefined) checkScope(caller, scope)
      ;(request as unknown as WithCaller).orbApp = caller
    } catch (err) {
      done(err as Error)
      return
    }
    // The head passed steps 2 and 3: only now is a body invited.
    inviteBody(request.raw, reply.raw)
    done()
  }
  const open: onRequestHookHandler<Server> = (request, reply, done) => {
    inviteBody(request.raw, reply.raw)
    done()
  }
  return {
    method: route.method,
    url: route.path.replace(/\{(\w+)\}/g, ':$1'),
    onRequest: route.auth === 'public' ? open : head,
    handler: async (request, reply) => {
      const caller = (request as unknown as WithCaller).orbApp!
      return route.handler(validateRequest(validator, request, reply, caller))
    }
  }
}

/**
 * Registers the whole pipeline on the fake's fastify instance: step 0 as a hook of every request, step 1 as its
 * not-found handler, step 4 as its one body parser, and each route with steps 2, 3, 5 and 6 composed
 * (composeRoute). Fastify runs them in that order: routing, `onRequest`, body parsing, then the handler.
 */
export function registerPipeline (
  app: FastifyInstance<Server>,
  routes: readonly OrbRoute[],
  ctx: PipelineContext,
  /** Hears each body's text before it is parsed (the wire tap of a client suite). */
  onBody?: (request: FastifyRequest, text: string) => void
): void {
  app.decorateRequest('orbApp', null)
  // Step 0 stays a hook of its own, on every request: in a route's hook alone, a request no route takes would have
  // its body read (and a large one answered 413) before its second Host was refused.
  app.addHook('onRequest', (request, _reply, done) => {
    try {
      checkHost(request)
    } catch (err) {
      done(err as Error)
      return
    }
    done()
  })
  const allowed = allowedMethods(routes)
  app.setNotFoundHandler((request) => checkRoute(request, allowed))
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('application/json', { parseAs: 'string' }, onBody === undefined
    ? parseJsonBody
    : (request, text, done) => {
        onBody(request, text as string)
        parseJsonBody(request, text, done)
      })
  for (const route of routes) app.route(composeRoute(route, ctx))
}
