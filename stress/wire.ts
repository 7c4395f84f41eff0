// HTTP/1.1 at the byte level: a response parser that says exactly what arrived, and a session over one connection
// (TCP on loopback or a Unix socket) that writes whatever it is told, including what no HTTP client would send.
import { connect, type Socket } from 'node:net'

/** Where a server listens: a Unix socket, or a loopback TCP port. */
export type Address = { path: string } | { port: number }

/** One response as it came off the wire. */
export interface WireResponse {
  status: number
  /** Header names in lower case, in order, repeats kept. */
  headers: Array<[string, string]>
  body: Buffer
  /** The request it answers was a HEAD: no body was read for it. */
  head: boolean
}

/** The first value of a header, or undefined. */
export function header (response: WireResponse, name: string): string | undefined {
  return response.headers.find(([key]) => key === name)?.[1]
}

/**
 * An incremental parser of HTTP/1.1 responses. `methods` says, in order, which request each response answers (a
 * HEAD's answer has no body). 1xx responses are collected apart. Bytes that are not a response end parsing with
 * `malformed` set; what was left over stays in `rest`.
 */
export class ResponseParser {
  readonly responses: WireResponse[] = []
  readonly informational: WireResponse[] = []
  malformed: string | undefined
  #buffer: Buffer = Buffer.alloc(0)
  #methods: string[]

  constructor (methods: string[] = []) {
    this.#methods = [...methods]
  }

  /** Bytes not yet part of a whole response. */
  get rest (): Buffer {
    return this.#buffer
  }

  /** The next request on this connection was sent with this method. */
  expect (method: string): void {
    this.#methods.push(method)
  }

