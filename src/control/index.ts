import type { AddressInfo } from 'node:net'
import type { ValidateFunction } from 'ajv/dist/2020.js'
import Fastify, { type FastifyInstance, type FastifyServerOptions, type HTTPMethods } from 'fastify'
import { ClockNotVirtualError, advanceClock, clockState, type Clock } from '../shared/clock.js'
import { createAjv } from '../shared/ajv.js'
import { readPackageJson } from '../shared/paths.js'
import { UserActionError, type OrbtileMock, type UserChange } from '../orbtile-mock/index.js'
import { OrbtileError } from '../orbtile-mock/errors.js'
import type { CommandInvocation, InstallSpec, MemberPost, NewApp, OrbMock, VoiceChange } from '../orb-mock/index.js'
import { OrbControlError } from '../orb-mock/control-error.js'
import { ControlError, rawControlBadRequest, sendControlError } from './errors.js'
import { answerClientError, createFakeServer } from '../shared/http-server.js'
import { checkControlRequest, isLoopbackName } from './guard.js'
import { StartupError } from '../shared/startup-error.js'

/** The control API's OpenAPI 3.1 document, kept in the repo and served as it is. */
export const CONTROL_OPENAPI_FILE = 'src/control/openapi.json'

interface OpenApiDocument {
  paths: Record<string, Record<string, unknown>>
  components: { schemas: Record<string, object> }
}

export interface ControlServerOptions {
  /** Loopback port; 0 picks a free one. Default 8788. */
  port?: number
  /** Loopback address to bind. Default 127.0.0.1. */
  host?: string
  /** The clock every fake shares. */
  clock: Clock
  orbtile?: OrbtileMock
  orb?: OrbMock
  logger?: FastifyServerOptions['logger']
}

export interface ControlServer {
  /** The server's base URL, for example `http://127.0.0.1:8788`. */
  readonly url: string
  readonly port: number
  readonly app: FastifyInstance
  /** Every `METHOD /path` this server answers (405 answers aside), in OpenAPI path syntax. */
  readonly operations: readonly string[]
  close(): Promise<void>
}

/**
 * Starts the control server: loopback HTTP only, foreign Host and Origin refused, every route described by the
 * OpenAPI document in the repo and every request body validated against that document's schemas.
 */
