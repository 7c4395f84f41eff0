/**
 * Plain models of the spec for the sessions area's model-based cases, written from the ledger (OT-089..146 and the
 * proposals OT-A17..A23, OT-A30), independent of the fake's code:
 *
 * - sessions and batches: merge semantics, creation rules, one pending request per session, the request-id
 *   namespace, batch replace and its atomicity;
 * - the events cursor: sequences, the cumulative ack, `after`, invalid cursors, taps and decisions via the user.
 *
 * Commands run against any target through a CaseContext; every reply is checked against the model, and with the
 * control API the target's stored sessions and requests too.
 */
import fc from 'fast-check'
import { CaseFailure, type CaseContext } from './case.js'
import { agent, approval, question, snapshot, targetNow, type Agent } from './agent-sessions.js'
import { errorProblem, expectSchema } from './expect.js'
import type { Reply } from './transport.js'

export const SIDS = ['a', 'b', 'c'] as const
export const RIDS = ['r1', 'r2', 'r3', 'r4'] as const

type Kind = 'approval' | 'question'
const KINDS: readonly Kind[] = ['approval', 'question']

/** A request as sent: its id and its content (the same id with other content is `variant`). */
interface Req { id: string, variant: boolean }

const requestBody = (kind: Kind, r: Req): Record<string, unknown> => kind === 'approval'
  ? approval(r.id, r.variant ? { commandSummary: 'rm -rf build' } : {})
  : question(r.id, r.variant ? { questions: [{ text: 'Which remote?', options: [{ label: 'origin' }, { label: 'fork' }] }] } : {})

// ---------------------------------------------------------------------------------------------------------------
// Sessions and batches
// ---------------------------------------------------------------------------------------------------------------

/** Values per field: ones the spec accepts and ones it refuses (OT-093..111). */
const PID = process.pid
const POOL: Record<string, { ok: unknown[], bad: unknown[] }> = {
  title: { ok: ['t1', 'Fix the build', 'x'.repeat(120)], bad: ['', 'x'.repeat(121), null] },
  activity: { ok: ['idle', 'thinking', 'tool', 'done', 'offline', 'waitingPermission'], bad: ['empty', 'napping', null] },
  cwd: { ok: ['/x', '/home/me/project', null], bad: ['x'.repeat(1025), 7] },
  project: { ok: ['Proj', 'Other project', null], bad: ['   '] },
  model: { ok: ['m1', 'm2', null], bad: ['x'.repeat(65)] },
  toolLabel: { ok: ['npm test', null], bad: ['x'.repeat(81)] },
  toolKind: { ok: ['shell', 'edit', null], bad: ['x'.repeat(33)] },
  message: { ok: [{ id: 'm1', text: 'hello' }, { id: 'm2', text: '' }, null], bad: [{ id: 'm1' }, { text: 'x' }] },
  statusDetail: { ok: ['compiling', null], bad: ['x'.repeat(121)] },
  subagentCount: { ok: [0, 3, 99], bad: [100, -1, 1.5, null] },
  host: { ok: ['local', 'devbox'], bad: ['a b', 'user@host', null] },
  openURL: { ok: ['vscode://file/x', null], bad: ['https://example.com/undeclared'] },
  pid: { ok: [PID, null], bad: [0] },
  background: { ok: [true, false], bad: ['yes', null] },
  liveText: { ok: [true, false], bad: [1, null] },
  ttlSeconds: { ok: [30, 120, 3600], bad: [9, 3601, null] }
}
const FIELDS = Object.keys(POOL)
const BAD = new Map(FIELDS.map((key) => [key, new Set(POOL[key]!.bad.map((v) => JSON.stringify(v)))]))

/** OT-A17: what a new session holds before its first update is merged. */
const DEFAULTS: Record<string, unknown> = {
  cwd: null, project: null, model: null, toolLabel: null, toolKind: null, message: null, statusDetail: null,
  subagentCount: 0, host: 'local', openURL: null, pid: null, background: false, liveText: true, ttlSeconds: 120
}

