import type { JournalAction, JournalEntry, JournalExchange, Millis } from '../core/journal.js'
import { Serving } from '../core/served.js'
import { Measured, type Measure } from '../core/measured.js'

/** Which operation of the bot API an exchange was, read from its method and target (the spec's paths). */
export type OrbRoute =
  | 'app' | 'messages-post' | 'messages-get' | 'message-delete' | 'events' | 'commands-get' | 'commands-put'
  | 'commands-delete' | 'respond' | 'voice' | 'music' | 'music-get' | 'passport' | 'directory' | 'other'

const BOT = '/api/bot/v1'

/** One exchange as the checks read it: its route, query, parsed body and reply. */
export interface OrbView {
  route: OrbRoute
  path: string
  query: URLSearchParams
  body: unknown
  reply: unknown
  ok: boolean
  /** The event id of a `/interactions/{event}/respond`. */
  event?: string
  /** The token of `Authorization: Bearer <token>`, if that is the header's form. */
  bearer?: string
}

const VIEW = Symbol('orbtest.orb-view')
type Viewed = JournalExchange & { [VIEW]?: OrbView }

/** Parses an exchange once; every check reads the same view. */
export function view (e: JournalExchange): OrbView {
  const memo = e as Viewed
  if (memo[VIEW] !== undefined) return memo[VIEW]
  const [rawPath = '', search = ''] = e.target.split('?', 2)
  const path = rawPath
  const route = routeOf(e.method, path)
  const auth = e.headers.authorization
  const v: OrbView = {
    route,
    path,
    query: new URLSearchParams(search),
    body: e.body === undefined ? undefined : parseJson(e.body),
    reply: parseJson(e.reply),
    ok: e.status >= 200 && e.status < 300,
    ...(route === 'respond' ? { event: decodeURIComponent(path.split('/')[5] ?? '') } : {}),
    ...(auth !== undefined && auth.startsWith('Bearer ') && auth.length > 7 ? { bearer: auth.slice(7) } : {})
  }
  memo[VIEW] = v
  return v
}

/** One operation's path under the bot API's base (the spec's paths), and its route for each method it has. */
interface Operation { path: RegExp, methods: ReadonlyMap<string, OrbRoute> }

const operation = (path: RegExp, methods: Record<string, OrbRoute>): Operation =>
  ({ path, methods: new Map(Object.entries(methods)) })

/** The bot API's operations; their paths are disjoint, so an exchange matches one at most. */
const OPERATIONS: readonly Operation[] = [
  operation(/^app$/, { GET: 'app' }),
  operation(/^messages$/, { POST: 'messages-post', GET: 'messages-get' }),
  operation(/^messages\/[^/]+$/, { DELETE: 'message-delete' }),
  operation(/^events$/, { GET: 'events' }),
  operation(/^commands$/, { GET: 'commands-get', PUT: 'commands-put', DELETE: 'commands-delete' }),
  operation(/^interactions\/[^/]+\/respond$/, { POST: 'respond' }),
  operation(/^voice$/, { POST: 'voice' }),
  operation(/^music$/, { POST: 'music', GET: 'music-get' }),
  operation(/^passport$/, { GET: 'passport' })
]

function routeOf (method: string, path: string): OrbRoute {
  if (path === '/api/orb/directory' && method === 'GET') return 'directory'
  if (!path.startsWith(`${BOT}/`)) return 'other'
  const rest = path.slice(BOT.length + 1)
  const op = OPERATIONS.find((o) => o.path.test(rest))
  return op?.methods.get(method) ?? 'other'
}

/** Whether an exchange changes something in Orb (what an event can cause: a post, a respond, a sync, a voice act). */
export function isWrite (e: JournalExchange): boolean {
  return e.method !== 'GET' && e.method !== 'HEAD' && view(e).route !== 'other'
}

/** An event as the bot received it, by `GET /events` or by a delivery the suite sent. */
export interface Received {
  id: string
  type: string
  channel: string | null
  /** `invoked_at` of a typed command (epoch ms). */
  invokedAt?: number
  encrypted: boolean
  /** When the reply or the delivery that carried it ended (journal ms), and its cursor (events mode). */
  at: Millis
  cursor?: number
  seq: number
}

/** A text channel's kind as the world has it. */
export interface ChannelInfo { kind: 'text' | 'voice', readOnly: boolean }

/**
 * What the bot has been told and has done, as the journal shows it: its tokens, the events it received, the `next`
 * cursors it was given, when its process started. Updated for each entry before the checks see it.
 */
