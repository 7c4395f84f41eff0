// `orbtest proxy orb`: an HTTP proxy in front of a real Orb (or any server of the bot API). The bot's ORB_URL names
// the proxy; each request goes on to the upstream as it came (its method, target, headers and body), but for the
// Host header, which names the upstream (a server behind TLS or a virtual host needs its own name), and the
// hop-by-hop headers of RFC 9110, 7.6.1, which belong to one connection. The reply comes back the same way, its
// body streamed as it arrives (a held `GET /events?wait=25` is held through the proxy too). A copy of each exchange,
// bounded, goes to the WireTap as a fake's tap reports it, so that the bot checks and the server's findings read
// the same exchanges they read on a fake. With `webhookTo`, the proxy is also the app's endpoint: the Orb's webhook
// deliveries (a POST to any path outside /api/) go on to the bot's own endpoint, read whole first (a delivery is one
// small JSON event, and what the bot does after it is judged from when it went), and the bot's answer goes back.
import { Agent as HttpAgent, createServer, request as httpRequest, STATUS_CODES } from 'node:http'
import type { IncomingHttpHeaders, IncomingMessage, OutgoingHttpHeaders, Server, ServerResponse } from 'node:http'
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https'
import type { Socket } from 'node:net'
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib'
import { StartupError } from '../shared/startup-error.js'
import { ORB_A11_DELIVERY } from '../spec/orb.js'
import type { TapExchange, TapHead, WireTap } from '../shared/tap.js'

/** A body's copy for the tap stops here; the bytes themselves all go through. The bot API's bodies are small. */
const COPY_LIMIT = 1024 * 1024

/** The note on an exchange whose reply the tap holds no text of (cut at COPY_LIMIT, or in an unread encoding). */
export const UNREAD = 'the reply body was not read'

/** A body in its Content-Encoding, decoded: what HTTP clients ask for (RFC 9110, 8.4.1); another one throws. */
function decoded (bytes: Buffer, encoding: string): Buffer {
  if (encoding === 'identity' || bytes.length === 0) return bytes
  if (encoding === 'gzip' || encoding === 'x-gzip') return gunzipSync(bytes)
  if (encoding === 'deflate') return inflateSync(bytes)
  if (encoding === 'br') return brotliDecompressSync(bytes)
  throw new Error('not an encoding this proxy reads')
}

/** The note on an exchange the proxy answered itself, the upstream being out of reach: no reply of the server's. */
export const PROXY_ANSWERED = 'the proxy answered: the upstream could not be reached'

/** Headers of one connection, never forwarded (RFC 9110, 7.6.1), and Host, which the proxy sets. */
const HOP = new Set([
  'connection', 'keep-alive', 'proxy-connection', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer',
  'transfer-encoding', 'upgrade', 'host'
])

export interface OrbProxyOptions {
  /** The upstream's origin (`https://orb.example`), with a path prefix if it serves the API under one. */
  upstream: URL
  host: string
  port: number
  tap?: WireTap
  /** The bot's webhook endpoint, where deliveries go on to; and who is told of each. */
  webhookTo?: URL
  deliveries?: DeliveryListener
}

/** A delivery the Orb made, as it came: its headers (lower-case names), its body's bytes, and their text. */
export interface DeliveryIn {
  headers: Record<string, string>
  raw: Buffer
  body: string
}

/** What the bot answered a delivery: its status and body, or why there was none; the times by the tap's clock. */
export type DeliveryAnswer =
  | { status: number, body: string, ms: number, writtenAt: number | undefined }
  | { error: string, ms: number, writtenAt: number | undefined }

/** Told when a delivery goes on to the bot (before a byte of it does), and when the bot has answered it. */
export interface DeliveryListener {
  sent(d: DeliveryIn): void
  answered(d: DeliveryIn, answer: DeliveryAnswer): void
}

export interface OrbProxy {
  /** Where the bot points its ORB_URL. */
  readonly url: string
  readonly server: Server
  close(): Promise<void>
}

