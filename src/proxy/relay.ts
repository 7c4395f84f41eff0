// A relay in front of a real HTTP/1.1 server: every byte a client sends goes to the upstream as it came, and every
// byte the upstream answers goes back as it came. A copy of each direction is read as HTTP, after the bytes have been
// passed on, so that a WireTap sees each exchange as it sees a fake's (`orbtest proxy`): the requests through Node's
// own parser (an HTTP server that never listens, fed a copy of the connection: the headers, their duplicates and the
// parser's errors are exactly those a fake reports), the replies through http-parser-js.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { connect, type Server, type Socket } from 'node:net'
import { Duplex } from 'node:stream'
import { HTTPParser } from 'http-parser-js'
import type { TapExchange, TapHead, WireTap } from '../shared/tap.js'

/** Where the upstream listens: a Unix socket's path, or a TCP host and port. */
export type Upstream = { path: string } | { host: string, port: number }

export interface RelayOptions {
  /** The upstream, asked again for each new connection (an app that restarts on a new socket moves it). */
  upstream: () => Upstream | undefined
  tap?: WireTap
}

/** The copy of a client's bytes that the request parser reads; what it answers goes nowhere. */
class Copy extends Duplex {
  override _read (): void {}
  override _write (_chunk: unknown, _encoding: string, done: () => void): void { done() }
  override _final (done: () => void): void { done() }
}

/** One request read, until its reply has been read too. */
interface Pending {
  head: TapHead
  startedAt: number | undefined
  chunks: Buffer[]
  complete: boolean
  status?: number
  replyHeaders?: Record<string, string>
  reply: Buffer[]
}

/** The reply that http-parser-js reads has no body after a HEAD, a 1xx, a 204 or a 304 (RFC 9112, 6.3). */
function bodiless (method: string, status: number): boolean {
  return method === 'HEAD' || status < 200 || status === 204 || status === 304
}

/** A header list ([name, value, …]) as the tap gives reply headers: names in lower case, repeats joined. */
function headerRecord (list: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {}
  for (let i = 0; i + 1 < list.length; i += 2) {
    const name = list[i]!.toLowerCase()
    out[name] = out[name] === undefined ? list[i + 1]! : `${out[name]}, ${list[i + 1]!}`
  }
  return out
}

/**
 * One client connection and its upstream connection: the bytes relayed both ways, each exchange read from the copies
 * and reported to the tap when its reply has been read (or the connection has closed first).
 */
class Link {
  readonly #tap: WireTap | undefined
  readonly #id: number
  readonly #queue: Pending[] = []
  readonly #replies = new HTTPParser(HTTPParser.RESPONSE)
  /** A connection whose replies could not be read as HTTP (or that switched protocols) is relayed unread. */
  #opaque = false
  #closed = false
  /** The client has gone: what the upstream answers after that never reached it. */
  #clientGone = false

  constructor (id: number, tap: WireTap | undefined) {
    this.#id = id
    this.#tap = tap
    this.#readReplies()
  }

  /** A request's head was read from the client's copy. */
  request (request: IncomingMessage, response: ServerResponse, number: number): void {
    const head: TapHead = {
      request: number,
      connection: this.#id,
      method: request.method ?? '',
      target: request.url ?? '',
      httpVersion: request.httpVersion,
      headers: request.headers
    }
    const pending: Pending = { head, startedAt: this.#tap?.now?.(), chunks: [], complete: false, reply: [] }
    this.#queue.push(pending)
    this.#planless(head)
    request.on('data', (chunk: Buffer) => { pending.chunks.push(chunk) })
    request.on('end', () => {
      pending.complete = true
      // The copy's own answer goes nowhere; ending it lets Node read the next request of the connection.
      response.end()
    })
  }

  /** The tap is told of each head; a relay plays no fault, so its plan is not asked for. */
  #planless (head: TapHead): void {
    try {
      this.#tap?.request(head)
    } catch (err) {
      this.#tap?.failed?.('request', (err as Error).message)
    }
  }