/** A SessionUpdate as generated: plain fields, and the request fields as ids. */
export interface Patch {
  fields: Record<string, unknown>
  approval?: Req | null
  question?: Req | null
}

const reqArb = fc.record({ id: fc.constantFrom(...RIDS), variant: fc.boolean() }).map((r) => ({ ...r, variant: r.variant && r.id === 'r4' }))

/** Request changes: none, a clear, a new one, or one kind set with the other cleared (or not). */
const requestsArb: fc.Arbitrary<Pick<Patch, 'approval' | 'question'>> = fc.oneof(
  { arbitrary: fc.constant({}), weight: 4 },
  { arbitrary: fc.record({ approval: fc.option(reqArb, { nil: null }) }), weight: 2 },
  { arbitrary: fc.record({ question: fc.option(reqArb, { nil: null }) }), weight: 2 },
  { arbitrary: reqArb.map((r) => ({ approval: r, question: null })), weight: 1 },
  { arbitrary: reqArb.map((r) => ({ question: r, approval: null })), weight: 1 },
  { arbitrary: fc.tuple(reqArb, reqArb).map(([a, q]) => ({ approval: a, question: q })), weight: 1 }
)

const fieldsArb = (required: boolean): fc.Arbitrary<Record<string, unknown>> => {
  // A few keys per update, as an adapter sends them; each with a value the spec accepts.
  const optional = fc.subarray(FIELDS, { maxLength: 4 }).chain((keys) =>
    fc.tuple(...keys.map((key) => fc.constantFrom(...POOL[key]!.ok))).map((values) => Object.fromEntries(keys.map((key, i) => [key, values[i]]))))
  if (!required) return optional
  return fc.tuple(optional, fc.constantFrom(...POOL.title!.ok), fc.constantFrom(...POOL.activity!.ok))
    .map(([fields, title, activity]) => ({ ...fields, title, activity }))
}

/** One field set to a value the spec refuses, now and then. */
const badArb: fc.Arbitrary<Record<string, unknown>> = fc.oneof(
  { arbitrary: fc.constant({}), weight: 6 },
  { arbitrary: fc.constantFrom(...FIELDS).chain((key) => fc.constantFrom(...POOL[key]!.bad).map((v) => ({ [key]: v }))), weight: 1 }
)

export const patchArb = (required = false): fc.Arbitrary<Patch> =>
  fc.tuple(fieldsArb(required), badArb, requestsArb).map(([fields, bad, requests]) => ({ fields: { ...fields, ...bad }, ...requests }))

export function patchBody (patch: Patch): Record<string, unknown> {
  const body: Record<string, unknown> = { ...patch.fields }
  for (const kind of KINDS) {
    const r = patch[kind]
    if (r !== undefined) body[kind] = r === null ? null : requestBody(kind, r)
  }
  return body
}

const showPatch = (patch: Patch): string => JSON.stringify(patchBody(patch), (_k, v) => typeof v === 'string' && v.length > 20 ? `${v.slice(0, 3)}…(${v.length})` : v)

interface MSession { fields: Record<string, unknown>, approval: Req | null, question: Req | null }
interface MPending { kind: Kind, sessionId: string, variant: boolean }

export interface SessionsModel {
  sessions: Map<string, MSession>
  pending: Map<string, MPending>
  retired: Set<string>
}

export const emptySessionsModel = (): SessionsModel => ({ sessions: new Map(), pending: new Map(), retired: new Set() })

const cloneModel = (m: SessionsModel): SessionsModel => ({
  sessions: new Map([...m.sessions].map(([id, s]) => [id, { fields: { ...s.fields }, approval: s.approval, question: s.question }])),
  pending: new Map(m.pending),
  retired: new Set(m.retired)
})