/** Starts the proxy, listening on host:port (0 picks a free port). */
export async function startOrbProxy (o: OrbProxyOptions): Promise<OrbProxy> {
  if (o.upstream.protocol !== 'http:' && o.upstream.protocol !== 'https:') {
    throw new StartupError('ORBTEST_UPSTREAM_URL', `--upstream must be an http or https URL, not ${o.upstream.href}`)
  }
  const forward = forwarder(o.upstream, o.tap)
  const deliver = o.webhookTo === undefined ? undefined : deliverer(o.webhookTo, o.deliveries, o.tap)
  const delivering = new Set<ReturnType<typeof httpRequest>>()
  const server = createServer({ requestTimeout: 0, headersTimeout: 60_000 }, (request, response) => {
    if (deliver !== undefined && isDelivery(request)) {
      deliver(request, response, delivering)
    } else {
      forward.handle(request, response)
    }
  })
  server.on('connection', forward.connected)
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(o.port, o.host, () => resolve())
  })
  const address = server.address()
  const port = typeof address === 'object' && address !== null ? address.port : o.port
  const host = o.host.includes(':') ? `[${o.host}]` : o.host
  return {
    url: `http://${host}:${port}`,
    server,
    close: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()))
      server.closeAllConnections()
      forward.close()
      // A delivery still with the bot is cut: its answer would come after the report.
      for (const out of delivering) out.destroy(new Error('the proxy stopped before the bot answered'))
      await closed
    }
  }
}

/** A webhook delivery: a POST outside /api/ with one of the headers only a delivery carries (ORB-091, ORB-092). */
function isDelivery (request: IncomingMessage): boolean {
  const h = request.headers
  const marked = ['x-orb-signature', 'x-orb-event', 'x-orb-delivery'].some((name) => h[name] !== undefined)
  return request.method === 'POST' && request.url?.startsWith('/api/') !== true && marked
}

interface Forwarder {
  handle: (request: IncomingMessage, response: ServerResponse) => void
  connected: (socket: Socket) => void
  close: () => void
}

/** Forwards each request to `upstream` and reports each exchange to the tap once it is over. */
function forwarder (upstream: URL, tap: WireTap | undefined): Forwarder {
  const secure = upstream.protocol === 'https:'
  const agent = secure ? new HttpsAgent({ keepAlive: true }) : new HttpAgent({ keepAlive: true })
  const prefix = upstream.pathname.replace(/\/+$/, '')
  const ids = new WeakMap<Socket, number>()
  let connections = 0
  let requests = 0
  const handle = (request: IncomingMessage, response: ServerResponse): void => {
    const head: TapHead = {
      request: ++requests,
      connection: ids.get(request.socket) ?? 0,
      method: request.method ?? '',
      target: request.url ?? '',
      httpVersion: request.httpVersion,
      headers: request.headers
    }
    const exchange = new Exchange(head, tap)
    const out = (secure ? httpsRequest : httpRequest)({
      agent,
      protocol: upstream.protocol,
      // A URL writes an IPv6 host in brackets; a socket's address has none.
      hostname: upstream.hostname.replace(/^\[(.*)\]$/, '$1'),
      port: upstream.port,
      method: head.method,
      path: prefix + head.target,
      headers: forwardHeaders(request.headers, request.rawHeaders, upstream.host)
    })
    relayRequest(request, out, exchange)
    out.on('response', (reply) => { relayReply(reply, response, exchange) })
    out.on('error', (err) => { unreachable(response, exchange, err) })
    response.on('close', () => {
      if (!response.writableFinished) out.destroy()
      exchange.report(response.writableFinished)
    })
  }
  return {
    handle,
    connected: (socket) => {
      const id = ++connections
      ids.set(socket, id)
      told(tap, id, true)
      socket.once('close', () => { told(tap, id, false) })
    },
    close: () => { agent.destroy() }
  }
}

/** The request's headers for the upstream: as they came, in their order and case, less those of one hop. */
function forwardHeaders (headers: IncomingHttpHeaders, raw: readonly string[], host: string): OutgoingHttpHeaders {
  const named = new Set((headers.connection ?? '').split(',').map((h) => h.trim().toLowerCase()).filter(Boolean))
  const out: Array<[string, string]> = [['Host', host]]
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!
    const lower = name.toLowerCase()
    if (!HOP.has(lower) && !named.has(lower)) out.push([name, raw[i + 1]!])
  }
  // Repeated names stay repeated: Node sends an array's values as separate lines.
  const grouped: OutgoingHttpHeaders = {}
  for (const [name, value] of out) {
    const had = grouped[name]
    grouped[name] = had === undefined ? value : [...(Array.isArray(had) ? had : [String(had)]), value]
  }
  return grouped
}

/** The client's body goes on as it comes; a copy is kept for the tap. */
function relayRequest (request: IncomingMessage, out: ReturnType<typeof httpRequest>, exchange: Exchange): void {
  request.on('data', (chunk: Buffer) => { exchange.requestChunk(chunk) })
  request.pipe(out)
  request.once('end', () => { exchange.requestEnded() })
}

