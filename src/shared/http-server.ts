import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import type { Duplex } from 'node:stream'

/** A whole HTTP/1.1 response with a JSON error body, for bytes no route ever sees. */
export function rawJsonResponse (status: number, reason: string, body: unknown): string {
  const text = JSON.stringify(body)
  return `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`
}

/**
 * An `http.Server` for a fake that answers everything in its own JSON, whatever arrives:
 * - a missing Host reaches the app (which answers it) instead of Node's bare 400;
 * - no cap on the number of header lines, so none is silently dropped (an Origin after 2000 fillers still counts);
 *   the 16 KiB head limit still bounds them;
 * - CONNECT, which would otherwise get no answer at all, gets a JSON 400; an `Upgrade` request is answered as any
 *   other, with `Connection: close`;
 * - `Expect: 100-continue` is left to the app, which sends 100 only once the request's head has passed its checks,
 *   so a body the app will refuse is never invited; any other expectation is ignored, as RFC 9110 allows.
 * `badRequest` builds the raw response for CONNECT.
 */
export function createFakeServer (handler: RequestListener, badRequest: (message: string) => string): Server {
  const server = createServer({ requireHostHeader: false }, (request, response) => {
    // A request parsed from the bytes behind a refused body, while its connection closes in stages, is not served:
    // its client was told the connection ends, and will send it again elsewhere.
    if ((request.socket as Closing)[STATE] !== undefined) {
      request.resume()
      return
    }
    // No upgrade is offered (RFC 9110 §7.8), and Node reads nothing more on a connection after an upgrade request:
    // the answer says so, so that a client does not wait for answers to requests pipelined behind it.
    if (request.headers.upgrade !== undefined) response.setHeader('connection', 'close')
    handler(request, response)
  })
  server.maxHeadersCount = 0
  server.on('checkContinue', (request: IncomingMessage, response: ServerResponse) => server.emit('request', request, response))
  // Any other expectation: RFC 9110 §10.1.1 lets a server ignore it, and Node's own answer (a 417 with no body)
  // would be the one reply not in the API's JSON.
  server.on('checkExpectation', (request: IncomingMessage, response: ServerResponse) => {
    server.emit('request', request, response)
  })
  // Node hands a CONNECT's socket over with no error listener and no parser: answered, then closed in stages, which
  // reads what the client still sends (so its close is seen) and survives a reset.
  server.on('connect', (_request: IncomingMessage, socket: Duplex) => {
    lingeringClose(socket as Socket, badRequest('CONNECT is not supported'))
  })
  return server
}

/**
 * Answers bytes Node's HTTP parser refused, then closes the connection; it never waits for a request that cannot end.
 * - A client that left (reset, or the stream ended mid-request) gets nothing: there is no one to answer, and the
 *   socket is destroyed at once (before, it waited for the broken request's response, and leaked).
 * - A framing error inside a body (a bad chunk size, an unknown Transfer-Encoding) breaks the request being read:
 *   its handler can never finish, so the error is answered now and the socket closed after it.
 * - A response to an earlier, complete request still being written (pipelining) goes out first, for at most
 *   `PIPELINE_GRACE_MS`.
 * - A `HEAD` gets the status and headers without a body (RFC 9110 §9.3.2), judged from the bytes themselves.
 */
