import { Tally } from '../../client/check.js'
import type { JournalEntry, JournalExchange } from '../../client/journal.js'
import type { ValidateFunction } from 'ajv/dist/2020.js'
import { createAjv } from '../../../src/shared/ajv.js'
import { def, spec } from '../../../src/spec/orbtile.js'
import { carriesRequest, isObject, updates, view, type ExchangeView, type OrbtileModel } from '../model.js'
import { check, type OrbtileCheckDef } from './wire.js'

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

/** A registration's palette, when the request is a registration with one. */
function palette (v: ExchangeView): Record<string, unknown> | undefined {
  return v.route === 'register' && isObject(v.body) && isObject(v.body.palette) ? v.body.palette : undefined
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

/** Where a request id was used in a registration's namespace (OT-125, OT-128), and whether it has retired. */
interface IdUse { sessionId: string, kind: string, content: string, retired: boolean, seq: number }
type IdNow = Omit<IdUse, 'retired' | 'seq'>

/** Tracks request ids per lease as the accepted updates leave them; both request-id checks share it. */
const KINDS = ['approval', 'question'] as const

abstract class RequestIds extends Tally<OrbtileModel> {
  readonly #ids = new Map<string, Map<string, IdUse>>()
  readonly #token = new Map<string, string>()

  observe (entry: JournalEntry, model: OrbtileModel): void {
    if (entry.kind !== 'exchange') return
    const v = view(entry)
    const id = v.adapterId
    // Most requests (heartbeats, activity) carry no request id, and only a batch retires any: nothing to do. The
    // namespace is renewed for a new lease below, when the next request id is seen: nothing is read from it before.
    if (id === undefined || (v.route !== 'batch' && !carriesRequest(v))) return
    const lease = model.leases.get(id)
    // A new lease is a new registration: a new namespace (OT-A22).
    if (lease !== undefined && this.#token.get(id) !== lease.token) {
      this.#token.set(id, lease.token)
      this.#ids.set(id, new Map())
    }
    let ids = this.#ids.get(id)
    if (ids === undefined) {
      ids = new Map<string, IdUse>()
      this.#ids.set(id, ids)
    }
    const listed = updates(v)
    if (v.ok && v.route === 'batch') {
      // OT-114, OT-A18: the sessions a batch leaves out end, and their requests retire.
      const kept = new Set(listed.map((u) => u.sessionId))
      for (const use of ids.values()) if (!kept.has(use.sessionId)) use.retired = true
    }
    for (const { sessionId, body, path } of listed) {
      // Most updates (heartbeats, activity) carry neither.
      if (!('approval' in body) && !('question' in body)) continue
      for (const kind of KINDS) {
        if (!(kind in body)) continue
        const sent = body[kind]
        const sentId = isObject(sent) && typeof sent.id === 'string' ? sent.id : undefined
        if (sentId !== undefined) {
          this.applied()
          const use = ids.get(sentId)
          const now = { sessionId, kind, content: canonical(kind, sent as Record<string, unknown>) }
          if (use !== undefined) this.judge(entry, `${path}${kind}.id`, sentId, use, now)
          if (v.ok && use === undefined) ids.set(sentId, { ...now, retired: false, seq: entry.seq })
        }
        // Cleared or replaced: the old id retires (OT-A22).
        if (!v.ok) continue
        for (const [rid, use] of ids) {
          if (use.sessionId === sessionId && use.kind === kind && sentId !== rid) use.retired = true
        }
      }
    }
  }

  abstract judge (e: JournalExchange, field: string, rid: string, use: IdUse, now: IdNow): void
}

export const REQUEST_CHECKS: readonly OrbtileCheckDef[] = [
  check({
    id: 'OTC-06',
    title: "every request body matches its route's schema in the spec (unknown fields aside: OT-007)",
    level: 'required',
    exercise: 'a registration, a session update, a batch or an events poll'
  }, (info) => new class extends Tally<OrbtileModel> {
    /** The last body text of each schema that matched it: an adapter sends the same heartbeat over and over. */
    readonly #matched = new Map<string, string>()
    observe (entry: JournalEntry): void {
      if (entry.kind !== 'exchange') return
      const v = view(entry)
      const schema = BODY_SCHEMA[v.route]
      if (schema === undefined || !v.bodyRead) return
      this.applied()
      if (entry.body !== undefined && this.#matched.get(schema) === entry.body) return
      const validate = bodyValidator(schema)
      if (v.body !== undefined && validate(v.body)) {
        if (entry.body !== undefined) this.#matched.set(schema, entry.body)
        return
      }
      const first = validate.errors?.[0]
      this.violate({
        seq: entry.seq,
        at: entry.at,
        message: `${entry.method} ${entry.target}: the body does not match $defs/${schema}`,
        expected: first === undefined
          ? `a JSON object matching $defs/${schema}`
          : `${first.instancePath === '' ? '(the body)' : first.instancePath} ${first.message ?? ''}`,
        actual: v.body === undefined ? 'no JSON body' : JSON.stringify(first?.data ?? v.body).slice(0, 200)
      })
    }
  }(info)),

  check({
    id: 'OT-125',
    title: 'a request id pending on one session, or as one kind, is never sent on another or as the other',
    level: 'required',
    exercise: 'approvals or questions on two sessions',
    routes: ['session', 'batch'],
    requestsOnly: true
  }, (info) => new class extends RequestIds {
    judge (e: JournalExchange, field: string, rid: string, use: IdUse, now: IdNow): void {
      if (use.retired || (use.sessionId === now.sessionId && use.kind === now.kind)) return
      this.violate({
        seq: e.seq,
        at: e.at,
        message: `${field} ${rid} is pending as ${use.kind} on session ${use.sessionId}`,
        expected: 'a request id not pending elsewhere (one namespace across sessions and kinds)',
        actual: `${now.kind} ${rid} on session ${now.sessionId}`
      })
    }
  }(info)),

  check({
    id: 'OT-128',
    title: 'the adapter never reuses a request id within a registration, not after it retires either',
    level: 'required',
    exercise: 'approvals or questions',
    routes: ['session', 'batch'],
    requestsOnly: true
  }, (info) => new class extends RequestIds {
    judge (e: JournalExchange, field: string, rid: string, use: IdUse, now: IdNow): void {
      const same = use.sessionId === now.sessionId && use.kind === now.kind
      // OT-127: sending the same pending request again is allowed; a pending id elsewhere is OT-125's.
      if (!use.retired && (!same || use.content === now.content)) return
      this.violate({
        seq: e.seq,
        at: e.at,
        message: `${field} ${rid} was used before (entry #${use.seq})${use.retired ? ' and has retired' : ' with other content'}`,
        expected: 'a fresh request id',
        actual: `${rid} again`
      })
    }
  }(info)),

  check({
    id: 'OT-064',
    title: 'an adapter that sent an icon sends it again with every re-registration',
    level: 'required',
    exercise: 'a registration with an icon, then another (the adapter re-registers, or the app restarts)',
    routes: ['register']
  }, (info) => new class extends Tally<OrbtileModel> {
    readonly #iconed = new Set<string>()
    observe (entry: JournalEntry): void {
      if (entry.kind !== 'exchange') return
      const v = view(entry)
      if (v.route !== 'register' || !isObject(v.body)) return
      const hasIcon = isObject(v.body.icon)
      if (this.#iconed.has(v.adapterId!)) {
        this.applied()
        if (!hasIcon) {
          this.violate({
            seq: entry.seq,
            at: entry.at,
            message: `${v.adapterId} registered again without the icon it sent before (OT-063 clears it)`,
            expected: 'icon again',
            actual: 'icon' in v.body ? `icon: ${JSON.stringify(v.body.icon)}` : 'no icon'
          })
        }
      }
      if (hasIcon && v.ok) this.#iconed.add(v.adapterId!)
    }
  }(info)),

  check({
    id: 'OT-074',
    title: 'baseHue avoids 205..215, where the waiting colour turns',
    level: 'should',
    exercise: 'a registration',
    routes: ['register']
  }, (info) => new class extends Tally<OrbtileModel> {
    observe (entry: JournalEntry): void {
      if (entry.kind !== 'exchange') return
      const hue = palette(view(entry))?.baseHue
      if (typeof hue !== 'number') return
      this.applied()
      if (hue < 205 || hue > 215) return
      this.violate({
        seq: entry.seq, at: entry.at, message: `baseHue ${hue}`, expected: 'outside 205..215', actual: String(hue)
      })
    }
  }(info)),

  check({
    id: 'OT-081',
    title: 'an attentionHue is set only for a calm derived colour, in the alarm arc, clear of the built-in colours',
    level: 'should',
    exercise: 'a registration with palette.attentionHue',
    routes: ['register']
  }, (info) => new class extends Tally<OrbtileModel> {
    observe (entry: JournalEntry): void {
      if (entry.kind !== 'exchange') return
      const v = view(entry)
      const p = palette(v)
      const hue = p?.attentionHue
      if (typeof hue !== 'number') return
      this.applied()
      const resolved = isObject(v.reply) && isObject(v.reply.adapter) ? v.reply.adapter.resolvedBaseHue : undefined
      const base = typeof resolved === 'number' ? resolved : p!.baseHue
      const at = { seq: entry.seq, at: entry.at, actual: `attentionHue ${hue}` }
      if (typeof base === 'number' && (base < 115 || base > 235)) {
        this.violate({
          ...at,
          message: `attentionHue set for baseHue ${base}, whose derived waiting colour is not calm`,
          expected: 'no attentionHue outside the calm arc (115..235)'
        })
      }
      if (hue > 76 && hue < 280) {
        this.violate({
          ...at, message: `attentionHue ${hue} is outside the alarm arc`, expected: 'a hue in 280 → 0 → 76'
        })
      }
      const near = [43, 306, 355].find((c) => Math.min(Math.abs(hue - c), 360 - Math.abs(hue - c)) < 5)
      if (near !== undefined) {
        this.violate({
          ...at,
          message: `attentionHue ${hue} sits on a built-in waiting colour (${near})`,
          expected: 'clear of 43, 306 and 355 (the gaps: 72..75, 330, 16..18)'
        })
      }
    }
  }(info)),

  check({
    id: 'OT-A10',
    title: 'no unknown keys inside the closed objects (palette, glyph, message)',
    level: 'decision',
    exercise: 'a registration'
  }, (info) => new class extends Tally<OrbtileModel> {
    observe (entry: JournalEntry): void {
      if (entry.kind !== 'exchange') return
      const v = view(entry)
      if (v.route === 'register' && isObject(v.body)) {
        this.#closed(entry, 'palette', v.body.palette, 'Palette')
        this.#closed(entry, 'glyph', v.body.glyph, 'Glyph')
      }
      for (const u of updates(v)) {
        if (u.body.message !== undefined) this.#closed(entry, `${u.path}message`, u.body.message, 'Message')
      }
    }

    #closed (entry: JournalExchange, field: string, value: unknown, name: string): void {
      if (!isObject(value)) return
      this.applied()
      const known = Object.keys(def(name).properties as object)
      const unknown = Object.keys(value).filter((k) => !known.includes(k))
      if (unknown.length === 0) return
      this.violate({
        seq: entry.seq,
        at: entry.at,
        message: `${field} has keys the spec does not define`,
        expected: `only ${known.join(', ')}`,
        actual: unknown.join(', ')
      })
    }
  }(info)),

  check({
    id: 'OT-A28',
    title: 'icon and palette.states are sent only to an app whose GET /info says apiMinor 2 or more',
    level: 'decision',
    exercise: 'an older app (tour:older-app, where GET /info says apiMinor 1)',
    routes: ['info', 'register']
  }, (info) => new class extends Tally<OrbtileModel> {
    #minor: number | undefined
    observe (entry: JournalEntry): void {
      if (entry.kind !== 'exchange') return
      const v = view(entry)
      if (v.route === 'info' && v.ok && isObject(v.reply) && typeof v.reply.apiMinor === 'number') {
        this.#minor = v.reply.apiMinor
      }
      if (v.route !== 'register' || !isObject(v.body) || this.#minor === undefined || this.#minor >= 2) return
      this.applied()
      const sent = [
        ...(isObject(v.body.icon) ? ['icon'] : []),
        ...(palette(v)?.states !== undefined ? ['palette.states'] : [])
      ]
      if (sent.length === 0) return
      this.violate({
        seq: entry.seq,
        at: entry.at,
        message: `v1.2 fields sent to an app that says apiMinor ${this.#minor}`,
        expected: 'v1.1 fields only',
        actual: sent.join(', ')
      })
    }
  }(info)),

  check({
    id: 'OT-010',
    title: 'the optional features the adapter uses (none is required)',
    level: 'info',
    exercise: 'a registration'
  }, (info) => new class extends Tally<OrbtileModel> {
    readonly #used = new Set<string>()
    #noted = -1
    observe (entry: JournalEntry): void {
      if (entry.kind !== 'exchange') return
      const v = view(entry)
      if (v.route === 'register' && isObject(v.body)) {
        this.applied()
        if (Array.isArray(v.body.capabilities)) {
          for (const c of v.body.capabilities) this.#used.add(`capability ${String(c)} (v1.1)`)
        }
        if (isObject(v.body.icon)) this.#used.add('icon (v1.2)')
        if (palette(v)?.states !== undefined) this.#used.add('palette.states (v1.2)')
      }
      for (const u of updates(v)) if (u.body.project !== undefined) this.#used.add('project (Orbtile 0.2.17+)')
      if (this.#used.size === this.#noted) return
      this.#noted = this.#used.size
      this.note = this.#used.size === 0 ? 'v1.0 features only' : [...this.#used].sort().join('; ')
    }
  }(info))
]
