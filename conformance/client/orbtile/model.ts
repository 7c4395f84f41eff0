import type { JournalAction, JournalEntry, JournalExchange, Millis } from '../core/journal.js'
import { BASE_PATH } from '../../../src/spec/orbtile.js'
import { Serving } from '../core/served.js'
import { Measured, type Measure } from '../core/measured.js'

/** Which protocol route an exchange was, read from its target. */
export const ROUTE_KINDS = ['info', 'register', 'unregister', 'session', 'batch', 'events', 'other'] as const
export type RouteKind = typeof ROUTE_KINDS[number]

/** One exchange as the checks read it: its route and ids, the parsed bodies, the error code of a refusal. */
export interface ExchangeView {
  route: RouteKind
  adapterId?: string
  sessionId?: string
  /** The parsed request body; undefined when there was none or it is not JSON. */
  body: unknown
  /** False when the request had a body the app never read (refused on its head: a 429, a 401, a 503). */
  bodyRead: boolean
  /** The parsed reply body. */
  reply: unknown
  ok: boolean
  /** The `error.code` and `error.field` of a refusal. */
  code?: string
  field?: string
  /** The wire answered in the app's stead (a 429 the app did not decide). */
  byWire: boolean
  /** The token of an `Authorization: Bearer <token>` header; undefined for none or another form. */
  readonly bearer: string | undefined
}

/** A request pending on a session, as the adapter's accepted updates left it. */
export interface PendingRequest {
  kind: 'approval' | 'question'
  id: string
  sessionId: string
  /** The request's content (`questions` of a question), as sent. */
  content: Record<string, unknown>
  since: Millis
}

/** One adapter id's lease as the adapter can know it: from the registration replies it received. */
export interface LeaseView {
  token: string
  /** When the reply that gave the token ended, and on which connection. */
  since: Millis
  connection: number
  /** Whether the app has ended it since (restart, new token, silence); the adapter learns that on its next request. */
  ended: boolean
}

// The view rides on the entry (a WeakMap per exchange would cost every young-generation collection an ephemeron walk).
const VIEW = Symbol('orbtest.view')
type Viewed = JournalExchange & { [VIEW]?: ExchangeView }

/**
 * One exchange parsed for the checks. The reply is parsed when a check first reads it (a busy `--judge` run is
 * mostly session updates, whose replies no check reads); a refusal's is parsed at once for its code and field.
 */
class View implements ExchangeView {
  readonly route: RouteKind
  readonly adapterId: string | undefined
  readonly sessionId: string | undefined
  readonly body: unknown
  readonly bodyRead: boolean
  readonly ok: boolean
  readonly code: string | undefined
  readonly field: string | undefined
  readonly byWire: boolean
  #text: string
  #reply: unknown
  #parsed = false
  #authorization: string | undefined
  #bearer: string | undefined | null = null
  #updates: readonly Update[] | undefined
  #carries: boolean | undefined

  constructor (entry: JournalExchange, parsedBody: unknown) {
    const route = routeOf(entry.method, entry.target)
    this.route = route.route
    this.adapterId = route.adapterId
    this.sessionId = route.sessionId
    this.body = parsedBody !== undefined ? parsedBody : entry.body === undefined ? undefined : parseJson(entry.body)
    this.bodyRead = entry.body !== undefined || entry.bodyBytes === 0
    this.ok = entry.status >= 200 && entry.status < 300
    this.#text = entry.reply
    const error = this.ok ? undefined : this.reply
    const fields = isObject(error) && isObject(error.error) ? error.error : undefined
    this.code = typeof fields?.code === 'string' ? fields.code : undefined
    this.field = typeof fields?.field === 'string' ? fields.field : undefined
    this.byWire = entry.wire !== undefined && entry.wire.some((w) => w.startsWith('429'))
    this.#authorization = entry.headers.authorization
  }

  get bearer (): string | undefined {
    if (this.#bearer === null) {
      // `Bearer <token>`, the token at least one character (a header value holds no line break).
      const auth = this.#authorization
      this.#bearer = auth !== undefined && auth.length > 7 && auth.startsWith('Bearer ') ? auth.slice(7) : undefined
    }
    return this.#bearer
  }

