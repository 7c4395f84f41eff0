import { isDeepStrictEqual } from 'node:util'
import { errors } from '../errors.js'
import type { Faults } from '../faults.js'
import { REFUSED_SCHEMES, type Registration } from '../registration.js'
import { LIMITS } from '../../spec/orbtile.js'
import { compareKeys, formatField, orderKey, type FieldPath } from '../validation.js'
import { keepLastBytes, type ApprovalRequest, type QuestionRequest, type SessionPatch } from './update.js'

/** The fields of a session as the fake keeps them (OT-A17 defaults: host local, ttl 120, the rest null). */
export interface SessionFields {
  title: string
  /** The last activity the adapter sent; while offline the session shows `offline` instead. */
  activity: string
  cwd: string | null
  project: string | null
  model: string | null
  toolLabel: string | null
  toolKind: string | null
  message: { id: string, text: string } | null
  statusDetail: string | null
  subagentCount: number
  host: string
  openURL: string | null
  pid: number | null
  background: boolean
  liveText: boolean
  ttlSeconds: number
  approval: ApprovalRequest | null
  question: QuestionRequest | null
}

/** One session as the fake keeps it (OT-089..113). */
export interface Session {
  id: string
  fields: SessionFields
  /** OT-112: live until `ttlSeconds` pass without contact, then offline, then removed 600 s later. */
  offline: boolean
  lastContact: number
}

/** The two kinds of pending request (OT-120..130). */
export type RequestKind = 'approval' | 'question'

/** A pending approval or question (OT-120..130, OT-A22). */
export interface PendingRequest {
  id: string
  kind: RequestKind
  sessionId: string
  content: ApprovalRequest | QuestionRequest
  pendingSince: number
  /** OT-129, OT-A31: whole epoch seconds; the request expires then. */
  expiresAt: number
  /** OT-A22: at most one decision per request; it stays pending until the adapter clears it. */
  decided: boolean
}

/**
 * One adapter's sessions and request ids. Plain data (Maps and Sets), so that a batch can work on a structured
 * clone and commit only if every item is valid (OT-A19). Sessions outlive a lease (OT-A08); the request-id
 * namespace does not (OT-A22).
 */
export interface AgentState {
  sessions: Map<string, Session>
  pending: Map<string, PendingRequest>
  /** Every id retired under this lease (OT-126). */
  retired: Set<string>
  /** OT-A22: distinct ids seen under this lease, pending or retired, toward maxRequestIDs. */
  idsSeen: number
}

/** An adapter with no sessions and an unused request-id namespace. */
export function emptyAgent (): AgentState {
  return { sessions: new Map(), pending: new Map(), retired: new Set(), idsSeen: 0 }
}

/** What applying an update needs to know beyond the agent's own state. */
export interface ApplyContext {
  now: number
  registration: Registration
  /** OT-108, OT-A16: whether a pid is a process of the calling user. */
  ownsProcess: (pid: number) => boolean
  /** Where the fields sit in the request body, for `invalid_field` (`sessions[2]` in a batch). */
  prefix: FieldPath
  /** Deliberate faults (faults.ts). */
  faults?: Faults
}

/** 600 s: how long an approval or question stays pending (OT-129, OT-A22). */
export const REQUEST_LIFETIME_MS = 600_000
/** OT-112: how long an offline session lingers before it is removed. */
export const OFFLINE_LINGER_MS = 600_000

const KINDS: readonly RequestKind[] = ['approval', 'question']
const CAPABILITY: Record<RequestKind, 'approvals' | 'questions'> = { approval: 'approvals', question: 'questions' }

/**
 * Applies one SessionUpdate to `agent` (OT-089..130, OT-A17, OT-A18, OT-A22): creation rules, merge semantics,
 * openURL and pid checks, the one-request-per-session rule and the request-id namespace, then the limits. Throws
 * before changing anything: every check runs first, invalid_field ones before limit_exceeded ones (OT-A02).
 */
