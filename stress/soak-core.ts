// What the soak's drivers share: the run's clock and seed, a call helper that counts every answer with the same
// checks as the fuzz campaign, and a gate that parks the Orbtile's drivers while the user switches its API off and on.
import { KeptAliveClient } from './client.js'
import type { HttpRequest, RunState } from './request.js'
import { sleep } from './server.js'
import type { Tally } from './tally.js'
import type { ServerName, Target } from './targets.js'
import { header } from './wire.js'

/** An answer as a driver reads it. */
export interface Answer {
  status: number
  json: any
  retryAfter: number | undefined
}

/** A small seeded generator (mulberry32): the same seed drives the same choices. */
export function seededRandom (seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** The shared state of one soak. */
export class Soak {
  readonly targets: Record<ServerName, Target>
  readonly state: RunState
  readonly tally: Tally
  readonly until: number
  readonly silentMs: number
  readonly random: () => number
  /** Every route driven, by `METHOD template`, and how often. */
  readonly routes = new Map<string, number>()
  readonly #clients: KeptAliveClient[] = []
  #gate: Promise<void> | undefined
  #orbtileInFlight = 0

  constructor (options: {
    targets: Record<ServerName, Target>,
    state: RunState,
    tally: Tally,
    until: number,
    silentMs: number,
    seed: number
  }) {
    this.targets = options.targets
    this.state = options.state
    this.tally = options.tally
    this.until = options.until
    this.silentMs = options.silentMs
    this.random = seededRandom(options.seed)
  }

  running (): boolean {
    return Date.now() < this.until
  }

  /** A kept-alive client of one server, closed when the soak ends. */
  client (server: ServerName): KeptAliveClient {
    const client = new KeptAliveClient(this.targets[server])
    this.#clients.push(client)
    return client
  }

  closeClients (): void {
    for (const client of this.#clients) client.close()
  }

  pick<T> (items: readonly T[]): T {
    return items[Math.floor(this.random() * items.length)]!
  }

  /** Sleeps, but never past the end of the soak. */
  async pause (ms: number): Promise<void> {
    await sleep(Math.max(0, Math.min(ms, this.until - Date.now())))
  }

  /**
   * Sends one request and counts its answer: `route` is its `METHOD template` for the coverage list; `holdMs` the
   * longest a long poll may be held (real time). Orbtile requests wait while the gate is shut.
   */
  async call (client: KeptAliveClient, route: string, target: string,
    options: { body?: unknown, headers?: Array<[string, string]>, holdMs?: number } = {}): Promise<Answer | undefined> {
    const server = client.target.name
    if (server === 'orbtile') {
      while (this.#gate !== undefined) await this.#gate
      this.#orbtileInFlight++
    }
    try {
      const headers: Array<[string, string]> = [['Host', client.target.host], ...(options.headers ?? [])]
      const request: HttpRequest = { method: route.split(' ')[0]!, target, headers }
      if (options.body !== undefined) {
        request.body = Buffer.from(JSON.stringify(options.body))
        headers.push(['Content-Type', 'application/json'])
      }
      this.routes.set(route, (this.routes.get(route) ?? 0) + 1)
      this.tally.sent(server, route)
      const got = await client.send(request, this.silentMs + (options.holdMs ?? 0))
      const where = { index: -1, server, label: route }
      if (got.malformed !== undefined) this.tally.fail('well-formed-responses', { ...where, detail: got.malformed })
      if (got.response === undefined) {
        this.tally.status(server, 'none')
        this.tally.fail('no-silent-drop', { ...where, detail: `${target.slice(0, 100)}: ${got.failure}` })
        return undefined
      }
      this.tally.response(client.target, -1, route, got.response)
      this.state.learn(server, request, got.response)
      const json = parsedOrUndefined(got.response.body.toString('utf8'))
      const retry = header(got.response, 'retry-after')
      return { status: got.response.status, json, retryAfter: retry === undefined ? undefined : Number(retry) }
    } finally {
      if (server === 'orbtile') this.#orbtileInFlight--
    }
  }

  /** Parks the Orbtile's drivers (their requests in flight end first), runs `action`, and lets them go on. */
  async quiet (action: () => Promise<void>): Promise<void> {
    let open = (): void => {}
    this.#gate = new Promise((resolve) => { open = resolve })
    const until = Date.now() + 30_000
    while (this.#orbtileInFlight > 0 && Date.now() < until) await sleep(20)
    try {
      await action()
    } finally {
      this.#gate = undefined
      open()
    }
  }
}

/** A body's JSON; a body that is not JSON (a plain-text error, an empty 204) has none. */
function parsedOrUndefined (text: string): unknown {
  try {
    return JSON.parse(text)
  } catch (err) {
    if (err instanceof SyntaxError) return undefined
    throw err
  }
}