  push (chunk: Buffer): void {
    this.#buffer = this.#buffer.length === 0 ? chunk : Buffer.concat([this.#buffer, chunk])
    while (this.malformed === undefined && this.#buffer.length > 0 && this.#next(false)) { /* one more */ }
  }

  /** The connection closed: a response framed by the close is complete now. */
  close (): void {
    if (this.malformed === undefined && this.#buffer.length > 0) this.#next(true)
  }

  #next (closed: boolean): boolean {
    const end = this.#buffer.indexOf('\r\n\r\n')
    if (end < 0) {
      if (!'HTTP/'.startsWith(this.#buffer.subarray(0, 5).toString('latin1'))) {
        this.malformed = `bytes that are not a response: ${preview(this.#buffer)}`
      } else if (this.#buffer.length > 65536) this.malformed = 'a response head over 64 KiB'
      return false
    }
    const lines = this.#buffer.subarray(0, end).toString('latin1').split('\r\n')
    const statusLine = /^HTTP\/1\.[01] (\d{3})(?: .*)?$/.exec(lines[0]!)
    if (statusLine === null) {
      this.malformed = `bytes that are not a response: ${preview(this.#buffer)}`
      return false
    }
    const status = Number(statusLine[1])
    const headers: Array<[string, string]> = []
    for (const line of lines.slice(1)) {
      const colon = line.indexOf(':')
      if (colon <= 0) {
        this.malformed = `a response header line without a name: ${JSON.stringify(line)}`
        return false
      }
      headers.push([line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim()])
    }
    const info = status >= 100 && status < 200
    const head = !info && this.#methods[0] === 'HEAD'
    const bodiless = info || head || status === 204 || status === 304
    const framed = bodiless ? { body: Buffer.alloc(0), consumed: 0 } : this.#body(headers, end + 4, closed)
    if (framed === undefined) return false
    this.#buffer = this.#buffer.subarray(end + 4 + framed.consumed)
    const response: WireResponse = { status, headers, body: framed.body, head }
    if (info) this.informational.push(response)
    else {
      this.#methods.shift()
      this.responses.push(response)
    }
    return true
  }

  // The body that starts at `start` and how many bytes it takes on the wire; undefined while incomplete or broken.
  #body (headers: Array<[string, string]>, start: number, closed: boolean):
  { body: Buffer, consumed: number } | undefined {
    if (headers.some(([k, v]) => k === 'transfer-encoding' && /chunked/i.test(v))) return this.#chunked(start)
    const lengths = headers.filter(([k]) => k === 'content-length').map(([, v]) => v)
    const available = this.#buffer.length - start
    if (lengths.length > 0) {
      if (!/^\d+$/.test(lengths[0]!) || lengths.some((v) => v !== lengths[0])) {
        this.malformed = `a response with Content-Length ${JSON.stringify(lengths.join(', '))}`
        return undefined
      }
      const length = Number(lengths[0])
      if (available < length) return undefined
      return { body: Buffer.from(this.#buffer.subarray(start, start + length)), consumed: length }
    }
    if (!closed) return undefined
    return { body: Buffer.from(this.#buffer.subarray(start)), consumed: available }
  }

  #chunked (start: number): { body: Buffer, consumed: number } | undefined {
    const parts: Buffer[] = []
    let at = start
    for (;;) {
      const eol = this.#buffer.indexOf('\r\n', at)
      if (eol < 0) return undefined
      const size = parseInt(this.#buffer.subarray(at, eol).toString('latin1').split(';')[0]!, 16)
      if (!Number.isFinite(size)) {
        this.malformed = 'a response with a bad chunk size'
        return undefined
      }
      if (size === 0) {
        const trailerEnd = this.#buffer.indexOf('\r\n\r\n', eol)
        if (trailerEnd < 0) return undefined
        return { body: Buffer.concat(parts), consumed: trailerEnd + 4 - start }
      }
      if (this.#buffer.length < eol + 2 + size + 2) return undefined
      parts.push(this.#buffer.subarray(eol + 2, eol + 2 + size))
      at = eol + 2 + size + 2
    }
  }
}

/** The first bytes of a buffer, for a report. */
export function preview (bytes: Buffer, max = 120): string {
  const text = bytes.subarray(0, max).toString('latin1')
  return JSON.stringify(bytes.length > max ? `${text}…` : text)
}

/** Why a wait ended. */
export type WaitResult = 'ok' | 'timeout' | 'closed'

/**
 * One client connection: writes bytes as told, collects every response, and records how the connection ended. A
 * write error (EPIPE, ECONNRESET) never stops the reading: what the server sent before it still counts.
 */
export class WireSession {
  readonly parser: ResponseParser
  readonly socket: Socket
  readonly openedAt = Date.now()
  received = 0
  closed = false
  /** The server's end arrived (its FIN), whatever the client did. */
  serverEnded = false
  error: string | undefined
  #waiters = new Set<() => void>()

  private constructor (socket: Socket, parser: ResponseParser) {
    this.socket = socket
    this.parser = parser
    socket.on('data', (chunk: Buffer) => {
      this.received += chunk.length
      parser.push(chunk)
      this.#wake()
    })
    // The server sent its last byte: a response framed by the end of the connection is whole now.
    socket.on('end', () => {
      this.serverEnded = true
      parser.close()
      this.#wake()
    })
    socket.on('error', (err: Error & { code?: string }) => { this.error ??= err.code ?? err.message })
    socket.on('close', () => {
      this.closed = true
      parser.close()
      this.#wake()
    })
  }

  /** Connects; rejects with the connection error (refused, timeout). */
  static open (address: Address, timeoutMs = 5000): Promise<WireSession> {
    return new Promise((resolve, reject) => {
      const socket = 'path' in address
        ? connect({ path: address.path, allowHalfOpen: true })
        : connect({ host: '127.0.0.1', port: address.port, allowHalfOpen: true })
      socket.setNoDelay(true)
      const timer = setTimeout(() => { socket.destroy(); reject(new Error('connect timeout')) }, timeoutMs)
      socket.once('error', (err) => { clearTimeout(timer); reject(err) })
      socket.once('connect', () => {
        clearTimeout(timer)
        socket.removeAllListeners('error')
        resolve(new WireSession(socket, new ResponseParser()))
      })
    })
  }

  /**
   * Writes bytes unless the connection is gone or the server has closed its side (it reads no more: a write would
   * only meet EPIPE, and Node would then drop what the server said); `method` is the request's, when these bytes
   * start one.
   */
  write (bytes: Buffer | string, method?: string): void {
    if (method !== undefined) this.parser.expect(method)
    if (!this.socket.destroyed && this.socket.writable && !this.serverEnded) this.socket.write(bytes)
  }

  /** Half-closes: the client sends nothing more but still reads. */
  end (): void {
    if (!this.socket.destroyed) this.socket.end()
  }

  destroy (): void {
    this.socket.destroy()
  }

  /** Waits until `done()` holds, the server can send no more (it closed or ended its side), or `ms` pass. */
  until (done: () => boolean, ms: number): Promise<WaitResult> {
    if (done()) return Promise.resolve('ok')
    if (this.closed || this.serverEnded) return Promise.resolve('closed')
    return new Promise((resolve) => {
      const check = (): void => {
        if (done()) finish('ok')
        else if (this.closed || this.serverEnded) finish('closed')
      }
      const timer = setTimeout(() => finish('timeout'), ms)
      const finish = (result: WaitResult): void => {
        clearTimeout(timer)
        this.#waiters.delete(check)
        resolve(result)
      }
      this.#waiters.add(check)
    })
  }

  /** Waits for the `n`-th response on this connection. */
  responses (n: number, ms: number): Promise<WaitResult> {
    return this.until(() => this.parser.responses.length >= n || this.parser.malformed !== undefined, ms)
  }

  /** Waits for the server to close its side. */
  serverClose (ms: number): Promise<WaitResult> {
    return this.until(() => this.serverEnded || this.closed, ms).then((r) => r === 'closed' ? 'ok' : r)
  }

  #wake (): void {
    for (const waiter of [...this.#waiters]) waiter()
  }
}
