import type { Server } from 'node:http'
import type { Duplex } from 'node:stream'
import Fastify, {
  type FastifyInstance, type FastifyServerOptions, type HTTPMethods, type RouteHandlerMethod
} from 'fastify'
import { answerClientError, createFakeServer, inviteBody, NO_ROUTE_SCHEMAS } from '../shared/http-server.js'
import { BASE_PATH, LIMITS } from '../spec/orbtile.js'
import { errors, OrbtileError, rawBadRequest, sendError } from './errors.js'
import { parseBody, parseBodyShown, pipelineContext, runHeadPipeline, type RouteConfig } from './pipeline.js'
import { registerHandler, unregisterHandler } from './routes/adapters.js'
import { infoHandler } from './routes/info.js'
import { batchHandler, eventsHandler, sessionHandler } from './routes/sessions.js'
import type { OrbtileStore } from './store.js'
import { installTap, tapBody, tapBodyText, type OrbtileTap } from './tap.js'

/** One route of the protocol, relative to `basePath`. */
export interface OrbtileRoute {
  method: HTTPMethods
  path: string
  /** Adapter routes take their rate-limit token from the adapter's own bucket (OT-A20). */
  adapterRoute: boolean
  handler: RouteHandlerMethod
}

/** What buildOrbtileApp needs: the fake's store and the options that shape its server. */
export interface BuildOptions {
  store: OrbtileStore
  rateLimit: 'on' | 'off'
  logger: FastifyServerOptions['logger']
  /**
   * Test hook: routes served beside the protocol's, through the same pipeline. Exists for the pipeline's own tests
   * and for prototyping an extension (see OrbtileMockOptions.extraRoutes); the protocol never needs it.
   */
  extraRoutes?: readonly OrbtileRoute[]
  /** The client suites' and `--judge`'s view of the wire (tap.ts); without one no hook of it is installed. */
  tap?: OrbtileTap
}

// Every adapter route hangs off this path.
const ADAPTER = '/adapters/:adapterId'

/** OT-006: the protocol's routes, relative to basePath (OT-A07's unregister among them). */
export function orbtileRoutes (store: OrbtileStore): OrbtileRoute[] {
  const { adapters, sessions } = store
  return [
    { method: 'GET', path: '/info', adapterRoute: false, handler: infoHandler(store) },
    { method: 'PUT', path: ADAPTER, adapterRoute: true, handler: registerHandler(adapters, store) },
    { method: 'DELETE', path: ADAPTER, adapterRoute: true, handler: unregisterHandler(adapters) },
    {
      method: 'POST',
      path: `${ADAPTER}/sessions/:sessionId`,
      adapterRoute: true,
      handler: sessionHandler(adapters, sessions)
    },
    { method: 'PUT', path: `${ADAPTER}/sessions`, adapterRoute: true, handler: batchHandler(adapters, sessions) },
    { method: 'POST', path: `${ADAPTER}/events`, adapterRoute: true, handler: eventsHandler(adapters, sessions) }
  ]
}

/**
 * Builds the fake Orbtile's fastify instance around a plain `http.Server` that the caller listens on. The request
 * pipeline runs in one `onRequest` hook, in the order OT-A02 fixes; body parsing and the routes follow.
 */
