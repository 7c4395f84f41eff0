import type { OrbtileMockOptions } from '../../src/orbtile-mock/index.js'
import { SocketClient, type Reply } from './client.js'
import { startFake, type Teardown } from './fake.js'

/** The smallest valid registration body (a v1.0 one: OT-009). */
export const minimalRegistration = (baseHue = 200): Record<string, unknown> => ({ name: 'Example', palette: { baseHue } })

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
