import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http'
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
 * - CONNECT, which would otherwise get no answer at all, gets a JSON 400;
 * - `Expect: 100-continue` is left to the app, which sends 100 only once the request's head has passed its checks,
 *   so a body the app will refuse is never invited.
 * `badRequest` builds the raw response for CONNECT.
 */
export function createFakeServer (handler: RequestListener, badRequest: (message: string) => string): Server {
  const server = createServer({ requireHostHeader: false }, handler)
  server.maxHeadersCount = 0
  server.on('checkContinue', (request: IncomingMessage, response: ServerResponse) => server.emit('request', request, response))
  server.on('connect', (_request: IncomingMessage, socket: Duplex) => {
    socket.end(badRequest('CONNECT is not supported'))
  })
  return server
}

/**
 * Answers bytes Node's HTTP parser refused. A response still being written on the same connection (pipelining)
 * goes out first; then the error, then the connection closes.
 */
export function answerClientError (
  err: Error & { code?: string },
  socket: Duplex,
  badRequest: (message: string) => string
): void {
  if (err.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy()
    return
  }
  const message = err.code === 'HPE_HEADER_OVERFLOW'
    ? 'the request head is too large'
    : 'the request is not valid HTTP/1.1'
  const pending = (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage
  if (pending != null && !pending.writableFinished) pending.once('finish', () => socket.end(badRequest(message)))
  else socket.end(badRequest(message))
}

/** Whether a request announced a body (by length or by chunking). */
export function announcesBody (request: IncomingMessage): boolean {
  const length = request.headers['content-length']
  return (length !== undefined && length !== '0') || request.headers['transfer-encoding'] !== undefined
}
