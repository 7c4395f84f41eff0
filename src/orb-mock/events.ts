import { randomBytes } from 'node:crypto'
import type { TimerHandle } from '../shared/clock.js'
import { ORB_LIMITS, ORB_PROSE_LIMITS } from '../spec/orb.js'
import { canSee } from './gates.js'
import type { EventType, Interaction, Interactions } from './interactions.js'
import type { AppState, StoredMessage } from './records.js'
import type { OrbStore } from './store.js'

/** ORB-052: an event as webhooks deliver it (no cursor). */
export interface OrbEvent {
  id: string
  type: EventType
  sent_at: number
  /** ORB-052: the document's constant, `orb-bots-v1`. */
  api: string
  app: { id: string, name: string }
  server: string | null
  channel: string | null
  data: Record<string, unknown>
}

/** ORB-046: an event as `GET /events` returns it, with its cursor. */
export type CursorEvent = { cursor: number } & OrbEvent

/** Where an app's events go while it has an endpoint URL: the webhooks, wired by createOrbServices. */
export type Dispatcher = (app: AppState, event: OrbEvent) => void

interface Waiter {
  after: number
  limit: number
  timer: TimerHandle
  finish: (events: CursorEvent[]) => void
}

interface AppLog {
  events: CursorEvent[]
  /** ORB-A09: per app, from 1, never reused; kept across token rotation and mode switches. */
  nextCursor: number
  waiters: Set<Waiter>
}

/**
 * Every app's event log (ORB-043..054), long polls (ORB-050), and the events members cause: mentions, replies, typed
 * commands (whose interactions `Interactions` keeps) and test events. One per fake; a reset clears it, cursors
 * included, and answers every held poll with `[]`.
 */
export class Events {
  readonly #store: OrbStore
  readonly #interactions: Interactions
  #logs = new Map<string, AppLog>()
  #dispatch: Dispatcher | undefined
  readonly #listeners: Array<(app: AppState, event: OrbEvent) => void> = []

