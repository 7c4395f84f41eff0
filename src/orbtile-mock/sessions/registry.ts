import type { FastifyReply } from 'fastify'
import type { Clock, TimerHandle } from '../../shared/clock.js'
import type { Adapters, LeaseEndReason } from '../adapters.js'
import { errors, OrbtileError } from '../errors.js'
import type { Registration } from '../registration.js'
import { LIMITS } from '../spec.js'
import { compareKeys, orderKey, schemaError, schemaFault, stripUnknown } from '../validation.js'
import { OFFLINE_LINGER_MS, applyUpdate, dropRequest, emptyAgent, endSession, type AgentState, type RequestKind } from './agent.js'
import { EventLog, type EventsReply, type NewEvent, type OrbtileEvent } from './events.js'
import type { ProcessCheck } from './process-table.js'
import { cleanProject, readSessionUpdate } from './update.js'
import { snapshotAgent, type SessionsSnapshot } from './snapshot.js'
import { NO_FAULTS, type Faults } from '../faults.js'

/** A long poll being held (OT-140): one per adapter at most (OT-133). */
interface Waiter {
  after: number
  warnings: string[]
  timer: TimerHandle
  finish: (outcome: { reply: EventsReply } | { error: OrbtileError }) => void
}

/** A refusal of one of the user's actions on the control server: the session or request is not there, or not now. */
export class UserActionError extends Error {
  constructor (readonly kind: 'not_found' | 'conflict' | 'bad_request', message: string) {
    super(message)
    this.name = 'UserActionError'
  }
}

export interface SessionReply {
  session: { uid: string, visible: boolean }
  warnings: string[]
}

export interface BatchReply {
  sessions: Array<{ id: string, uid: string, visible: boolean }>
  ended: string[]
  warnings: string[]
}

/**
 * Sessions, requests and events of every adapter, with their clocks: TTLs, removals and request expiries on one
 * sweep timer; long polls on their own timers. Listens to the adapter registry for lease starts and ends,
 * capability downgrades and the user's keypad switch.
 */
export class Sessions {
  readonly #clock: Clock
  readonly #adapters: Adapters
  readonly #ownsProcess: ProcessCheck
  readonly #agents = new Map<string, AgentState>()

  /** Whether the adapter still has sessions, requests or events here (they can outlive its lease, OT-A08). */
  holds (adapterId: string): boolean {
    return this.#agents.has(adapterId)
  }
  readonly #logs = new Map<string, EventLog>()
  readonly #waiters = new Map<string, Waiter>()
  #sweep: TimerHandle | undefined

  /** Deliberate faults (faults.ts). */
  readonly faults: Faults