/** Applies one update to `m` as the spec says, or answers why it is refused (and leaves `m` alone). */
export function applyPatch (m: SessionsModel, sessionId: string, patch: Patch): string | undefined {
  for (const [key, value] of Object.entries(patch.fields)) if (BAD.get(key)?.has(JSON.stringify(value)) === true) return `${key} is invalid` // OT-093..111
  const existing = m.sessions.get(sessionId)
  if (existing === undefined && (patch.fields.title === undefined || patch.fields.activity === undefined)) return 'a new session needs title and activity' // OT-091
  const current = { approval: existing?.approval ?? null, question: existing?.question ?? null }
  const next = {
    approval: patch.approval === undefined ? current.approval : patch.approval,
    question: patch.question === undefined ? current.question : patch.question
  }
  if (next.approval !== null && next.question !== null) return 'one pending request per session' // OT-122
  const added: Array<[string, MPending]> = []
  const retiring: string[] = []
  for (const kind of KINDS) {
    const before = current[kind]
    const after = next[kind]
    if (after !== null && before !== null && after.id === before.id) {
      if (after.variant !== before.variant) return `${kind} ${after.id} is pending with other content` // OT-A22
      continue // OT-127: an identical re-send
    }
    if (after !== null) {
      if (m.pending.has(after.id)) return `request id ${after.id} is pending` // OT-125
      if (m.retired.has(after.id)) return `request id ${after.id} has retired` // OT-126
      added.push([after.id, { kind, sessionId, variant: after.variant }])
    }
    if (before !== null) retiring.push(before.id) // OT-A22: a cleared or replaced id retires
  }
  for (const id of retiring) retire(m, id)
  for (const [id, r] of added) m.pending.set(id, r)
  // OT-092: an absent field keeps its value, null clears, a value replaces.
  const session: MSession = existing ?? { fields: { ...DEFAULTS }, approval: null, question: null }
  Object.assign(session.fields, patch.fields)
  session.approval = next.approval
  session.question = next.question
  m.sessions.set(sessionId, session)
  return undefined
}

function retire (m: SessionsModel, id: string): void {
  if (m.pending.delete(id)) m.retired.add(id)
}

/** OT-A18: ending a session retires its pending request. */
function endSession (m: SessionsModel, sessionId: string): void {
  const s = m.sessions.get(sessionId)
  if (s === undefined) return
  for (const kind of KINDS) if (s[kind] !== null) retire(m, s[kind]!.id)
  m.sessions.delete(sessionId)
}

/**
 * A batch (OT-114..119, OT-A19): the unlisted sessions end, every item is applied with merge semantics, all or
 * nothing. Answers the ended ids, or why it is refused (and leaves `m` alone).
 */
export function applyBatch (m: SessionsModel, items: ReadonlyArray<{ id: string, patch: Patch }>): { ended: string[] } | { refused: string } {
  const draft = cloneModel(m)
  const listed = new Set(items.map((item) => item.id))
  const ended = [...draft.sessions.keys()].filter((id) => !listed.has(id))
  for (const id of ended) endSession(draft, id)
  for (const [i, item] of items.entries()) {
    const why = applyPatch(draft, item.id, item.patch)
    if (why !== undefined) return { refused: `sessions[${i}]: ${why}` }
  }
  m.sessions = draft.sessions
  m.pending = draft.pending
  m.retired = draft.retired
  return { ended }
}

/** The target a sessions model run drives. */
export interface SessionsReal { ctx: CaseContext, a: Agent, uids: Map<string, string> }

type SessionsCommand = fc.AsyncCommand<SessionsModel, SessionsReal>

const fail = (what: string, expected: unknown, reply: Reply): never => {
  throw new CaseFailure(what, expected, `${reply.status} ${reply.text.slice(0, 400)}`)
}

// OT-A17: a session's uid is stable for its life.
function checkUid (real: SessionsReal, sessionId: string, uid: unknown, what: string): void {
  if (typeof uid !== 'string') throw new CaseFailure(`${what}: session.uid`, 'a string', uid)
  const before = real.uids.get(sessionId)
  if (before !== undefined && before !== uid) throw new CaseFailure(`${what}: the uid of a live session changed`, before, uid)
  real.uids.set(sessionId, uid)
}

