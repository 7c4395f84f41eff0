import { Agent, request, type IncomingHttpHeaders } from 'node:http'
import { connect } from 'node:net'

import { CaseHalted, type Exchange, type RecordingClient } from '../case.js'
import type { SuiteTransport } from '../runner.js'

export type { Exchange }

export interface Reply {
  status: number
  headers: IncomingHttpHeaders
  text: string
  /** The body parsed as JSON; undefined when it is not JSON. */
  json: any
}

export interface RequestOptions {
  method?: string
  /** A path under the target's base path, for example `/info`. */
  path?: string
  /** The whole request target, when it must not start with the base path. */
  target?: string
  /** Headers to add or (with null) to leave out; Host, Authorization and Content-Type are sent by default. */
  headers?: Record<string, string | null>
  /** A JSON value (serialised) or raw bytes. */
  body?: unknown
  /** Milliseconds to wait for the reply (default 30 s). */
  timeoutMs?: number
  /**
   * A `429 rate_limited` reply is waited out (Retry-After) and the request sent again, up to 5 times, so that cases
   * run against a target with the spec's rate limit on. The rate-limit cases themselves set this false.
   */
  retryRateLimited?: boolean
}

/** Where an Orbtile speaks: its socket, base path and discovery token (the token never leaves this object). */
export interface OrbtileTarget {
  socketPath: string
  basePath: string
  token: string
  /** The discovery file the target was found through, for curl commands; absent for `unix:` targets. */
  discovery?: string
}

const SECRET_HEADERS = new Set(['authorization', 'x-orbtile-adapter-token'])
const REPLY_KEPT = 4096
/** Bodies past this are offered with Expect: 100-continue (the spec's maxBodyBytes). */
const LARGE_BODY = 65_536

/**
 * An adapter's HTTP/1.1 client over the target's Unix socket: keep-alive, no Origin, the spec's headers by default
 * (OT-011..014). Every exchange is recorded for the report with its credentials masked.
 */
export class OrbtileClient implements RecordingClient {
  readonly target: OrbtileTarget
  readonly exchanges: Exchange[] = []
  /** Adapter tokens the target issued: never kept in a report. */
  readonly #secrets = new Set<string>()
  readonly #agent = new Agent({ keepAlive: true, maxSockets: 16 })
  #halted = false
  /** How a Retry-After is waited out: real sleep by default; the runner advances a virtual clock instead. */
  readonly #wait: (seconds: number) => Promise<void>

  constructor (target: OrbtileTarget, wait: (seconds: number) => Promise<void> = sleepSeconds) {
    this.target = target
    this.#wait = wait
  }

  async request (options: RequestOptions = {}): Promise<Reply> {
    let reply = await this.#send(options)
    for (
      let tries = 0;
      options.retryRateLimited !== false &&
      tries < 5 &&
      reply.status === 429 &&
      reply.json?.error?.code === 'rate_limited';
      tries++
    ) {
      await this.#wait(Math.max(1, Number(reply.headers['retry-after'] ?? 1)))
      reply = await this.#send(options)
    }
    return reply
  }

  halt (halted: boolean): void {
    this.#halted = halted
  }

