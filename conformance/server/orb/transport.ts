import { Agent as HttpAgent, request as httpRequest } from 'node:http'
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https'
import type { Exchange } from '../core/case.js'
import { RecordingHttpClient, curlCommand, encodeBody, requestHeaders, type HttpReply } from '../core/recording.js'
import type { OrbTarget } from './target.js'
import type { WebhookReceiver } from './receiver.js'

/** A reply of the Orb. */
export type OrbReply = HttpReply

/** Who a request speaks as: the target's app with every scope, the one with few, another token, or nobody. */
export type Speaker = 'full' | 'few' | { token: string } | null

export interface OrbRequest {
  method?: string
  /** A path under the origin, for example `/api/bot/v1/messages`. */
  path: string
  /** Query parameters (undefined ones left out), or a query string as sent (without `?`). */
  query?: Record<string, string | number | boolean | undefined> | string
  /** A JSON value (serialised), or raw bytes sent as they are. */
  body?: unknown
  /** Default: the full app. */
  as?: Speaker
  /** Headers to add, or (null) to leave out. */
  headers?: Record<string, string | null>
  /**
   * A 429 is waited out (its Retry-After, on the target's clock) and the request sent again, up to 5 times, so that
   * cases run against a server with its throttles on. Throttle cases set this false.
   */
  retryThrottled?: boolean
  timeoutMs?: number
}

/**
 * A bot's HTTP client of an Orb: keep-alive, the bearer token of the speaking app, every exchange recorded for the
 * report with credentials masked (`$ORB_TOKEN`, `$ORB_FEW_TOKEN` in headers, `<token>` in bodies).
 */
export class OrbBotClient extends RecordingHttpClient {
  readonly target: OrbTarget
  /** The run's webhook receiver, when it has one. */
  readonly receiver: WebhookReceiver | undefined

  constructor (target: OrbTarget, wait?: (seconds: number) => Promise<void>, receiver?: WebhookReceiver) {
    super(
      target.url.startsWith('https:')
        ? new HttpsAgent({ keepAlive: true, maxSockets: 16 })
        : new HttpAgent({ keepAlive: true, maxSockets: 16 }),
      wait
    )
    this.target = target
    this.receiver = receiver
    this.secret(target.full.token, '$ORB_TOKEN')
    if (target.few !== undefined) this.secret(target.few.token, '$ORB_FEW_TOKEN')
  }

  /** A token this client learnt (a rotation, another app): never kept in a report. */
  secret (token: string, name = '$OTHER_TOKEN'): void {
    this.learnSecret(token, name, '<token>')
  }

  /** Sends a request; a 429 is waited out unless `retryThrottled` is false. */
  request (options: OrbRequest): Promise<OrbReply> {
    return this.retrying(
      () => this.#send(options),
      (reply) => options.retryThrottled !== false && reply.status === 429
        ? Math.max(1, Number(reply.headers['retry-after'] ?? 1) || 1)
        : undefined
    )
  }

  /** GET `path` with a query, as the full app unless `as` says otherwise. */
  get (path: string, query?: OrbRequest['query'], as?: Speaker): Promise<OrbReply> {
    return this.request({ path, query, ...(as === undefined ? {} : { as }) })
  }

  /** POST a JSON body to `path`, as the full app unless `as` says otherwise. */
  post (path: string, body: unknown, as?: Speaker): Promise<OrbReply> {
    return this.request({ method: 'POST', path, body, ...(as === undefined ? {} : { as }) })
  }

  /** The bearer token a speaker sends; undefined for nobody (or an absent few-scoped app). */
  tokenOf (as: Speaker): string | undefined {
    if (as === null) return undefined
    if (as === 'full') return this.target.full.token
    if (as === 'few') return this.target.few?.token
    return as.token
  }

  protected override learn (json: unknown): void {
    // A credential a reply hands out (a voice grant's token) is a secret too.
    const issued = (json as { token?: unknown } | undefined)?.token
    if (typeof issued === 'string' && issued.length >= 16) this.secret(issued, '<issued token>')
  }

  #send (options: OrbRequest): Promise<OrbReply> {
    const method = options.method ?? 'GET'
    const payload = encodeBody(options.body)
    const token = this.tokenOf(options.as === undefined ? 'full' : options.as)
    const auth: Record<string, string> = token === undefined ? {} : { authorization: `Bearer ${token}` }
    const headers = requestHeaders(auth, payload, options.headers)
    const query =
      typeof options.query === 'string'
        ? options.query
        : new URLSearchParams(
          Object.entries(options.query ?? {})
            .filter(([, v]) => v !== undefined)
            .map(([k, v]): [string, string] => [k, String(v)])
        ).toString()
    const target = `${options.path}${query === '' ? '' : `?${query}`}`
    const url = new URL(target, this.target.url)
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest
    const timeoutMs = options.timeoutMs ?? 40_000
    return this.exchange({ method, target, headers, payload, timeoutMs }, (opts, callback) => send(url, opts, callback))
  }
}

/** A curl command that repeats an exchange; tokens come from the environment ($ORB_TOKEN, $ORB_FEW_TOKEN). */
export function orbCurlFor (exchange: Exchange, target: OrbTarget): string {
  return curlCommand(exchange, '', new URL(exchange.target, target.url).toString())
}