class PostCommand implements SessionsCommand {
  constructor (readonly sessionId: string, readonly patch: Patch) {}
  check (): true { return true }
  async run (m: SessionsModel, real: SessionsReal): Promise<void> {
    const reply = await real.a.post(this.sessionId, patchBody(this.patch))
    const why = applyPatch(m, this.sessionId, this.patch)
    if (why !== undefined) {
      if (errorProblem(reply, 'invalid_field') !== undefined) fail(`${this}: refused by the model (${why})`, 'invalid_field', reply)
    } else {
      if (reply.status !== 200) fail(`${this}: accepted by the model`, 200, reply)
      checkUid(real, this.sessionId, reply.json?.session?.uid, this.toString())
    }
    await compareSessions(m, real, this.toString())
  }

  toString (): string { return `post(${this.sessionId}, ${showPatch(this.patch)})` }
}

class BatchCommand implements SessionsCommand {
  constructor (readonly items: ReadonlyArray<{ id: string, patch: Patch }>) {}
  check (): true { return true }
  async run (m: SessionsModel, real: SessionsReal): Promise<void> {
    const reply = await real.a.batch(this.items.map((item) => ({ id: item.id, ...patchBody(item.patch) })))
    const outcome = applyBatch(m, this.items)
    if ('refused' in outcome) {
      const problem = errorProblem(reply, 'invalid_field')
      if (problem !== undefined || !String(reply.json.error.field).startsWith('sessions[')) fail(`${this}: refused by the model (${outcome.refused})`, 'invalid_field on sessions[i]…', reply)
    } else {
      if (reply.status !== 200) fail(`${this}: accepted by the model`, 200, reply)
      // OT-A19: the reply lists the sessions in order, and the ids it ended.
      const ended = Array.isArray(reply.json?.ended) ? [...reply.json.ended].sort() : reply.json?.ended
      if (JSON.stringify(ended) !== JSON.stringify([...outcome.ended].sort())) throw new CaseFailure(`${this}: ended`, [...outcome.ended].sort(), reply.json?.ended)
      const listed = (reply.json?.sessions ?? []) as Array<{ id: string, uid: string }>
      if (JSON.stringify(listed.map((s) => s.id)) !== JSON.stringify(this.items.map((i) => i.id))) throw new CaseFailure(`${this}: sessions`, this.items.map((i) => i.id), listed)
      for (const id of outcome.ended) real.uids.delete(id)
      for (const s of listed) checkUid(real, s.id, s.uid, this.toString())
    }
    await compareSessions(m, real, this.toString())
  }

  toString (): string { return `batch([${this.items.map((i) => `${i.id}: ${showPatch(i.patch)}`).join(', ')}])` }
}

// With the control API: the stored sessions, field by field, and the pending requests are the model's.
async function compareSessions (m: SessionsModel, real: SessionsReal, what: string): Promise<void> {
  if (real.ctx.control === undefined) return
  const snap = await snapshot(real.ctx, real.a.id)
  const stored = [...(snap.sessions as any[])].sort((x, y) => x.id < y.id ? -1 : 1).map((s) => {
    const fields: Record<string, unknown> = {}
    for (const key of FIELDS) fields[key] = key === 'activity' ? s.lastActivity : s[key]
    return { id: s.id, fields, approval: s.approval?.id ?? null, question: s.question?.id ?? null }
  })
  const modelled = [...m.sessions].sort(([x], [y]) => x < y ? -1 : 1).map(([id, s]) => {
    const fields: Record<string, unknown> = {}
    for (const key of FIELDS) fields[key] = s.fields[key]
    return { id, fields, approval: s.approval?.id ?? null, question: s.question?.id ?? null }
  })
  if (JSON.stringify(stored) !== JSON.stringify(modelled)) throw new CaseFailure(`after ${what}: the stored sessions`, modelled, stored)
  const requests = (snap.requests as any[]).map((r) => `${r.id}:${r.kind}@${r.sessionId}`).sort()
  const expected = [...m.pending].map(([id, r]) => `${id}:${r.kind}@${r.sessionId}`).sort()
  if (JSON.stringify(requests) !== JSON.stringify(expected)) throw new CaseFailure(`after ${what}: the pending requests`, expected, requests)
}