export async function startControlServer (options: ControlServerOptions): Promise<ControlServer> {
  const document = readPackageJson<OpenApiDocument>(CONTROL_OPENAPI_FILE)
  const bodyValidator = compileBodyValidators(document)
  const { clock, orbtile, orb } = options
  const app = Fastify({
    logger: options.logger ?? false,
    exposeHeadRoutes: false,
    // The same hardening as the fakes: every answer in the control API's JSON, even for bytes no route sees.
    serverFactory: (handler) => createFakeServer(handler, rawControlBadRequest),
    clientErrorHandler: (err, socket) => answerClientError(err, socket, rawControlBadRequest),
    frameworkErrors: (_err, _request, reply) => { void sendControlError(reply, new ControlError('bad_request', 'the request target is not a valid URL')) }
  })
  let port = 0
  const host = options.host ?? '127.0.0.1'

  // An empty JSON body is no body: a client that always sends Content-Type must still be able to POST a tap.
  app.removeContentTypeParser('application/json')
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    if (body === '') {
      done(null, undefined)
      return
    }
    try {
      done(null, JSON.parse(body as string))
    } catch {
      done(new ControlError('bad_request', 'the body is not valid JSON'), undefined)
    }
  })
  const operations: string[] = []
  app.addHook('onRoute', (route) => {
    if (route.handler.name === 'methodNotAllowed') return
    for (const method of [route.method].flat()) operations.push(`${method} ${route.url.replace(/:(\w+)/g, '{$1}')}`)
  })
  app.addHook('onRequest', async (request) => checkControlRequest(request, () => ({ host, port })))
  app.setNotFoundHandler(() => { throw new ControlError('not_found', 'no such control route; see GET /control/openapi.json') })
  app.setErrorHandler((err, request, reply) => {
    if (err instanceof ControlError) return sendControlError(reply, err)
    if (err instanceof ClockNotVirtualError) return sendControlError(reply, new ControlError('clock_not_virtual', err.message))
    const status = (err as { statusCode?: number }).statusCode
    if (typeof status === 'number' && status >= 400 && status < 500) {
      return sendControlError(reply, new ControlError('bad_request', 'the request could not be read; send a JSON body'))
    }
    request.log.error({ err }, 'control: unexpected fault')
    return sendControlError(reply, new ControlError('internal', 'unexpected fault; see the log'))
  })

  const needOrbtile = (): OrbtileMock => {
    if (orbtile === undefined) throw new ControlError('not_found', 'the fake Orbtile is not running in this process')
    return orbtile
  }
  const needOrb = (): OrbMock => {
    if (orb === undefined) throw new ControlError('not_found', 'the fake Orb is not running in this process')
    return orb
  }
  const body = <T>(schema: string, value: unknown): T => {
    const validate = bodyValidator(schema)
    if (!validate(value)) {
      const error = validate.errors?.[0]
      const where = error?.instancePath === '' ? 'body' : `body${error?.instancePath.replaceAll('/', '.')}`
      throw new ControlError('bad_request', `${where} ${error?.message ?? 'is invalid'} (schema ${schema})`)
    }
    return value as T
  }

  app.get('/control/openapi.json', async () => document)
  app.get('/control/orbtile/state', async () => needOrbtile().control.state())
  app.put('/control/orbtile/api', async (request) =>
    needOrbtile().control.setApi(body('ApiSwitch', request.body)))
  app.get('/control/orbtile/adapters/:adapterId', async (request) => {
    const { adapterId } = request.params as { adapterId: string }
    const found = needOrbtile().control.adapter(adapterId)
    if (found === undefined) throw new ControlError('not_found', `the fake has never seen adapter ${adapterId}`)
    return found
  })
  app.delete('/control/orbtile/adapters/:adapterId', async (request) =>
    userAction(() => needOrbtile().control.forget((request.params as { adapterId: string }).adapterId)))
  app.put('/control/orbtile/adapters/:adapterId/user', async (request) => {
    const { adapterId } = request.params as { adapterId: string }
    const change = body<UserChange>('UserChange', request.body)
    try {
      return needOrbtile().control.setUser(adapterId, change)
    } catch (err) {
      if (err instanceof OrbtileError) throw new ControlError('bad_request', err.message)
      throw err
    }
  })
  app.get('/control/orbtile/adapters/:adapterId/icon/:file', async (request, reply) => {
    const { adapterId, file } = request.params as { adapterId: string, file: string }
    const size = file === '28.png' ? 28 : file === '56.png' ? 56 : undefined
    if (size === undefined) throw new ControlError('not_found', 'icons are 28.png and 56.png')
    const png = needOrbtile().control.icon(adapterId, size)
    if (png === undefined) throw new ControlError('not_found', `adapter ${adapterId} has no custom icon`)
    return reply.type('image/png').header('cache-control', 'no-store').send(png)
  })
  app.post('/control/orbtile/adapters/:adapterId/sessions/:sessionId/tap', async (request) => {
    const { adapterId, sessionId } = request.params as { adapterId: string, sessionId: string }
    return userAction(() => needOrbtile().control.tap(adapterId, sessionId))
  })
  app.post('/control/orbtile/adapters/:adapterId/requests/:requestId/decide', async (request) => {
    const { adapterId, requestId } = request.params as { adapterId: string, requestId: string }
    const answer = body<{ decision?: 'allow' | 'deny', picks?: number[][] }>('Decision', request.body)
    return userAction(() => needOrbtile().control.decide(adapterId, requestId, answer))
  })
  app.post('/control/orbtile/token/regenerate', async () => needOrbtile().control.regenerateToken())
  app.post('/control/orbtile/restart', async () => needOrbtile().control.restart())
  app.get('/control/orb/state', async () => needOrb().control.state())
  app.post('/control/orb/messages', async (request) =>
    orbAction(() => needOrb().control.memberPost(body<MemberPost>('OrbMemberPost', request.body))))
  app.put('/control/orb/servers/:server/apps/:app', async (request) => {
    const { server, app: appId } = request.params as { server: string, app: string }
    const change = body<InstallSpec>('OrbInstallChange', request.body ?? {})
    return orbAction(() => needOrb().control.install(server, appId, change))
  })
  app.delete('/control/orb/servers/:server/apps/:app', async (request) => {
    const { server, app: appId } = request.params as { server: string, app: string }
    return orbAction(() => needOrb().control.uninstall(server, appId))
  })
  app.post('/control/orb/apps', async (request) =>
    orbAction(() => needOrb().control.createApp(body<NewApp>('OrbNewApp', request.body))))
  app.delete('/control/orb/apps/:app', async (request) =>
    orbAction(() => needOrb().control.deleteApp((request.params as { app: string }).app, { messages: (request.query as { messages?: string }).messages === 'delete' })))
  app.delete('/control/orb/messages/:id', async (request) => {
    const id = (request.params as { id: string }).id
    if (!/^[1-9][0-9]{0,15}$/.test(id)) throw new ControlError('bad_request', `message id must be a positive integer, not ${JSON.stringify(id)}`)
    return orbAction(() => needOrb().control.deleteMessage(Number(id)))
  })
  app.post('/control/orb/apps/:app/rotate-token', async (request) =>
    orbAction(() => needOrb().control.rotateToken((request.params as { app: string }).app)))
  app.put('/control/orb/chain', async (request) =>
    needOrb().control.setChain(body<{ available: boolean }>('OrbChain', request.body)))
  app.put('/control/orb/voice', async (request) =>
    orbAction(() => needOrb().control.setVoice(body<VoiceChange>('OrbVoiceChange', request.body))))
  app.post('/control/orb/commands/invoke', async (request) =>
    orbAction(() => needOrb().control.invoke(body<CommandInvocation>('OrbInvoke', request.body))))
  app.put('/control/orb/apps/:app/endpoint', async (request) => {
    const { url } = body<{ url: string | null }>('OrbEndpoint', request.body)
    return orbAction(() => needOrb().control.setEndpoint((request.params as { app: string }).app, url))
  })
  app.post('/control/orb/apps/:app/test-event', async (request) =>
    orbAction(() => needOrb().control.testEvent((request.params as { app: string }).app)))
  app.get('/control/orb/apps/:app/deliveries', async (request) =>
    orbAction(() => needOrb().control.deliveries((request.params as { app: string }).app)))
  app.get('/control/clock', async () => clockState(clock))
  app.post('/control/clock/advance', async (request) =>
    advanceClock(clock, body<{ ms: number }>('Advance', request.body).ms))
  app.post('/control/reset', async () => {
    if (orbtile !== undefined) await orbtile.control.reset()
    orb?.control.reset()
    return { reset: true }
  })
  registerMethodNotAllowed(app, document)

  if (!isLoopbackName(host)) throw new StartupError('ORBTEST_CONTROL_NOT_LOOPBACK', `the control server listens on loopback only, not ${host}`)
  try {
    await app.listen({ port: options.port ?? 8788, host })
  } catch (err) {
    await app.close()
    const code = (err as { code?: string }).code
    if (code === 'EADDRINUSE') throw new StartupError('ORBTEST_PORT_IN_USE', `port ${options.port ?? 8788} on ${host} is in use; pick another with --control-port (0 picks a free one)`)
    throw new StartupError('ORBTEST_CONTROL_LISTEN', `the control server could not listen on ${host}:${options.port ?? 8788}: ${(err as Error).message}`)
  }
  port = (app.server.address() as AddressInfo).port
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    port,
    app,
    operations,
    close: () => app.close()
  }
}

