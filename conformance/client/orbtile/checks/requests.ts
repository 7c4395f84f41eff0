import type { Outcomes } from '../../core/check.js'
import type { JournalExchange } from '../../core/journal.js'
import type { ValidateFunction } from 'ajv/dist/2020.js'
import { createAjv } from '../../../../src/shared/ajv.js'
import { spec } from '../../../../src/spec/orbtile.js'
import { carriesRequest, isObject, updates, view, type ExchangeView, type OrbtileModel, type Update } from '../model.js'
import { at, type OrbtileCheck } from './define.js'

/** The body schema of each route, from the spec's `$defs` (OT-006). */
const BODY_SCHEMA: Partial<Record<ExchangeView['route'], string>> = {
  register: 'AdapterRegistration',
  session: 'SessionUpdate',
  batch: 'SessionBatch',
  events: 'EventsPoll'
}

/** The spec document with every `additionalProperties: false` taken out: unknown keys are OT-007's and OT-A10's. */
function open (node: unknown): unknown {
  if (Array.isArray(node)) return node.map(open)
  if (!isObject(node)) return node
  return Object.fromEntries(Object.entries(node).filter(([k, v]) => !(k === 'additionalProperties' && v === false))
    .map(([k, v]) => [k, open(v)]))
}

// A memo of validators of a fixed document: pure results, shared safely by every run in the process.
const validators = new Map<string, ValidateFunction>()
/** A validator of `$defs/<name>` of the opened document, compiled on first use. */
function bodyValidator (name: string): ValidateFunction {
  let validate = validators.get(name)
  if (validate === undefined) {
    // An ajv instance of its own, so the opened document may keep the spec's $id.
    const document = open(spec) as Record<string, unknown>
    const ajv = createAjv({ allErrors: false, verbose: true }).addSchema(document)
    validate = ajv.compile({ $ref: `${String(document.$id)}#/$defs/${name}` })
    validators.set(name, validate)
  }
  return validate
}

/**
 * A request's content as the rule compares it (OT-127: "the same content"): keys in any order, and a question's
 * `multiSelect` with its default filled in, as the spec's defaults say.
 */
export function canonical (kind: 'approval' | 'question', request: Record<string, unknown>): string {
  const filled = kind === 'question' && Array.isArray(request.questions)
    ? { ...request, questions: request.questions.map((q) => isObject(q) ? { multiSelect: false, ...q } : q) }
    : request
  const sorted = (value: unknown): unknown => Array.isArray(value)
    ? value.map(sorted)
    : isObject(value)
      ? Object.fromEntries(Object.keys(value).sort().map((k) => [k, sorted(value[k])]))
      : value
  return JSON.stringify(sorted(filled))
}

/** Where a request id was used in a registration's namespace (OT-125, OT-128), and whether and how it retired. */
interface IdUse {
  sessionId: string
  kind: string
  content: string
  /** `cleared`: set to null or replaced (OT-126); `ended`: its session ended (OT-A22). */
  retired?: 'cleared' | 'ended'
  seq: number
}
type IdNow = Pick<IdUse, 'sessionId' | 'kind' | 'content'>

const KINDS = ['approval', 'question'] as const

/** What a request-id check says of an id used again: `use` is its earlier use, `now` this one. */
type IdJudge = (e: JournalExchange, field: string, rid: string, use: IdUse, now: IdNow, out: Outcomes) => void

/** Request ids per lease as the accepted updates leave them; both request-id checks read them. */
function requestIdsJudge (fresh: string, judge: IdJudge): ReturnType<OrbtileCheck['judge']> {
  const ids = new Map<string, Map<string, IdUse>>()
  const tokens = new Map<string, string>()
  const namespace = (id: string, model: OrbtileModel): Map<string, IdUse> => {
    const lease = model.leases.get(id)
    // A new lease is a new registration: a new namespace (OT-A22).
    if (lease !== undefined && tokens.get(id) !== lease.token) {
      tokens.set(id, lease.token)
      ids.set(id, new Map())
    }
    let space = ids.get(id)
    if (space === undefined) {
      space = new Map()
      ids.set(id, space)
    }
    return space
  }
  return {
    observe (entry, model, out) {
      if (entry.kind !== 'exchange') return
      const v = view(entry)
      const id = v.adapterId
      // Most requests (heartbeats, activity) carry no request id, and only a batch ends sessions.
      if (id === undefined || (v.route !== 'batch' && !carriesRequest(v))) return
      const space = namespace(id, model)
      const listed = updates(v)
      if (v.ok && v.route === 'batch') {
        // OT-114, OT-A18: the sessions a batch leaves out end, and their requests retire.
        const kept = new Set(listed.map((u) => u.sessionId))
        for (const use of space.values()) if (!kept.has(use.sessionId)) use.retired ??= 'ended'
      }
      for (const update of listed) {
        for (const kind of KINDS) {
          if (kind in update.body) useField({ entry, ok: v.ok, space, update, kind }, fresh, judge, out)
        }
      }
    }
  }
}

/** One request field (`approval` or `question`) an update carries, in its registration's namespace of ids. */
interface FieldWrite {
  entry: JournalExchange
  /** The app accepted the request. */
  ok: boolean
  space: Map<string, IdUse>
  update: Update
  kind: typeof KINDS[number]
}