export function applyUpdate (agent: AgentState, sessionId: string, patch: SessionPatch, ctx: ApplyContext): Session {
  const existing = agent.sessions.get(sessionId)
  // Deliberate fault: every field the update leaves out goes back to its default, as if the update replaced the
  // session.
  if (ctx.faults?.has('no-merge') === true && existing !== undefined) {
    patch = { ...defaults({ ...existing.fields, ...patch }), ...patch }
  }
  const requests = planRequests(agent, sessionId, existing, patch, ctx)
  const faults = [...fieldFaults(existing !== undefined, patch, ctx), ...requests.faults]
  // OT-A25: every fault found here is ranked by where it stands in the body; the first one answers.
  if (faults.length > 0) {
    const first = faults.sort((a, b) => compareKeys(orderKey(patch, a.path), orderKey(patch, b.path)))[0]!
    throw errors.invalidField(formatField([...ctx.prefix, ...first.path]), first.message)
  }
  checkLimits(agent, existing === undefined, requests, ctx.faults)

  for (const id of requests.retiring) retire(agent, id)
  for (const request of requests.added) {
    agent.pending.set(request.id, request)
    agent.idsSeen++
  }
  const session: Session = existing ?? { id: sessionId, fields: defaults(patch), offline: false, lastContact: ctx.now }
  merge(session.fields, patch)
  // OT-A18: any update is contact; an offline session comes back with its last (or the new) activity.
  session.lastContact = ctx.now
  session.offline = false
  agent.sessions.set(sessionId, session)
  return session
}

/** A field the update gets wrong: where it stands in the update, and why. */
interface FieldFault {
  path: FieldPath
  message: string
}

/** What an update does to the session's requests: the ones it adds, the ids it retires, what is wrong with them. */
interface RequestPlan {
  added: PendingRequest[]
  retiring: string[]
  faults: FieldFault[]
}

/** The faults of the session's own fields: the two a creation needs, openURL's scheme, pid's owner. */
function fieldFaults (exists: boolean, patch: SessionPatch, ctx: ApplyContext): FieldFault[] {
  const faults: FieldFault[] = []
  if (!exists) {
    for (const key of ['title', 'activity'] as const) {
      if (patch[key] === undefined) faults.push({ path: [key], message: `${key} is required to create a session` })
    }
  }
  if (typeof patch.openURL === 'string') {
    const problem = openUrlProblem(patch.openURL, ctx.registration)
    if (problem !== undefined) faults.push({ path: ['openURL'], message: problem })
  }
  if (typeof patch.pid === 'number' && !ctx.ownsProcess(patch.pid)) {
    faults.push({ path: ['pid'], message: `pid ${patch.pid} is not a process of the calling user` })
  }
  return faults
}

/**
 * OT-122, OT-A22: the session's requests before and after this update, checked against the registration's
 * capabilities, the one-request-per-session rule and the request-id namespace.
 */
function planRequests (
  agent: AgentState,
  sessionId: string,
  existing: Session | undefined,
  patch: SessionPatch,
  ctx: ApplyContext
): RequestPlan {
  const current = { approval: existing?.fields.approval ?? null, question: existing?.fields.question ?? null }
  const next = {
    approval: patch.approval === undefined ? current.approval : patch.approval,
    question: patch.question === undefined ? current.question : patch.question
  }
  const plan: RequestPlan = { added: [], retiring: [], faults: [] }
  for (const kind of KINDS) {
    if (patch[kind] != null && !ctx.registration.capabilities.includes(CAPABILITY[kind])) {
      plan.faults.push({ path: [kind], message: `${kind} needs the "${CAPABILITY[kind]}" capability in the registration` })
    }
  }
  if (next.approval !== null && next.question !== null) {
    const culprit: RequestKind = patch.approval != null ? 'approval' : 'question'
    plan.faults.push({
      path: [culprit],
      message: 'a session holds one pending request at most: clear the other with null in the same update'
    })
  }
  for (const kind of KINDS) planRequest(agent, kind, current[kind], next[kind], { sessionId, now: ctx.now }, plan)
  return plan
}

/** One kind of request: kept when re-sent as it is, else the new one is added and the old one retired. */
function planRequest (
  agent: AgentState,
  kind: RequestKind,
  before: ApprovalRequest | QuestionRequest | null,
  after: ApprovalRequest | QuestionRequest | null,
  at: { sessionId: string, now: number },
  plan: RequestPlan
): void {
  if (after !== null && before !== null && after.id === before.id) {
    // OT-127: an identical re-send keeps the request and its expiry; OT-A22: an id names fixed content.
    if (!isDeepStrictEqual(canonical(kind, after), canonical(kind, before))) {
      plan.faults.push({ path: [kind, 'id'], message: `${kind} ${after.id} is pending with other content` })
    }
    return
  }
  if (after !== null) {
    const clash = agent.pending.get(after.id)
    if (clash !== undefined) {
      plan.faults.push({ path: [kind, 'id'], message: `request id ${after.id} is pending as a ${clash.kind} on session ${clash.sessionId}` })
    } else if (agent.retired.has(after.id)) {
      plan.faults.push({ path: [kind, 'id'], message: `request id ${after.id} has been used under this registration` })
    }
    const expiresAt = Math.ceil((at.now + REQUEST_LIFETIME_MS) / 1000)
    plan.added.push({
      id: after.id, kind, sessionId: at.sessionId, content: after, pendingSince: at.now, expiresAt, decided: false
    })
  }
  if (before !== null) plan.retiring.push(before.id)
}