  constructor (clock: Clock, adapters: Adapters, ownsProcess: ProcessCheck, faults: Faults = NO_FAULTS) {
    this.faults = faults
    this.#clock = clock
    this.#adapters = adapters
    this.#ownsProcess = ownsProcess
    adapters.setLongestTtl((id) => {
      let longest = 0
      for (const session of this.#agents.get(id)?.sessions.values() ?? []) longest = Math.max(longest, session.fields.ttlSeconds * 1000)
      return longest
    })
    adapters.listen({
      leaseStarted: (id) => this.#leaseStarted(id),
      leaseEnded: (id, reason) => this.#leaseEnded(id, reason),
      registered: (id, registration, previous) => this.#registered(id, registration, previous),
      userChanged: (id, user, before) => {
        // OT-057: turning the keypad switch off clears decisions not yet delivered.
        if (before.keypad && !user.keypad) this.#undecide(id, this.#logs.get(id)?.dropUndelivered((event) => event.type !== 'tap') ?? [])
      }
    })
  }

  /** `POST /adapters/{id}/sessions/{sid}` (OT-089..113, OT-A17, OT-A18). The lease has been checked. */
  post (adapterId: string, sessionId: string, body: unknown, registration: Registration): SessionReply {
    const { patch, warnings } = readSessionUpdate(body)
    const agent = this.#agent(adapterId)
    applyUpdate(agent, sessionId, patch, { now: this.#clock.now(), registration, ownsProcess: this.#ownsProcess, prefix: [], faults: this.faults })
    this.#changed(adapterId)
    return { session: this.#identity(adapterId, sessionId), warnings }
  }

  /** `PUT /adapters/{id}/sessions` (OT-114..119, OT-A19): atomic, applied on a draft and committed whole. */
  batch (adapterId: string, raw: unknown, registration: Registration): BatchReply {
    const { value, unknown } = stripUnknown('SessionBatch', raw)
    const body = value as { sessions?: Array<Record<string, unknown>> }
    for (const item of Array.isArray(body.sessions) ? body.sessions : []) {
      if (item !== null && typeof item === 'object' && typeof item.project === 'string') item.project = cleanProject(item.project)
    }
    // OT-A25: a duplicate id and a schema fault are ranked by where they stand in the body.
    const faults: Array<{ at: number[], error: OrbtileError }> = []
    const fault = schemaFault('SessionBatch', body)
    if (fault !== undefined) faults.push({ at: orderKey(body, fault.path), error: fault.error })
    const seen = new Set<string>()
    const listed = Array.isArray(body.sessions) ? body.sessions : []
    for (const [i, item] of listed.entries()) {
      const id = (item as { id?: unknown } | null)?.id
      if (typeof id !== 'string') continue
      if (seen.has(id)) {
        faults.push({ at: orderKey(body, ['sessions', i, 'id']), error: errors.invalidField(`sessions[${i}].id`, `session ${id} is listed twice`) })
        break
      }
      seen.add(id)
    }
    faults.sort((a, b) => compareKeys(a.at, b.at))
    if (faults[0] !== undefined) throw faults[0].error
    const items = body.sessions!
    const warnings = unknown.map((path) => `unknown-field: ${path}`)
    // Deliberate fault: the items are applied to the live state, so those before a bad one stay applied.
    const draft = this.faults.has('batch-not-atomic') ? this.#agent(adapterId) : structuredClone(this.#agent(adapterId))
    const now = this.#clock.now()
    // The unlisted sessions end first, so that a full adapter can always replace its set (OT-114).
    const ended = [...draft.sessions.keys()].filter((id) => !seen.has(id))
    for (const id of ended) endSession(draft, id)
    items.forEach((item, i) => {
      const { id, ...update } = item
      const read = readSessionUpdate(update, ['sessions', i])
      warnings.push(...read.warnings.filter((w) => w.startsWith('tool-kind:')))
      applyUpdate(draft, id as string, read.patch, { now, registration, ownsProcess: this.#ownsProcess, prefix: ['sessions', i], faults: this.faults })
    })
    this.#agents.set(adapterId, draft)
    this.#changed(adapterId)
    return { sessions: items.map((item) => ({ id: item.id as string, ...this.#identity(adapterId, item.id as string) })), ended, warnings }
  }

  /**
   * `POST /adapters/{id}/events` (OT-131..142, OT-A21, OT-A23). State checks in OT-A02's order; a long poll is
   * held until an event arrives, `waitSeconds` pass on the fake's clock, or the client goes away.
   */
  poll (adapterId: string, raw: unknown, registration: Registration, reply: FastifyReply): Promise<EventsReply> | EventsReply {
    const { value, unknown } = stripUnknown('EventsPoll', raw)
    const invalid = schemaError('EventsPoll', value)
    if (invalid !== undefined) throw invalid
    const { after = 0, ack = 0, waitSeconds = 0 } = value as { after?: number, ack?: number, waitSeconds?: number }
    const warnings = unknown.map((path) => `unknown-field: ${path}`)
    // OT-A02 step 11 puts limit_exceeded first; we check poll_pending before it: an adapter's second poll is its
    // own bug, not a new concurrent poll, and must not be told otherwise by other adapters' load.
    if (registration.capabilities.length === 0) {
      throw new OrbtileError('events_not_supported', 'the registration declares no event capabilities')
    }
    if (this.#waiters.has(adapterId) && !this.faults.has('no-poll-pending')) throw new OrbtileError('poll_pending', 'another events poll of this adapter is still held')
    if (waitSeconds > 0 && this.#waiters.size >= LIMITS.maxLongPolls) {
      throw new OrbtileError('limit_exceeded', `${LIMITS.maxLongPolls} long polls are already held across Orbtile; poll with waitSeconds 0 or later`)
    }
    const log = this.#log(adapterId)
    log.checkCursor(after, ack)
    log.acknowledge(ack)
    this.#dropExpiredDecisions(log)
    const events = log.pending(after)
    if (events.length > 0 || waitSeconds === 0) return log.reply(events, warnings)
    return new Promise<EventsReply>((resolve, reject) => {
      const finish: Waiter['finish'] = (outcome) => {
        if (this.#waiters.get(adapterId) !== waiter) return
        this.#waiters.delete(adapterId)
        this.#clock.clearTimer(waiter.timer)
        if ('reply' in outcome) resolve(outcome.reply)
        else reject(outcome.error)
      }
      const waiter: Waiter = {
        after,
        warnings,
        finish,
        timer: this.#clock.setTimer(waitSeconds * 1000, () => finish({ reply: log.reply([], warnings) }))
      }
      this.#waiters.set(adapterId, waiter)
      // OT-141: a client that goes away frees its slot at once.
      reply.raw.once('close', () => finish({ error: new OrbtileError('bad_request', 'the client went away') }))
    })
  }

  /** The user taps a session's key (OT-055, OT-144). */
  tap (adapterId: string, sessionId: string): { event: OrbtileEvent | null, opened: string | null, activated: number | null } {
    const session = this.#visibleSession(adapterId, sessionId)
    const registration = this.#adapters.get(adapterId)?.registration
    const leased = this.#adapters.get(adapterId)?.lease != null
    const tapCapable = registration?.capabilities.includes('tap') === true
    const event = tapCapable && leased ? this.#emit(adapterId, { type: 'tap', sessionId, host: session.fields.host }) : null
    // OT-055: with eventOnly nothing opens; OT-A15: an openURL whose scheme the registration no longer lists stays shut.
    const opens = !tapCapable || registration?.tapBehavior !== 'eventOnly'
    const url = session.fields.openURL
    const scheme = url?.split(':')[0]?.toLowerCase()
    const opened = opens && url !== null && scheme !== undefined && registration?.urlSchemes.includes(scheme) === true ? url : null
    return { event, opened, activated: opens ? session.fields.pid : null }
  }

  /** The user decides an approval or answers a question on the keypad (OT-130, OT-145, OT-146, OT-A22). */
  decide (adapterId: string, requestId: string, body: { decision?: unknown, picks?: unknown }): { event: OrbtileEvent } {
    const request = this.#agents.get(adapterId)?.pending.get(requestId)
    if (request === undefined) throw new UserActionError('not_found', `no pending request ${requestId} for ${adapterId}`)
    const record = this.#adapters.get(adapterId)!
    if (request.decided) throw new UserActionError('conflict', `request ${requestId} has been decided already`)
    if (!this.#adapters.isEnabled(adapterId)) throw new UserActionError('conflict', `${adapterId} is not enabled; its keys are not shown`)
    if (!record.user.keypad) throw new UserActionError('conflict', `keypad decisions are switched off for ${adapterId}`)
    const session = this.#agents.get(adapterId)!.sessions.get(request.sessionId)!
    const base = { sessionId: request.sessionId, host: session.fields.host, requestId, expiresAt: request.expiresAt }
    let event: NewEvent
    if (request.kind === 'approval') {
      if (body.decision !== 'allow' && body.decision !== 'deny') throw new UserActionError('bad_request', 'an approval takes {"decision": "allow" | "deny"}')
      event = { type: 'approval', ...base, decision: body.decision }
    } else {
      event = { type: 'question', ...base, picks: checkPicks(request.content as { questions: Array<{ multiSelect?: boolean, options: unknown[] }> }, body.picks) }
    }
    request.decided = true
    return { event: this.#emit(adapterId, event) }
  }

  /** The sessions part of one adapter's snapshot. */
  snapshotOf (adapterId: string): SessionsSnapshot {
    return snapshotAgent(this.#agents.get(adapterId), this.#logs.get(adapterId), this.#waiters.has(adapterId), {
      visible: this.#adapters.isEnabled(adapterId),
      uid: (sessionId) => `${adapterId}/${sessionId}`
    })
  }

  /** Forgets everything (control reset); held polls are answered as the lease they belong to is gone. */
  clear (): void {
    for (const waiter of [...this.#waiters.values()]) waiter.finish({ error: notRegistered() })
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
    if (session === undefined) throw new UserActionError('not_found', `no session ${sessionId} of ${adapterId}`)
    if (!this.#adapters.isEnabled(adapterId)) throw new UserActionError('conflict', `${adapterId} is not enabled; its keys are not shown`)
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
    const waiter = this.#waiters.get(adapterId)
    if (waiter !== undefined) {
      const events = log.pending(waiter.after)
      if (events.length > 0) waiter.finish({ reply: log.reply(events, waiter.warnings) })
    }
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
    this.#waiters.get(adapterId)?.finish({ error: notRegistered() })
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
    if (previous.capabilities.includes('approvals') && !registration.capabilities.includes('approvals')) lost.push('approval')
    if (previous.capabilities.includes('questions') && !registration.capabilities.includes('questions')) lost.push('question')
    if (lost.length === 0) return
    for (const request of [...(agent?.pending.values() ?? [])]) if (lost.includes(request.kind)) dropRequest(agent!, request)
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
      for (const request of [...agent.pending.values()]) if (request.expiresAt * 1000 <= now) dropRequest(agent, request)
    }
    for (const log of this.#logs.values()) this.#dropExpiredDecisions(log)
    this.#reschedule()
  }
}

function notRegistered (): OrbtileError {
  return new OrbtileError('adapter_not_registered', 'the lease ended while the poll was held')
}

// OT-146: one array per question, 1..4 unique indices each, every index below the option count, one for single-select.
function checkPicks (request: { questions: Array<{ multiSelect?: boolean, options: unknown[] }> }, picks: unknown): number[][] {
  const bad = (message: string): never => { throw new UserActionError('bad_request', message) }
  if (!Array.isArray(picks) || picks.length !== request.questions.length) bad(`picks must hold one array per question (${request.questions.length})`)
  return (picks as unknown[]).map((pick, i) => {
    const question = request.questions[i]!
    if (!Array.isArray(pick) || pick.length < 1 || pick.length > 4) bad(`picks[${i}] must hold 1 to 4 option indices`)
    const indices = pick as unknown[]
    if (!indices.every((n) => Number.isInteger(n) && (n as number) >= 0 && (n as number) < question.options.length)) {
      bad(`picks[${i}] may only hold indices 0..${question.options.length - 1}`)
    }
    if (new Set(indices).size !== indices.length) bad(`picks[${i}] repeats an index`)
    if (question.multiSelect !== true && indices.length !== 1) bad(`question ${i} is single-select: pick exactly one option`)
    return indices as number[]
  })
}
