import { Agent as HttpAgent, request as httpRequest, type IncomingHttpHeaders } from 'node:http'
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https'
import { CaseHalted, type Exchange, type RecordingClient } from '../case.js'
import type { OrbTarget } from './target.js'
import type { WebhookReceiver } from './receiver.js'

export interface OrbReply {
  status: number
  headers: IncomingHttpHeaders
  text: string
  /** The body parsed as JSON; undefined when it is not JSON. */
  json: any
}

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

const REPLY_KEPT = 4096

/**
 * A bot's HTTP client of an Orb: keep-alive, the bearer token of the speaking app, every exchange recorded for the
 * report with credentials masked (`$ORB_TOKEN`, `$ORB_FEW_TOKEN` in headers, `<token>` in bodies).
 */
export class OrbBotClient implements RecordingClient {
  readonly target: OrbTarget
  readonly exchanges: Exchange[] = []
  readonly #secrets = new Map<string, string>()
  readonly #agent: HttpAgent
  #halted = false
  readonly #wait: (seconds: number) => Promise<void>
  /** The run's webhook receiver, when it has one. */
  readonly receiver: WebhookReceiver | undefined

  constructor (target: OrbTarget, wait: (seconds: number) => Promise<void> = sleepSeconds, receiver?: WebhookReceiver) {
    this.target = target
    this.#wait = wait
    this.receiver = receiver
    this.#agent = target.url.startsWith('https:')
      ? new HttpsAgent({ keepAlive: true, maxSockets: 16 })
      : new HttpAgent({ keepAlive: true, maxSockets: 16 })
    this.#secrets.set(target.full.token, '$ORB_TOKEN')
    if (target.few !== undefined) this.#secrets.set(target.few.token, '$ORB_FEW_TOKEN')
  }

  /** A token this client learnt (a rotation, another app): never kept in a report. */
  secret (token: string, name = '$OTHER_TOKEN'): void {
    if (token !== '') this.#secrets.set(token, name)
  }

  async request (options: OrbRequest): Promise<OrbReply> {
    let reply = await this.#send(options)
    for (let tries = 0; options.retryThrottled !== false && tries < 5 && reply.status === 429; tries++) {
      await this.#wait(Math.max(1, Number(reply.headers['retry-after'] ?? 1) || 1))
      reply = await this.#send(options)
    }
    return reply
  }

  get (path: string, query?: OrbRequest['query'], as?: Speaker): Promise<OrbReply> {
    return this.request({ path, query, ...(as === undefined ? {} : { as }) })
  }

  post (path: string, body: unknown, as?: Speaker): Promise<OrbReply> {
    return this.request({ method: 'POST', path, body, ...(as === undefined ? {} : { as }) })
  }

  tokenOf (as: Speaker): string | undefined {
    if (as === null) return undefined
    if (as === 'full') return this.target.full.token
    if (as === 'few') return this.target.few?.token
    return as.token
  }

  halt (halted: boolean): void {
    this.#halted = halted
  }

  #send (options: OrbRequest): Promise<OrbReply> {
    if (this.#halted) return Promise.reject(new CaseHalted())
    const method = options.method ?? 'GET'
    const payload =
      options.body === undefined
        ? undefined
        : Buffer.isBuffer(options.body)
          ? options.body
          : Buffer.from(JSON.stringify(options.body))
    const headers: Record<string, string> = {}
    const token = this.tokenOf(options.as === undefined ? 'full' : options.as)
    if (token !== undefined) headers.authorization = `Bearer ${token}`
    if (payload !== undefined) headers['content-type'] = 'application/json'
    for (const [name, value] of Object.entries(options.headers ?? {})) {
      if (value === null) delete headers[name.toLowerCase()]
      else headers[name.toLowerCase()] = value
    }
    if (payload !== undefined) headers['content-length'] = String(payload.length)
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
    return new Promise((resolve, reject) => {
      const req = send(url, { method, headers, agent: this.#agent }, (res) => {
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
          // A credential a reply hands out (a voice grant's token) is a secret too.
          const issued = (json as { token?: unknown } | undefined)?.token
          if (typeof issued === 'string' && issued.length >= 16) this.secret(issued, '<issued token>')
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
      })
      req.setTimeout(options.timeoutMs ?? 40_000, () => req.destroy(new Error(`no reply to ${method} ${target} within ${options.timeoutMs ?? 40_000} ms`)))
      req.on('error', reject)
      req.end(payload)
    })
  }

  close (): void {
    this.#agent.destroy()
  }

  /** Text for a report with every credential this client knows replaced. */
  redact (text: string): string {
    let out = text
    for (const secret of this.#secrets.keys()) out = out.replaceAll(secret, '<token>')
    return out
  }

  #record (exchange: Exchange): void {
    const headers: Record<string, string> = {}
    for (const [name, value] of Object.entries(exchange.headers)) {
      let masked = value
      // A credential header keeps its shape: a known token becomes a shell variable the curl can use.
      for (const [secret, name] of this.#secrets) masked = masked.replaceAll(secret, name)
      headers[name] = masked
    }
    const reply = exchange.reply.length > REPLY_KEPT ? `${exchange.reply.slice(0, REPLY_KEPT)}…` : exchange.reply
    const replyHeaders = Object.fromEntries(
      Object.entries(exchange.replyHeaders).map(([name, value]) => [name, this.redact(value)])
    )
    this.exchanges.push({
      ...exchange,
      target: this.redact(exchange.target),
      headers,
      replyHeaders,
      reply: this.redact(reply),
      body: exchange.body === undefined ? undefined : this.redact(exchange.body)
    })
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

/** A curl command that repeats an exchange; tokens come from the environment ($ORB_TOKEN, $ORB_FEW_TOKEN). */
export function orbCurlFor (exchange: Exchange, target: OrbTarget): string {
  const parts = ['curl -sS -i', `-X ${exchange.method}`]
  for (const [name, value] of Object.entries(exchange.headers)) {
    if (name === 'content-length') continue
    parts.push(`-H ${value.includes('$') ? `"${name}: ${value}"` : shellQuote(`${name}: ${value}`)}`)
  }
  if (exchange.body !== undefined) parts.push(`--data-binary ${shellQuote(exchange.body)}`)
  parts.push(shellQuote(new URL(exchange.target, target.url).toString()))
  return parts.join(' ')
}

function shellQuote (text: string): string {
  return `'${text.replaceAll("'", "'\\''")}'`
}