function compileBodyValidators (document: OpenApiDocument): (name: string) => ValidateFunction {
  const ajv = createAjv().addSchema({ $id: 'control', components: document.components })
  const cache = new Map<string, ValidateFunction>()
  return (name) => {
    let validate = cache.get(name)
    if (validate === undefined) {
      validate = ajv.compile({ $ref: `control#/components/schemas/${name}` })
      cache.set(name, validate)
    }
    return validate
  }
}

const METHODS: readonly HTTPMethods[] = ['DELETE', 'GET', 'PATCH', 'POST', 'PUT']

// The user's actions refuse with 404 (no such session or request), 409 (not now) or 400 (a bad answer).
function userAction<T> (action: () => T): T {
  try {
    return action()
  } catch (err) {
    if (err instanceof UserActionError) throw new ControlError(err.kind, err.message)
    throw err
  }
}

// What members and admins cannot do refuses with 404, 400 or 409, as the control API's codes.
function orbAction<T> (action: () => T): T {
  try {
    return action()
  } catch (err) {
    if (err instanceof OrbControlError) throw new ControlError(err.kind, err.message)
    throw err
  }
}

// Every documented path answers 405 to the methods the document does not list for it.
function registerMethodNotAllowed (app: FastifyInstance, document: OpenApiDocument): void {
  for (const [path, operations] of Object.entries(document.paths)) {
    const allow = Object.keys(operations).map((method) => method.toUpperCase())
    const others = METHODS.filter((method) => !allow.includes(method))
    app.route({
      method: others,
      url: path.replace(/\{(\w+)\}/g, ':$1'),
      handler: async function methodNotAllowed (_request, reply) {
        reply.header('allow', allow.join(', '))
        throw new ControlError('method_not_allowed', `${path} accepts ${allow.join(', ')}`)
      }
    })
  }
}