  /**
   * Bytes of the client's that Node's parser could not read as HTTP: reported, and the rest of its bytes relayed
   * unread. The replies to the requests read before them are still read.
   */
  malformed (reason: string, bytes: Buffer | undefined): void {
    try {
      this.#tap?.malformed(this.#id, reason, bytes)
    } catch (err) {
      this.#tap?.failed?.('malformed', (err as Error).message)
    }
  }

  /** The client's connection closed. */
  clientClosed (): void {
    this.#clientGone = true
  }

  /** What the upstream answered, once it has gone on to the client. */
  replied (chunk: Buffer): void {
    if (this.#opaque) return
    const result = this.#replies.execute(chunk)
    if (result instanceof Error) this.#opaque = true
  }

  /** The upstream ended its side: a reply delimited by the close is complete. */
  upstreamEnded (): void {
    if (!this.#opaque) this.#replies.finish()
  }

  #readReplies (): void {
    const parser = this.#replies
    parser[HTTPParser.kOnHeadersComplete] = (info) => {
      const pending = this.#queue[0]
      if (info.statusCode < 200 && info.statusCode !== 101) return 1
      if (pending === undefined || info.upgrade) {
        this.#opaque = true
        return 1
      }
      pending.status = info.statusCode
      pending.replyHeaders = headerRecord(info.headers)
      return bodiless(pending.head.method, info.statusCode) ? 1 : 0
    }
    parser[HTTPParser.kOnBody] = (chunk, offset, length) => {
      this.#queue[0]?.reply.push(Buffer.from(chunk.subarray(offset, offset + length)))
    }
    parser[HTTPParser.kOnMessageComplete] = () => {
      const pending = this.#queue[0]
      if (pending?.status === undefined) return
      this.#queue.shift()
      this.#report(pending, !this.#clientGone)
    }
  }

  /** Both connections are gone: every exchange still open is reported cut (OTC-18). */
  close (): void {
    if (this.#closed) return
    this.#closed = true
    for (const pending of this.#queue.splice(0)) this.#report(pending, false)
  }

  #report (pending: Pending, finished: boolean): void {
    const { head } = pending
    const length = Number(head.headers['content-length'] ?? 0)
    const x: TapExchange = {
      ...head,
      // As the fake's tap: a body only when there was one, read whole.
      body: pending.complete && pending.chunks.length > 0 ? Buffer.concat(pending.chunks) : undefined,
      contentLength: Number.isFinite(length) ? length : 0,
      // As a fake's tap reports a reply cut before its head: Node's default status.
      status: pending.status ?? 200,
      replyHeaders: pending.replyHeaders ?? {},
      reply: Buffer.concat(pending.reply).toString('utf8'),
      finished,
      notes: finished ? [] : ['connection cut before the reply'],
      startedAt: pending.startedAt,
      sentAt: this.#tap?.now?.()
    }
    try {
      this.#tap?.exchange(x)
    } catch (err) {
      this.#tap?.failed?.('request', (err as Error).message)
    }
  }
}

/**
 * How long the upstream may go on answering once its client has closed: what it answers in that time is read (the
 * upstream's own journal has it), then its connection is closed too. As long as a closing fake waits for its
 * exchanges (OTC-18).
 */
const SETTLE_MS = 1000

/** A listening relay: `close` stops it, cuts the connections still open and reports what was open on them. */
export interface Relay {
  readonly server: Server
  close(): Promise<void>
}

/** Starts a relay on `server`'s connections (the caller listens where it wants: a private socket, a port). */
export function relay (server: Server, options: RelayOptions): Relay {
  const reader = createServer({ requireHostHeader: false, keepAliveTimeout: 0, requestTimeout: 0, headersTimeout: 0 })
  reader.timeout = 0
  reader.maxHeadersCount = 0
  const links = new WeakMap<Duplex, Link>()
  const open = new Map<Socket, Promise<void>>()
  let connections = 0
  let requests = 0
  reader.on('request', (request: IncomingMessage, response: ServerResponse) => {
    links.get(request.socket)?.request(request, response, ++requests)
  })
  reader.on('clientError', (err: NodeJS.ErrnoException & { rawPacket?: Buffer }, copy: Duplex) => {
    const code = err.code ?? ''
    if (code.startsWith('HPE_')) links.get(copy)?.malformed(code, err.rawPacket)
    copy.destroy()
  })
  // As the fake's server does: an expectation is the upstream's to answer, so the request is read as any other; an
  // Upgrade header is read as any other request (no listener), and CONNECT leaves the rest of the connection unread.
  for (const event of ['checkContinue', 'checkExpectation']) {
    reader.on(event, (request: IncomingMessage, response: ServerResponse) => reader.emit('request', request, response))
  }
  reader.on('connect', (_request: IncomingMessage, copy: Duplex) => { copy.destroy() })
  server.on('connection', (client: Socket) => {
    open.set(client, join(client, ++connections, options, reader, links).then(() => { open.delete(client) }))
  })
  return {
    server,
    close: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()))
      for (const client of open.keys()) client.destroy()
      await Promise.all([closed, ...open.values()])
    }
  }
}

