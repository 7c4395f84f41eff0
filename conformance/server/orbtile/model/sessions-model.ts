import fc from 'fast-check'
import { KINDS, requestBody, RIDS, type Kind, type Req } from './common.js'

// The sessions model (OT-089..119, OT-A17..A19, OT-A22): what a session holds after any sequence of updates and
// batches, and which updates the spec refuses. Its commands are sessions-commands.ts.

/** Values per field: ones the spec accepts and ones it refuses (OT-093..111). */
const PID = process.pid
const POOL: Record<string, { ok: unknown[]; bad: unknown[] }> = {
  title: { ok: ['t1', 'Fix the build', 'x'.repeat(120)], bad: ['', 'x'.repeat(121), null] },
  activity: {
    ok: ['idle', 'thinking', 'tool', 'done', 'offline', 'waitingPermission'],
    bad: ['empty', 'napping', null]
  },
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

/** The fields a model run sets (and compares with the stored sessions). */
export const FIELDS = Object.keys(POOL)
const BAD = new Map(FIELDS.map((key) => [key, new Set(POOL[key]!.bad.map((v) => JSON.stringify(v)))]))

/** OT-A17: what a new session holds before its first update is merged. */
export const DEFAULTS: Record<string, unknown> = {
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
  ttlSeconds: 120
}

/** A SessionUpdate as generated: plain fields, and the request fields as ids. */
export interface Patch {
  fields: Record<string, unknown>
  approval?: Req | null
  question?: Req | null
}

/** A request of the run: one of its ids, and now and then another content for r4. */
const reqArb = fc
  .record({ id: fc.constantFrom(...RIDS), variant: fc.boolean() })
  .map((r) => ({ ...r, variant: r.variant && r.id === 'r4' }))

/** Request changes: none, a clear, a new one, or one kind set with the other cleared (or not). */
const requestsArb: fc.Arbitrary<Pick<Patch, 'approval' | 'question'>> = fc.oneof(
  { arbitrary: fc.constant({}), weight: 4 },
  { arbitrary: fc.record({ approval: fc.option(reqArb, { nil: null }) }), weight: 2 },
  { arbitrary: fc.record({ question: fc.option(reqArb, { nil: null }) }), weight: 2 },
  { arbitrary: reqArb.map((r) => ({ approval: r, question: null })), weight: 1 },
  { arbitrary: reqArb.map((r) => ({ question: r, approval: null })), weight: 1 },
  { arbitrary: fc.tuple(reqArb, reqArb).map(([a, q]) => ({ approval: a, question: q })), weight: 1 }
)

/** A few fields per update, with values the spec accepts; with `required`, title and activity too. */
const fieldsArb = (required: boolean): fc.Arbitrary<Record<string, unknown>> => {
  // A few keys per update, as an adapter sends them; each with a value the spec accepts.
  const optional = fc
    .subarray(FIELDS, { maxLength: 4 })
    .chain((keys) =>
      fc
        .tuple(...keys.map((key) => fc.constantFrom(...POOL[key]!.ok)))
        .map((values) => Object.fromEntries(keys.map((key, i) => [key, values[i]])))
    )
  if (!required) return optional
  return fc
    .tuple(optional, fc.constantFrom(...POOL.title!.ok), fc.constantFrom(...POOL.activity!.ok))
    .map(([fields, title, activity]) => ({ ...fields, title, activity }))
}

/** One field set to a value the spec refuses, now and then. */
const badArb: fc.Arbitrary<Record<string, unknown>> = fc.oneof(
  { arbitrary: fc.constant({}), weight: 6 },
  {
    arbitrary: fc.constantFrom(...FIELDS).chain((key) => fc.constantFrom(...POOL[key]!.bad).map((v) => ({ [key]: v }))),
    weight: 1
  }
)

/** An update as generated: some fields (now and then one the spec refuses) and request changes. */
export const patchArb = (required = false): fc.Arbitrary<Patch> =>
  fc
    .tuple(fieldsArb(required), badArb, requestsArb)
    .map(([fields, bad, requests]) => ({ fields: { ...fields, ...bad }, ...requests }))

/** The SessionUpdate body of a generated update. */
export function patchBody (patch: Patch): Record<string, unknown> {
  const body: Record<string, unknown> = { ...patch.fields }
  for (const kind of KINDS) {
    const r = patch[kind]
    if (r !== undefined) body[kind] = r === null ? null : requestBody(kind, r)
  }
  return body
}

/** A JSON replacer that cuts long strings to their first 3 characters and their length. */
const shortened = (_k: string, v: unknown): unknown =>
  typeof v === 'string' && v.length > 20 ? `${v.slice(0, 3)}…(${v.length})` : v

/** An update, short enough for a command's name. */
export const showPatch = (patch: Patch): string => JSON.stringify(patchBody(patch), shortened)

interface MSession { fields: Record<string, unknown>, approval: Req | null, question: Req | null }
interface MPending { kind: Kind, sessionId: string, variant: boolean }

export interface SessionsModel {
  sessions: Map<string, MSession>
  pending: Map<string, MPending>
  retired: Set<string>
}

/** A fresh lease's model: no sessions, no request ids. */
export const emptySessionsModel = (): SessionsModel => ({ sessions: new Map(), pending: new Map(), retired: new Set() })

/** A copy of the model that a refused batch can be applied to and dropped. */
const cloneModel = (m: SessionsModel): SessionsModel => ({
  sessions: new Map(
    [...m.sessions].map(([id, s]) => [id, { fields: { ...s.fields }, approval: s.approval, question: s.question }])
  ),
  pending: new Map(m.pending),
  retired: new Set(m.retired)
})

/** Why an update's fields are refused: a value the spec refuses, or a new session without title and activity. */
function fieldsRefusal (patch: Patch, existing: MSession | undefined): string | undefined {
  for (const [key, value] of Object.entries(patch.fields)) {
    if (BAD.get(key)?.has(JSON.stringify(value)) === true) return `${key} is invalid`
  } // OT-093..111
  if (existing === undefined && (patch.fields.title === undefined || patch.fields.activity === undefined)) {
    return 'a new session needs title and activity'
  } // OT-091
  return undefined
}

/** A session's pending approval and question. */
type Requests = Record<Kind, Req | null>

/**
 * The request ids an update adds and retires, going from `current` to `next`; or why it is refused (an id pending
 * elsewhere or retired, or a re-sent id with other content).
 */
function requestChanges (
  m: SessionsModel,
  sessionId: string,
  current: Requests,
  next: Requests
): { added: Array<[string, MPending]>, retiring: string[] } | { refused: string } {
  const added: Array<[string, MPending]> = []
  const retiring: string[] = []
  for (const kind of KINDS) {
    const before = current[kind]
    const after = next[kind]
    if (after !== null && before !== null && after.id === before.id) {
      // OT-A22: a pending id re-sent with other content; OT-127: an identical re-send changes nothing.
      if (after.variant !== before.variant) return { refused: `${kind} ${after.id} is pending with other content` }
      continue
    }
    if (after !== null) {
      if (m.pending.has(after.id)) return { refused: `request id ${after.id} is pending` } // OT-125
      if (m.retired.has(after.id)) return { refused: `request id ${after.id} has retired` } // OT-126
      added.push([after.id, { kind, sessionId, variant: after.variant }])
    }
    if (before !== null) retiring.push(before.id) // OT-A22: a cleared or replaced id retires
  }
  return { added, retiring }
}

/** Applies one update to `m` as the spec says, or answers why it is refused (and leaves `m` alone). */
export function applyPatch (m: SessionsModel, sessionId: string, patch: Patch): string | undefined {
  const existing = m.sessions.get(sessionId)
  const refused = fieldsRefusal(patch, existing)
  if (refused !== undefined) return refused
  const current: Requests = { approval: existing?.approval ?? null, question: existing?.question ?? null }
  const next: Requests = {
    approval: patch.approval === undefined ? current.approval : patch.approval,
    question: patch.question === undefined ? current.question : patch.question
  }
  if (next.approval !== null && next.question !== null) return 'one pending request per session' // OT-122
  const changes = requestChanges(m, sessionId, current, next)
  if ('refused' in changes) return changes.refused
  for (const id of changes.retiring) retire(m, id)
  for (const [id, r] of changes.added) m.pending.set(id, r)
  // OT-092: an absent field keeps its value, null clears, a value replaces.
  const session: MSession = existing ?? { fields: { ...DEFAULTS }, approval: null, question: null }
  Object.assign(session.fields, patch.fields)
  session.approval = next.approval
  session.question = next.question
  m.sessions.set(sessionId, session)
  return undefined
}

/** Retires a pending request id (OT-A22): it can never be used again. */
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
export function applyBatch (
  m: SessionsModel,
  items: ReadonlyArray<{ id: string; patch: Patch }>
): { ended: string[] } | { refused: string } {
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
