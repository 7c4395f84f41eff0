import type { Server } from 'node:http'
import type { Duplex } from 'node:stream'
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify'
import { answerClientError, createFakeServer, NO_ROUTE_SCHEMAS } from '../shared/http-server.js'
import { installTap, tapBody, type WireTap } from '../shared/tap.js'
import { OrbError, orbErrors, rawOrbBadRequest, sendOrbError } from './errors.js'
import { BODY_LIMIT, bodyError, registerPipeline } from './pipeline.js'
import type { OrbRoute, RouteContext } from './route.js'
import { appRoutes } from './routes/app.js'
import { commandRoutes } from './routes/commands.js'
import { directoryRoutes } from './routes/directory.js'
import { eventRoutes } from './routes/events.js'
import { messageRoutes } from './routes/messages.js'
import { musicRoutes } from './routes/music.js'
import { passportRoutes } from './routes/passport.js'
import { voiceRoutes } from './routes/voice.js'

/** What `buildOrbApp` needs: the routes' context, the logger, and any routes beside the spec's. */
export interface OrbAppOptions extends RouteContext {
  logger: FastifyServerOptions['logger']
  /** The bot suite's view of the wire (src/shared/tap.ts); without one no hook of it is installed. */
  tap?: WireTap | undefined
  /**
   * Test hook: routes served beside the spec's, through the same pipeline; each must be an operation of the spec.
   * For a test or a prototype of an extension; the spec's routes never need it, and nothing here uses it yet.
   */
  extraRoutes?: readonly OrbRoute[]
}

/** ORB-001: every operation the fake Orb serves. */
export function orbRoutes (ctx: RouteContext): OrbRoute[] {
  return [
    ...directoryRoutes(ctx),
    ...appRoutes(ctx),
    ...messageRoutes(ctx),
    ...eventRoutes(ctx),
    ...commandRoutes(ctx),
    ...voiceRoutes(ctx),
    ...musicRoutes(ctx),
    ...passportRoutes(ctx)
  ]
}

/**
 * Builds the fake Orb's fastify instance around a plain `http.Server`. Every request goes through the pipeline
 * (pipeline.ts) in the order it lists: the route (404, 405), the bearer token (401), the scope (403), the body's type
 * and JSON (415, 400), the spec's schemas (400), then the handler with the community's gates.
 */
export function buildOrbApp (options: OrbAppOptions): FastifyInstance<Server> {
  let malformed: ((err: Error & { code?: string, rawPacket?: unknown }, socket: Duplex) => void) | undefined
  const app = Fastify({
    logger: options.logger,
    serverFactory: (handler) => createFakeServer(handler, rawOrbBadRequest),
    exposeHeadRoutes: false,
    schemaController: NO_ROUTE_SCHEMAS,
    bodyLimit: BODY_LIMIT,
    return503OnClosing: false,
    routerOptions: { maxParamLength: 512 },
    clientErrorHandler: (err, socket) => {
      malformed?.(err, socket)
      answerClientError(err, socket, rawOrbBadRequest)
    },
    // A request target fastify cannot route (an over-long id, a broken %-escape) still gets the Orb's 400.
    frameworkErrors: (err, _request, reply) => {
      const code = (err as { code?: string }).code
      const tooLong = code === 'FST_ERR_ROUTER_MAX_PARAM_LENGTH' || /param.*length/i.test(err.message)
      const message = tooLong ? 'An id in the path is too long' : 'The request target is not a valid URL'
      sendOrbError(reply, orbErrors.bad(message))
    }
  })
  const routes = [...orbRoutes(options), ...(options.extraRoutes ?? [])]
  // The tap sees each request before the pipeline does, so it journals what the pipeline refuses as well.
  const tap = options.tap
  if (tap !== undefined) {
    malformed = installTap(app, tap, options.store.clock, (retryAfter) =>
      orbErrors.throttled(retryAfter, 'the wire answered 429 before Orb saw the request'))
  }
  const onBody = tap === undefined ? undefined : tapBody
  registerPipeline(app, routes, { store: options.store, faults: options.store.faults }, onBody)
  app.setErrorHandler((err, request, reply) => {
    const answer = toOrbError(err)
    if (answer.status >= 500) request.log.error({ err }, 'unexpected fault')
    return sendOrbError(reply, answer)
  })
  return app
}

/** Anything thrown during a request, as the Orb's error (ORB-101, ORB-A23): fastify's own 4xx become 400s. */
export function toOrbError (err: unknown): OrbError {
  if (err instanceof OrbError) return err
  const fromBody = bodyError(err)
  if (fromBody !== undefined) return fromBody
  const status = (err as { statusCode?: number }).statusCode
  if (typeof status === 'number' && status >= 400 && status < 500) return orbErrors.bad('The request could not be read')
  return orbErrors.internal()
}