  constructor (store: OrbStore, interactions: Interactions) {
    this.#store = store
    this.#interactions = interactions
    store.onReset(() => this.#clear())
  }

  /** Sends events of apps with an endpoint URL somewhere else (ORB-051, ORB-090): the webhooks, wired at start-up. */
  setDispatcher (dispatch: Dispatcher): void {
    this.#dispatch = dispatch
  }

  /** Subscribes to every event made, whichever way it goes. */
  onEvent (listener: (app: AppState, event: OrbEvent) => void): void {
    this.#listeners.push(listener)
  }

  /**
   * Makes one event for `app`: queued for `GET /events` and any held poll answered at once (ORB-050), or, while the
   * app has an endpoint URL, handed to the webhook dispatcher instead and not queued (ORB-051, ORB-A05).
   */
  publish (
    app: AppState,
    type: EventType,
    where: { server: string | null, channel: string | null },
    data: Record<string, unknown>,
    id = newEventId()
  ): OrbEvent {
    const event: OrbEvent = {
      id,
      type,
      sent_at: this.#store.clock.now(),
      api: ORB_LIMITS.eventApi,
      app: { id: app.id, name: app.name },
      server: where.server,
      channel: where.channel,
      data
    }
    this.#interactions.noteEvent(event.id, app.id, type, event.sent_at)
    for (const listener of this.#listeners) listener(app, event)
    if (app.endpoint !== null && this.#dispatch !== undefined) {
      this.#dispatch(app, event)
      return event
    }
    const log = this.#log(app.id)
    log.events.push({ cursor: log.nextCursor++, ...event })
    this.#prune(log)
    for (const waiter of [...log.waiters]) {
      const ready = this.#after(log, waiter.after, waiter.limit)
      if (ready.length > 0) waiter.finish(ready)
    }
    return event
  }

  /** ORB-045, ORB-047, ORB-A09: the retained events after `after`, oldest first, at most `limit`; none consumed. */
  read (app: AppState, after: number, limit: number): CursorEvent[] {
    const log = this.#log(app.id)
    this.#prune(log)
    return this.#after(log, this.#store.faults.has('cursor-off-by-one') ? after - 1 : after, limit)
  }

  /**
   * ORB-050: holds until an event after `after` arrives (answered at once) or `waitMs` pass on the fake's clock
   * (answered `[]`). `gone` fires when the client goes away: its poll is dropped with everything it held.
   */
  wait (
    app: AppState,
    after: number,
    limit: number,
    waitMs: number,
    gone: (drop: () => void) => void
  ): Promise<CursorEvent[]> {
    const log = this.#log(app.id)
    return new Promise((resolve) => {
      const waiter: Waiter = {
        after,
        limit,
        timer: this.#store.clock.setTimer(waitMs, () => waiter.finish([])),
        finish: (events) => {
          if (!log.waiters.delete(waiter)) return
          this.#store.clock.clearTimer(waiter.timer)
          resolve(events)
        }
      }
      log.waiters.add(waiter)
      gone(() => waiter.finish([]))
    })
  }

  /** Held polls across the fake (for the control state and tests). */
  heldPolls (): number {
    let n = 0
    for (const log of this.#logs.values()) n += log.waiters.size
    return n
  }

  /** Each app's log as the control server shows it: events queued, the cursors they span, polls held. */
  logs (): Record<string, unknown> {
    return Object.fromEntries([...this.#logs].map(([app, log]) => [app, {
      queued: log.events.length,
      oldestCursor: log.events[0]?.cursor ?? null,
      lastCursor: log.nextCursor - 1,
      polls: log.waiters.size
    }]))
  }

  /** The app is gone: its held polls are answered, its log and cursor dropped. */
  forget (app: AppState): void {
    this.wake(app)
    this.#logs.delete(app.id)
  }

  /** Answers the app's held polls at once with nothing (its token was rotated: the route then refuses the old one). */
  wake (app: AppState): void {
    for (const waiter of [...this.#log(app.id).waiters]) waiter.finish([])
  }

  /**
   * ORB-A05: an app switched between events mode and webhook mode (called only on a switch). Its queue starts empty
   * (its cursor keeps counting), and a poll it holds is answered at once (in the new mode).
   */
  modeChanged (app: AppState): void {
    const log = this.#log(app.id)
    log.events = []
    for (const waiter of [...log.waiters]) waiter.finish([])
  }

  /**
   * A member's message makes `message.mention` events (ORB-053, ORB-A10): for each app it mentions (`reason:
   * "mention"`) or whose message it answers (`reason: "reply"`), when the community installed the app and the app's
   * role sees the channel (ORB-054).
   */
  memberMessage (message: StoredMessage): OrbEvent[] {
    const store = this.#store
    const made: OrbEvent[] = []
    const reasons = new Map<string, 'mention' | 'reply'>()
    for (const id of message.mentions) if (store.apps.has(id)) reasons.set(id, 'mention')
    const replied = message.replyTo === null ? undefined : store.messages.get(message.replyTo)
    if (replied?.author.bot === true && !reasons.has(replied.author.id)) reasons.set(replied.author.id, 'reply')
    for (const [appId, reason] of reasons) {
      const app = store.apps.get(appId)
      const install = store.installOf(message.community, appId)
      if (app === undefined || install === undefined || !canSee(install, message.channel)) continue
      const body = message.encrypted ? null : message.content
      made.push(this.publish(app, 'message.mention', { server: message.community, channel: message.channel }, {
        message: { id: message.id, channel: message.channel, author: { ...message.author }, body },
        reason
      }))
    }
    return made
  }

  /** ORB-A10: the developer presses "send test event". */
  testEvent (app: AppState): OrbEvent {
    return this.publish(app, 'app.test', { server: null, channel: null }, {})
  }

  /** ORB-053, ORB-066: a member typed one of `app`'s commands; its interaction waits 6 s for an answer (ORB-A14). */
  command (
    app: AppState,
    where: { server: string, channel: string },
    member: { id: string, name: string },
    command: Interaction['command']
  ): OrbEvent {
    const id = newEventId()
    const { invokedAt } = this.#interactions.open(id, app.id, where, member.id, command)
    return this.publish(app, 'application_command', where, {
      command: { id: command.id, name: command.name, options: { ...command.options } },
      member: { id: member.id, name: member.name },
      invoked_at: invokedAt
    }, id)
  }

  #log (appId: string): AppLog {
    let log = this.#logs.get(appId)
    if (log === undefined) this.#logs.set(appId, log = { events: [], nextCursor: 1, waiters: new Set() })
    return log
  }

  // ORB-049, ORB-A09: older than a day by sent_at (a day old exactly is still kept), or beyond the 500 newest, is gone.
  #prune (log: AppLog): void {
    const horizon = this.#store.clock.now() - ORB_PROSE_LIMITS.eventRetentionMs
    let drop = Math.max(0, log.events.length - ORB_PROSE_LIMITS.eventsPerApp)
    while (drop < log.events.length && log.events[drop]!.sent_at < horizon) drop++
    if (drop > 0) log.events.splice(0, drop)
  }

  #after (log: AppLog, after: number, limit: number): CursorEvent[] {
    // Cursors ascend: find the first one past `after` by bisection.
    let lo = 0
    let hi = log.events.length
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if (log.events[mid]!.cursor <= after) lo = mid + 1
      else hi = mid
    }
    return log.events.slice(lo, lo + limit)
  }

  #clear (): void {
    for (const log of this.#logs.values()) for (const waiter of [...log.waiters]) waiter.finish([])
    this.#logs = new Map()
  }
}

// ORB-A10: an opaque unique string.
const newEventId = (): string => `evt_${randomBytes(12).toString('hex')}`
