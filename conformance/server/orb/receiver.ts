import { createHash, createHmac, timingSafeEqual } from 'node:crypto'
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'

/** How the receiver answers one delivery. */
export interface Answer {
  status: number
  /** A JSON value to answer with (default none). */
  body?: unknown
  /** The answer waits for this (the case moves the target's clock meanwhile, to make a delivery time out). */
  until?: Promise<unknown>
}

/** What the receiver made of a signature, checked on its own (node:crypto) and never with the fake's code. */
export interface Verdict {
  ok: boolean
  /** Why it is not valid. */
  why?: string
  t?: number
}

/** One delivery as it arrived. */
export interface Delivery {
  path: string
  method: string
  headers: IncomingHttpHeaders
  /** The body's bytes exactly as received. */
  raw: Buffer
  json: any
  /** Wall-clock ms when it arrived. */
  at: number
  signature: Verdict
  answered: Answer
}

/**
 * ORB-091, ORB-A12: checks `X-Orb-Signature` as an app must: `k=v` pairs in any order (spaces and unknown keys
 * ignored), key = sha256(token) as lowercase hex, HMAC-SHA256 over `"<t>.<raw body>"`, any `v1` may match, compared
 * in constant time.
 */
export function verifySignature (header: string | string[] | undefined, raw: Buffer, token: string): Verdict {
  if (typeof header !== 'string' || header === '') return { ok: false, why: 'no X-Orb-Signature header' }
  let t: string | undefined
  const v1s: string[] = []
  for (const part of header.split(',')) {
    const at = part.indexOf('=')
    if (at < 0) continue
    const key = part.slice(0, at).trim()
    const value = part.slice(at + 1).trim()
    if (key === 't') t = value
    if (key === 'v1') v1s.push(value)
  }
  if (t === undefined || !/^\d+$/.test(t)) return { ok: false, why: `no t=<ms> in ${JSON.stringify(header)}` }
  if (v1s.length === 0) return { ok: false, why: `no v1 in ${JSON.stringify(header)}`, t: Number(t) }
  const key = createHash('sha256').update(token, 'utf8').digest('hex')
  const expected = createHmac('sha256', key).update(Buffer.concat([Buffer.from(`${t}.`, 'utf8'), raw])).digest()
  const ok = v1s.some((v1) => /^[0-9a-f]{64}$/.test(v1) && timingSafeEqual(Buffer.from(v1, 'hex'), expected))
  return ok ? { ok: true, t: Number(t) } : { ok: false, why: `no v1 matches HMAC-SHA256(sha256(token), "${t}." + the raw body)`, t: Number(t) }
}

/** The deliveries to one path of the receiver (one app's endpoint), with the answers it is to give. */
export class Hook {
  readonly path: string
  readonly url: string
  readonly deliveries: Delivery[] = []
  token: string
  readonly #answers: Answer[] = []
  readonly #waiters: Array<() => void> = []

  constructor (path: string, url: string, token: string) {
    this.path = path
    this.url = url
    this.token = token
  }

  /** The next deliveries get these answers, in order; after them, 200 `{}`. */
  script (...answers: Answer[]): void {
    this.#answers.push(...answers)
  }

  /** @internal */
  answerFor (): Answer {
    return this.#answers.shift() ?? { status: 200, body: {} }
  }

  /** @internal */
  arrived (delivery: Delivery): void {
    this.deliveries.push(delivery)
    for (const wake of this.#waiters.splice(0)) wake()
  }

  /** Waits (real time, up to `ms`) until `count` deliveries have arrived; returns them all. */
  async atLeast (count: number, ms = 5000): Promise<Delivery[]> {
    const deadline = Date.now() + ms
    while (this.deliveries.length < count) {
      const left = deadline - Date.now()
      if (left <= 0) break
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left)
        this.#waiters.push(() => { clearTimeout(timer); resolve() })
      })
    }
    return this.deliveries
  }

  /** Waits `ms` of real time and says whether anything more than `count` deliveries arrived meanwhile. */
  async quiet (count: number, ms = 300): Promise<boolean> {
    await new Promise((resolve) => setTimeout(resolve, ms))
    return this.deliveries.length <= count
  }
}

/**
 * The suite's own webhook receiver (ORB-090..098): a plain HTTP server that records every delivery's raw bytes,
 * checks every signature independently, and answers as each case scripts (500 once to see the retry, a `notice`, a
 * reply held past the deadline).
 */
export class WebhookReceiver {
  readonly #server: Server
  readonly #hooks = new Map<string, Hook>()
  readonly #publicUrl: string

  private constructor (server: Server, publicUrl: string) {
    this.#server = server
    this.#publicUrl = publicUrl.replace(/\/+$/, '')
  }

  /** Listens on `host:port` (0: a free port); `publicUrl` is how the server reaches it (default http://host:port). */
  static async start (host = '127.0.0.1', port = 0, publicUrl?: string): Promise<WebhookReceiver> {
    // The server answers through the receiver, which is made once the server listens (its URL needs the port).
    const made: { receiver?: WebhookReceiver } = {}
    const server = createServer((req, res) => {
      const chunks: Buffer[] = []
      req.on('data', (chunk: Buffer) => chunks.push(chunk))
      req.on('end', () => {
        const raw = Buffer.concat(chunks)
        const path = (req.url ?? '/').split('?')[0]!
        const hook = made.receiver?.hookAt(path)
        let json: unknown
        try {
          json = JSON.parse(raw.toString('utf8'))
        } catch {
          json = undefined
        }
        const answer = hook?.answerFor() ?? { status: 404, body: { error: 'no hook here' } }
        const delivery: Delivery = {
          path,
          method: req.method ?? '',
          headers: req.headers,
          raw,
          json,
          at: Date.now(),
          signature:
            hook === undefined
              ? { ok: false, why: 'no hook' }
              : verifySignature(req.headers['x-orb-signature'], raw, hook.token),
          answered: answer
        }
        hook?.arrived(delivery)
        const send = (): void => {
          if (res.destroyed) return
          const body = answer.body === undefined ? '' : JSON.stringify(answer.body)
          res.writeHead(answer.status, body === '' ? {} : { 'content-type': 'application/json' })
          res.end(body)
        }
        if (answer.until === undefined) send()
        else answer.until.then(send, send).catch(() => undefined)
      })
    })
    server.keepAliveTimeout = 1000
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(port, host, () => resolve())
    })
    const address = server.address() as AddressInfo
    const shownHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host
    made.receiver = new WebhookReceiver(server, publicUrl ?? `http://${shownHost}:${address.port}`)
    return made.receiver
  }

  /** A new hook: the URL an app's endpoint should be, and the token its signatures are checked with. */
  hook (name: string, token: string): Hook {
    const path = `/hook/${encodeURIComponent(name)}`
    const hook = new Hook(path, `${this.#publicUrl}${path}`, token)
    this.#hooks.set(path, hook)
    return hook
  }

  /** @internal */
  hookAt (path: string): Hook | undefined {
    return this.#hooks.get(path)
  }

  drop (hook: Hook): void {
    this.#hooks.delete(hook.path)
  }

  async close (): Promise<void> {
    this.#server.closeAllConnections()
    await new Promise((resolve) => this.#server.close(resolve))
  }
}
