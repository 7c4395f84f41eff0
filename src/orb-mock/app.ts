import type { Server } from 'node:http'
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify'
import { answerClientError, createFakeServer } from '../shared/http-server.js'
import { OrbError, orbErrors, rawOrbBadRequest, sendOrbError } from './errors.js'
import { requireScope } from './gates.js'
import { operation } from './spec.js'
import type { OrbRoute, RouteContext } from './route.js'
import type { AppState } from './store.js'
import { appRoutes } from './routes/app.js'
import { messageRoutes } from './routes/messages.js'
import { commandRoutes } from './routes/commands.js'
import { directoryRoutes } from './routes/directory.js'
import { passportRoutes } from './routes/passport.js'
import { voiceRoutes } from './routes/voice.js'
import { musicRoutes } from './routes/music.js'
import { eventRoutes } from './routes/events.js'

export interface OrbAppOptions extends RouteContext {
  logger: FastifyServerOptions['logger']
  /** Routes served beside the spec's (later capabilities add theirs). */
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

// A body larger than this is refused before it is read; the largest valid body (50 commands) is far below it.
const BODY_LIMIT = 1024 * 1024

/**
 * Builds the fake Orb's fastify instance. Per request: the route is matched (404, or 405 with Allow for a known path,
 * ORB-A23); a bot route checks the bearer token (401) and its scope (403) before the body is read; the query, path
 * and body are then validated against the spec's own schemas (400); the handler applies the community's gates.
 */
export function buildOrbApp (options: OrbAppOptions): FastifyInstance<Server> {
  const app = Fastify({
    logger: options.logger,
    serverFactory: (handler) => createFakeServer(handler, rawOrbBadRequest),
    exposeHeadRoutes: false,
    bodyLimit: BODY_LIMIT,
    return503OnClosing: false,
    routerOptions: { maxParamLength: 512 },
    clientErrorHandler: (err, socket) => answerClientError(err, socket, rawOrbBadRequest),
    frameworkErrors: (err, _request, reply) => {
      const tooLong = (err as { code?: string }).code === 'FST_ERR_ROUTER_MAX_PARAM_LENGTH' || /param.*length/i.test(err.message)
      void sendOrbError(reply, orbErrors.bad(tooLong ? 'An id in the path is too long' : 'The request target is not a valid URL'))
    }
  })
  app.decorateRequest('orbApp', null)

  // ORB-A23: JSON bodies only (any other type is 415). A bodiless request that still says application/json, as many
  // clients do on every call, has no body rather than a broken one; a route that needs a body says so (400).
  // JSON.parse keeps a "__proto__" key as an ordinary own key: an unknown field, ignored like any other.
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, text, done) => {
    if (text === '') {
      done(null, undefined)
      return
    }
    try {
      done(null, JSON.parse(text as string))
    } catch {
      done(orbErrors.bad('The body is not valid JSON'), undefined)
    }
  })

  const routes = [...orbRoutes(options), ...(options.extraRoutes ?? [])]
  const allowed = new Map<string, string[]>()
  for (const route of routes) {
    allowed.set(route.path, [...(allowed.get(route.path) ?? []), route.method as string])
    const validator = operation(route.method as string, route.path)
    app.route({
      method: route.method,
      url: route.path.replace(/\{(\w+)\}/g, ':$1'),
      // ORB-003, ORB-005: the token and the scope are checked from the head, before a byte of the body is read.
      onRequest: (request, _reply, done) => {
        if (route.auth === 'public') return done()
        try {
          const caller = authenticate(options, request.headers.authorization)
          if (route.scope !== undefined && !(route.scope === 'music' && options.store.faults.has('music-scope-unchecked'))) requireScope(caller, route.scope)
          ;(request as unknown as { orbApp: AppState }).orbApp = caller
          done()
        } catch (err) {
          done(err as Error)
        }
      },
      handler: async (request, reply) => route.handler({
        app: (request as unknown as { orbApp: AppState }).orbApp,
        query: validator.query(request.query),
        params: validator.params(request.params),
        body: validator.body(request.body),
        request,
        reply
      })
    })
  }
  const patterns = [...allowed].map(([path, allow]) => ({
    pattern: new RegExp(`^${path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{\w+\\?\}|\{\w+\}/g, '[^/]+')}$`),
    allow
  }))

  app.setNotFoundHandler((request) => {
    const path = request.url.split('?', 1)[0]!
    const allow = patterns.find(({ pattern }) => pattern.test(path))?.allow
    if (allow !== undefined) throw orbErrors.methodNotAllowed(allow)
    throw orbErrors.notFound(`No route ${request.method} ${path}`)
  })
  app.setErrorHandler((err, request, reply) => {
    const answer = toOrbError(err)
    if (answer.status >= 500) request.log.error({ err }, 'unexpected fault')
    return sendOrbError(reply, answer)
  })
  return app
}

/** ORB-003: `Authorization: Bearer <token>` naming a live app token, else 401 with the spec's words. */
function authenticate (ctx: RouteContext, header: string | undefined): AppState {
  const match = header === undefined ? null : /^Bearer +(\S+) *$/i.exec(header)
  const app = match === null ? undefined : ctx.store.appByToken(match[1]!)
  if (app === undefined) throw orbErrors.unauthorized()
  return app
}

/** Anything thrown during a request, as the Orb's error body (ORB-101, ORB-A23). */
export function toOrbError (err: unknown): OrbError {
  if (err instanceof OrbError) return err
  const fastifyError = err as { code?: string, statusCode?: number }
  switch (fastifyError.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return orbErrors.unsupportedMediaType()
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new OrbError(413, `The body is over ${BODY_LIMIT} bytes`)
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return orbErrors.bad('The body is empty; send a JSON object')
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return orbErrors.bad('The body is not valid JSON')
  }
  if (err instanceof SyntaxError) return orbErrors.bad('The body is not valid JSON')
  if (typeof fastifyError.statusCode === 'number' && fastifyError.statusCode >= 400 && fastifyError.statusCode < 500) {
    return orbErrors.bad('The request could not be read')
  }
  return orbErrors.internal()
}