/** The upstream's reply goes back as it comes, its status and headers first; a copy is kept for the tap. */
function relayReply (reply: IncomingMessage, response: ServerResponse, exchange: Exchange): void {
  const status = reply.statusCode ?? 502
  exchange.replied(status, reply.headers)
  response.writeHead(status, reply.statusMessage, endToEnd(reply))
  reply.on('data', (chunk: Buffer) => { exchange.replyChunk(chunk) })
  reply.pipe(response)
  // An upstream that cuts its reply short cuts the client's too: what came is not a whole reply.
  reply.once('aborted', () => { response.destroy() })
  reply.once('error', () => { response.destroy() })
}

/** A reply's headers as a flat list for writeHead, in their order and case, less those of one hop. */
function endToEnd (reply: IncomingMessage, drop: readonly string[] = []): string[] {
  const named = new Set(String(reply.headers.connection ?? '').split(',').map((h) => h.trim().toLowerCase()))
  const out: string[] = []
  for (let i = 0; i + 1 < reply.rawHeaders.length; i += 2) {
    const lower = reply.rawHeaders[i]!.toLowerCase()
    if (HOP.has(lower) || named.has(lower) || drop.includes(lower)) continue
    out.push(reply.rawHeaders[i]!, reply.rawHeaders[i + 1]!)
  }
  return out
}

/** The upstream could not be reached (or failed before its reply's head): a 502 in the spec's Error shape. */
function unreachable (response: ServerResponse, exchange: Exchange, err: Error): void {
  if (response.headersSent || response.destroyed) {
    response.destroy()
    return
  }
  const code = (err as NodeJS.ErrnoException).code ?? 'error'
  exchange.note(`${PROXY_ANSWERED} (${code})`)
  const message = `orbtest proxy: the upstream could not be reached (${code})`
  const body = JSON.stringify({ error: { message, code: 502 } })
  exchange.replied(502, { 'content-type': 'application/json' })
  exchange.replyChunk(Buffer.from(body))
  const length = Buffer.byteLength(body)
  response.writeHead(502, STATUS_CODES[502], { 'content-type': 'application/json', 'content-length': length })
  response.end(body)
}

/** One exchange's copy for the tap: the request's head and body, the reply's status, headers and body. */
class Exchange {
  readonly #head: TapHead
  readonly #tap: WireTap | undefined
  readonly #startedAt: number | undefined
  readonly #body = new Copied()
  readonly #reply = new Copied()
  readonly #notes: string[] = []
  #bodyWhole = false
  #status: number | undefined
  #replyHeaders: Record<string, string> = {}
  #reported = false

  constructor (head: TapHead, tap: WireTap | undefined) {
    this.#head = head
    this.#tap = tap
    this.#startedAt = tap?.now?.()
    try {
      tap?.request(head)
    } catch (err) {
      tap?.failed?.('request', (err as Error).message)
    }
  }

