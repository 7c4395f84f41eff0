import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import type { Duplex } from 'node:stream'
import type { FastifyInstance, FastifyRequest, onRequestHookHandler, onSendHookHandler } from 'fastify'
import type { Clock, TimerHandle } from './clock.js'

/**
 * A tap on a fake's wire, for the client suites (conformance/client/orbtile, conformance/client/orb) and `orbtest up
 * --judge`: it sees
 * every request the fake receives and every reply it sends, and may play the wire's faults on them (a 429 the fake
 * did not decide, a reply held back, a connection cut, fields added to a reply). Without a tap the fake installs no
 * hook at all, so its own tests and benchmarks measure the fake alone.
 */
export interface WireTap {
  /** A request's head arrived (before any check of the pipeline). What the wire does to it, if anything. */
  request(head: TapHead): WirePlan | undefined
  /**
   * The reader's clock (its own units). When given, each exchange carries when its head arrived (`startedAt`) and when
   * its reply went to the socket, after any hold (`sentAt`): when the client could have it (OTC-17).
   */
  now?(): number
  /** The exchange is over: answered, or its connection closed first. */
  exchange(record: TapExchange): void
  /** Bytes Node's parser could not read as HTTP, on a connection. */
  malformed(connection: number, reason: string, bytes: Buffer | undefined): void
  /** A connection opened (numbered from 1 per fake) or closed. */
  connection?(id: number, open: boolean): void
  /**
   * Something the tap ran failed, with the error's message: the listener's `request` (the exchange is then served
   * with no plan), a plan's `rewrite` (the reply goes as the fake made it), or the listener's `malformed`. The fault
   * a plan asked for did not happen: a listener that judges says so, rather than judge a fault that never was.
   */
  failed?(part: TapPart, message: string): void
}

/** The part of the tap that failed (WireTap.failed). */
export type TapPart = 'request' | 'rewrite' | 'malformed'

export interface TapHead {
  /** The request's number on this fake, from 1. */
  request: number
  connection: number
  method: string
  target: string
  httpVersion: string
  headers: IncomingMessage['headers']
}

/** What the wire does to one exchange. Every field is optional; an empty plan serves the request as usual. */
export interface WirePlan {
  /** Answer `rate_limited` with this Retry-After (seconds): the body is read, and the route never acts on it. */
  refuse429?: number
  /** Cut the connection this long after the head arrived, unless the reply went out first. */
  resetAfterMs?: number
  /**
   * Hold the reply back: a fixed time, or a time worked out from the parsed request body (a poll's deadline) and the
   * reply's text (a reply that carries what the wire waits for).
   */
  holdMs?: number | ((body: unknown, reply: string) => number)
  /** Rewrite the reply body (parsed JSON) before it goes out; the names say what was done, for the journal. */
  rewrite?: (reply: unknown, body: unknown) => unknown
  /** What the wire did, in words, for the journal; the tap's `exchange` receives it back. */
  notes?: string[]
}

export interface TapExchange extends TapHead {
  /** The raw request body, when the fake read one. */
  body: Buffer | undefined
  /** That body as the fake parsed it (one JSON object), when it did: a reader need not parse it again. */
  parsedBody?: unknown
  /** The body's text as the fake decoded it to parse it, when it parsed. */
  bodyText?: string
  /** The body's length as the head announced it. */
  contentLength: number
  status: number
  replyHeaders: Record<string, string>
  reply: string
  /** The reply was sent whole; false when the connection was cut first. */
  finished: boolean
  notes: string[]
  /** By the tap's `now`, when it has one: the head's arrival, and the reply handed to the socket (if it was). */
  startedAt?: number
  sentAt?: number
}

interface Pending {
  head: TapHead
  plan: WirePlan
  startedAt: number | undefined
  sentAt?: number
  body?: Buffer
  bodyText?: string
  /** The payload as sent; made text only when the exchange is reported. */
  reply?: unknown
  /** The reply's headers as fastify sends them (it hands them to writeHead, so the raw reply never holds them). */
  replyHeaders?: Record<string, unknown>
  reset?: TimerHandle
  /** The plan's reset came: whatever was written before it may not have reached the client. */
  wasReset?: true
}

// The exchange a request belongs to rides on fastify's request, as a decoration: fastify's request objects are
// made with it (one shape for all), where a WeakMap entry per request would make every young-generation collection
// walk an ephemeron table, and a property added to Node's request later would give those objects a second shape.
type Tapped = FastifyRequest & { orbtestTap: Pending | null }
const pendingOf = (request: FastifyRequest): Pending | null => (request as Tapped).orbtestTap

/** Stashes a request's raw body for the tap (called by the body parser, before it parses; text, for a text parser). */
export function tapBody (request: FastifyRequest, body: Buffer | string): void {
  const entry = pendingOf(request)
  if (entry === null) return
  if (typeof body === 'string') {
    entry.body = Buffer.from(body, 'utf8')
    entry.bodyText = body
  } else {
    entry.body = body
  }
}