const sidArb = fc.constantFrom(...SIDS)
const postArb = fc.tuple(sidArb, patchArb()).map(([sid, patch]) => new PostCommand(sid, patch))
// A heartbeat (OT-A18) is an empty update.
const heartbeatArb = sidArb.map((sid) => new PostCommand(sid, { fields: {} }))
const createArb = fc.tuple(sidArb, patchArb(true)).map(([sid, patch]) => new PostCommand(sid, patch))
const batchArb = fc.uniqueArray(sidArb, { maxLength: SIDS.length })
  .chain((ids) => fc.tuple(...ids.map(() => patchArb(true))).map((patches) => ids.map((id, i) => ({ id, patch: patches[i]! }))))
  .map((items) => new BatchCommand(items))

/** Commands weighted toward single updates (OT-092) or toward batches (OT-114). */
export function sessionsCommands (focus: 'updates' | 'batches'): Array<fc.Arbitrary<SessionsCommand>> {
  return focus === 'updates'
    ? [postArb, postArb, postArb, createArb, createArb, heartbeatArb, batchArb]
    : [batchArb, batchArb, batchArb, createArb, postArb, heartbeatArb]
}

/** Runs the sessions model: each run on a fresh adapter (a fresh lease, request-id namespace and rate bucket). */
export async function runSessionsModel (ctx: CaseContext, focus: 'updates' | 'batches'): Promise<number> {
  let runs = 0
  await fc.assert(fc.asyncProperty(fc.commands(sessionsCommands(focus), { maxCommands: 30, size: 'large' }), async (cmds) => {
    runs++
    const a = await agent(ctx, { label: focus === 'updates' ? 'merge' : 'batchm' })
    try {
      await fc.asyncModelRun(() => ({ model: emptySessionsModel(), real: { ctx, a, uids: new Map() } }), cmds)
    } finally {
      await a.unregister()
    }
  }), ctx.fc())
  return runs
}

// ---------------------------------------------------------------------------------------------------------------
// The events cursor
// ---------------------------------------------------------------------------------------------------------------

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

interface ERequest { kind: Kind, sessionId: string, decided: boolean, pendingSince: number }

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

export const emptyEventsModel = (): EventsModel => ({ sessions: new Map(), requests: new Map(), retired: new Set(), queue: [], next: 1, acknowledged: 0, highestDelivered: 0 })

export interface EventsReal { ctx: CaseContext, a: Agent }
type EventsCommand = fc.AsyncCommand<EventsModel, EventsReal>

function retireRequest (m: EventsModel, id: string | null): void {
  if (id === null) return
  if (m.requests.delete(id)) m.retired.add(id)
}

class UpsertCommand implements EventsCommand {
  constructor (readonly sessionId: string, readonly host: string | undefined) {}
  check (): true { return true }
  async run (m: EventsModel, { a }: EventsReal): Promise<void> {
    const reply = await a.post(this.sessionId, { title: 'orbtest', activity: 'thinking', ...(this.host === undefined ? {} : { host: this.host }) })
    if (reply.status !== 200) fail(this.toString(), 200, reply)
    const s = m.sessions.get(this.sessionId) ?? { host: 'local', request: null }
    if (this.host !== undefined) s.host = this.host
    m.sessions.set(this.sessionId, s)
  }

  toString (): string { return `upsert(${this.sessionId}${this.host === undefined ? '' : `, host ${this.host}`})` }
}

class HeartbeatCommand implements EventsCommand {
  constructor (readonly sessionId: string) {}
  check (): true { return true }
  async run (m: EventsModel, { a }: EventsReal): Promise<void> {
    const reply = await a.post(this.sessionId, {})
    if (m.sessions.has(this.sessionId) ? reply.status !== 200 : errorProblem(reply, 'invalid_field') !== undefined) {
      fail(this.toString(), m.sessions.has(this.sessionId) ? 200 : 'invalid_field', reply)
    }
  }

