import { createHash, createHmac, randomUUID } from 'node:crypto'
import { request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http'
import { request as httpsRequest } from 'node:https'
import type { TimerHandle } from '../shared/clock.js'
import { OrbError } from './errors.js'
import { eventsOf, type EventType, type OrbEvent } from './events.js'
import type { AppState, OrbStore } from './store.js'

/** ORB-A11: how long an attempt may take, on the fake's clock: a typed command's member waits, other events less so. */
export const COMMAND_TIMEOUT_MS = 4_000
export const EVENT_TIMEOUT_MS = 10_000
/** ORB-A11: the one retry follows a failed first attempt this long after it failed. */
export const RETRY_DELAY_MS = 2_000
/** Attempts in flight across one fake; more wait their turn, first in first out. */
export const MAX_IN_FLIGHT = 8
/** At most this many attempts of one app at once: one app's slow endpoint never stalls the others. */
export const MAX_IN_FLIGHT_PER_APP = 2
/** Attempts waiting per app; past it the oldest waiting delivery is dropped (and logged as such). */
export const MAX_QUEUED_PER_APP = 1_000
/** Bytes of a reply read at most (enough for any `notice`); past this the socket is destroyed. */
export const REPLY_CAP = 64 * 1024
/** Delivery records kept per app, newest kept. */
export const LOG_LIMIT = 1_000
/** An inline notice is held to what `/respond` allows (its `content` maxLength). */
export const NOTICE_LIMIT = 1800

/** What the endpoint's reply said inline, and what came of it (ORB-097, ORB-098, ORB-A13). */
export interface DeliveryNotice {
  content: string
  /**
   * `answered`: shown to the member; `ignored`: the event is not a typed command; `late`: the member had stopped
   * waiting (410); `answered-already`: the interaction had an answer, from `/respond` (409); `too-long`: over the
   * 1800 characters `/respond` allows, so the member sees no more inline than by the route.
   */
  result: 'answered' | 'ignored' | 'late' | 'answered-already' | 'too-long'
}

/** One attempt in an app's delivery log (ORB-093, ORB-A11); the control server shows these. Never holds the token. */
export interface DeliveryRecord {
  /** `X-Orb-Delivery`: a UUID per attempt (ORB-092). */
  delivery: string
  /** `X-Orb-Event`: the event's id. */
  event: string
  type: EventType
  attempt: 1 | 2
  url: string
  /** When the attempt was sent, on the fake's clock (the signature's `t`). */
  at: number
  /** The reply's HTTP status; null on a timeout or a network error. */
  status: number | null
  /** On the fake's clock (0 for a prompt reply under a virtual clock). */
  durationMs: number
  /** `skipped`: not sent, because the member stopped waiting or the app's queue overflowed (see `error`). */
  outcome: 'delivered' | 'failed' | 'timeout' | 'error' | 'skipped'
  error: string | null
  /** `content-type` and the `x-orb-*` headers as sent. */
  requestHeaders: Record<string, string>
  notice: DeliveryNotice | null
}

/** ORB-091: the signing key: sha256(token) as lowercase hex, used as its 64 ASCII bytes. */
export function signingKey (token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex')
}

/** ORB-091: `v1`, the lowercase hex HMAC-SHA256 of `"<t>.<raw body>"` under `signingKey(token)`. */
export function signature (token: string, t: number, rawBody: string): string {
  return createHmac('sha256', signingKey(token)).update(`${t}.`, 'utf8').update(rawBody, 'utf8').digest('hex')
}

/** One event on its way: serialised once, so that both attempts send the same bytes (ORB-A11). */
interface Job {
  app: string
  event: string
  type: EventType
  raw: string
  attempt: 1 | 2
}

interface Attempt {
  job: Job
  generation: number
  delivery: string
  url: string
  at: number
  headers: Record<string, string>
  timer: TimerHandle | undefined
  req: ClientRequest | undefined
  done: boolean
}

interface Result {
  outcome: DeliveryRecord['outcome']
  status: number | null
  error: string | null
  /** The reply's text (2xx only), for `notice`. */
  body?: string
}

/**
 * Pushes the events of apps that have an endpoint URL to it (ORB-090..094, ORB-098, ORB-A11, ORB-A13): signed POSTs
 * over real HTTP, two attempts at most, every attempt in the app's delivery log. Time (signatures, timeouts, the
 * retry's delay) is the fake's clock. One per store; a reset or close aborts what is in flight and forgets the logs.
 */
export class Webhooks {
  readonly #store: OrbStore
  /** Waiting attempts per app, typed commands first (their member waits 6 s); apps are served in turn. */
  #queues = new Map<string, Job[]>()
  readonly #inFlight = new Set<Attempt>()
  readonly #inFlightPerApp = new Map<string, number>()
  /** Retries waiting out their delay, with the job each will send. */
  readonly #retries = new Map<TimerHandle, Job>()
  #logs = new Map<string, DeliveryRecord[]>()
  #pumpSoon: NodeJS.Immediate | undefined
  /** Bumped on reset: callbacks of requests from before it do nothing. */
  #generation = 0

  constructor (store: OrbStore) {
    this.#store = store
    store.onReset(() => this.#clear())
    store.stateParts.set('webhooks', () => ({
      inFlight: this.#inFlight.size,
      queued: this.#queued(),
      retriesScheduled: this.#retries.size,
      maxInFlight: MAX_IN_FLIGHT,
      maxInFlightPerApp: MAX_IN_FLIGHT_PER_APP
    }))
    eventsOf(store).setDispatcher((app, event) => this.#dispatch(app, event))
  }

  /** The app's delivery log, oldest first (in the order attempts finished), at most `LOG_LIMIT` records. */
  deliveries (appId: string): DeliveryRecord[] {
    return (this.#logs.get(appId) ?? []).map((r) => ({ ...r, requestHeaders: { ...r.requestHeaders }, notice: r.notice === null ? null : { ...r.notice } }))
  }

  /**
   * ORB-A05: the app left webhook mode. What it had waiting (queued attempts, retries not yet due) is dropped and
   * logged as skipped: events mode starts with an empty queue, and a later endpoint gets only later events.
   */
  leftWebhookMode (appId: string): void {
    for (const job of this.#queues.get(appId) ?? []) this.#skip(job, 'the app went back to events mode before this attempt was sent')
    this.#queues.delete(appId)
    for (const [timer, job] of [...this.#retries]) {
      if (job.app !== appId) continue
      this.#store.clock.clearTimer(timer)
      this.#retries.delete(timer)
      this.#skip({ ...job, attempt: 2 }, 'the app went back to events mode before this retry was due')
    }
  }

  /** Attempts in flight and waiting for a slot (tests and the control state). */
  pending (): { inFlight: number, queued: number, retriesScheduled: number } {
    return { inFlight: this.#inFlight.size, queued: this.#queued(), retriesScheduled: this.#retries.size }
  }

  #queued (): number {
    let n = 0
    for (const queue of this.#queues.values()) n += queue.length
    return n
  }

  /** Queues a job behind the app's others (a typed command ahead of every other event). */
  #enqueue (job: Job): void {
    let queue = this.#queues.get(job.app)
    if (queue === undefined) this.#queues.set(job.app, queue = [])
    const at = job.type === 'application_command' ? queue.findIndex((j) => j.type !== 'application_command') : -1
    if (at === -1) queue.push(job)
    else queue.splice(at, 0, job)
    if (queue.length > MAX_QUEUED_PER_APP) {
      const dropped = queue.pop()!
      this.#skip(dropped, `dropped: more than ${MAX_QUEUED_PER_APP} deliveries of this app were waiting`)
    }
  }

  /** Logs an attempt that was never sent. */
  #skip (job: Job, why: string): void {
    const now = this.#store.clock.now()
    this.#record(job.app, { delivery: '', event: job.event, type: job.type, attempt: job.attempt, url: this.#store.apps.get(job.app)?.endpoint ?? '', at: now, status: null, durationMs: 0, outcome: 'skipped', error: why, requestHeaders: {}, notice: null })
  }

  // Called inside the API request (or control call) that made the event: it only queues, and sending starts on a
  // later turn of the event loop, so delivery never holds up that reply.
  #dispatch (app: AppState, event: OrbEvent): void {
    this.#enqueue({ app: app.id, event: event.id, type: event.type, raw: JSON.stringify(event), attempt: 1 })
    this.#schedulePump()
  }

  #schedulePump (): void {
    if (this.#pumpSoon !== undefined) return
    this.#pumpSoon = setImmediate(() => {
      this.#pumpSoon = undefined
      this.#pump()
    })
  }

  // Serves the apps in turn, one attempt each per round, within the global and per-app caps.
  #pump (): void {
    let started = true
    while (started && this.#inFlight.size < MAX_IN_FLIGHT) {
      started = false
      for (const [app, queue] of [...this.#queues]) {
        if (this.#inFlight.size >= MAX_IN_FLIGHT) break
        if ((this.#inFlightPerApp.get(app) ?? 0) >= MAX_IN_FLIGHT_PER_APP) continue
        const job = queue.shift()
        if (queue.length === 0) this.#queues.delete(app)
        if (job === undefined) continue
        // The app goes to the back of the turn order.
        if (queue.length > 0) {
          this.#queues.delete(app)
          this.#queues.set(app, queue)
        }
        this.#start(job)
        started = true
      }
    }
  }

  #start (job: Job): void {
    const store = this.#store
    const app = store.apps.get(job.app)
    // The endpoint and token are read now: an app back in events mode gets nothing more; a rotated token signs (ORB-A22).
    if (app === undefined) return
    if (app.endpoint === null) {
      this.#skip(job, 'the app went back to events mode before this attempt was sent')
      return
    }
    // ORB-A11: a typed command whose member stopped waiting is not sent at all, first attempt or retry.
    if (!this.#mayRetry(job)) {
      this.#skip(job, 'the member stopped waiting (or the command was answered) before this attempt got a slot')
      return
    }
    const t = store.clock.now()
    const delivery = randomUUID()
    const headers = {
      'content-type': 'application/json',
      'x-orb-signature': `t=${t},v1=${signature(app.token, t, store.faults.has('signature-parsed-body') ? JSON.stringify(JSON.parse(job.raw), null, 1) : job.raw)}`,
      'x-orb-event': job.event,
      'x-orb-delivery': delivery
    }
    const attempt: Attempt = { job, generation: this.#generation, delivery, url: app.endpoint, at: t, headers, timer: undefined, req: undefined, done: false }
    this.#inFlight.add(attempt)
    this.#inFlightPerApp.set(job.app, (this.#inFlightPerApp.get(job.app) ?? 0) + 1)
    const limit = job.type === 'application_command' ? COMMAND_TIMEOUT_MS : EVENT_TIMEOUT_MS
    attempt.timer = store.clock.setTimer(limit, () => {
      attempt.timer = undefined
      this.#finish(attempt, { outcome: 'timeout', status: null, error: `no complete reply within ${limit} ms` })
    })
    let url: URL
    try {
      url = new URL(app.endpoint)
      if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`unsupported protocol ${url.protocol}`)
    } catch (err) {
      this.#finish(attempt, { outcome: 'error', status: null, error: `bad endpoint URL: ${(err as Error).message}` })
      return
    }
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest
    try {
      // agent: false: a socket per attempt, closed after it, so nothing lingers in a pool. Redirects are not followed
      // (node:http never does).
      const req = send(url, {
        method: 'POST',
        agent: false,
        headers: { ...headers, 'content-length': String(Buffer.byteLength(job.raw)), 'user-agent': 'orbtest-orb-webhooks/1' }
      })
      attempt.req = req
      req.on('response', (res) => this.#read(attempt, res))
      req.on('error', (err) => this.#finish(attempt, { outcome: 'error', status: null, error: describe(err) }))
      req.end(job.raw)
    } catch (err) {
      this.#finish(attempt, { outcome: 'error', status: null, error: describe(err as Error) })
    }
  }

  // ORB-094: only a 2xx is delivered; its reply is read (up to the cap) for `notice`. Anything else fails at once.
  #read (attempt: Attempt, res: IncomingMessage): void {
    const status = res.statusCode ?? 0
    res.on('error', (err) => this.#finish(attempt, { outcome: 'error', status, error: describe(err) }))
    if (status < 200 || status > 299) {
      const error = status >= 300 && status < 400 ? `the endpoint answered ${status}; redirects are not followed` : `the endpoint answered ${status}`
      this.#finish(attempt, { outcome: 'failed', status, error })
      return
    }
    const chunks: Buffer[] = []
    let size = 0
    const complete = (): void => this.#finish(attempt, { outcome: 'delivered', status, error: null, body: Buffer.concat(chunks).toString('utf8') })
    res.on('data', (chunk: Buffer) => {
      if (attempt.done) return
      const room = REPLY_CAP - size
      chunks.push(chunk.length > room ? chunk.subarray(0, room) : chunk)
      size += Math.min(chunk.length, room)
      if (size >= REPLY_CAP) complete()
    })
    res.on('end', complete)
    res.on('close', () => this.#finish(attempt, { outcome: 'error', status, error: 'the reply was cut off' }))
  }

  #finish (attempt: Attempt, result: Result): void {
    if (attempt.done || attempt.generation !== this.#generation) return
    attempt.done = true
    const clock = this.#store.clock
    if (attempt.timer !== undefined) clock.clearTimer(attempt.timer)
    this.#inFlight.delete(attempt)
    const left = (this.#inFlightPerApp.get(attempt.job.app) ?? 1) - 1
    if (left > 0) this.#inFlightPerApp.set(attempt.job.app, left)
    else this.#inFlightPerApp.delete(attempt.job.app)
    attempt.req?.destroy()
    const { job } = attempt
    const notice = result.outcome === 'delivered' && result.body !== undefined ? this.#notice(job, result.body) : null
    this.#record(job.app, {
      delivery: attempt.delivery,
      event: job.event,
      type: job.type,
      attempt: job.attempt,
      url: attempt.url,
      at: attempt.at,
      status: result.status,
      durationMs: clock.now() - attempt.at,
      outcome: result.outcome,
      error: result.error,
      requestHeaders: attempt.headers,
      notice
    })
    if (result.outcome !== 'delivered' && job.attempt === 1 && !this.#store.faults.has('no-webhook-retry')) this.#scheduleRetry(job)
    this.#schedulePump()
  }

  // ORB-098, ORB-A13: a `notice` in a typed command's 2xx reply answers it inline (the reply came within the 4 s, or
  // the attempt would have timed out); on any other event it is ignored.
  #notice (job: Job, body: string): DeliveryNotice | null {
    let parsed: unknown
    try {
      parsed = JSON.parse(body)
    } catch {
      return null
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return null
    const content = (parsed as { notice?: unknown }).notice
    if (typeof content !== 'string') return null
    if (job.type !== 'application_command') return { content, result: 'ignored' }
    if ([...content].length > NOTICE_LIMIT) return { content: content.slice(0, NOTICE_LIMIT), result: 'too-long' }
    const app = this.#store.apps.get(job.app)
    if (app === undefined) return { content, result: 'ignored' }
    try {
      eventsOf(this.#store).respond(app, job.event, content, 'inline')
      return { content, result: 'answered' }
    } catch (err) {
      if (err instanceof OrbError && err.status === 409) return { content, result: 'answered-already' }
      if (err instanceof OrbError && err.status === 410) return { content, result: 'late' }
      return { content, result: 'ignored' }
    }
  }

  // ORB-093, ORB-A11: one retry, 2 s after the failure on the fake's clock; none for a command whose member stopped
  // waiting (asked again when the timer fires and when the retry gets a slot).
  #scheduleRetry (job: Job): void {
    if (!this.#mayRetry(job)) return
    const timer = this.#store.clock.setTimer(RETRY_DELAY_MS, () => {
      this.#retries.delete(timer)
      if (!this.#mayRetry(job)) return
      this.#enqueue({ ...job, attempt: 2 })
      this.#pump()
    })
    this.#retries.set(timer, job)
  }

  #mayRetry (job: Job): boolean {
    return job.type !== 'application_command' || eventsOf(this.#store).waiting(job.event)
  }

  #record (appId: string, record: DeliveryRecord): void {
    let log = this.#logs.get(appId)
    if (log === undefined) this.#logs.set(appId, log = [])
    log.push(record)
    if (log.length > LOG_LIMIT) log.splice(0, log.length - LOG_LIMIT)
  }

  // On reset and close: nothing in flight, waiting or scheduled survives, and nothing holds the process open.
  #clear (): void {
    this.#generation++
    const clock = this.#store.clock
    for (const attempt of this.#inFlight) {
      attempt.done = true
      if (attempt.timer !== undefined) clock.clearTimer(attempt.timer)
      attempt.req?.destroy()
    }
    this.#inFlight.clear()
    this.#inFlightPerApp.clear()
    for (const timer of this.#retries.keys()) clock.clearTimer(timer)
    this.#retries.clear()
    this.#queues = new Map()
    this.#logs = new Map()
    if (this.#pumpSoon !== undefined) clearImmediate(this.#pumpSoon)
    this.#pumpSoon = undefined
  }
}

const describe = (err: Error): string => {
  const code = (err as { code?: unknown }).code
  return typeof code === 'string' && !err.message.includes(code) ? `${code}: ${err.message}` : err.message
}

const registry = new WeakMap<OrbStore, Webhooks>()

/** The store's webhook sender, made on first use; making it installs the events dispatcher. */
export function webhooksOf (store: OrbStore): Webhooks {
  let webhooks = registry.get(store)
  if (webhooks === undefined) registry.set(store, webhooks = new Webhooks(store))
  return webhooks
}