export function buildOrbtileApp (options: BuildOptions): FastifyInstance<Server> {
  const { store, tap } = options
  let malformed: ((err: Error & { code?: string, rawPacket?: unknown }, socket: Duplex) => void) | undefined
  const app = Fastify({
    logger: options.logger,
    // The caller owns the server so that it can close and re-open the socket (OT-A03) without a new instance.
    // OT-A05: a missing Host must get the spec's JSON body, so Node may not answer it with a bare 400 first.
    serverFactory: (handler) => createFakeServer(handler, rawBadRequest),
    exposeHeadRoutes: false,
    schemaController: NO_ROUTE_SCHEMAS,
    // Long ids must reach the adapterId check (invalid_field), not fail routing (not_found).
    routerOptions: { maxParamLength: 4096 },
    bodyLimit: LIMITS.maxBodyBytes,
    return503OnClosing: false,
    clientErrorHandler: (err, socket) => {
      malformed?.(err, socket)
      answerClientError(err, socket, rawBadRequest)
    },
    // A request target fastify cannot decode (a broken %-escape) still gets the spec's error.
    frameworkErrors: (_err, _request, reply) => {
      sendError(reply, errors.badRequest('the request target is not a valid URL'))
    }
  })

  // One context per fake: the pipeline's per-fake memo lives in it, so fakes in one process share nothing.
  const ctx = pipelineContext(store, options.rateLimit, LIMITS)
  const allowedMethods = registerRoutes(app, [...orbtileRoutes(store), ...(options.extraRoutes ?? [])])

  // The tap sees each request before the pipeline does, so it journals what the pipeline refuses as well.
  if (tap !== undefined) malformed = installTap(app, tap, store.clock)

  // Declared up front, so that every request object has the field from its construction (admittedToken).
  app.decorateRequest('orbtileToken', null)
  // A callback hook, not an async one: the head's verdict (a 411 for a chunked body, OT-017) is sent while Node's
  // parser is still on the head, before it reads body bytes that came in the same packet; an async hook answers a
  // tick later, after the parser has met a broken chunk and answered 400 (REL-02).
  app.addHook('onRequest', (request, reply, done) => {
    try {
      // `request.routeOptions` builds a fresh object on every read. A request that matched no route may still
      // name a known path with another method: that is 405, not 404 (OT-A01).
      let route: RouteConfig | undefined
      if (request.is404) {
        const allow = allowedMethods(request.url)
        route = allow === undefined ? undefined : { kind: 'method-not-allowed', allow }
      } else {
        route = (request.routeOptions.config as { orbtile?: RouteConfig }).orbtile
      }
      runHeadPipeline(request, ctx, route)
    } catch (err) {
      done(err as Error)
      return
    }
    // The head passed every check: only now is a body invited (see createFakeServer).
    inviteBody(request.raw, reply.raw)
    done()
  })

  // OT-154, OT-A05: every body is parsed by the pipeline's parseBody, whatever its type (step 7 has refused other
  // types already). Under its own name too: fastify remembers the parser it found for a named type, but looks the
  // catch-all up afresh on every request.
  // Kept: with the other kept shortcuts, a session update runs at 61% of bare fastify, 48% without (benchmarks.md).
  app.removeAllContentTypeParsers()
  const parser: typeof parseBody = tap === undefined
    ? parseBody
    : (request, body, done) => {
        tapBody(request, body as Buffer)
        parseBodyShown(request, body as Buffer, done, tapBodyText)
      }
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, parser)
  app.addContentTypeParser('*', { parseAs: 'buffer' }, parser)

  app.setNotFoundHandler(() => { throw errors.notFound() })
  app.setErrorHandler((err, request, reply) => {
    const answer = toOrbtileError(err)
    if (answer.code === 'internal') request.log.error({ err }, 'unexpected fault')
    return sendError(reply, answer)
  })

  return app
}

/**
 * Registers each route under basePath, and returns what answers 405 (OT-A01): for a request target, the methods
 * its path allows, or undefined for a path no route has. Matching the few route patterns on a miss is far cheaper
 * at start-up than a 405 route for each of the ~35 methods Node parses.
 */
export function registerRoutes (app: FastifyInstance<Server>, routes: readonly OrbtileRoute[]):
(target: string) => string[] | undefined {
  const allowed = new Map<string, HTTPMethods[]>()
  for (const route of routes) {
    const url = BASE_PATH + route.path
    allowed.set(url, [...(allowed.get(url) ?? []), route.method])
    const config: { orbtile: RouteConfig } = { orbtile: { kind: 'route', adapterRoute: route.adapterRoute } }
    app.route({ method: route.method, url, config, handler: route.handler })
  }
  const segment = (part: string): string => part.startsWith(':') ? '[^/]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
  const patterns = [...allowed].map(([url, allow]) => ({
    pattern: new RegExp(`^${url.split('/').map(segment).join('/')}$`),
    allow: allow as string[]
  }))
  return (target) => {
    const path = target.split('?', 1)[0]!
    return patterns.find(({ pattern }) => pattern.test(path))?.allow
  }
}

/** Maps anything thrown during a request to the spec's error: fastify's own 4xx become their spec codes. */
export function toOrbtileError (err: unknown): OrbtileError {
  if (err instanceof OrbtileError) return err
  const fastifyError = err as { code?: string, statusCode?: number }
  switch (fastifyError.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return errors.payloadTooLarge(`the body is over ${LIMITS.maxBodyBytes} bytes`)
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return errors.unsupportedMediaType('the body must be application/json')
  }
  if (typeof fastifyError.statusCode === 'number' && fastifyError.statusCode >= 400 && fastifyError.statusCode < 500) {
    return errors.badRequest('the request could not be read')
  }
  return errors.internal()
}
