// Replays a recording's requests against a server, in the order they came and with the overlap they had: a request
// goes once every exchange that had ended before it started (in the recording) has ended here too, so a long poll
// that was open while the client did other things does not hold those things back. Values the recorded server made
// (tokens, ids) are put back as this server made them: each is learnt from the reply at the same place.
import { Agent, request as httpRequest, type OutgoingHttpHeaders } from 'node:http'
import { PLACEHOLDER, type Recording, type RecordedExchange } from '../../src/proxy/recording.js'

/** What the server replayed against answered. `error` when it did not answer (a refused or cut connection). */
export interface ReplayedReply {
  status: number
  headers: Record<string, string>
  text: string
  error?: string
}

export interface Replayed {
  recorded: RecordedExchange
  replayed: ReplayedReply
  /** Values of the recorded server the request carried that the replay could not put back (a reply that differed). */
  unbound: string[]
}

/** Where requests go: a Unix socket (Orbtile) or a host and port (the Orb). */
export type ReplayAddress = { socketPath: string } | { host: string, port: number }

/** A request with no answer after this long is given up (the Orb's longest wait is 25 s, Orbtile's 2 s). */
const REPLY_TIMEOUT_MS = 40_000

/** Strings shorter than this are not bound: a short value (a count, a flag) would be put back where it is not an id. */
const SHORTEST_BOUND = 4

/**
 * The values the recorded server made and this one made instead, learnt reply by reply; the credential's
 * placeholders are bound to this server's credential from the start.
 */
export class Bindings {
  readonly #values = new Map<string, string>()
  readonly #missed = new Set<string>()

  constructor (credentials: readonly string[], credential: string) {
    for (const c of credentials) this.#values.set(c, credential)
  }

  /** Walks the recorded reply and this server's side by side: each string that differs is bound to this one's. */
  learn (recorded: unknown, replayed: unknown): void {
    if (typeof recorded === 'string') {
      if (recorded.length < SHORTEST_BOUND || recorded === replayed) return
      if (typeof replayed === 'string') this.#values.set(recorded, replayed)
      else this.#missed.add(recorded)
      return
    }
    if (Array.isArray(recorded)) {
      recorded.forEach((v, i) => { this.learn(v, Array.isArray(replayed) ? replayed[i] : undefined) })
    } else if (recorded !== null && typeof recorded === 'object') {
      const other = replayed !== null && typeof replayed === 'object' ? replayed as Record<string, unknown> : {}
      for (const [k, v] of Object.entries(recorded)) this.learn(v, other[k])
    }
  }

