import { startOrbMock, type OrbMock, type OrbMockOptions } from '../../src/orb-mock/index.js'
import { createClock, type VirtualClock } from '../../src/shared/clock.js'
import type { Teardown } from './fake.js'

/** The demo world's app tokens (fixtures/orb-world.json). */
export const DEMO = {
  token: 'orb_demo_0000000000000000000000000000000000',
  lite: 'orb_lite_0000000000000000000000000000000000',
  ghost: 'orb_ghost_000000000000000000000000000000000',
  relic: 'orb_relic_000000000000000000000000000000000'
} as const

export interface OrbReply {
  status: number
  headers: Headers
  text: string
  /** The body parsed as JSON; undefined when it is not JSON. */
  json: any
}

/** A bot's view of the fake Orb: plain HTTP over loopback, with its bearer token by default. */
export class OrbClient {
  readonly url: string
  token: string | undefined

  constructor (url: string, token?: string) {
    this.url = url
    this.token = token
  }

  async request (
    method: string,
    path: string,
    options: { body?: unknown; headers?: Record<string, string>; token?: string | null } = {}
  ): Promise<OrbReply> {
    const token = options.token === null ? undefined : (options.token ?? this.token)
    const headers: Record<string, string> = { ...(token === undefined ? {} : { authorization: `Bearer ${token}` }) }
    let body: string | undefined
    if (options.body !== undefined) {
      body = typeof options.body === 'string' ? options.body : JSON.stringify(options.body)
      headers['content-type'] = 'application/json'
    }
    const res = await fetch(`${this.url}${path}`, { method, headers: { ...headers, ...options.headers }, body })
    const text = await res.text()
    let json: unknown
    try {
      json = JSON.parse(text)
    } catch {
      json = undefined
    }
    return { status: res.status, headers: res.headers, text, json }
  }

  get (path: string, options?: { headers?: Record<string, string>, token?: string | null }): Promise<OrbReply> {
    return this.request('GET', path, options)
  }

  post (
    path: string,
    body?: unknown,
    options?: { headers?: Record<string, string>; token?: string | null }
  ): Promise<OrbReply> {
    return this.request('POST', path, { ...options, body })
  }

  put (
    path: string,
    body?: unknown,
    options?: { headers?: Record<string, string>; token?: string | null }
  ): Promise<OrbReply> {
    return this.request('PUT', path, { ...options, body })
  }

  delete (path: string, options?: { headers?: Record<string, string>, token?: string | null }): Promise<OrbReply> {
    return this.request('DELETE', path, options)
  }
}

/**
 * A fake Orb on a free loopback port with a virtual clock (unless one is given), closed when the test ends.
 * `bot` speaks as the demo app.
 */
export async function startOrb (
  t: Teardown,
  options: OrbMockOptions = {}
): Promise<OrbMock & { clock: VirtualClock; bot: OrbClient; as: (token: string) => OrbClient }> {
  const clock = (options.clock ?? createClock('virtual', Date.UTC(2026, 10, 30, 12))) as VirtualClock
  const orb = await startOrbMock({ port: 0, ...options, clock })
  t.teardown(async () => {
    await orb.close()
    clock.dispose()
  })
  return Object.assign(orb, {
    clock,
    bot: new OrbClient(orb.url, DEMO.token),
    as: (token: string) => new OrbClient(orb.url, token)
  })
}

/** Asserts the Orb's error shape (ORB-101, ORB-A01): `{error:{message, code}}` with code = status. */
export function isOrbError (reply: OrbReply, status: number): boolean {
  return reply.status === status &&
    reply.headers.get('content-type')?.startsWith('application/json') === true &&
    typeof reply.json?.error?.message === 'string' &&
    reply.json.error.code === status &&
    Object.keys(reply.json).length === 1
}