  /** Every update the request makes to a session (several checks read them: listed once). */
  get updates (): readonly Update[] {
    this.#updates ??= listUpdates(this)
    return this.#updates
  }

  /** Whether any of them sets or clears an approval or a question. */
  get carriesRequest (): boolean {
    this.#carries ??= this.updates.some((u) => 'approval' in u.body || 'question' in u.body)
    return this.#carries
  }

  get reply (): unknown {
    if (!this.#parsed) {
      this.#reply = parseJson(this.#text)
      this.#parsed = true
    }
    return this.#reply
  }
}

/** Parses an exchange once; every check reads the same view. */
export function view (entry: JournalExchange): ExchangeView {
  return (entry as Viewed)[VIEW] ?? primeView(entry, undefined)
}

/**
 * Makes an exchange's view, with the request body as the fake parsed it when the tap has it (the same JSON text,
 * parsed once). Called by the observer as it journals the exchange.
 */
export function primeView (entry: JournalExchange, parsedBody: unknown): ExchangeView {
  const v = new View(entry, parsedBody)
  ;(entry as Viewed)[VIEW] = v
  return v
}

/** One update a request makes to a session: the route's body, or an item of a batch (`path` is its place). */
export interface Update { sessionId: string, body: Record<string, unknown>, path: string }

const NONE: readonly Update[] = Object.freeze([])

/** Every update a request makes to a session: the route's body, or each item of a batch. Read only. */
export function updates (v: ExchangeView): readonly Update[] {
  return (v as View).updates
}

/** Whether any update of a request sets or clears an approval or a question. */
export function carriesRequest (v: ExchangeView): boolean {
  return (v as View).carriesRequest
}

function listUpdates (v: ExchangeView): readonly Update[] {
  if (v.route === 'session' && isObject(v.body)) return [{ sessionId: v.sessionId!, body: v.body, path: '' }]
  if (v.route !== 'batch' || !isObject(v.body) || !Array.isArray(v.body.sessions)) return NONE
  return v.body.sessions.flatMap((item, i) => isObject(item) && typeof item.id === 'string'
    ? [{ sessionId: item.id, body: item, path: `sessions[${i}].` }]
    : [])
}

/** Routes as routeOf last found them, by target then method: a client sends the same few targets over and over. */
const ROUTES = new Map<string, Map<string, Pick<ExchangeView, 'route' | 'adapterId' | 'sessionId'>>>()
const ROUTES_KEPT = 1024

/** The route an exchange was for, by method and path under basePath. */
export function routeOf (method: string, target: string): Pick<ExchangeView, 'route' | 'adapterId' | 'sessionId'> {
  // The same target as the last one (a heartbeat after a heartbeat): compared, not hashed again.
  if (target === last.target && method === last.method) return last.found
  let methods = ROUTES.get(target)
  if (methods === undefined) {
    if (ROUTES.size >= ROUTES_KEPT) ROUTES.clear()
    methods = new Map()
    ROUTES.set(target, methods)
  }
  let found = methods.get(method)
  if (found === undefined) {
    found = findRoute(method, target)
    methods.set(method, found)
  }
  last = { method, target, found }
  return found
}

let last: { method: string, target: string, found: Pick<ExchangeView, 'route' | 'adapterId' | 'sessionId'> } =
  { method: '', target: '', found: { route: 'other' } }

function findRoute (method: string, target: string): Pick<ExchangeView, 'route' | 'adapterId' | 'sessionId'> {
  const path = target.split('?', 1)[0]!
  if (!path.startsWith(`${BASE_PATH}/`)) return { route: 'other' }
  const parts = path.slice(BASE_PATH.length + 1).split('/').map(decode)
  if (parts.length === 1 && parts[0] === 'info' && method === 'GET') return { route: 'info' }
  if (parts[0] !== 'adapters' || parts[1] === undefined) return { route: 'other' }
  const adapterId = parts[1]
  if (parts.length === 2 && method === 'PUT') return { route: 'register', adapterId }
  if (parts.length === 2 && method === 'DELETE') return { route: 'unregister', adapterId }
  if (parts.length === 3 && parts[2] === 'sessions' && method === 'PUT') return { route: 'batch', adapterId }
  if (parts.length === 3 && parts[2] === 'events' && method === 'POST') return { route: 'events', adapterId }
  if (parts.length === 4 && parts[2] === 'sessions' && method === 'POST') {
    return { route: 'session', adapterId, sessionId: parts[3]! }
  }
  return { route: 'other', adapterId }
}