  /** The recorded values a text carries that have no counterpart here: placeholders never bound, values missed. */
  unbound (text: string): string[] {
    const placeholders = [...text.matchAll(PLACEHOLDER)].map((m) => m[0]).filter((p) => !this.#values.has(p))
    const missed = [...this.#missed].filter((v) => text.includes(v))
    return [...new Set([...placeholders, ...missed])]
  }

  /** A request target with each bound value put back where it is a whole path segment or query value. */
  target (t: string): string {
    let out = t.replace(PLACEHOLDER, (p) => this.#values.get(p) ?? p)
    for (const [from, to] of this.#values) {
      for (const [f, r] of [[from, to], [encodeURIComponent(from), encodeURIComponent(to)]] as const) {
        if (!out.includes(f)) continue
        out = out.replace(new RegExp(`(^|[/?=&])${escapeRegExp(f)}(?=$|[/?&#])`, 'g'), `$1${r}`)
      }
    }
    return out
  }

  /** A header's value: placeholders put back, and a value that is wholly a bound one replaced. */
  header (v: string): string {
    const whole = this.#values.get(v)
    return whole ?? v.replace(PLACEHOLDER, (p) => this.#values.get(p) ?? p)
  }

  /** A body: placeholders put back, and each bound value where it is a whole JSON string. */
  body (text: string): string {
    let out = text.replace(PLACEHOLDER, (p) => JSON.stringify(this.#values.get(p) ?? p).slice(1, -1))
    for (const [from, to] of this.#values) {
      const quoted = JSON.stringify(from)
      if (out.includes(quoted)) out = out.split(quoted).join(JSON.stringify(to))
    }
    return out
  }
}

function escapeRegExp (s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}

/** Headers the replay sets itself: the body's framing and the connection's handling. */
const OWN_HEADERS = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive'])

/** Plays every exchange of the recording against `address`; each result in the recording's order. */
export async function replay (
  recording: Recording,
  address: ReplayAddress,
  credential: string,
  host?: string
): Promise<Replayed[]> {
  const bindings = new Bindings(recording.credentials, credential)
  const connections = new Connections(recording.exchanges)
  const played: Array<Promise<Replayed>> = []
  // The exchanges under way, by their recorded end: each is waited for by the first request that came after it ended.
  const underWay = new Map<RecordedExchange, Promise<Replayed>>()
  try {
    for (const x of recording.exchanges) {
      const ended = [...underWay].filter(([y]) => y.end <= x.at)
      for (const [y] of ended) underWay.delete(y)
      await Promise.all(ended.map(([, p]) => p))
      const one = playOne(x, bindings, { address, agent: connections.agent(x), host })
        .finally(() => { connections.done(x) })
      played.push(one)
      underWay.set(x, one)
    }
    return await Promise.all(played)
  } finally {
    connections.close()
  }
}

/**
 * A keep-alive agent of one socket for each connection of the recording, so that what went on one connection goes on
 * one here too; closed once its last exchange is over, so a long recording holds no more sockets than were open.
 */
class Connections {
  readonly #agents = new Map<number, Agent>()
  readonly #left = new Map<number, number>()

  constructor (exchanges: readonly RecordedExchange[]) {
    for (const x of exchanges) this.#left.set(x.connection, (this.#left.get(x.connection) ?? 0) + 1)
  }

  agent (x: RecordedExchange): Agent {
    let a = this.#agents.get(x.connection)
    if (a === undefined) this.#agents.set(x.connection, a = new Agent({ keepAlive: true, maxSockets: 1 }))
    return a
  }

  done (x: RecordedExchange): void {
    const left = (this.#left.get(x.connection) ?? 1) - 1
    this.#left.set(x.connection, left)
    if (left > 0) return
    this.#agents.get(x.connection)?.destroy()
    this.#agents.delete(x.connection)
  }

  close (): void {
    for (const a of this.#agents.values()) a.destroy()
  }
}

interface Route {
  address: ReplayAddress
  agent: Agent
  /** The Host header to send instead of the recorded one (the fake Orb's own address); the recorded one when unset. */
  host: string | undefined
}

async function playOne (x: RecordedExchange, bindings: Bindings, route: Route): Promise<Replayed> {
  const body = x.body !== undefined
    ? Buffer.from(bindings.body(x.body))
    : x.bodyBase64 !== undefined ? Buffer.from(x.bodyBase64, 'base64') : undefined
  const headers: OutgoingHttpHeaders = {}
  for (const [k, v] of Object.entries(x.headers)) {
    if (OWN_HEADERS.has(k.toLowerCase())) continue
    headers[k] = Array.isArray(v) ? v.map((h) => bindings.header(h)) : bindings.header(v)
  }
  if (route.host !== undefined) headers.host = route.host
  if (body !== undefined) headers['content-length'] = body.length
  const target = bindings.target(x.target)
  const unbound = bindings.unbound(`${target}\n${JSON.stringify(headers)}\n${body?.toString('utf8') ?? ''}`)
  const replayed = await send(route, { method: x.method, path: target, headers, body })
  bindings.learn(parseJson(x.reply), parseJson(replayed.text))
  return { recorded: x, replayed, unbound }
}

/** The JSON a text holds, or undefined for one that holds none. */
export function parseJson (text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

async function send (
  route: Route,
  r: { method: string, path: string, headers: OutgoingHttpHeaders, body: Buffer | undefined }
): Promise<ReplayedReply> {
  return await new Promise((resolve) => {
    const failed = (error: string): void => { resolve({ status: 0, headers: {}, text: '', error }) }
    const options = { ...route.address, agent: route.agent, method: r.method, path: r.path, headers: r.headers }
    const req = httpRequest(options, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('error', (err) => { failed(err.message) })
      res.on('end', () => {
        const headers: Record<string, string> = {}
        for (const [k, v] of Object.entries(res.headers)) {
          if (v !== undefined) headers[k] = Array.isArray(v) ? v.join(', ') : v
        }
        resolve({ status: res.statusCode ?? 0, headers, text: Buffer.concat(chunks).toString('utf8') })
      })
    })
    req.setTimeout(REPLY_TIMEOUT_MS, () => { req.destroy(new Error(`no reply in ${REPLY_TIMEOUT_MS / 1000} s`)) })
    req.on('error', (err) => { failed(err.message) })
    req.end(r.body)
  })
}