export function answerClientError (
  err: Error & { code?: string, rawPacket?: unknown },
  socket: Duplex,
  badRequest: (message: string) => string
): void {
  const closing = socket as Closing
  // Node reports the parse error again for every later chunk: the first report decides, the rest change nothing.
  if (closing[STATE] !== undefined) return
  if (err.code === 'ECONNRESET' || err.code === 'HPE_INVALID_EOF_STATE' || !socket.writable) {
    socket.destroy()
    return
  }
  closing[STATE] = 'answering'
  const message = err.code === 'HPE_HEADER_OVERFLOW'
    ? 'the request head is too large'
    : 'the request is not valid HTTP/1.1'
  const raw = badRequest(message)
  const bytes = isHead(err.rawPacket) ? raw.slice(0, raw.indexOf('\r\n\r\n') + 4) : raw
  const started = Date.now()
  // Each answer already under way goes out whole first. A complete (pipelined) request's answer is followed by the
  // 400; a response already started for the request the error broke is the only answer that request gets.
  const settle = (): void => {
    if (socket.destroyed) return
    const pending = (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage
    const underWay = pending != null && !pending.writableFinished &&
      (pending.headersSent || pending.req?.complete === true)
    if (!underWay) {
      lingeringClose(socket as Socket, bytes)
      return
    }
    const left = PIPELINE_GRACE_MS - (Date.now() - started)
    if (left <= 0 || pending.req?.complete !== true) {
      // Out of time, or its own request is the broken one: no 400 written over an answer it would be taken for.
      const close = (): void => { lingeringClose(socket as Socket) }
      if (left <= 0) {
        close()
        return
      }
      const timer = setTimeout(close, left)
      timer.unref()
      pending.once('finish', () => {
        clearTimeout(timer)
        close()
      })
      return
    }
    const timer = setTimeout(settle, left)
    timer.unref()
    pending.once('finish', () => {
      clearTimeout(timer)
      // Node hands the socket to the next queued answer on finish; look again once it has.
      setImmediate(settle)
    })
  }
  settle()
}

/**
 * How long a pipelined response already being made may take before a later request's parse error is answered over
 * it. A transport bound, not the fake's time: it is the same on a virtual clock.
 */
const PIPELINE_GRACE_MS = 1000

/** Whether the refused bytes are a HEAD request (its answer must carry no body). */
function isHead (raw: unknown): boolean {
  return Buffer.isBuffer(raw) && raw.length >= 5 && raw.subarray(0, 5).toString('latin1') === 'HEAD '
}

/** Whether a request announced a body (by length or by chunking). */
function announcesBody (request: IncomingMessage): boolean {
  const length = request.headers['content-length']
  return (length !== undefined && length !== '0') || request.headers['transfer-encoding'] !== undefined
}

/**
 * Closes a fake's fastify app so that it always stops: idle connections go at once, requests in flight get
 * `graceMs` to finish, then every connection is cut (a client half-way through sending a body, or one sending its
 * headers a byte at a time, would otherwise hold the close for ever). A transport bound, on real time.
 */
export async function closeApp (
  app: { server: Server, close(): PromiseLike<unknown> },
  graceMs = CLOSE_GRACE_MS
): Promise<void> {
  // Not unref'd: a close under way keeps the process alive until it is done (it lasts graceMs at most).
  const timer = setTimeout(() => app.server.closeAllConnections(), graceMs)
  try {
    await app.close()
  } finally {
    clearTimeout(timer)
  }
}

/** How long a closing fake waits for requests in flight before it cuts their connections. */
const CLOSE_GRACE_MS = 500

/**
 * RFC 9110 §10.1.1: a client that sent `Expect: 100-continue` waits for `100 Continue` before its body. Called once
 * the request's head has passed its checks (createFakeServer leaves the interim answer to the app), so a body the
 * fake will refuse is never invited.
 */
export function inviteBody (request: IncomingMessage, response: ServerResponse): void {
  if (EXPECTS_CONTINUE.test(request.headers.expect ?? '') && !response.headersSent) response.writeContinue()
}

/**
 * RFC 9112 §9.6: a request refused before its body was read, answered with `Connection: close`, closes in stages.
 * Node would tear the socket down as soon as the answer is flushed, and the client, still uploading, would meet a
 * reset before reading the refusal (EPIPE). Here the write side closes first (FIN after the answer); the rest of the
 * body is read and dropped until the client closes, `LINGER_BYTES` more have come, or `LINGER_MS` have passed; then
 * the socket goes. The body is never parsed or kept: refused is refused.
 */
function closeInStages (request: IncomingMessage): void {
  if (request.complete) return
  const socket = request.socket as Socket & Closing & { destroySoon?: () => void }
  // This request has its answer: a parse error in the bytes behind it gets none of its own (answerClientError).
  socket[STATE] ??= 'refused'
  // Node calls destroySoon once a `Connection: close` response is flushed; this socket's is a staged close instead.
  socket.destroySoon = () => { lingeringClose(socket) }
}

/**
 * RFC 9112 §9.6's staged close: write `last` (if any) and close the write side, then read and drop what the client
 * still sends until it closes, `LINGER_BYTES` have come, or `LINGER_MS` have passed; then free the socket.
 */
function lingeringClose (socket: Socket, last?: string): void {
  const closing = socket as Closing
  if (socket.destroyed || closing[STATE] === 'closing') return
  closing[STATE] = 'closing'
  // A reset while closing is the end it would have come to anyway; unheard, it would crash the process.
  socket.on('error', () => { socket.destroy() })
  let dropped = 0
  const cut = (): void => { socket.destroy() }
  const timer = setTimeout(cut, LINGER_MS)
  timer.unref()
  socket.once('close', () => clearTimeout(timer))
  socket.once('end', cut)
  socket.on('data', (chunk: Buffer) => {
    dropped += chunk.length
    if (dropped > LINGER_BYTES) cut()
  })
  if (last === undefined) socket.end()
  else socket.end(last)
  socket.resume()
}

/** Where a connection is in its close: a parse error being answered, or the staged close itself. */
const STATE = Symbol('orbtest.closeState')
type Closing = Duplex & { [STATE]?: 'refused' | 'answering' | 'closing' }

/** How much more of a refused body is read and dropped, and for how long, before its connection is cut. */
const LINGER_BYTES = 8 * 1024 * 1024
const LINGER_MS = 2000

/**
 * For an error answer to a request refused before its body was read. A small body (up to `DRAIN_BYTES`, by its
 * Content-Length) is read and dropped by Node after the answer, and the connection stays open for the requests
 * pipelined behind it. A larger one, or a chunked one of unknown size, is not read on: the connection closes, in
 * stages (closeInStages), so that a client still uploading reads the refusal rather than a reset.
 */
export function closeIfBodyUnread (
  reply: { request: { body: unknown, raw: IncomingMessage }, header(name: string, value: string): unknown }
): void {
  const request = reply.request.raw
  if (reply.request.body !== undefined || !announcesBody(request)) return
  const length = request.headers['content-length']
  const small = length !== undefined && Number(length) <= DRAIN_BYTES
  // A client that waits for 100 Continue and got none: Node closes that connection itself, so it closes in stages.
  const waitsForContinue = EXPECTS_CONTINUE.test(request.headers.expect ?? '')
  if (request.headers['transfer-encoding'] === undefined && small && !waitsForContinue) return
  reply.header('connection', 'close')
  closeInStages(request)
}

/** A refused body up to this size is drained and the connection kept; a larger one closes it. */
const DRAIN_BYTES = 64 * 1024

/** Node's own test of an `Expect` asking for 100 Continue (it may carry other expectations beside). */
const EXPECTS_CONTINUE = /(?:^|\W)100-continue(?:$|\W)/i

/**
 * How many times a header appears in a request's head (`lowerName` in lower case). Node keeps only the first Host or
 * Authorization in `headers`; RFC 9112 §3.2 makes several Hosts a 400.
 */
export function headerCount (request: IncomingMessage, lowerName: string): number {
  const raw = request.rawHeaders
  let n = 0
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i]!.length === lowerName.length && raw[i]!.toLowerCase() === lowerName) n++
  }
  return n
}

/** A route schema reaching fastify: none may, since the fakes validate with the specs' own validators. */
function noRouteSchema ({ method, url }: { method?: string, url?: string }): never {
  throw new Error(`orbtest's servers take no fastify route schemas (${method ?? ''} ${url ?? ''})`)
}

/**
 * fastify's `schemaController` for every server here: the fakes and the control server validate with the specs'
 * own validators (src/shared/ajv.ts), never with route schemas, so fastify's ajv and fast-json-stringify compilers
 * would only be loaded to sit unused. With these, they are not loaded at all: about 30 ms of every start.
 */
export const NO_ROUTE_SCHEMAS = {
  compilersFactory: { buildValidator: () => noRouteSchema, buildSerializer: () => noRouteSchema }
}
