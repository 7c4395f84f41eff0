import { randomUUID } from 'node:crypto'
import type { ClientRequest } from 'node:http'
import type { Changes } from '../shared/changes.js'
import type { TimerHandle } from '../shared/clock.js'
import { ORB_A11_DELIVERY } from '../spec/orb.js'
import { DeliveryLog, noticeOf, type DeliveryRecord } from './deliveries.js'
import type { OrbEvent } from './events.js'
import type { EventType, Interactions } from './interactions.js'
import type { AppState } from './records.js'
import type { OrbStore } from './store.js'
import { signature } from './webhook-signing.js'
import { post, type SendResult } from './webhook-send.js'

/** Attempts in flight across one fake; more wait their turn, first in first out. */
export const MAX_IN_FLIGHT = 8
/** At most this many attempts of one app at once: one app's slow endpoint never stalls the others. */
export const MAX_IN_FLIGHT_PER_APP = 2
/** Attempts waiting per app; past it the newest waiting delivery is dropped (and logged as such). */
export const MAX_QUEUED_PER_APP = 1_000

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

/**
 * Pushes the events of apps that have an endpoint URL to it (ORB-090..094, ORB-098, ORB-A11, ORB-A13): signed POSTs
 * over real HTTP, two attempts at most, every attempt in the app's delivery log. Time (signatures, timeouts, the
 * retry's delay) is the fake's clock. One per fake; a reset or close aborts what is in flight and forgets the logs.
 */
export class Webhooks {
  readonly #store: OrbStore
  readonly #interactions: Interactions
  /** Waiting attempts per app, typed commands first (their member waits 6 s); apps are served in turn. */
  #queues = new Map<string, Job[]>()
  readonly #inFlight = new Set<Attempt>()
  readonly #inFlightPerApp = new Map<string, number>()
  /** Retries waiting out their delay, with the job each will send. */
  readonly #retries = new Map<TimerHandle, Job>()
  readonly #log = new DeliveryLog()
  #pumpSoon: NodeJS.Immediate | undefined
  /** Bumped on reset: callbacks of requests from before it do nothing. */
  #generation = 0

  readonly #changes: Changes

  constructor (store: OrbStore, interactions: Interactions, changes: Changes) {
    this.#store = store
    this.#interactions = interactions
    this.#changes = changes
    store.onReset(() => this.#clear())
  }

  /** The app's delivery log, oldest first (in the order attempts finished), at most `LOG_LIMIT` records. */
  deliveries (appId: string): DeliveryRecord[] {
    return this.#log.list(appId)
  }

  /** The control server's view: attempts in flight, waiting and scheduled, and the caps. */
  state (): Record<string, unknown> {
    return { ...this.pending(), maxInFlight: MAX_IN_FLIGHT, maxInFlightPerApp: MAX_IN_FLIGHT_PER_APP }
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
    let queued = 0
    for (const queue of this.#queues.values()) queued += queue.length
    return { inFlight: this.#inFlight.size, queued, retriesScheduled: this.#retries.size }
  }

  /**
   * ORB-090: the events dispatcher (Events.setDispatcher). Called inside the API request (or control call) that made
   * the event: it only queues, and sending starts on a later turn of the event loop, so delivery never holds up
   * that reply.
   */
  dispatch (app: AppState, event: OrbEvent): void {
    this.#enqueue({ app: app.id, event: event.id, type: event.type, raw: JSON.stringify(event), attempt: 1 })
    this.#schedulePump()
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
    this.#log.record(job.app, {
      delivery: '',
      event: job.event,
      type: job.type,
      attempt: job.attempt,
      url: this.#store.apps.get(job.app)?.endpoint ?? '',
      at: this.#store.clock.now(),
      status: null,
      durationMs: 0,
      outcome: 'skipped',
      error: why,
      requestHeaders: {},
      notice: null
    })
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
    this.#changes.notify()
  }

  #start (job: Job): void {
    const store = this.#store
    const app = store.apps.get(job.app)
    // The endpoint and token are read now: an app back in events mode gets nothing more; a rotated token signs
    // (ORB-A22).
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
    const signed = store.faults.has('signature-parsed-body') ? JSON.stringify(JSON.parse(job.raw), null, 1) : job.raw
    const headers = {
      'content-type': 'application/json',
      'x-orb-signature': `t=${t},v1=${signature(app.token, t, signed)}`,
      'x-orb-event': job.event,
      'x-orb-delivery': delivery
    }
    const attempt: Attempt = {
      job,
      generation: this.#generation,
      delivery,
      url: app.endpoint,
      at: t,
      headers,
      timer: undefined,
      req: undefined,
      done: false
    }
    this.#inFlight.add(attempt)
    this.#inFlightPerApp.set(job.app, (this.#inFlightPerApp.get(job.app) ?? 0) + 1)
    // ORB-A11: 4 s for a typed command, whose member waits, 10 s for other events.
    const { commandTimeoutMs, eventTimeoutMs } = ORB_A11_DELIVERY
    const limit = job.type === 'application_command' ? commandTimeoutMs : eventTimeoutMs
    attempt.timer = store.clock.setTimer(limit, () => {
      attempt.timer = undefined
      this.#finish(attempt, { outcome: 'timeout', status: null, error: `no complete reply within ${limit} ms` })
    })
    attempt.req = post(app.endpoint, headers, job.raw, (result) => this.#finish(attempt, result))
  }

  #finish (attempt: Attempt, result: SendResult): void {
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
    // ORB-098: a typed command's notice answers it inline, unless its app is gone meanwhile.
    const answer = this.#store.apps.has(job.app)
      ? (content: string) => { this.#interactions.respond(job.app, job.event, content, 'inline') }
      : undefined
    const delivered = result.outcome === 'delivered' && result.body !== undefined
    const notice = delivered ? noticeOf(result.body!, job.type, answer) : null
    this.#log.record(job.app, {
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
    const retry = job.attempt < ORB_A11_DELIVERY.attempts && !this.#store.faults.has('no-webhook-retry')
    if (result.outcome !== 'delivered' && retry) this.#scheduleRetry(job)
    this.#schedulePump()
    // An attempt ends outside any request or timer of the fake: the dashboard is told here (DASH-D01).
    this.#changes.notify()
  }

  // ORB-093, ORB-A11: one retry, 2 s after the failure on the fake's clock; none for a command whose member stopped
  // waiting (asked again when the timer fires and when the retry gets a slot).
  #scheduleRetry (job: Job): void {
    if (!this.#mayRetry(job)) return
    const timer = this.#store.clock.setTimer(ORB_A11_DELIVERY.retryDelayMs, () => {
      this.#retries.delete(timer)
      if (!this.#mayRetry(job)) return
      this.#enqueue({ ...job, attempt: 2 })
      this.#pump()
    })
    this.#retries.set(timer, job)
  }

  #mayRetry (job: Job): boolean {
    return job.type !== 'application_command' || this.#interactions.waiting(job.event)
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
    this.#log.clear()
    if (this.#pumpSoon !== undefined) clearImmediate(this.#pumpSoon)
    this.#pumpSoon = undefined
  }
}
