import { Agent, request as httpRequest_, type IncomingHttpHeaders, type IncomingMessage } from 'node:http'
import { connect } from 'node:net'

export interface Reply {
  status: number
  headers: IncomingHttpHeaders
  text: string
  /** The body parsed as JSON; undefined when it is not JSON. */
  json: any
}

export interface RequestOptions {
  method?: string
  /**
   * Path under the base path, for example `/info`; a full path when it does not start with `/a/v1` is wanted, use
   * `target`.
   */
  path?: string
  /** The whole request target, overriding basePath + path. */
  target?: string
  /** Headers; `null` removes a default one (Host, Authorization, Content-Type). */
  headers?: Record<string, string | null>
  /** A JSON value (serialised), or raw bytes sent as they are. */
  body?: unknown
}

/**
 * An adapter's view of the fake: HTTP/1.1 over the Unix socket, keep-alive, defaults as the spec asks (OT-011..014).
 */
export class SocketClient {
  readonly socketPath: string
  token: string
  readonly agent = new Agent({ keepAlive: true, maxSockets: 8 })

  constructor (socketPath: string, token: string) {
    this.socketPath = socketPath
    this.token = token
  }

  request (options: RequestOptions = {}): Promise<Reply> {
    const method = options.method ?? 'GET'
    const payload = options.body === undefined
      ? undefined
      : Buffer.isBuffer(options.body) ? options.body : Buffer.from(JSON.stringify(options.body))
    const defaults: Record<string, string> = { host: 'localhost', authorization: `Bearer ${this.token}` }
    if (payload !== undefined) defaults['content-type'] = 'application/json'
    const headers: Record<string, string> = { ...defaults }
    for (const [name, value] of Object.entries(options.headers ?? {})) {
      if (value === null) delete headers[name.toLowerCase()]
      else headers[name.toLowerCase()] = value
    }
    if (payload !== undefined && headers['transfer-encoding'] === undefined) {
      headers['content-length'] = String(payload.length)
    }
    return new Promise((resolve, reject) => {
      const req = httpRequest_(
        {
          socketPath: this.socketPath,
          method,
          path: options.target ?? `/a/v1${options.path ?? '/info'}`,
          headers,
          agent: this.agent,
          // Node would add Host itself; the tests decide.
          setHost: false
        },
        (res) => collect(res, resolve, reject)
      )
      req.on('error', reject)
      req.end(payload)
    })
  }

  close (): void {
    this.agent.destroy()
  }
}

/** Sends raw bytes on a fresh connection and collects everything until the server closes or `ms` pass. */
export function rawExchange (socketPath: string, bytes: string | Buffer, ms = 2000): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ path: socketPath })
    const chunks: Buffer[] = []
    const timer = setTimeout(() => socket.destroy(), ms)
    socket.on('data', (chunk) => chunks.push(chunk))
    socket.on('close', () => { clearTimeout(timer); resolve(Buffer.concat(chunks).toString('utf8')) })
    socket.on('error', (err) => { clearTimeout(timer); reject(err) })
    socket.write(bytes)
  })
}

/** A body parsed as JSON, or undefined when it is not JSON (the test then asserts on the text or the status). */
function jsonOrUndefined (text: string): unknown {
  try {
    return JSON.parse(text)
  } catch (err) {
    if (err instanceof SyntaxError) return undefined
    throw err
  }
}

/** Splits a raw HTTP/1.1 response into status, headers and the body parsed as JSON. */
export function parseRawResponse (raw: string): { status: number, headers: Record<string, string>, json: any } {
  const [head = '', ...rest] = raw.split('\r\n\r\n')
  const [statusLine = '', ...headerLines] = head.split('\r\n')
  const headers: Record<string, string> = {}
  for (const line of headerLines) {
    const colon = line.indexOf(':')
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim()
  }
  return { status: Number(statusLine.split(' ')[1]), headers, json: jsonOrUndefined(rest.join('\r\n\r\n')) }
}

/** A request to the control server over loopback HTTP, with full control of Host and Origin. */
export function httpRequest (
  baseUrl: string,
  options: { method?: string; path: string; headers?: Record<string, string>; body?: unknown }
): Promise<Reply> {
  const url = new URL(options.path, baseUrl)
  const payload =
    options.body === undefined
      ? undefined
      : Buffer.from(typeof options.body === 'string' ? options.body : JSON.stringify(options.body))
  const headers: Record<string, string> = {
    host: url.host,
    ...(payload === undefined ? {} : { 'content-type': 'application/json', 'content-length': String(payload.length) })
  }
  for (const [name, value] of Object.entries(options.headers ?? {})) headers[name.toLowerCase()] = value
  return new Promise((resolve, reject) => {
    const req = httpRequest_(
      {
        host: url.hostname,
        port: url.port,
        method: options.method ?? 'GET',
        path: url.pathname + url.search,
        headers,
        setHost: false
      },
      (res) => collect(res, resolve, reject)
    )
    req.on('error', reject)
    req.end(payload)
  })
}

function collect (res: IncomingMessage, resolve: (reply: Reply) => void, reject: (err: Error) => void): void {
  const chunks: Buffer[] = []
  res.on('data', (chunk: Buffer) => chunks.push(chunk))
  res.on('end', () => {
    const text = Buffer.concat(chunks).toString('utf8')
    resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json: jsonOrUndefined(text) })
  })
  res.on('error', reject)
}