  requestChunk (chunk: Buffer): void { this.#body.add(chunk) }
  requestEnded (): void { this.#bodyWhole = true }
  replyChunk (chunk: Buffer): void { this.#reply.add(chunk) }
  note (text: string): void { this.#notes.push(text) }

  replied (status: number, headers: IncomingHttpHeaders): void {
    this.#status = status
    this.#replyHeaders = headerRecord(headers)
  }

  /**
   * The reply's text as the client reads it: a body the server compressed (Content-Encoding, which the client asked
   * for) decoded. A body cut at COPY_LIMIT or in an encoding not read here is no text at all, and a note says so.
   */
  #readable (notes: string[]): string {
    const bytes = this.#reply.bytes()
    const encoding = (this.#replyHeaders['content-encoding'] ?? 'identity').trim().toLowerCase()
    if (this.#reply.cut) {
      notes.push(UNREAD)
      return ''
    }
    try {
      return decoded(bytes, encoding).toString('utf8')
    } catch (err) {
      notes.push(`${UNREAD}: ${encoding}, ${(err as Error).message}`)
      return ''
    }
  }

  /** Tells the tap, once: the reply went whole (`finished`), or the exchange ended first. */
  report (finished: boolean): void {
    if (this.#reported) return
    this.#reported = true
    const length = Number(this.#head.headers['content-length'] ?? 0)
    const notes = [...this.#notes, ...this.#body.notes('request'), ...this.#reply.notes('reply')]
    const x: TapExchange = {
      ...this.#head,
      body: this.#bodyWhole && this.#body.length > 0 ? this.#body.bytes() : undefined,
      contentLength: Number.isFinite(length) ? length : 0,
      status: this.#status ?? 200,
      replyHeaders: this.#replyHeaders,
      reply: this.#readable(notes),
      finished,
      notes: finished ? notes : [...notes, 'connection cut before the reply'],
      startedAt: this.#startedAt,
      sentAt: this.#tap?.now?.()
    }
    try {
      this.#tap?.exchange(x)
    } catch (err) {
      this.#tap?.failed?.('request', (err as Error).message)
    }
  }
}

/** A body's bytes as far as COPY_LIMIT, and how many there were in all. */
class Copied {
  readonly #chunks: Buffer[] = []
  #kept = 0
  length = 0

  add (chunk: Buffer): void {
    this.length += chunk.length
    if (this.#kept >= COPY_LIMIT) return
    const part = chunk.subarray(0, COPY_LIMIT - this.#kept)
    this.#chunks.push(part)
    this.#kept += part.length
  }

  bytes (): Buffer {
    return Buffer.concat(this.#chunks)
  }

  /** Whether the copy stopped short of the body. */
  get cut (): boolean {
    return this.length > this.#kept
  }

  notes (what: string): string[] {
    return this.length > this.#kept ? [`the ${what} body's first ${this.#kept} of ${this.length} bytes were read`] : []
  }
}

/** Reply headers as the tap gives them: names in lower case, repeats joined. */
function headerRecord (headers: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) out[name] = Array.isArray(value) ? value.join(', ') : value
  }
  return out
}

/** How long the bot has to answer a delivery: the longest an Orb waits for one (ORB-A11), after which it has failed. */
const DELIVERY_TIMEOUT_MS = ORB_A11_DELIVERY.eventTimeoutMs

/** Hands each delivery on to the bot's endpoint, and its answer back; a bot out of reach gets the Orb a 502. */
function deliverer (
  to: URL,
  listener: DeliveryListener | undefined,
  tap: WireTap | undefined
): (request: IncomingMessage, response: ServerResponse, open: Set<ReturnType<typeof httpRequest>>) => void {
  const now = (): number => tap?.now?.() ?? performance.now()
  return (request, response, open) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => { chunks.push(chunk) })
    request.once('end', () => {
      const body = Buffer.concat(chunks)
      const d: DeliveryIn = { headers: headerRecord(request.headers), raw: body, body: body.toString('utf8') }
      listener?.sent(d)
      const started = now()
      let writtenAt: number | undefined
      const out = (to.protocol === 'https:' ? httpsRequest : httpRequest)(to, {
        method: 'POST',
        headers: forwardHeaders(request.headers, request.rawHeaders, to.host),
        timeout: DELIVERY_TIMEOUT_MS
      })
      open.add(out)
      out.once('close', () => { open.delete(out) })
      out.once('finish', () => { writtenAt = now() })
      // The suite's own wording (webhook-checks.ts): no reply within the proxy's wait is not the bot's fault.
      out.once('timeout', () => { out.destroy(new Error(`no complete reply within ${DELIVERY_TIMEOUT_MS} ms`)) })
      out.once('response', (reply) => {
        const answer: Buffer[] = []
        reply.on('data', (chunk: Buffer) => { answer.push(chunk) })
        // An answer cut short is no answer: the delivery failed.
        reply.once('aborted', () => { out.destroy(new Error('the bot cut its answer short')) })
        reply.once('end', () => {
          const text = Buffer.concat(answer)
          const status = reply.statusCode ?? 0
          listener?.answered(d, { status, body: text.toString('utf8'), ms: now() - started, writtenAt })
          // Read whole, the answer goes back with its own length.
          response.writeHead(reply.statusCode ?? 502, endToEnd(reply, ['content-length'])).end(text)
        })
      })
      out.once('error', (err) => {
        listener?.answered(d, { error: err.message, ms: now() - started, writtenAt })
        if (response.headersSent) return
        response.writeHead(502, { 'content-type': 'text/plain' }).end('the bot did not answer')
      })
      out.end(body)
    })
  }
}

/** Tells the tap of a connection opening or closing; a listener that throws is told so. */
function told (tap: WireTap | undefined, id: number, open: boolean): void {
  try {
    tap?.connection?.(id, open)
  } catch (err) {
    tap?.failed?.('request', (err as Error).message)
  }
}