/**
 * Joins a client connection to a new upstream connection, both ways, with a copy of each direction read. Resolves
 * once both have closed and the link has reported its exchanges.
 */
async function join (
  client: Socket,
  id: number,
  options: RelayOptions,
  reader: ReturnType<typeof createServer>,
  links: WeakMap<Duplex, Link>
): Promise<void> {
  const where = options.upstream()
  told(options.tap, id, true)
  const link = new Link(id, options.tap)
  if (where === undefined) {
    link.close()
    told(options.tap, id, false)
    client.destroy()
    return
  }
  // Half-open both ways: a client that ends its side after a request still gets the reply.
  const upstream = connect({ ...where, allowHalfOpen: true })
  const copy = new Copy()
  links.set(copy, link)
  reader.emit('connection', copy)
  pipe(client, upstream, (chunk) => { if (!copy.destroyed) copy.push(chunk) })
  pipe(upstream, client, (chunk) => { link.replied(chunk) })
  upstream.once('end', () => { link.upstreamEnded() })
  // A reset or a refused upstream ends both sides.
  for (const socket of [client, upstream]) socket.once('error', () => { client.destroy(); upstream.destroy() })
  // The client gone, the upstream has a little while to finish what it was answering.
  client.once('close', () => {
    link.clientClosed()
    told(options.tap, id, false)
    const timer = setTimeout(() => upstream.destroy(), SETTLE_MS)
    upstream.once('close', () => clearTimeout(timer))
  })
  await Promise.all([client, upstream].map(async (socket) => {
    if (!socket.closed) await new Promise((resolve) => socket.once('close', resolve))
  }))
  copy.destroy()
  link.close()
}

/** Tells the tap of a connection opening or closing; a listener that throws is told so, as the fake's tap does. */
function told (tap: WireTap | undefined, id: number, open: boolean): void {
  try {
    tap?.connection?.(id, open)
  } catch (err) {
    tap?.failed?.('request', (err as Error).message)
  }
}

/**
 * Relays `from`'s bytes to `to` as they come (pausing while `to` is full; dropping them once `to` is gone), then hands
 * each to `seen`.
 */
function pipe (from: Socket, to: Socket, seen: (chunk: Buffer) => void): void {
  from.on('data', (chunk: Buffer) => {
    if (!to.destroyed && !to.write(chunk)) {
      from.pause()
      const resume = (): void => {
        to.off('drain', resume)
        to.off('close', resume)
        from.resume()
      }
      to.once('drain', resume)
      to.once('close', resume)
    }
    seen(chunk)
  })
  from.once('end', () => { to.end() })
}