  toString (): string { return `heartbeat(${this.sessionId})` }
}

class RequestCommand implements EventsCommand {
  constructor (readonly sessionId: string, readonly kind: Kind, readonly id: string) {}
  check (): true { return true }
  async run (m: EventsModel, { ctx, a }: EventsReal): Promise<void> {
    const other: Kind = this.kind === 'approval' ? 'question' : 'approval'
    const now = await targetNow(ctx)
    const reply = await a.post(this.sessionId, { [this.kind]: requestBody(this.kind, { id: this.id, variant: false }), [other]: null })
    const s = m.sessions.get(this.sessionId)
    const current = s?.request === null || s === undefined ? undefined : m.requests.get(s.request)
    let why: string | undefined
    if (s === undefined) why = 'no such session: title and activity needed'
    else if (s.request === this.id && current?.kind === this.kind) why = undefined // an identical re-send (OT-127)
    else if (m.requests.has(this.id)) why = 'the id is pending'
    else if (m.retired.has(this.id)) why = 'the id has retired'
    if (why !== undefined) {
      if (errorProblem(reply, 'invalid_field') !== undefined) fail(`${this}: refused by the model (${why})`, 'invalid_field', reply)
      return
    }
    if (reply.status !== 200) fail(`${this}: accepted by the model`, 200, reply)
    if (s!.request === this.id && current?.kind === this.kind) return
    retireRequest(m, s!.request)
    m.requests.set(this.id, { kind: this.kind, sessionId: this.sessionId, decided: false, pendingSince: now / 1000 })
    s!.request = this.id
  }

  toString (): string { return `${this.kind}(${this.sessionId}, ${this.id})` }
}

class ClearCommand implements EventsCommand {
  constructor (readonly sessionId: string) {}
  check (): true { return true }
  async run (m: EventsModel, { a }: EventsReal): Promise<void> {
    const reply = await a.post(this.sessionId, { approval: null, question: null })
    const s = m.sessions.get(this.sessionId)
    if (s === undefined) {
      if (errorProblem(reply, 'invalid_field') !== undefined) fail(this.toString(), 'invalid_field', reply)
      return
    }
    if (reply.status !== 200) fail(this.toString(), 200, reply)
    retireRequest(m, s.request)
    s.request = null
  }

  toString (): string { return `clear(${this.sessionId})` }
}

class EventsBatchCommand implements EventsCommand {
  constructor (readonly ids: readonly string[]) {}
  check (): true { return true }
  async run (m: EventsModel, { a }: EventsReal): Promise<void> {
    const reply = await a.batch(this.ids.map((id) => ({ id, title: 'orbtest', activity: 'idle' })))
    if (reply.status !== 200) fail(this.toString(), 200, reply)
    for (const [id, s] of [...m.sessions]) {
      if (this.ids.includes(id)) continue
      retireRequest(m, s.request) // OT-A18
      m.sessions.delete(id)
    }
    for (const id of this.ids) if (!m.sessions.has(id)) m.sessions.set(id, { host: 'local', request: null })
  }

  toString (): string { return `batch([${this.ids.join(', ')}])` }
}

class TapCommand implements EventsCommand {
  constructor (readonly sessionId: string) {}
  check (): true { return true }
  async run (m: EventsModel, { ctx, a }: EventsReal): Promise<void> {
    const reply = await ctx.control!.tap(a.id, this.sessionId)
    const s = m.sessions.get(this.sessionId)
    // OT-144; OT-A30: no tap events for sessions that have ended.
    if (s === undefined) {
      if (reply.status === 200) throw new CaseFailure(`${this}: the session has ended`, 'the tap refused', reply.json)
      return
    }
    if (reply.status !== 200) throw new CaseFailure(`${this}: the user taps a live session`, 200, reply)
    m.queue.push({ sequence: m.next++, type: 'tap', sessionId: this.sessionId, host: s.host })
  }

  toString (): string { return `tap(${this.sessionId})` }
}

