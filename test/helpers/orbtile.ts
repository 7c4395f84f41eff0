import type { OrbtileMockOptions } from '../../src/orbtile-mock/index.js'
import { VirtualClock } from '../../src/shared/clock.js'
import { SocketClient, type Reply } from './client.js'
import { startFake, type Teardown } from './fake.js'

/** The smallest valid registration body (a v1.0 one: OT-009). */
export const minimalRegistration = (baseHue = 200): Record<string, unknown> => ({
  name: 'Example',
  palette: { baseHue }
})

/** A fake with the rate limit off (these tests are about other rules) and an adapter's client. */
export async function adapterSetup (t: Teardown, options: OrbtileMockOptions = {}) {
  const fake = await startFake(t, { rateLimit: 'off', ...options })
  const client = new SocketClient(fake.socketPath, fake.token)
  t.teardown(() => client.close())
  const register = (id: string, body: unknown = minimalRegistration(), token?: string): Promise<Reply> =>
    client.request({ method: 'PUT', path: `/adapters/${id}`, body, headers: token === undefined ? {} : { 'x-orbtile-adapter-token': token } })
  const unregister = (id: string, token?: string): Promise<Reply> =>
    client.request({ method: 'DELETE', path: `/adapters/${id}`, headers: token === undefined ? {} : { 'x-orbtile-adapter-token': token } })
  return { fake, client, register, unregister }
}

/**
 * A registered adapter on a fake with a virtual clock: the user has allowed it (and switched keypad decisions on
 * when asked), and every call carries its lease token.
 */
export async function agentSetup (
  t: Teardown,
  options: {
    capabilities?: string[]
    keypad?: boolean
    allowed?: boolean
    urlSchemes?: string[]
    id?: string
    fake?: OrbtileMockOptions
  } = {}
) {
  const clock = new VirtualClock(Date.UTC(2026, 10, 30, 12))
  t.teardown(() => clock.dispose())
  const setup = await adapterSetup(t, { clock, pidCheck: (pid) => pid === 4242, ...options.fake })
  const id = options.id ?? 'com.example.agent'
  if (options.allowed !== false) setup.fake.control.setUser(id, { allowed: true, keypad: options.keypad ?? false })
  const body = {
    ...minimalRegistration(),
    capabilities: options.capabilities ?? ['tap', 'approvals', 'questions'],
    urlSchemes: options.urlSchemes ?? ['vscode']
  }
  const registered = await setup.register(id, body)
  let token: string = registered.json.adapterToken
  const headers = () => ({ 'x-orbtile-adapter-token': token })
  const { client, fake } = setup
  return {
    ...setup,
    id,
    clock,
    token: () => token,
    /** Registers again under the lease (or anew), keeping the token current. */
    reregister: async (extra: Record<string, unknown> = {}) => {
      const reply = await setup.register(id, { ...body, ...extra }, token)
      if (reply.status === 200) token = reply.json.adapterToken
      return reply
    },
    post: (sessionId: string, update: unknown) =>
      client.request({
        method: 'POST',
        path: `/adapters/${id}/sessions/${sessionId}`,
        body: update,
        headers: headers()
      }),
    batch: (sessions: unknown) =>
      client.request({ method: 'PUT', path: `/adapters/${id}/sessions`, body: { sessions }, headers: headers() }),
    poll: (poll: Record<string, unknown> = {}) =>
      client.request({ method: 'POST', path: `/adapters/${id}/events`, body: poll, headers: headers() }),
    advance: (ms: number) => fake.control.advance(ms),
    session: (sessionId: string) => fake.control.adapter(id)?.sessions.find((s) => s.id === sessionId),
    snapshot: () => fake.control.adapter(id)!
  }
}

/** A new session's smallest body. */
export const newSession = (extra: Record<string, unknown> = {}) => ({
  title: 'Fix the build',
  activity: 'thinking',
  ...extra
})
export const approval = (id: string, extra: Record<string, unknown> = {}) => ({
  id,
  toolName: 'Bash',
  commandSummary: 'npm test',
  ...extra
})
export const question = (id: string, extra: Record<string, unknown> = {}) => ({
  id,
  questions: [{ text: 'Which branch?', options: [{ label: 'main' }, { label: 'dev' }] }],
  ...extra
})
