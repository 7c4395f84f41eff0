import type fc from 'fast-check'
import type { CaseContext } from '../orbtile-case.js'
import type { Agent } from '../agent-sessions.js'
import type { Kind } from './common.js'

// The events cursor model (OT-131..146, OT-A23, OT-A30): the sessions and requests it needs, the unacknowledged
// events, and the cursor. Its commands are events-commands.ts.

/** An event as the model expects it. */
export interface ModelEvent {
  sequence: number
  type: 'tap' | 'approval' | 'question'
  sessionId: string
  host: string
  requestId?: string
  decision?: 'allow' | 'deny'
  picks?: number[][]
  /** The target's time when the request became pending, in epoch seconds (+600 gives expiresAt, OT-129). */
  pendingSince?: number
}

/** A request as the events model keeps it: who holds it, whether the user decided it, since when it is pending. */
interface ERequest { kind: Kind, sessionId: string, decided: boolean, pendingSince: number }

/** What the events model holds. */
export interface EventsModel {
  sessions: Map<string, { host: string, request: string | null }>
  requests: Map<string, ERequest>
  retired: Set<string>
  /** Unacknowledged events, ascending. */
  queue: ModelEvent[]
  next: number
  acknowledged: number
  highestDelivered: number
}

/** A fresh lease's model: no sessions, no events, sequences from 1. */
export const emptyEventsModel = (): EventsModel => ({
  sessions: new Map(),
  requests: new Map(),
  retired: new Set(),
  queue: [],
  next: 1,
  acknowledged: 0,
  highestDelivered: 0
})

/** The target an events model run drives. */
export interface EventsReal {
  ctx: CaseContext
  a: Agent
}

/** A command of the events model. */
export type EventsCommand = fc.AsyncCommand<EventsModel, EventsReal>

/** Retires a session's request, if any (OT-A22, OT-A18). */
export function retireRequest (m: EventsModel, id: string | null): void {
  if (id === null) return
  if (m.requests.delete(id)) m.retired.add(id)
}