/**
 * What the adapter has been told and has done, as the journal shows it: the discovery tokens, each id's lease, the
 * requests pending on its sessions, and when the app was away. The checks read it; it judges nothing itself.
 * Updated for each entry before the checks see it.
 */
export class OrbtileModel extends Measured {
  /** Every discovery token of the run, oldest first; the last is the one the file holds. */
  readonly discoveryTokens: string[] = []
  /** When the file last changed (a new token, a new socket). */
  fileChangedAt: Millis = 0
  /** Every adapter token the app issued. */
  readonly adapterTokens = new Set<string>()
  readonly leases = new Map<string, LeaseView>()
  /** Pending requests by adapter id, then request id. */
  readonly pending = new Map<string, Map<string, PendingRequest>>()
  /** `keypadDecisions` of each id's last registration reply. */
  readonly keypad = new Map<string, boolean>()
  /** Intervals the adapter could not reach the app (API off, between a restart and the new socket). */
  readonly away: Array<{ from: Millis, to: Millis }> = []
  #awaySince: Millis | undefined
  /** The exchange's adapter's lease as it stood before the exchange (what the adapter knew when it sent it). */
  leaseBefore: LeaseView | undefined

  /** The wall-clock time (epoch ms) at the journal's 0. */
  readonly epochStart: number

  /** The adapter's requests other than events polls, as the app answered them: time the adapter waited (OTC-28). */
  readonly serving = new Serving()

  /** Connections open now, and the most open at once (OTC-04). */
  readonly connections = { open: 0, peak: 0 }
  /** The journal entry that noted too many connections, for OTC-04 to cite. */
  connectionsCited: number | undefined

  constructor (discoveryToken: string, epochStart: number, lag?: Measure, stalled?: Measure) {
    super(lag, stalled)
    this.discoveryTokens.push(discoveryToken)
    this.epochStart = epochStart
  }

  /** A journal time as wall-clock epoch milliseconds (what `expiresAt` is compared with, OT-A31). */
  epochAt (ms: Millis): number {
    return this.epochStart + ms
  }

  get discoveryToken (): string {
    return this.discoveryTokens[this.discoveryTokens.length - 1]!
  }

  /** Whether the app was away at any time in [from, to]. */
  awayDuring (from: Millis, to: Millis): boolean {
    const open = this.#awaySince !== undefined && this.#awaySince <= to
    return open || this.away.some((a) => a.from <= to && a.to >= from)
  }

  observe (entry: JournalEntry): void {
    if (entry.kind === 'action') this.#action(entry)
    if (entry.kind === 'exchange') this.#exchange(entry)
  }

  #action (a: JournalAction): void {
    const token = typeof a.data?.token === 'string' ? a.data.token : undefined
    if (token !== undefined && token !== this.discoveryToken) {
      this.discoveryTokens.push(token)
      this.fileChangedAt = a.at
    }
    if (a.data?.leasesEnd === true) {
      for (const lease of this.leases.values()) lease.ended = true
      this.pending.clear()
    }
    if (typeof a.data?.leaseEnds === 'string') {
      const lease = this.leases.get(a.data.leaseEnds)
      if (lease !== undefined) lease.ended = true
      this.pending.delete(a.data.leaseEnds)
    }
    if (a.data?.away === true) this.#awaySince ??= a.at
    if (a.data?.away === false && this.#awaySince !== undefined) {
      this.away.push({ from: this.#awaySince, to: a.at })
      this.#awaySince = undefined
    }
  }

  #exchange (e: JournalExchange): void {
    const v = view(e)
    if (v.route !== 'events') this.serving.add(e.at, e.end)
    const id = v.adapterId
    const before = id === undefined ? undefined : this.leases.get(id)
    // The lease as it stood before: copied only if this exchange ends it (#end), since most leave it alone.
    this.leaseBefore = before
    if (id === undefined) return
    if (v.route === 'register' && v.ok && isObject(v.reply) && typeof v.reply.adapterToken === 'string') {
      this.#registered(id, v.reply.adapterToken, v.reply, e)
    }
    this.#leaseLost(id, v, e, before)
    if (v.ok) this.#written(id, v, e.at)
  }

