import type { FastifyReply } from 'fastify'
import type { Clock, TimerHandle } from '../../shared/clock.js'
import { ControlError } from '../../shared/control-error.js'
import { LIMITS } from '../../spec/orbtile.js'
import type { Adapters, LeaseEndReason } from '../adapters.js'
import { errors } from '../errors.js'
import { NO_FAULTS, type Faults } from '../faults.js'
import type { Registration } from '../registration.js'
import { schemaError, stripUnknown } from '../validation.js'
import {
  OFFLINE_LINGER_MS, applyUpdate, dropRequest, emptyAgent, endSession, type AgentState, type RequestKind
} from './agent.js'
import { EventLog, type EventsReply, type NewEvent, type OrbtileEvent } from './events.js'
import { decisionEvent, tapOutcome, type KeypadAnswer } from './keypad.js'
import { HeldPolls } from './polls.js'
import type { ProcessCheck } from './process-table.js'
import { snapshotAgent, type SessionsSnapshot } from './snapshot.js'
import { readSessionBatch, readSessionUpdate } from './update.js'

/** The reply to `POST /adapters/{id}/sessions/{sid}` (OT-A17). */
export interface SessionReply {
  session: { uid: string, visible: boolean }
  warnings: string[]
}

/** The reply to `PUT /adapters/{id}/sessions` (OT-114, OT-A19). */
export interface BatchReply {
  sessions: Array<{ id: string, uid: string, visible: boolean }>
  ended: string[]
  warnings: string[]
}

/**
 * Sessions, requests and events of every adapter, with their clocks: TTLs, removals and request expiries on one
 * sweep timer; long polls on their own timers. Listens to the adapter registry for lease starts and ends,
 * capability downgrades and the user's keypad switch. The user's actions (tap, decide) refuse with ControlError.
 */
export class Sessions {
  readonly #clock: Clock
  readonly #adapters: Adapters
  readonly #ownsProcess: ProcessCheck
  readonly #agents = new Map<string, AgentState>()
  readonly #logs = new Map<string, EventLog>()
  readonly #polls: HeldPolls
  #sweep: TimerHandle | undefined

  /** Deliberate faults (faults.ts). */
  readonly faults: Faults

  constructor (clock: Clock, adapters: Adapters, ownsProcess: ProcessCheck, faults: Faults = NO_FAULTS) {
    this.faults = faults
    this.#clock = clock
    this.#adapters = adapters
    this.#ownsProcess = ownsProcess
    this.#polls = new HeldPolls(clock)
    adapters.setLongestTtl((id) => {
      let longest = 0
      for (const session of this.#agents.get(id)?.sessions.values() ?? []) {
        longest = Math.max(longest, session.fields.ttlSeconds * 1000)
      }
      return longest
    })
    adapters.listen({
      leaseStarted: (id) => this.#leaseStarted(id),
      leaseEnded: (id, reason) => this.#leaseEnded(id, reason),
      registered: (id, registration, previous) => this.#registered(id, registration, previous),
      userChanged: (id, user, before) => {
        // OT-057: turning the keypad switch off clears decisions not yet delivered.
        if (before.keypad && !user.keypad) {
          this.#undecide(id, this.#logs.get(id)?.dropUndelivered((event) => event.type !== 'tap') ?? [])
        }
      }
    })
  }

  /** Whether the adapter still has sessions, requests or events here (they can outlive its lease, OT-A08). */
  holds (adapterId: string): boolean {
    return this.#agents.has(adapterId)
  }