/** A request field's id judged against its earlier use, then noted; the ids it clears or replaces retire. */
function useField (w: FieldWrite, fresh: string, judge: IdJudge, out: Outcomes): void {
  const { entry, space, update: { sessionId, body, path }, kind } = w
  const sent = body[kind]
  const sentId = isObject(sent) && typeof sent.id === 'string' ? sent.id : undefined
  if (sentId !== undefined) {
    const use = space.get(sentId)
    const now = { sessionId, kind, content: canonical(kind, sent as Record<string, unknown>) }
    // A new id is the rule's situation too, and it held.
    if (use === undefined) out.exercised(fresh)
    else judge(entry, `${path}${kind}.id`, sentId, use, now, out)
    if (w.ok && use === undefined) space.set(sentId, { ...now, seq: entry.seq })
  }
  if (!w.ok) return
  // Cleared or replaced: the old id retires (OT-126).
  for (const [rid, use] of space) {
    if (use.sessionId === sessionId && use.kind === kind && sentId !== rid) use.retired ??= 'cleared'
  }
}

const OTC_06: OrbtileCheck = {
  id: 'OTC-06',
  title: "every request body matches its route's schema in the spec (unknown fields aside: OT-007)",
  level: 'MUST',
  ledger: "The spec's schemas are the request bodies: AdapterRegistration, SessionUpdate, SessionBatch and EventsPoll. (Unknown fields are the server's to ignore, OT-007.)",
  clauses: [
    {
      key: 'schema',
      text: "the body matches its route's schema",
      level: 'MUST',
      exercise: 'a registration, a session update, a batch or an events poll'
    }
  ],
  windows: [],
  reads: {},
  judge: () => {
    /** The last body text of each schema that matched it: an adapter sends the same heartbeat over and over. */
    const matched = new Map<string, string>()
    return {
      observe (entry, _model, out) {
        if (entry.kind !== 'exchange') return
        const v = view(entry)
        const schema = BODY_SCHEMA[v.route]
        if (schema === undefined || !v.bodyRead) return
        if (entry.body !== undefined && matched.get(schema) === entry.body) {
          out.exercised('schema')
          return
        }
        const validate = bodyValidator(schema)
        if (v.body !== undefined && validate(v.body)) {
          if (entry.body !== undefined) matched.set(schema, entry.body)
          out.exercised('schema')
          return
        }
        const first = validate.errors?.[0]
        out.violation('schema', at(entry, {
          message: `the body does not match $defs/${schema}`,
          expected: first === undefined
            ? `a JSON object matching $defs/${schema}`
            : `${first.instancePath === '' ? '(the body)' : first.instancePath} ${first.message ?? ''}`,
          actual: v.body === undefined ? 'no JSON body' : JSON.stringify(first?.data ?? v.body).slice(0, 200)
        }))
      }
    }
  }
}

const OT_125: OrbtileCheck = {
  id: 'OT-125',
  title: 'a request id pending on one session, or as one kind, is never sent on another or as the other',
  level: 'MUST',
  ledger: 'Request ids are fresh within the registration and share one namespace across sessions and request kinds. An id that is pending on another session, or pending as the other kind, is refused.',
  clauses: [
    { key: 'elsewhere', text: 'no request id pending on another session or as the other kind', level: 'MUST', exercise: 'approvals or questions' }
  ],
  windows: [],
  reads: {},
  judge: () => requestIdsJudge('elsewhere', (e, field, rid, use, now, out) => {
    if (use.retired !== undefined || (use.sessionId === now.sessionId && use.kind === now.kind)) {
      out.exercised('elsewhere')
      return
    }
    out.violation('elsewhere', {
      seq: e.seq,
      at: e.at,
      message: `${field} ${rid} is pending as ${use.kind} on session ${use.sessionId}`,
      expected: 'a request id not pending elsewhere (one namespace across sessions and kinds)',
      actual: `${now.kind} ${rid} on session ${now.sessionId}`
    })
  })
}

const OT_128: OrbtileCheck = {
  id: 'OT-128',
  title: 'the adapter never reuses a request id within a registration, not after it retires either',
  level: 'MUST',
  ledger: 'The adapter never reuses a request id within a registration: not across sessions, not across kinds, not after the id retires.',
  clauses: [{
    key: 'reuse',
    text: 'a request id is never sent again within the registration, but as the same pending request (OT-127)',
    level: 'MUST',
    exercise: 'approvals or questions'
  }],
  windows: [],
  reads: {},
  judge: () => requestIdsJudge('reuse', (e, field, rid, use, now, out) => {
    const same = use.sessionId === now.sessionId && use.kind === now.kind
    // OT-127: the same pending request again is allowed; a pending id elsewhere is OT-125's.
    if (use.retired === undefined && (!same || use.content === now.content)) {
      out.exercised('reuse')
      return
    }
    // Retired by a clear or a replacement (OT-126), by its session's end (OT-A22's server rule), or sent with other
    // content: within one registration, a reuse all the same.
    out.violation('reuse', {
      seq: e.seq,
      at: e.at,
      message: `${field} ${rid} was used before (entry #${use.seq})${use.retired === undefined ? ' with other content' : use.retired === 'ended' ? ' on a session that has ended' : ' and has retired'}`,
      expected: 'a fresh request id',
      actual: `${rid} again`
    })
  })
}

export const REQUEST_CHECKS: readonly OrbtileCheck[] = [OTC_06, OT_125, OT_128]
