import type { FastifyInstance } from 'fastify'
import type { CommandInvocation, InstallSpec, MemberPost, NewApp, VoiceChange } from '../../orb-mock/index.js'
import { ControlError } from '../errors.js'
import { runningFake, type ControlRouteContext } from './context.js'

type AppParams = { app: string }

/**
 * `/control/orb/...`: what members, admins and the developer console do to the fake Orb (OrbControl,
 * src/orb-mock/control.ts). Its refusals are answered by the server's error handler.
 */
export function orbRoutes (app: FastifyInstance, { orb, body }: ControlRouteContext): void {
  const fake = runningFake(orb, 'Orb')

  app.get('/control/orb/state', async () => fake().control.state())
  app.post('/control/orb/messages', async (request) =>
    fake().control.memberPost(body<MemberPost>('OrbMemberPost', request.body)))
  app.put('/control/orb/servers/:server/apps/:app', async (request) => {
    const { server, app: appId } = request.params as AppParams & { server: string }
    const change = body<InstallSpec>('OrbInstallChange', request.body ?? {})
    return fake().control.install(server, appId, change)
  })
  app.delete('/control/orb/servers/:server/apps/:app', async (request) => {
    const { server, app: appId } = request.params as AppParams & { server: string }
    return fake().control.uninstall(server, appId)
  })
  app.post('/control/orb/apps', async (request) => fake().control.createApp(body<NewApp>('OrbNewApp', request.body)))
  app.delete('/control/orb/apps/:app', async (request) => {
    const messages = (request.query as { messages?: string }).messages === 'delete'
    return fake().control.deleteApp((request.params as AppParams).app, { messages })
  })
  app.delete('/control/orb/messages/:id', async (request) => {
    const id = (request.params as { id: string }).id
    if (!/^[1-9][0-9]{0,15}$/.test(id)) {
      throw new ControlError('bad_request', `message id must be a positive integer, not ${JSON.stringify(id)}`)
    }
    return fake().control.deleteMessage(Number(id))
  })
  app.post('/control/orb/apps/:app/rotate-token', async (request) =>
    fake().control.rotateToken((request.params as AppParams).app))
  app.put('/control/orb/chain', async (request) =>
    fake().control.setChain(body<{ available: boolean }>('OrbChain', request.body)))
  app.put('/control/orb/voice', async (request) =>
    fake().control.setVoice(body<VoiceChange>('OrbVoiceChange', request.body)))
  app.post('/control/orb/commands/invoke', async (request) =>
    fake().control.invoke(body<CommandInvocation>('OrbInvoke', request.body)))
  app.put('/control/orb/apps/:app/endpoint', async (request) => {
    const { url } = body<{ url: string | null }>('OrbEndpoint', request.body)
    return fake().control.setEndpoint((request.params as AppParams).app, url)
  })
  app.post('/control/orb/apps/:app/test-event', async (request) => {
    const { count } = request.body === undefined ? {} : body<{ count?: number }>('OrbTestEvents', request.body)
    return fake().control.testEvent((request.params as AppParams).app, count)
  })
  app.get('/control/orb/apps/:app/deliveries', async (request) =>
    fake().control.deliveries((request.params as AppParams).app))
}
