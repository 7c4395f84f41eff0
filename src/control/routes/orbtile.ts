import type { FastifyInstance } from 'fastify'
import type { UserChange } from '../../orbtile-mock/index.js'
import { ControlError } from '../errors.js'
import { runningFake, type ControlRouteContext } from './context.js'

type AdapterParams = { adapterId: string }

/**
 * `/control/orbtile/...`: the user's side of the fake Orbtile (OrbtileControl, src/orbtile-mock/control.ts). Its
 * refusals are ControlErrors already, which the server's error handler answers.
 */
export function orbtileRoutes (app: FastifyInstance, { orbtile, body }: ControlRouteContext): void {
  const fake = runningFake(orbtile, 'Orbtile')

  app.get('/control/orbtile/state', async () => fake().control.state())
  app.put('/control/orbtile/api', async (request) => fake().control.setApi(body('ApiSwitch', request.body)))
  app.get('/control/orbtile/adapters/:adapterId', async (request) => {
    const { adapterId } = request.params as AdapterParams
    const found = fake().control.adapter(adapterId)
    if (found === undefined) throw new ControlError('not_found', `the fake has never seen adapter ${adapterId}`)
    return found
  })
  app.delete('/control/orbtile/adapters/:adapterId', async (request) =>
    fake().control.forget((request.params as AdapterParams).adapterId))
  app.put('/control/orbtile/adapters/:adapterId/user', async (request) => {
    const { adapterId } = request.params as AdapterParams
    const change = body<UserChange>('UserChange', request.body)
    return fake().control.setUser(adapterId, change)
  })
  app.get('/control/orbtile/adapters/:adapterId/icon/:file', async (request, reply) => {
    const { adapterId, file } = request.params as AdapterParams & { file: string }
    const size = file === '28.png' ? 28 : file === '56.png' ? 56 : undefined
    if (size === undefined) throw new ControlError('not_found', 'icons are 28.png and 56.png')
    const png = fake().control.icon(adapterId, size)
    if (png === undefined) throw new ControlError('not_found', `adapter ${adapterId} has no custom icon`)
    return reply.type('image/png').header('cache-control', 'no-store').send(png)
  })
  app.post('/control/orbtile/adapters/:adapterId/sessions/:sessionId/tap', async (request) => {
    const { adapterId, sessionId } = request.params as AdapterParams & { sessionId: string }
    return fake().control.tap(adapterId, sessionId)
  })
  app.post('/control/orbtile/adapters/:adapterId/requests/:requestId/decide', async (request) => {
    const { adapterId, requestId } = request.params as AdapterParams & { requestId: string }
    const answer = body<{ decision?: 'allow' | 'deny', picks?: number[][] }>('Decision', request.body)
    return fake().control.decide(adapterId, requestId, answer)
  })
  app.post('/control/orbtile/token/regenerate', async () => fake().control.regenerateToken())
  app.post('/control/orbtile/restart', async () => fake().control.restart())
}