class DecideCommand implements EventsCommand {
  constructor (readonly id: string, readonly allow: boolean, readonly pick: number) {}
  check (): true { return true }
  async run (m: EventsModel, { ctx, a }: EventsReal): Promise<void> {
    const r = m.requests.get(this.id)
    const picks = [[this.pick]]
    const decision = this.allow ? 'allow' as const : 'deny' as const
    const reply = await ctx.control!.decide(a.id, this.id, r?.kind === 'question' ? { picks } : { decision })
    // OT-145, OT-A22: only a pending request, once.
    if (r === undefined || r.decided) {
      if (reply.status === 200) throw new CaseFailure(`${this}: ${r === undefined ? 'nothing is pending under this id' : 'it was decided already'}`, 'the decision refused', reply.json)
      return
    }
    if (reply.status !== 200) throw new CaseFailure(`${this}: the user decides a pending request`, 200, reply)
    r.decided = true
    const host = m.sessions.get(r.sessionId)!.host
    m.queue.push({
      sequence: m.next++,
      type: r.kind,
      sessionId: r.sessionId,
      host,
      requestId: this.id,
      ...(r.kind === 'approval' ? { decision } : { picks }),
      pendingSince: r.pendingSince
    })
  }

  toString (): string { return `decide(${this.id}, ${this.allow ? 'allow' : 'deny'}/pick ${this.pick})` }
}

type CursorChoice = 'highest' | 'acked' | 'zero' | 'back' | 'beyond'
type AckChoice = 'same' | 'after' | 'zero' | 'lower' | 'above'

class PollCommand implements EventsCommand {
  constructor (readonly afterChoice: CursorChoice, readonly ackChoice: AckChoice, readonly back: number) {}
  check (): true { return true }
  async run (m: EventsModel, { a }: EventsReal): Promise<void> {
    const after = {
      highest: m.highestDelivered,
      acked: m.acknowledged,
      zero: 0,
      back: Math.max(0, m.highestDelivered - this.back),
      beyond: m.highestDelivered + this.back + 1
    }[this.afterChoice]
    const ack = {
      same: m.acknowledged,
      after,
      zero: 0,
      lower: Math.max(0, m.acknowledged - this.back),
      above: after + 1
    }[this.ackChoice]
    const what = `${this} = poll {after: ${after}, ack: ${ack}}`
    const reply = await a.poll({ after, ack })
    // OT-137, OT-A23: invalid_cursor exactly when ack > after or after is beyond the highest sequence delivered.
    if (ack > after || after > m.highestDelivered) {
      if (errorProblem(reply, 'invalid_cursor') !== undefined) fail(`${what}: (highest delivered ${m.highestDelivered})`, 'invalid_cursor', reply)
      return
    }
    if (reply.status !== 200) fail(what, 200, reply)
    expectSchema(reply.json, 'EventsReply', what)
    // OT-136, OT-A23: the ack is cumulative; a lower one changes nothing.
    m.acknowledged = Math.max(m.acknowledged, ack)
    m.queue = m.queue.filter((e) => e.sequence > m.acknowledged)
    // OT-135: the unacknowledged events after max(after, acknowledged), ascending, at most 128.
    const expected = m.queue.filter((e) => e.sequence > Math.max(after, m.acknowledged)).slice(0, 128)
    const got = reply.json.events as Array<Record<string, unknown>>
    const strip = (e: Record<string, unknown>): Record<string, unknown> => Object.fromEntries(Object.entries(e).filter(([k]) => k !== 'expiresAt' && k !== 'pendingSince').sort(([x], [y]) => x < y ? -1 : 1))
    if (JSON.stringify(got.map(strip)) !== JSON.stringify(expected.map((e) => strip(e as unknown as Record<string, unknown>)))) {
      throw new CaseFailure(`${what}: the events`, expected.map((e) => strip(e as unknown as Record<string, unknown>)), got)
    }
    // OT-129, OT-143: a decision's expiresAt is 600 s after its request first became pending.
    for (const [i, e] of expected.entries()) {
      if (e.pendingSince === undefined) continue
      const expiresAt = got[i]!.expiresAt as number
      if (typeof expiresAt !== 'number' || Math.abs(expiresAt - (e.pendingSince + 600)) > 1.5) {
        throw new CaseFailure(`${what}: expiresAt of event ${e.sequence}`, `about ${Math.round(e.pendingSince + 600)} (pending since + 600 s)`, expiresAt)
      }
    }
    if (reply.json.lastSequence !== m.next - 1) throw new CaseFailure(`${what}: lastSequence`, m.next - 1, reply.json.lastSequence)
    if (reply.json.acknowledged !== m.acknowledged) throw new CaseFailure(`${what}: acknowledged`, m.acknowledged, reply.json.acknowledged)
    const last = expected.at(-1)
    if (last !== undefined) m.highestDelivered = Math.max(m.highestDelivered, last.sequence)
  }