  #send (options: RequestOptions): Promise<Reply> {
    if (this.#halted) return Promise.reject(new CaseHalted())
    const method = options.method ?? 'GET'
    const payload =
      options.body === undefined
        ? undefined
        : Buffer.isBuffer(options.body)
          ? options.body
          : Buffer.from(JSON.stringify(options.body))
    const headers: Record<string, string> = { host: 'localhost', authorization: `Bearer ${this.target.token}` }
    if (payload !== undefined) headers['content-type'] = 'application/json'
    for (const [name, value] of Object.entries(options.headers ?? {})) {
      if (value === null) delete headers[name.toLowerCase()]
      else headers[name.toLowerCase()] = value
    }
    if (payload !== undefined && headers['transfer-encoding'] === undefined) {
      headers['content-length'] = String(payload.length)
    }
    const large = payload !== undefined && payload.length > LARGE_BODY && headers.expect === undefined
    if (large) headers.expect = '100-continue'
    const target = options.target ?? `${this.target.basePath}${options.path ?? '/info'}`
    return new Promise((resolve, reject) => {
      const req = request(
        { socketPath: this.target.socketPath, method, path: target, headers, agent: this.#agent, setHost: false },
        (res) => {
          const chunks: Buffer[] = []
          res.on('data', (chunk: Buffer) => chunks.push(chunk))
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8')
            let json: unknown
            try {
              json = JSON.parse(text)
            } catch {
              json = undefined
            }
            const issued = (json as { adapterToken?: unknown } | undefined)?.adapterToken
            if (typeof issued === 'string' && issued !== '') this.#secrets.add(issued)
            this.#record({
              method,
              target,
              headers,
              body: payload?.toString('utf8'),
              status: res.statusCode ?? 0,
              replyHeaders: flat(res.headers),
              reply: text
            })
            resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json })
          })
          res.on('error', reject)
        }
      )
      req.setTimeout(options.timeoutMs ?? 30_000, () =>
        req.destroy(new Error(`no reply to ${method} ${target} within ${options.timeoutMs ?? 30_000} ms`))
      )
      req.on('error', reject)
      if (!large) {
        req.end(payload)
        return
      }
      // A body the server may refuse from the head alone (413) is offered with Expect: 100-continue, so that a
      // refusal is read rather than lost to a broken pipe while the body is still being written. A server that
      // never answers 100 gets the body after a second, as curl does.
      let sent = false
      const send = (): void => {
        if (sent) return
        sent = true
        clearTimeout(wait)
        req.end(payload)
      }
      const wait = setTimeout(send, 1000)
      req.on('continue', send)
      req.on('response', (res) => {
        clearTimeout(wait)
        if (sent) return
        sent = true
        // Answered before the body went: this connection is done with.
        res.on('end', () => req.destroy())
      })
    })
  }

  /**
   * Sends bytes exactly as given on a fresh connection and returns what came back until the server closed or
   * `ms` passed: for the framing cases, which no HTTP client would send. `{token}` in the bytes is the discovery token.
   */
  async raw (bytes: string, ms = 2000, retryRateLimited = true): Promise<string> {
    let got = await this.#raw(bytes, ms)
    // As for request(): a rate-limited answer is waited out and the bytes sent again (rate-limit cases opt out).
    const retries = retryRateLimited ? 5 : 0
    for (let tries = 0; tries < retries && /^HTTP\/1\.1 429 /.test(got) && got.includes('"rate_limited"'); tries++) {
      await this.#wait(Math.max(1, Number(/\r\nretry-after: *(\d+)/i.exec(got)?.[1] ?? 1)))
      got = await this.#raw(bytes, ms)
    }
    return got
  }

  #raw (bytes: string, ms: number): Promise<string> {
    if (this.#halted) return Promise.reject(new CaseHalted())
    const wire = bytes.replaceAll('{token}', this.target.token)
    return new Promise((resolve, reject) => {
      const socket = connect(this.target.socketPath)
      let got = ''
      const done = (): void => {
        clearTimeout(timer)
        socket.destroy()
        this.#record({
          method: 'RAW',
          target: '',
          headers: {},
          body: bytes,
          status: parseStatus(got),
          replyHeaders: {},
          reply: got
        })
        resolve(got)
      }
      const timer = setTimeout(done, ms)
      socket.on('data', (chunk) => { got += chunk.toString('utf8') })
      socket.on('end', done)
      socket.on('error', (err) => {
        clearTimeout(timer)
        if (got !== '') done()
        else reject(err)
      })
      socket.write(wire)
    })
  }

  close (): void {
    this.#agent.destroy()
  }

  #record (exchange: Exchange): void {
    const headers: Record<string, string> = {}
    for (const [name, value] of Object.entries(exchange.headers)) {
      headers[name] = SECRET_HEADERS.has(name) ? this.#mask(value) : value
    }
    const reply = exchange.reply.length > REPLY_KEPT ? `${exchange.reply.slice(0, REPLY_KEPT)}…` : exchange.reply
    this.exchanges.push({
      ...exchange,
      headers,
      reply: this.#scrub(reply, '<token>', '<adapter token>'),
      body: exchange.body === undefined ? undefined : this.#scrub(exchange.body, '<token>', '<adapter token>')
    })
  }

  // A credential header keeps its shape: a real token becomes a shell variable (so the curl can repeat the request),
  // and a wrong one, which is what a case about credentials sends, is kept as it was.
  /** Text for a report with every credential this client knows replaced. */
  redact (text: string): string {
    return this.#scrub(text, '<token>', '<adapter token>')
  }

  #mask (value: string): string {
    return this.#scrub(value, '$ORBTILE_TOKEN', '$ADAPTER_TOKEN')
  }

  #scrub (text: string, discovery: string, adapter: string): string {
    let out = text.replaceAll(this.target.token, discovery)
    for (const secret of this.#secrets) out = out.replaceAll(secret, adapter)
    return out
  }
}

const sleepSeconds = (seconds: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, seconds * 1000))

function flat (headers: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) out[name] = Array.isArray(value) ? value.join(', ') : value
  }
  return out
}

function parseStatus (raw: string): number {
  return Number(/^HTTP\/1\.1 (\d{3})/.exec(raw)?.[1] ?? 0)
}

/** A curl command that repeats an exchange; the token comes from the discovery file, never from the report. */
export function curlFor (exchange: Exchange, target: OrbtileTarget): string {
  if (exchange.method === 'RAW') return `printf '%s' ${shellQuote(exchange.body ?? '')} | nc -U ${shellQuote(target.socketPath)}`
  const parts = [`curl -sS -i --unix-socket ${shellQuote(target.socketPath)}`, `-X ${exchange.method}`]
  for (const [name, value] of Object.entries(exchange.headers)) {
    if (name === 'content-length') continue
    parts.push(`-H ${value.includes('$') ? `"${name}: ${value}"` : shellQuote(`${name}: ${value}`)}`)
  }
  if (exchange.body !== undefined) parts.push(`--data-binary ${shellQuote(exchange.body)}`)
  parts.push(shellQuote(`http://localhost${exchange.target}`))
  const prefix = target.discovery === undefined
    ? ''
    : `ORBTILE_TOKEN=$(node -p 'require(process.argv[1]).token' ${shellQuote(target.discovery)}) `
  return prefix + parts.join(' ')
}

function shellQuote (text: string): string {
  return `'${text.replaceAll("'", "'\\''")}'`
}

/** The Orbtile suite's transport: HTTP/1.1 over the target's Unix socket. */
export function orbtileTransport (
  target: OrbtileTarget,
  waitOut?: (seconds: number) => Promise<void>
): SuiteTransport<OrbtileClient> {
  return { client: () => new OrbtileClient(target, waitOut), curl: (exchange) => curlFor(exchange, target) }
}
