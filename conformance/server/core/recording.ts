import type { Agent, ClientRequest, IncomingHttpHeaders, IncomingMessage } from 'node:http'
import { connect, type NetConnectOpts } from 'node:net'
import { CaseFailure, CaseHalted, type Exchange, type RecordingClient } from './case.js'

// What both suites' clients share: the exchanges they record for the report with credentials masked, the sending
// of one HTTP request or of raw bytes, and the waiting out of throttled replies. Each suite adds how it addresses
// its target and which credentials it knows.

/** A reply as a suite's client hands it to a case. */
export interface HttpReply {
  status: number
  headers: IncomingHttpHeaders
  text: string
  /** The body parsed as JSON; undefined when it is not JSON. */
  json: any
  /** The strictness of the case whose client got it (strictness.ts). */
  exact?: boolean
}

/** One HTTP request, ready to go: what the report shows of it and what is sent. */
export interface Outgoing {
  method: string
  /** The request target (path and query), as the report shows it. */
  target: string
  headers: Record<string, string>
  payload: Buffer | undefined
  timeoutMs: number
  /** Aborting it ends the request as a client that goes away would: the connection is destroyed. */
  signal?: AbortSignal
  /** Offer the body with `Expect: 100-continue` (a large body the server may refuse from the head alone). */
  expectContinue?: boolean
}

/** Starts one request on a suite's own transport (an origin, a Unix socket) with the options the client sets. */
export type Opener = (
  options: { method: string, headers: Record<string, string>, agent: Agent },
  callback: (res: IncomingMessage) => void
) => ClientRequest

/** How a credential stands in a report: masked in a request header (a shell variable), redacted anywhere else. */
interface Secret {
  masked: string
  redacted: string
}

const REPLY_KEPT = 4096
/** How often a throttled reply is waited out and the request sent again. */
const RETRIES = 5

/**
 * A suite's recording client: every exchange kept for the report with each credential it knows masked, requests
 * refused with CaseHalted once halted, throttled replies waited out through `wait`.
 */
export abstract class RecordingHttpClient implements RecordingClient {
  readonly exchanges: Exchange[] = []
  readonly #secrets = new Map<string, Secret>()
  /** The shortest secret's length: a shorter text (most header values) holds none, and is not searched. */
  #shortest = Infinity
  readonly #agent: Agent
  #halted = false
  /** How a Retry-After is waited out: real sleep by default; the runner advances a virtual clock instead. */
  readonly #wait: (seconds: number) => Promise<void>
  /** Whether the waits are real time (no virtual clock to advance). */
  readonly #realTime: boolean
  stalled: string | undefined
  exact = true

  constructor (agent: Agent, wait?: (seconds: number) => Promise<void>) {
    this.#agent = agent
    this.#wait = wait ?? sleepSeconds
    this.#realTime = wait === undefined
  }

  /** Text for a report with every credential this client knows replaced. */
  redact (text: string): string {
    return this.#replace(text, 'redacted')
  }

  halt (halted: boolean): void {
    this.#halted = halted
  }

  close (): void {
    this.#agent.destroy()
  }

  /** Keeps a credential out of every report: `masked` in request headers, `redacted` elsewhere. */
  protected learnSecret (token: string, masked: string, redacted: string): void {
    if (token === '') return
    this.#secrets.set(token, { masked, redacted })
    this.#shortest = Math.min(this.#shortest, token.length)
  }

  /** What the report keeps of a request header: by default every known credential as its shell variable. */
  protected maskHeader (_name: string, value: string): string {
    return this.#replace(value, 'masked')
  }

  /** A reply's body parsed as JSON, for a credential it hands out; nothing by default. */
  protected learn (_json: unknown): void {}

  /**
   * Sends again, up to 5 times, while `delay` says how many seconds to wait first (undefined: no retry). SUITE-01:
   * a reply still throttled after five waits in real time is a case failure that ends the run (`stalled`): a target
   * whose time does not pass (a fake on a virtual clock the suite cannot move) would throttle every later case too.
   */
  protected async retrying<T> (send: () => Promise<T>, delay: (got: T) => number | undefined): Promise<T> {
    let got = await send()
    let waited = 0
    for (let tries = 0; tries < RETRIES; tries++) {
      const seconds = delay(got)
      if (seconds === undefined) return got
      await this.#wait(seconds)
      waited += seconds
      got = await send()
    }
    if (this.#realTime && delay(got) !== undefined) {
      this.stalled = `the target still throttled a request after its Retry-After was waited out ${RETRIES} times ` +
        `(${waited} s of real time): its time does not seem to pass, as with a fake started with --clock virtual ` +
        'and run without --control (give the suite the control API, so that it can move that clock), or its ' +
        'Retry-After is too short'
      const actual = `throttled ${RETRIES + 1} times in a row`
      throw new CaseFailure(this.stalled, 'admitted once its Retry-After has passed', actual)
    }
    return got
  }