  /** `POST /adapters/{id}/sessions/{sid}` (OT-089..113, OT-A17, OT-A18). The lease has been checked. */
  post (adapterId: string, sessionId: string, body: unknown, registration: Registration): SessionReply {
    const { patch, warnings } = readSessionUpdate(body)
    const agent = this.#agent(adapterId)
    applyUpdate(agent, sessionId, patch, {
      now: this.#clock.now(),
      registration,
      ownsProcess: this.#ownsProcess,
      prefix: [],
      faults: this.faults
    })
    this.#changed(adapterId)
    return { session: this.#identity(adapterId, sessionId), warnings }
  }

  /** `PUT /adapters/{id}/sessions` (OT-114..119, OT-A19): atomic, applied on a draft and committed whole. */
  batch (adapterId: string, raw: unknown, registration: Registration): BatchReply {
    const { items, ids, warnings } = readSessionBatch(raw)
    const ownsProcess = this.#ownsProcess
    // Deliberate fault: the items are applied to the live state, so those before a bad one stay applied.
    const draft = this.faults.has('batch-not-atomic') ? this.#agent(adapterId) : structuredClone(this.#agent(adapterId))
    const now = this.#clock.now()
    // The unlisted sessions end first, so that a full adapter can always replace its set (OT-114).
    const ended = [...draft.sessions.keys()].filter((id) => !ids.has(id))
    for (const id of ended) endSession(draft, id)
    items.forEach((item, i) => {
      const { id, ...update } = item
      const read = readSessionUpdate(update, ['sessions', i])
      warnings.push(...read.warnings.filter((w) => w.startsWith('tool-kind:')))
      const prefix = ['sessions', i]
      applyUpdate(draft, id, read.patch, { now, registration, ownsProcess, prefix, faults: this.faults })
    })
    this.#agents.set(adapterId, draft)
    this.#changed(adapterId)
    return { sessions: items.map(({ id }) => ({ id, ...this.#identity(adapterId, id) })), ended, warnings }
  }

  /**
   * `POST /adapters/{id}/events` (OT-131..142, OT-A21, OT-A23). State checks in OT-A02's order; a long poll is
   * held until an event arrives, `waitSeconds` pass on the fake's clock, or the client goes away.
   */
  poll (adapterId: string, raw: unknown, registration: Registration, reply: FastifyReply):
  Promise<EventsReply> | EventsReply {
    const { value, unknown } = stripUnknown('EventsPoll', raw)
    const invalid = schemaError('EventsPoll', value)
    if (invalid !== undefined) throw invalid
    const { after = 0, ack = 0, waitSeconds = 0 } = value as { after?: number, ack?: number, waitSeconds?: number }
    const warnings = unknown.map((path) => `unknown-field: ${path}`)
    // OT-A02 step 11 puts limit_exceeded first; we check poll_pending before it: an adapter's second poll is its
    // own bug, not a new concurrent poll, and must not be told otherwise by other adapters' load.
    if (registration.capabilities.length === 0) {
      throw errors.eventsNotSupported('the registration declares no event capabilities')
    }
    if (this.#polls.has(adapterId) && !this.faults.has('no-poll-pending')) {
      throw errors.pollPending('another events poll of this adapter is still held')
    }
    if (waitSeconds > 0 && this.#polls.size >= LIMITS.maxLongPolls) {
      throw errors.limitExceeded(`${LIMITS.maxLongPolls} long polls are already held across Orbtile; poll with waitSeconds 0 or later`)
    }
    const log = this.#log(adapterId)
    log.checkCursor(after, ack)
    log.acknowledge(ack)
    this.#dropExpiredDecisions(log)
    const events = log.pending(after)
    if (events.length > 0 || waitSeconds === 0) return log.reply(events, warnings)
    return this.#polls.hold(adapterId, log, after, waitSeconds, warnings, reply)
  }

  /** The user taps a session's key (OT-055, OT-144). */
  tap (adapterId: string, sessionId: string):
  { event: OrbtileEvent | null, opened: string | null, activated: number | null } {
    const session = this.#visibleSession(adapterId, sessionId)
    const record = this.#adapters.get(adapterId)
    const { tapCapable, opened, activated } = tapOutcome(session, record?.registration)
    const event = tapCapable && record?.lease != null
      ? this.#emit(adapterId, { type: 'tap', sessionId, host: session.fields.host })
      : null
    return { event, opened, activated }
  }

  /** The user decides an approval or answers a question on the keypad (OT-130, OT-145, OT-146, OT-A22). */
  decide (adapterId: string, requestId: string, answer: KeypadAnswer): { event: OrbtileEvent } {
    const request = this.#agents.get(adapterId)?.pending.get(requestId)
    if (request === undefined) throw new ControlError('not_found', `no pending request ${requestId} for ${adapterId}`)
    const record = this.#adapters.get(adapterId)!
    if (request.decided) throw new ControlError('conflict', `request ${requestId} has been decided already`)
    if (!this.#adapters.isEnabled(adapterId)) {
      throw new ControlError('conflict', `${adapterId} is not enabled; its keys are not shown`)
    }
    if (!record.user.keypad) throw new ControlError('conflict', `keypad decisions are switched off for ${adapterId}`)
    const session = this.#agents.get(adapterId)!.sessions.get(request.sessionId)!
    const event = decisionEvent(request, session, answer)
    request.decided = true
    return { event: this.#emit(adapterId, event) }
  }

  /** The sessions part of one adapter's snapshot. */
  snapshotOf (adapterId: string): SessionsSnapshot {
    return snapshotAgent(this.#agents.get(adapterId), this.#logs.get(adapterId), this.#polls.has(adapterId), {
      visible: this.#adapters.isEnabled(adapterId),
      uid: (sessionId) => `${adapterId}/${sessionId}`
    })
  }

  /** Forgets everything (control reset); held polls are answered as the lease they belong to is gone. */
  clear (): void {
    this.#polls.clear()
    this.#agents.clear()
    this.#logs.clear()
    this.#reschedule()
  }

  #agent (adapterId: string): AgentState {
    let agent = this.#agents.get(adapterId)
    if (agent === undefined) {
      agent = emptyAgent()
      this.#agents.set(adapterId, agent)
    }
    return agent
  }

  #log (adapterId: string): EventLog {
    let log = this.#logs.get(adapterId)
    if (log === undefined) {
      log = new EventLog(this.faults)
      this.#logs.set(adapterId, log)
    }
    return log
  }

  // OT-A17: the uid is stable and unique across adapters; visible while the adapter is enabled.
  #identity (adapterId: string, sessionId: string): { uid: string, visible: boolean } {
    return { uid: `${adapterId}/${sessionId}`, visible: this.#adapters.isEnabled(adapterId) }
  }

  #visibleSession (adapterId: string, sessionId: string) {
    const session = this.#agents.get(adapterId)?.sessions.get(sessionId)
    if (session === undefined) throw new ControlError('not_found', `no session ${sessionId} of ${adapterId}`)
    if (!this.#adapters.isEnabled(adapterId)) {
      throw new ControlError('conflict', `${adapterId} is not enabled; its keys are not shown`)
    }
    return session
  }

  // A decision whose event was dropped before delivery (keypad switched off, queue overflow) never reached the
  // adapter: the request becomes decidable again rather than stay stuck.
  #undecide (adapterId: string, dropped: readonly OrbtileEvent[]): void {
    const agent = this.#agents.get(adapterId)
    for (const event of dropped) {
      if (event.type === 'tap') continue
      const request = agent?.pending.get(event.requestId)
      if (request !== undefined) request.decided = false
    }
  }

  // After sessions change: deadlines move, and the lease's silence window may have grown or shrunk (OT-A08).
  #changed (adapterId: string): void {
    this.#reschedule()
    this.#adapters.rearmSilence(adapterId)
  }