/** Stashes the body's text as the parser decoded it, when it parsed: a reader need not decode it again. */
export function tapBodyText (request: FastifyRequest, text: string): void {
  const entry = pendingOf(request)
  if (entry !== null) entry.bodyText = text
}

/**
 * Installs the tap's hooks on a fake's app: the first onRequest hook (before the pipeline), a preHandler hook (the
 * wire's 429s), an onSend hook (holds and rewrites), and a close listener on each reply. Connections are numbered
 * from 1 in the order they open.
 */
export function installTap (
  app: FastifyInstance<Server>,
  tap: WireTap,
  clock: Clock,
  refusal: (retryAfterSeconds: number) => Error
): (err: Error & { code?: string, rawPacket?: unknown }, socket: Duplex) => void {
  app.decorateRequest('orbtestTap', null)
  const connectionOf = numberConnections(app, tap)
  const now = tap.now === undefined ? undefined : tap.now.bind(tap)
  const open = new OpenExchanges()
  app.addHook('onRequest', headHook(tap, clock, now, connectionOf, open))
  // The wire's 429 comes once the body is read, so that the journal keeps what the client sent (a retry is known by
  // it), and before the route acts on the request.
  app.addHook('preHandler', (request, _reply, done) => {
    const retryAfter = pendingOf(request)?.plan.refuse429
    if (retryAfter === undefined) done()
    else done(refusal(retryAfter))
  })
  app.addHook('onSend', sendHook(tap, clock, now))
  // OTC-18: closing the fake resolves only once every exchange it saw has been reported, so that a reader judging
  // after the close misses none (a long poll its client left open included). fastify runs this after its server has
  // closed; a response's own close can come a little later, whatever order the client's exit and its sockets'
  // closing reached this process in.
  app.addHook('onClose', async () => { await open.settled() })
  return malformedReporter(tap, connectionOf)
}

/** Numbers the server's connections from 1 as they open, tells the tap of each opening and closing. */
function numberConnections (app: FastifyInstance<Server>, tap: WireTap): (socket: Socket | null | undefined) => number {
  const ids = new WeakMap<Socket, number>()
  let next = 1
  app.server.on('connection', (socket: Socket) => {
    const id = next++
    ids.set(socket, id)
    tap.connection?.(id, true)
    socket.once('close', () => tap.connection?.(id, false))
  })
  return (socket) => (socket == null ? 0 : ids.get(socket) ?? 0)
}

/** The exchanges whose head arrived and that the tap has not reported yet, and whoever waits for there to be none. */
class OpenExchanges {
  #open = 0
  #waiting: Array<() => void> = []

  opened (): void {
    this.#open++
  }

  closed (): void {
    if (--this.#open > 0 || this.#waiting.length === 0) return
    const waiting = this.#waiting
    this.#waiting = []
    // After this exchange is reported: queued behind the listener's own work.
    queueMicrotask(() => { for (const resolve of waiting) resolve() })
  }

  /** Resolves once none is open; bounded by real time, as closeApp's grace is: a close must end. */
  async settled (): Promise<void> {
    if (this.#open === 0) return
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, SETTLE_MS)
      this.#waiting.push(() => {
        clearTimeout(timer)
        resolve()
      })
    })
  }
}

type Now = (() => number) | undefined

/** The onRequest hook: the head numbered and handed to the tap, its plan noted, its exchange reported at its close. */
function headHook (
  tap: WireTap,
  clock: Clock,
  now: Now,
  connectionOf: (socket: Socket | null | undefined) => number,
  open: OpenExchanges
): onRequestHookHandler<Server> {
  let requests = 0
  return (request, reply, done) => {
    const startedAt = now?.()
    const raw = request.raw
    const head: TapHead = {
      request: ++requests,
      connection: connectionOf(raw.socket),
      method: raw.method ?? '',
      target: raw.url ?? '',
      httpVersion: raw.httpVersion,
      headers: raw.headers
    }
    const entry: Pending = { head, plan: planOf(tap, head), startedAt }
    ;(request as Tapped).orbtestTap = entry
    open.opened()
    // `on`, not `once`: a reply closes once, and `once` would wrap the listener for every request.
    reply.raw.on('close', () => {
      open.closed()
      if (entry.reset !== undefined) clock.clearTimer(entry.reset)
      tap.exchange(exchangeOf(entry, request, reply.raw))
    })
    const resetAfterMs = entry.plan.resetAfterMs
    if (resetAfterMs !== undefined) {
      entry.reset = clock.setTimer(resetAfterMs, () => {
        entry.wasReset = true
        raw.socket?.destroy()
      })
    }
    done()
  }
}