  /** Sends one request through `open`, records the exchange and resolves to the reply. */
  protected exchange (out: Outgoing, open: Opener): Promise<HttpReply> {
    if (this.#halted) return Promise.reject(new CaseHalted())
    // SUITE-01: once stalled, nothing more is sent (a property shrinking its counterexample would wait again).
    if (this.stalled !== undefined) return Promise.reject(new CaseFailure(this.stalled, 'time passing', 'stalled'))
    const { method, target, headers, payload, timeoutMs } = out
    return new Promise((resolve, reject) => {
      const req = open({ method, headers, agent: this.#agent }, (res) => {
        const chunks: Buffer[] = []
        res.on('data', (chunk: Buffer) => chunks.push(chunk))
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8')
          const json = parseJson(text)
          this.learn(json)
          const status = res.statusCode ?? 0
          const replyHeaders = flat(res.headers)
          this.#record({ method, target, headers, body: payload?.toString('utf8'), status, replyHeaders, reply: text })
          resolve({ status, headers: res.headers, text, json, exact: this.exact })
        })
        res.on('error', reject)
      })
      req.setTimeout(timeoutMs, () => req.destroy(new Error(`no reply to ${method} ${target} within ${timeoutMs} ms`)))
      out.signal?.addEventListener('abort', () => req.destroy(new Error(`${method} ${target}: the client went away`)), {
        once: true
      })
      req.on('error', reject)
      if (out.expectContinue === true) offerBody(req, payload)
      else req.end(payload)
    })
  }

  /**
   * Writes `wire` on a fresh connection and resolves to what came back until the server closed or `ms` passed. The
   * report keeps `bytes` (what the case wrote, before any credential was put in).
   */
  protected exchangeRaw (where: NetConnectOpts, bytes: string, wire: string, ms: number): Promise<string> {
    if (this.#halted) return Promise.reject(new CaseHalted())
    if (this.stalled !== undefined) return Promise.reject(new CaseFailure(this.stalled, 'time passing', 'stalled'))
    return new Promise((resolve, reject) => {
      const socket = connect(where)
      let got = ''
      const done = (): void => {
        clearTimeout(timer)
        socket.destroy()
        const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(got)?.[1] ?? 0)
        this.#record({ method: 'RAW', target: '', headers: {}, body: bytes, status, replyHeaders: {}, reply: got })
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

  #replace (text: string, as: keyof Secret): string {
    if (text.length < this.#shortest) return text
    let out = text
    for (const [secret, stands] of this.#secrets) out = out.replaceAll(secret, stands[as])
    return out
  }

  #record (exchange: Exchange): void {
    const headers: Record<string, string> = {}
    // A credential header keeps its shape: a known token becomes a shell variable the curl can use.
    for (const [name, value] of Object.entries(exchange.headers)) headers[name] = this.maskHeader(name, value)
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

/** A request body as bytes: a JSON value serialised, raw bytes as they are, nothing for undefined. */
export function encodeBody (body: unknown): Buffer | undefined {
  if (body === undefined) return undefined
  return Buffer.isBuffer(body) ? body : Buffer.from(JSON.stringify(body))
}

/**
 * A request's headers: `base`, then Content-Type for a body, then the case's own (lower-cased; null leaves one out),
 * then Content-Length for a body unless the case sends Transfer-Encoding.
 */
export function requestHeaders (
  base: Record<string, string>,
  payload: Buffer | undefined,
  extra: Record<string, string | null> = {}
): Record<string, string> {
  const headers = { ...base }
  if (payload !== undefined) headers['content-type'] = 'application/json'
  for (const [name, value] of Object.entries(extra)) {
    if (value === null) delete headers[name.toLowerCase()]
    else headers[name.toLowerCase()] = value
  }
  if (payload !== undefined && headers['transfer-encoding'] === undefined) {
    headers['content-length'] = String(payload.length)
  }
  return headers
}

/** A curl command that repeats an HTTP exchange: `curl` with its transport's flags, the headers, body and URL. */
export function curlCommand (exchange: Exchange, flags: string, url: string): string {
  const parts = [`curl -sS -i${flags === '' ? '' : ` ${flags}`}`, `-X ${exchange.method}`]
  for (const [name, value] of Object.entries(exchange.headers)) {
    if (name === 'content-length') continue
    parts.push(`-H ${value.includes('$') ? `"${name}: ${value}"` : shellQuote(`${name}: ${value}`)}`)
  }
  if (exchange.body !== undefined) parts.push(`--data-binary ${shellQuote(exchange.body)}`)
  parts.push(shellQuote(url))
  return parts.join(' ')
}

/** A word for a POSIX shell, in single quotes. */
export function shellQuote (text: string): string {
  return `'${text.replaceAll("'", "'\\''")}'`
}

function parseJson (text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

// A body the server may refuse from the head alone (413) is offered with Expect: 100-continue, so that a refusal is
// read rather than lost to a broken pipe while the body is still being written. A server that never answers 100
// gets the body after a second, as curl does.
function offerBody (req: ClientRequest, payload: Buffer | undefined): void {
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
}

const sleepSeconds = (seconds: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, seconds * 1000))

function flat (headers: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) out[name] = Array.isArray(value) ? value.join(', ') : value
  }
  return out
}