  // Queues an event and wakes the adapter's held poll, if any, at once (OT-140).
  #emit (adapterId: string, event: NewEvent): OrbtileEvent {
    const log = this.#log(adapterId)
    const { event: stamped, dropped } = log.push(event)
    this.#undecide(adapterId, dropped === undefined ? [] : [dropped])
    this.#polls.wake(adapterId, log)
    if ('expiresAt' in stamped) this.#reschedule()
    return stamped
  }

  // OT-A21: a decision whose expiresAt has passed is no use to anyone.
  #dropExpiredDecisions (log: EventLog): void {
    const now = this.#clock.now()
    log.drop((event) => 'expiresAt' in event && event.expiresAt * 1000 <= now)
  }

  #leaseStarted (adapterId: string): void {
    // OT-A22, OT-A23: a new lease has a fresh request-id namespace and sequences from 1.
    const agent = this.#agent(adapterId)
    agent.retired = new Set()
    agent.idsSeen = 0
    this.#logs.set(adapterId, new EventLog(this.faults))
  }

  #leaseEnded (adapterId: string, reason: LeaseEndReason): void {
    this.#polls.endLease(adapterId)
    this.#logs.delete(adapterId)
    const agent = this.#agents.get(adapterId)
    if (agent !== undefined) {
      // OT-A22: every pending id retires with the lease. OT-A07: unregistering ends the sessions too, as a
      // restart loses them; after silence or a new discovery token they follow their TTL clocks (OT-A08).
      for (const request of [...agent.pending.values()]) dropRequest(agent, request)
      if (reason === 'unregistered' || reason === 'restart' || reason === 'reset') this.#agents.delete(adapterId)
    }
    this.#reschedule()
  }

  // OT-A22: a capability downgrade retires that kind's pending requests and drops their queued events.
  #registered (adapterId: string, registration: Registration, previous: Registration | null): void {
    if (previous === null) return
    const agent = this.#agents.get(adapterId)
    const lost: RequestKind[] = []
    const dropped = (capability: 'approvals' | 'questions'): boolean =>
      previous.capabilities.includes(capability) && !registration.capabilities.includes(capability)
    if (dropped('approvals')) lost.push('approval')
    if (dropped('questions')) lost.push('question')
    if (lost.length === 0) return
    for (const request of [...(agent?.pending.values() ?? [])]) {
      if (lost.includes(request.kind)) dropRequest(agent!, request)
    }
    this.#logs.get(adapterId)?.drop((event) => lost.includes(event.type as RequestKind))
    this.#reschedule()
  }

  // One timer for every deadline: a session going offline (OT-112), an offline one removed, a request expiring
  // (OT-129), a queued decision expiring (OT-A21). It fires at the earliest, handles all that is due, re-arms.
  #reschedule (): void {
    let next = Infinity
    for (const agent of this.#agents.values()) {
      for (const session of agent.sessions.values()) {
        const offlineAt = session.lastContact + session.fields.ttlSeconds * 1000
        next = Math.min(next, session.offline ? offlineAt + OFFLINE_LINGER_MS : offlineAt)
      }
      for (const request of agent.pending.values()) next = Math.min(next, request.expiresAt * 1000)
    }
    for (const log of this.#logs.values()) {
      for (const event of log.queued()) if ('expiresAt' in event) next = Math.min(next, event.expiresAt * 1000)
    }
    // A timer due no later than the next deadline is kept: if it fires early the sweep finds nothing due and
    // re-arms. So a busy adapter's heartbeats, which only push deadlines out, cost no timer churn.
    if (this.#sweep !== undefined && this.#sweep.due <= next) return
    if (this.#sweep !== undefined) this.#clock.clearTimer(this.#sweep)
    this.#sweep = next === Infinity ? undefined : this.#clock.setTimer(next - this.#clock.now(), () => this.#sweepNow())
  }

  #sweepNow (): void {
    this.#sweep = undefined
    const now = this.#clock.now()
    for (const [adapterId, agent] of this.#agents) {
      let removed = false
      for (const session of [...agent.sessions.values()]) {
        const offlineAt = session.lastContact + session.fields.ttlSeconds * 1000
        if (!session.offline && offlineAt <= now) session.offline = true
        if (session.offline && offlineAt + OFFLINE_LINGER_MS <= now) {
          endSession(agent, session.id)
          removed = true
        }
      }
      if (removed) this.#adapters.rearmSilence(adapterId)
      for (const request of [...agent.pending.values()]) {
        if (request.expiresAt * 1000 <= now) dropRequest(agent, request)
      }
    }
    for (const log of this.#logs.values()) this.#dropExpiredDecisions(log)
    this.#reschedule()
  }
}