  /** A registration's reply: a new lease, and with a new token none of the old one's pending requests. */
  #registered (id: string, token: string, reply: Record<string, unknown>, e: JournalExchange): void {
    const previous = this.leases.get(id)
    if (previous?.token !== token || previous.ended) this.pending.delete(id)
    this.adapterTokens.add(token)
    this.leases.set(id, { token, since: e.end, connection: e.connection, ended: false })
    this.keypad.set(id, reply.keypadDecisions === true)
  }

  /** The exchange shows the lease is gone: unregistered, not registered any more, or its token refused. */
  #leaseLost (id: string, v: ExchangeView, e: JournalExchange, before: LeaseView | undefined): void {
    if ((v.route === 'unregister' && v.ok) || v.code === 'adapter_not_registered') {
      const lease = this.leases.get(id)
      if (lease !== undefined && lease.since < e.at) this.#end(lease)
      this.pending.delete(id)
    }
    // The app refused the lease's own token: the lease is gone, whatever order the journal saw things in (a reply
    // that went out late can follow the action that ended its lease; OTC-17).
    if (v.code === 'unauthorized' && v.field === 'X-Orbtile-Adapter-Token' && before !== undefined &&
      e.headers['x-orbtile-adapter-token'] === before.token) {
      this.#end(before)
      this.pending.delete(id)
    }
  }

  /** An accepted session update or batch: the requests it leaves pending; a batch ends the sessions it leaves out. */
  #written (id: string, v: ExchangeView, at: Millis): void {
    if (v.route === 'session' && isObject(v.body)) this.#update(id, v.sessionId!, v.body, at)
    if (v.route !== 'batch' || !isObject(v.body) || !Array.isArray(v.body.sessions)) return
    const listed = new Set<string>()
    for (const item of v.body.sessions) {
      if (!isObject(item) || typeof item.id !== 'string') continue
      listed.add(item.id)
      this.#update(id, item.id, item, at)
    }
    for (const [rid, p] of this.pending.get(id) ?? []) if (!listed.has(p.sessionId)) this.pending.get(id)!.delete(rid)
  }

  /** Ends a lease, keeping `leaseBefore` as the exchange found it. */
  #end (lease: LeaseView): void {
    if (lease === this.leaseBefore) this.leaseBefore = { ...lease }
    lease.ended = true
  }

  /** An accepted update's effect on the session's pending request (OT-092 merge: absent keeps, null clears). */
  #update (adapterId: string, sessionId: string, body: Record<string, unknown>, at: Millis): void {
    const requests = this.pending.get(adapterId) ?? new Map<string, PendingRequest>()
    this.pending.set(adapterId, requests)
    for (const kind of ['approval', 'question'] as const) {
      if (!(kind in body)) continue
      const sent = body[kind]
      for (const [rid, p] of requests) {
        if (p.sessionId === sessionId && p.kind === kind && (!isObject(sent) || sent.id !== rid)) requests.delete(rid)
      }
      if (isObject(sent) && typeof sent.id === 'string' && !requests.has(sent.id)) {
        requests.set(sent.id, { kind, id: sent.id, sessionId, content: sent, since: at })
      }
    }
  }

  /** The request pending under this id for the adapter, if any. */
  pendingRequest (adapterId: string, requestId: string): PendingRequest | undefined {
    return this.pending.get(adapterId)?.get(requestId)
  }
}

export function isObject (value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function parseJson (text: string): unknown {
  if (text === '') return undefined
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

function decode (part: string): string {
  if (!part.includes('%')) return part
  try {
    return decodeURIComponent(part)
  } catch {
    return part
  }
}
