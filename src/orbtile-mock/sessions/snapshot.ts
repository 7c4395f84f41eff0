import { OFFLINE_LINGER_MS, type AgentState, type SessionFields } from './agent.js'
import type { EventLog, OrbtileEvent } from './events.js'

/** One session as the state snapshot shows it: every field, its clocks, and what the user sees. */
export interface SessionSnapshot extends Omit<SessionFields, 'activity'> {
  id: string
  uid: string
  visible: boolean
  /** What the orb shows: the last activity, or `offline` once the TTL has run out (OT-112). */
  activity: string
  lastActivity: string
  offline: boolean
  lastContact: string
  /** When it goes (or went) offline, and when it is removed. */
  offlineAt: string
  removeAt: string
}

/** The sessions part of one adapter in `GET /control/orbtile/state`. */
export interface SessionsSnapshot {
  sessions: SessionSnapshot[]
  requests: Array<{
    id: string, kind: string, sessionId: string, pendingSince: string, expiresAt: number, decided: boolean
  }>
  events: {
    lastSequence: number, acknowledged: number, highestDelivered: number, queued: OrbtileEvent[], pollHeld: boolean
  } | null
}

const iso = (ms: number): string => new Date(ms).toISOString()

/** Builds the sessions part of an adapter's snapshot. */
export function snapshotAgent (
  agent: AgentState | undefined,
  log: EventLog | undefined,
  pollHeld: boolean,
  view: { visible: boolean, uid: (sessionId: string) => string }
): SessionsSnapshot {
  const sessions = [...(agent?.sessions.values() ?? [])].map((session) => {
    const offlineAt = session.lastContact + session.fields.ttlSeconds * 1000
    return {
      id: session.id,
      uid: view.uid(session.id),
      visible: view.visible,
      ...session.fields,
      activity: session.offline ? 'offline' : session.fields.activity,
      lastActivity: session.fields.activity,
      offline: session.offline,
      lastContact: iso(session.lastContact),
      offlineAt: iso(offlineAt),
      removeAt: iso(offlineAt + OFFLINE_LINGER_MS)
    }
  })
  const requests = [...(agent?.pending.values() ?? [])].map((request) => ({
    id: request.id,
    kind: request.kind,
    sessionId: request.sessionId,
    pendingSince: iso(request.pendingSince),
    expiresAt: request.expiresAt,
    decided: request.decided
  }))
  return {
    sessions,
    requests,
    events: log === undefined
      ? null
      : {
          lastSequence: log.lastSequence,
          acknowledged: log.acknowledged,
          highestDelivered: log.highestDelivered,
          queued: [...log.queued()],
          pollHeld
        }
  }
}