/** Limits last (OT-A02 step 11): sessions per adapter, pending requests, request ids under this lease. */
function checkLimits (agent: AgentState, creating: boolean, requests: RequestPlan, faults: Faults | undefined): void {
  const maxSessions = LIMITS.maxSessionsPerAdapter + (faults?.has('sessions-off-by-one') === true ? 1 : 0)
  if (creating && agent.sessions.size >= maxSessions) {
    throw errors.limitExceeded(`the adapter already has ${LIMITS.maxSessionsPerAdapter} sessions (offline ones count until removed)`)
  }
  if (agent.pending.size - requests.retiring.length + requests.added.length > LIMITS.maxPendingRequestsPerAdapter) {
    throw errors.limitExceeded(`the adapter already has ${LIMITS.maxPendingRequestsPerAdapter} pending requests`)
  }
  if (agent.idsSeen + requests.added.length > LIMITS.maxRequestIDs) {
    throw errors.limitExceeded(`this registration has used ${LIMITS.maxRequestIDs} request ids; register anew for more`)
  }
}

/** Retires a request id: no longer pending, never usable again under this lease (OT-126, OT-A22). */
export function retire (agent: AgentState, id: string): void {
  if (agent.pending.delete(id)) agent.retired.add(id)
}

/** Ends or removes a session: it is gone, and its pending request retires (OT-A18). */
export function endSession (agent: AgentState, sessionId: string): void {
  const session = agent.sessions.get(sessionId)
  if (session === undefined) return
  for (const kind of KINDS) {
    const request = session.fields[kind]
    if (request !== null) retire(agent, request.id)
  }
  agent.sessions.delete(sessionId)
}

/** Clears a session's request of `kind` (expiry, capability downgrade, lease end). */
export function dropRequest (agent: AgentState, request: PendingRequest): void {
  retire(agent, request.id)
  const session = agent.sessions.get(request.sessionId)
  if (session !== undefined && session.fields[request.kind]?.id === request.id) session.fields[request.kind] = null
}

// OT-107, OT-052, OT-A15: an absolute URI whose scheme (compared case-insensitively) the registration declared.
function openUrlProblem (url: string, registration: Registration): string | undefined {
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(url)?.[1]?.toLowerCase()
  if (scheme === undefined) return 'openURL must be an absolute URI'
  if (REFUSED_SCHEMES.has(scheme)) return `the scheme ${JSON.stringify(scheme)} is always refused`
  if (!registration.urlSchemes.includes(scheme)) return `the scheme ${JSON.stringify(scheme)} is not among the registration's urlSchemes`
  return undefined
}

// A request's content with the schema's defaults filled in (a question's multiSelect is false unless said), so
// that spelling out a default is still the same content.
function canonical (kind: RequestKind, request: ApprovalRequest | QuestionRequest): unknown {
  if (kind === 'approval') return request
  const question = request as QuestionRequest
  return { ...question, questions: question.questions.map((q) => ({ ...q, multiSelect: q.multiSelect ?? false })) }
}

function defaults (patch: SessionPatch): SessionFields {
  return {
    title: patch.title!,
    activity: patch.activity!,
    cwd: null,
    project: null,
    model: null,
    toolLabel: null,
    toolKind: null,
    message: null,
    statusDetail: null,
    subagentCount: 0,
    host: 'local',
    openURL: null,
    pid: null,
    background: false,
    liveText: true,
    ttlSeconds: 120,
    approval: null,
    question: null
  }
}

// OT-092: absent keeps, null clears, a value replaces. OT-102: the message text keeps its last 4096 bytes.
function merge (fields: SessionFields, patch: SessionPatch): void {
  for (const [key, value] of Object.entries(patch) as Array<[keyof SessionFields, unknown]>) {
    if (value === undefined) continue
    if (key === 'message' && value !== null) {
      const message = value as { id: string, text: string }
      fields.message = { id: message.id, text: keepLastBytes(message.text) }
    } else {
      (fields as unknown as Record<string, unknown>)[key] = value
    }
  }
}