export class OrbModel extends Measured {
  /** Every token the app had, oldest first; the last is the live one. */
  readonly tokens: string[]
  readonly channels: ReadonlyMap<string, ChannelInfo>
  readonly epochStart: number
  readonly received = new Map<string, Received>()
  /** The `next` of each events reply (the entry that gave it), in the order the replies ended. */
  readonly nexts: Array<{ next: number, at: Millis, seq: number, cut?: true }> = []
  /** When the bot's process was (re)started, journal ms. */
  readonly starts: Millis[] = []
  /** When the harness stopped (SIGTERM) or killed the bot's process, journal ms. */
  readonly stops: Millis[] = []
  /** When the harness killed the bot's process (SIGKILL), journal ms. */
  readonly kills: Millis[] = []
  /** The first encrypted message the bot received (ORB-036). */
  firstEncrypted: Received | undefined
  /** The bot's calls other than fetches of events, as Orb answered them: time the bot waited (OBC-16). */
  readonly serving = new Serving()

  constructor (
    token: string,
    channels: ReadonlyMap<string, ChannelInfo>,
    epochStart: number,
    lag?: Measure,
    stalled?: Measure
  ) {
    super(lag, stalled)
    this.tokens = [token]
    this.channels = channels
    this.epochStart = epochStart
  }

  /** The process of the bot that was running at `at`: the number of starts before it (1 for the first). */
  processAt (at: Millis): number {
    return this.starts.filter((s) => s <= at).length
  }

  get token (): string {
    return this.tokens[this.tokens.length - 1]!
  }

  epochAt (ms: Millis): number {
    return this.epochStart + ms
  }

  observe (entry: JournalEntry): void {
    if (entry.kind === 'action') this.#action(entry)
    if (entry.kind !== 'exchange') return
    const v = view(entry)
    if (v.route !== 'events') this.serving.add(entry.at, entry.end)
    if (v.route !== 'events' || !v.ok || !isObject(v.reply)) return
    // OBC-11: a reply journaled as cut (cut-poll, a poll held while the bot was stopped) may or may not have reached
    // the bot: its bytes can be in the kernel when the cut comes. Its `next` is kept, marked; its events are not.
    // A reply that ended after the process that asked for it was killed (its request may reach the fake just after
    // the kill, from the kernel's buffer) reached no one; it is kept as cut too, so that no verdict rests on it.
    const cut = entry.wire?.includes('connection cut before the reply') === true || this.#killedBefore(entry)
    if (typeof v.reply.next === 'number') {
      this.nexts.push({ next: v.reply.next, at: entry.end, seq: entry.seq, ...(cut ? { cut: true as const } : {}) })
    }
    if (!Array.isArray(v.reply.events) || cut) return
    for (const event of v.reply.events) this.#receive(event, entry.end, entry.seq)
  }

  /** Whether the process that sent this request was killed before its reply ended. */
  #killedBefore (entry: JournalExchange): boolean {
    const started = this.starts.filter((s) => s <= entry.at).at(-1) ?? -Infinity
    return this.kills.some((k) => k > started && k < entry.end)
  }

  #action (a: JournalAction): void {
    if (typeof a.data?.token === 'string' && a.data.token !== this.token) this.tokens.push(a.data.token)
    if (a.name === 'bot-start') this.starts.push(a.at)
    if (a.actor === 'harness' && (a.name === 'stop' || a.name === 'kill')) this.stops.push(a.at)
    if (a.actor === 'harness' && a.name === 'kill') this.kills.push(a.at)
    if (a.name === 'delivery' && a.data?.genuine === true && isObject(a.data.event)) {
      this.#receive(a.data.event, a.at, a.seq)
    }
  }

  #receive (event: unknown, at: Millis, seq: number): void {
    if (!isObject(event) || typeof event.id !== 'string' || this.received.has(event.id)) return
    const data = isObject(event.data) ? event.data : {}
    const message = isObject(data.message) ? data.message : undefined
    const received: Received = {
      id: event.id,
      type: String(event.type),
      channel: typeof event.channel === 'string' ? event.channel : null,
      ...(typeof data.invoked_at === 'number' ? { invokedAt: data.invoked_at } : {}),
      encrypted: message !== undefined && message.body === null,
      at,
      ...(typeof event.cursor === 'number' ? { cursor: event.cursor } : {}),
      seq
    }
    this.received.set(event.id, received)
    if (received.encrypted) this.firstEncrypted ??= received
  }
}

export function isObject (value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** A text's JSON value; undefined for an empty text or one that is not JSON. */
export function parseJson (text: string): unknown {
  if (text === '') return undefined
  try {
    return JSON.parse(text)
  } catch (err) {
    if (err instanceof SyntaxError) return undefined
    throw err
  }
}