  toString (): string { return `poll(after ${this.afterChoice}, ack ${this.ackChoice}, ${this.back})` }
}

class ReregisterCommand implements EventsCommand {
  check (): true { return true }
  async run (_m: EventsModel, { a }: EventsReal): Promise<void> {
    // OT-A23: registering again with the token keeps the lease, and the sequences go on.
    const reply = await a.reregister()
    if (reply.status !== 200) fail(this.toString(), 200, reply)
  }

  toString (): string { return 'reregister()' }
}

export function eventsCommands (): Array<fc.Arbitrary<EventsCommand>> {
  const rid = fc.constantFrom(...RIDS)
  const poll = fc.tuple(
    fc.constantFrom<CursorChoice>('highest', 'highest', 'highest', 'acked', 'zero', 'back', 'beyond'),
    fc.constantFrom<AckChoice>('same', 'after', 'after', 'after', 'zero', 'zero', 'lower', 'above'),
    fc.integer({ min: 0, max: 3 })
  ).map(([after, ack, back]) => new PollCommand(after, ack, back))
  const upsert = fc.tuple(sidArb, fc.option(fc.constantFrom('local', 'devbox', 'build-01'), { nil: undefined })).map(([sid, host]) => new UpsertCommand(sid, host))
  const request = fc.tuple(sidArb, fc.constantFrom<Kind>('approval', 'question'), rid).map(([sid, kind, id]) => new RequestCommand(sid, kind, id))
  const tap = sidArb.map((sid) => new TapCommand(sid))
  const decide = fc.tuple(rid, fc.boolean(), fc.integer({ min: 0, max: 1 })).map(([id, allow, pick]) => new DecideCommand(id, allow, pick))
  // Weighted by repetition: polls and the user's actions most, so that cursors move far within a run.
  return [
    upsert, upsert, request, request, tap, tap, tap, decide, decide, poll, poll, poll, poll, poll,
    sidArb.map((sid) => new HeartbeatCommand(sid)),
    sidArb.map((sid) => new ClearCommand(sid)),
    fc.uniqueArray(sidArb, { maxLength: SIDS.length }).map((ids) => new EventsBatchCommand(ids)),
    fc.constant(new ReregisterCommand())
  ]
}

/** Runs the events model: each run on a fresh adapter with keypad decisions on (a fresh lease: sequences from 1). */
export async function runEventsModel (ctx: CaseContext): Promise<number> {
  let runs = 0
  await fc.assert(fc.asyncProperty(fc.commands(eventsCommands(), { maxCommands: 50, size: 'large' }), async (cmds) => {
    runs++
    const a = await agent(ctx, { label: 'cursor', keypad: true })
    try {
      // Every run starts with its cursor moved: two taps delivered, then acknowledged.
      const model = emptyEventsModel()
      const real = { ctx, a }
      for (const warmUp of [new UpsertCommand('a', undefined), new TapCommand('a'), new TapCommand('a'), new PollCommand('highest', 'same', 0), new PollCommand('highest', 'after', 0)]) {
        await warmUp.run(model, real)
      }
      await fc.asyncModelRun(() => ({ model, real }), cmds)
    } finally {
      await a.unregister()
    }
  }), ctx.fc())
  return runs
}