/** The wire's plan for a head; a listener that fails to make one is told, and the request is served as usual. */
function planOf (tap: WireTap, head: TapHead): WirePlan {
  try {
    return tap.request(head) ?? {}
  } catch (err) {
    tap.failed?.('request', messageOf(err))
    return {}
  }
}

const NO_NOTES: string[] = []

/** What the tap reports of an exchange at its close. */
function exchangeOf (entry: Pending, request: FastifyRequest, reply: ServerResponse): TapExchange {
  const { head, plan } = entry
  const length = Number(head.headers['content-length'] ?? 0)
  return {
    ...head,
    body: entry.body,
    parsedBody: entry.body === undefined ? undefined : request.body,
    bodyText: entry.bodyText,
    contentLength: Number.isFinite(length) ? length : 0,
    status: reply.statusCode,
    replyHeaders: stringHeaders({ ...reply.getHeaders(), ...entry.replyHeaders }),
    reply: textOf(entry.reply),
    finished: reply.writableFinished,
    // A reset that came as the reply went (a loaded machine runs its timer late) may have cut it as well.
    notes: reply.writableFinished && entry.wasReset !== true
      ? plan.notes ?? NO_NOTES
      : [...(plan.notes ?? []), 'connection cut before the reply'],
    startedAt: entry.startedAt,
    sentAt: entry.sentAt
  }
}

/**
 * The onSend hook: holds and rewrites. A callback hook, not an async one: with no fault to play it only notes the
 * payload, and a promise per request is what `--judge` would pay on its hottest route.
 */
function sendHook (tap: WireTap, clock: Clock, now: Now): onSendHookHandler<unknown, Server> {
  return (request, reply, payload, done) => {
    const entry = pendingOf(request)
    if (entry === null) {
      done(null, payload)
      return
    }
    entry.replyHeaders = reply.getHeaders()
    const { rewrite, holdMs } = entry.plan
    if (rewrite === undefined && holdMs === undefined) {
      entry.reply = payload
      entry.sentAt = now?.()
      done(null, payload)
      return
    }
    const text = rewrite === undefined ? textOf(payload) : rewritten(tap, rewrite, textOf(payload), request.body)
    entry.reply = text
    const out = rewrite === undefined ? payload : text
    const hold = typeof holdMs === 'function' ? holdMs(request.body, text) : holdMs
    const send = (): void => {
      entry.sentAt = now?.()
      done(null, out)
    }
    if (hold !== undefined && hold > 0) clock.setTimer(hold, send)
    else send()
  }
}

/**
 * A reply's text as the plan's rewrite leaves it. A reply that is not JSON has nothing a rewrite of JSON acts on,
 * and goes as it is; a rewrite that fails is told to the tap, and the reply goes as the fake made it.
 */
function rewritten (tap: WireTap, rewrite: NonNullable<WirePlan['rewrite']>, text: string, body: unknown): string {
  if (text === '') return text
  let reply: unknown
  try {
    reply = JSON.parse(text)
  } catch {
    return text
  }
  try {
    return JSON.stringify(rewrite(reply, body))
  } catch (err) {
    tap.failed?.('rewrite', messageOf(err))
    return text
  }
}

/** Reports bytes Node's parser could not read as HTTP; Node reports a broken request once per chunk, the first kept. */
function malformedReporter (tap: WireTap, connectionOf: (socket: Socket | null | undefined) => number):
(err: Error & { code?: string, rawPacket?: unknown }, socket: Duplex) => void {
  const reported = new WeakSet<Duplex>()
  return (err, socket) => {
    // Only the parser's own errors (HPE_…) are bytes that are not HTTP; a socket's EPIPE or ECONNRESET is not.
    if (reported.has(socket) || err.code?.startsWith('HPE_') !== true) return
    reported.add(socket)
    const bytes = Buffer.isBuffer(err.rawPacket) ? err.rawPacket : undefined
    // The fake answers the broken request whatever the listener does with it.
    try {
      tap.malformed(connectionOf(socket as Socket), err.code ?? err.message, bytes)
    } catch (failure) {
      tap.failed?.('malformed', messageOf(failure))
    }
  }
}

function messageOf (err: unknown): string {
  return err instanceof Error ? err.message : String(err)
}

/** How long a closing fake waits, at most, for the exchanges still open to be reported (OTC-18). */
const SETTLE_MS = 1000

function textOf (payload: unknown): string {
  return typeof payload === 'string' ? payload : Buffer.isBuffer(payload) ? payload.toString('utf8') : ''
}

function stringHeaders (headers: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {}
  // `for in`, not Object.entries: no pair made per header of every reply (getHeaders has no prototype to walk).
  for (const name in headers) {
    const value = headers[name]
    if (value !== undefined) out[name] = Array.isArray(value) ? value.join(', ') : String(value)
  }
  return out
}
