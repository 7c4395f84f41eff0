import { Agent, request } from 'node:http'

import type { Exchange } from '../core/case.js'
import {
  RecordingHttpClient,
  curlCommand,
  encodeBody,
  requestHeaders,
  shellQuote,
  type HttpReply
} from '../core/recording.js'
import type { SuiteTransport } from '../core/runner.js'

export type { Exchange }

/** A reply of the target. */
export type Reply = HttpReply

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
  /** Aborting it closes the connection before the reply: a client that goes away, at a moment the case picks. */
  signal?: AbortSignal
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
/** Bodies past this are offered with Expect: 100-continue (the spec's maxBodyBytes). */
const LARGE_BODY = 65_536

/**
 * An adapter's HTTP/1.1 client over the target's Unix socket: keep-alive, no Origin, the spec's headers by default
 * (OT-011..014). Every exchange is recorded for the report with its credentials masked.
 */
export class OrbtileClient extends RecordingHttpClient {
  readonly target: OrbtileTarget

  constructor (target: OrbtileTarget, wait?: (seconds: number) => Promise<void>) {
    super(new Agent({ keepAlive: true, maxSockets: 16 }), wait)
    this.target = target
    this.learnSecret(target.token, '$ORBTILE_TOKEN', '<token>')
  }

  /** Sends a request; a `429 rate_limited` is waited out unless `retryRateLimited` is false. */
  request (options: RequestOptions = {}): Promise<Reply> {
    return this.retrying(
      () => this.#send(options),
      (reply) => options.retryRateLimited !== false && reply.status === 429 &&
        reply.json?.error?.code === 'rate_limited'
        ? Math.max(1, Number(reply.headers['retry-after'] ?? 1))
        : undefined
    )
  }

  /**
   * Sends bytes exactly as given on a fresh connection and returns what came back until the server closed or
   * `ms` passed: for the framing cases, which no HTTP client would send. `{token}` in the bytes is the discovery token.
   */
  raw (bytes: string, ms = 2000, retryRateLimited = true): Promise<string> {
    const wire = bytes.replaceAll('{token}', this.target.token)
    // As for request(): a rate-limited answer is waited out and the bytes sent again (rate-limit cases opt out).
    return this.retrying(
      () => this.exchangeRaw({ path: this.target.socketPath }, bytes, wire, ms),
      (got) => retryRateLimited && /^HTTP\/1\.1 429 /.test(got) && got.includes('"rate_limited"')
        ? Math.max(1, Number(/\r\nretry-after: *(\d+)/i.exec(got)?.[1] ?? 1))
        : undefined
    )
  }

  // A credential header keeps its shape: a real token becomes a shell variable (so the curl can repeat the request),
  // and a wrong one, which is what a case about credentials sends, is kept as it was.
  protected override maskHeader (name: string, value: string): string {
    return SECRET_HEADERS.has(name) ? super.maskHeader(name, value) : value
  }

  protected override learn (json: unknown): void {
    const issued = (json as { adapterToken?: unknown } | undefined)?.adapterToken
    if (typeof issued === 'string') this.learnSecret(issued, '$ADAPTER_TOKEN', '<adapter token>')
  }

  #send (options: RequestOptions): Promise<Reply> {
    const method = options.method ?? 'GET'
    const payload = encodeBody(options.body)
    const base = { host: 'localhost', authorization: `Bearer ${this.target.token}` }
    const headers = requestHeaders(base, payload, options.headers)
    const expectContinue = payload !== undefined && payload.length > LARGE_BODY && headers.expect === undefined
    if (expectContinue) headers.expect = '100-continue'
    const target = options.target ?? `${this.target.basePath}${options.path ?? '/info'}`
    const timeoutMs = options.timeoutMs ?? 30_000
    const { socketPath } = this.target
    return this.exchange(
      { method, target, headers, payload, timeoutMs, expectContinue, signal: options.signal },
      (opts, callback) => request({ ...opts, socketPath, path: target, setHost: false }, callback)
    )
  }
}

/** A curl command that repeats an exchange; the token comes from the discovery file, never from the report. */
export function curlFor (exchange: Exchange, target: OrbtileTarget): string {
  if (exchange.method === 'RAW') return `printf '%s' ${shellQuote(exchange.body ?? '')} | nc -U ${shellQuote(target.socketPath)}`
  const curl = curlCommand(exchange, `--unix-socket ${shellQuote(target.socketPath)}`, `http://localhost${exchange.target}`)
  const prefix = target.discovery === undefined
    ? ''
    : `ORBTILE_TOKEN=$(node -p 'require(process.argv[1]).token' ${shellQuote(target.discovery)}) `
  return prefix + curl
}

/** The Orbtile suite's transport: HTTP/1.1 over the target's Unix socket. */
export function orbtileTransport (
  target: OrbtileTarget,
  waitOut?: (seconds: number) => Promise<void>
): SuiteTransport<OrbtileClient> {
  return { client: () => new OrbtileClient(target, waitOut), curl: (exchange) => curlFor(exchange, target) }
}
