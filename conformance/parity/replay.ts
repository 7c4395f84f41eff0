// Replays a recording's requests against a server as the client sent them: in their order, never sooner after the
// start than they came (a rate limit sees the client's own pace), each once every exchange that had ended before it
// started has ended here too (so a long poll that was open while the client did other things holds nothing back),
// and each written whole before the next goes. A request whose reply the client did not wait for (cut in the
// recording) is given up as it was. Values the recorded server made (tokens, ids) are put back as this server made
// them (bindings.ts).
import { Agent, request as httpRequest, type ClientRequest, type OutgoingHttpHeaders } from 'node:http'
import { setTimeout as sleep } from 'node:timers/promises'
import type { Recording, RecordedExchange } from '../../src/proxy/recording.js'
import { ORB_LIMITS } from '../../src/spec/orb.js'
import { Bindings } from './bindings.js'

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
  /** The target as sent, when a long poll's wait was cut to the time the recorded server held it (heldNoLonger). */
  shortened?: string
}

/** Where requests go: a Unix socket (Orbtile) or a host and port (the Orb). */
export type ReplayAddress = { socketPath: string } | { host: string, port: number }

/** A request with no answer after this long is given up (the Orb's longest wait is 25 s, Orbtile's 2 s). */
const REPLY_TIMEOUT_MS = 40_000

/** Headers the replay sets itself: the body's framing and the connection's handling. */
const OWN_HEADERS = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive'])

/** Plays every exchange of the recording against `address`; each result in the recording's order. */
export async function replay (
  recording: Recording,
  address: ReplayAddress,
  credential: string,
  host?: string
): Promise<Replayed[]> {
  const bindings = new Bindings(recording.head.placeholders, recording.credentials, credential)
  const connections = new Connections(recording.exchanges)
  const played: Array<Promise<Replayed>> = []
  // The exchanges under way, by their recorded end: each is waited for by the first request that came after it ended.
  const underWay = new Map<RecordedExchange, Promise<Replayed>>()
  const start = performance.now()
  try {
    for (const x of recording.exchanges) {
      const ended = [...underWay].filter(([y]) => y.end <= x.at)
      for (const [y] of ended) underWay.delete(y)
      await Promise.all(ended.map(([, p]) => p))
      const early = start + x.at - performance.now()
      if (early > 0) await sleep(early)
      const { written, done } = playOne(x, bindings, { address, agent: connections.agent(x), host })
      const one = done.finally(() => { connections.done(x) })
      played.push(one)
      underWay.set(x, one)
      await written
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

/** Sends one recorded request; `written` once it is on its connection whole (or failed), `done` with its reply. */
function playOne (
  x: RecordedExchange,
  bindings: Bindings,
  route: Route
): { written: Promise<void>, done: Promise<Replayed> } {
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
  const bound = bindings.target(x.target)
  const target = heldNoLonger(bound, x)
  const values = Object.values(headers).flatMap((v) => Array.isArray(v) ? v : [String(v)])
  const unbound = bindings.unbound(target, values, body?.toString('utf8') ?? '')
  // A reply the client did not wait for: the request is given up when the client gave it up.
  const giveUpMs = x.finished ? undefined : Math.max(1, x.end - x.at)
  const sent = send(route, { method: x.method, path: target, headers, body }, giveUpMs)
  const done = sent.reply.then((replayed) => {
    bindings.learn(parseJson(x.reply), parseJson(replayed.text))
    return { recorded: x, replayed, unbound, ...(target === bound ? {} : { shortened: target }) }
  })
  return { written: sent.written, done }
}

/**
 * A long poll of the Orb's that the recorded server answered is held here no longer than it was there: its `wait` is
 * cut to the recorded time, rounded up to a whole second. What ended the wait early (an event a member sent) is not
 * replayed, so the fake would hold the poll for the whole wait (up to 25 s), and every request after it with it; with
 * the shorter wait it answers when the recorded server did, with the events it has. Only a wait the spec allows is
 * cut (one `wait`, an integer in ORB-050's range, written plainly), since both servers must take any such wait: one
 * the spec refuses, a poll the server held for its whole wait and any other request are sent as they came.
 */
export function heldNoLonger (target: string, x: RecordedExchange): string {
  const [path = '', query] = target.split('?', 2)
  if (x.method !== 'GET' || x.status !== 200 || !x.finished || !path.endsWith('/events') || query === undefined) {
    return target
  }
  const waits = query.split('&').filter((p) => p.startsWith('wait='))
  const wait = waits.length === 1 && /^wait=(0|[1-9]\d*)$/.test(waits[0]!) ? Number(waits[0]!.slice(5)) : NaN
  const { minimum, maximum } = ORB_LIMITS.pollWaitSeconds
  const held = Math.max(1, Math.ceil((x.end - x.at) / 1000))
  if (!(wait >= minimum && wait <= maximum) || wait <= held) return target
  return `${path}?${query.split('&').map((p) => p === waits[0] ? `wait=${held}` : p).join('&')}`
}

/** The JSON a text holds, or undefined for one that holds none. */
export function parseJson (text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

function send (
  route: Route,
  r: { method: string, path: string, headers: OutgoingHttpHeaders, body: Buffer | undefined },
  giveUpMs: number | undefined
): { written: Promise<void>, reply: Promise<ReplayedReply> } {
  const options = { ...route.address, agent: route.agent, method: r.method, path: r.path, headers: r.headers }
  let req: ClientRequest | undefined
  const reply = new Promise<ReplayedReply>((resolve) => {
    const failed = (error: string): void => { resolve({ status: 0, headers: {}, text: '', error }) }
    req = httpRequest(options, (res) => {
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
    const timeout = giveUpMs ?? REPLY_TIMEOUT_MS
    const why = giveUpMs === undefined ? `no reply in ${timeout / 1000} s` : 'given up, as the client did'
    req.setTimeout(timeout, () => { req!.destroy(new Error(why)) })
    req.on('error', (err) => { failed(err.message) })
    req.end(r.body)
  })
  const written = new Promise<void>((resolve) => {
    req!.once('finish', () => resolve())
    req!.once('close', () => resolve())
  })
  return { written, reply }
}
