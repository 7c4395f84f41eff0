// Where a replayed exchange's reply differs from the recorded one: its status, its error code, its body's shape (keys
// and types, never values: ids, times, tokens and cursors differ by nature), and the headers the specs name. Each
// difference says whether it is one of behaviour, of the world the two servers hold, or one that follows an earlier
// difference (the request carried a value the replay could not put back).
import type { RecordedApi, RecordedExchange } from '../../src/proxy/recording.js'
import { parseJson, type Replayed, type ReplayedReply } from './replay.js'
import { routeLabel } from './routes.js'

export type DifferenceKind = 'status' | 'error-code' | 'shape' | 'header'
export type DifferenceCause = 'behaviour' | 'world' | 'follows'

export interface Difference {
  /** The exchange's number in the recording. */
  n: number
  route: string
  kind: DifferenceKind
  cause: DifferenceCause
  /** Where in the body or which header (for shape and header differences). */
  where?: string
  recorded: string
  replayed: string
}

/**
 * What makes a difference one of the world, by API: an answer that says the thing named is not in this server's world
 * (the Orb: no such channel, member or message for this app, 404; a scope or a community's rule, 403), the user's
 * switch (Orbtile: the Adapter API turned off), or a member that says what the user chose (Orbtile: a registration's
 * `reason`, there while the user has not allowed the adapter, and its `keypadDecisions`).
 */
interface World { statuses: readonly number[], codes: readonly string[], members: readonly string[] }
const WORLD: Record<RecordedApi, World> = {
  orbtile: { statuses: [], codes: ['api_disabled'], members: ['$.reason', '$.keypadDecisions'] },
  orb: { statuses: [403, 404], codes: [], members: [] }
}

/** The differences of one exchange; none for an exchange whose recorded reply was cut (nothing to compare). */
export function differencesOf (api: RecordedApi, x: Replayed): Difference[] {
  const { recorded, replayed } = x
  if (!recorded.finished) return []
  const route = routeLabel(api, recorded.method, recorded.target)
  const recordedStatus = statusText(recorded.status, recorded.reply)
  const found = replayed.error !== undefined
    ? [{ kind: 'status' as const, recorded: recordedStatus, replayed: `no reply (${replayed.error})` }]
    : replyDifferences(recorded, replayed)
  const cause = causeOf(api, x)
  return found.map((d) => ({
    n: recorded.n,
    route,
    ...d,
    cause: cause === 'behaviour' && d.where !== undefined && WORLD[api].members.includes(d.where) ? 'world' : cause
  }))
}

/** The cause of every difference of an exchange, but for a member of the world (WORLD.members). */
function causeOf (api: RecordedApi, x: Replayed): DifferenceCause {
  if (x.unbound.length > 0) return 'follows'
  const world = WORLD[api]
  const sides = [
    { status: x.recorded.status, text: x.recorded.reply },
    { status: x.replayed.status, text: x.replayed.text }
  ]
  const isWorld = sides.some((s) =>
    world.statuses.includes(s.status) || world.codes.includes(String(errorCode(s.text))))
  return isWorld ? 'world' : 'behaviour'
}

type Found = Omit<Difference, 'n' | 'route' | 'cause'>

function replyDifferences (recorded: RecordedExchange, replayed: ReplayedReply): Found[] {
  if (recorded.status !== replayed.status) {
    const replayedStatus = statusText(replayed.status, replayed.text)
    return [{ kind: 'status', recorded: statusText(recorded.status, recorded.reply), replayed: replayedStatus }]
  }
  const out: Found[] = []
  const codes = [errorCode(recorded.reply), errorCode(replayed.text)]
  if (codes[0] !== codes[1]) {
    out.push({ kind: 'error-code', recorded: String(codes[0] ?? 'none'), replayed: String(codes[1] ?? 'none') })
  }
  out.push(...headerDifferences(recorded.replyHeaders, replayed.headers))
  const shapes = shapeDifferences(bodyShape(recorded.reply), bodyShape(replayed.text), '$')
  for (const d of shapes) out.push({ kind: 'shape', ...d })
  return out
}

function statusText (status: number, text: string): string {
  const code = errorCode(text)
  return code === undefined ? String(status) : `${status} ${String(code)}`
}

/** `error.code` of a body, as both specs shape an error (Orbtile's a string, the Orb's the status again). */
function errorCode (text: string): string | number | undefined {
  const body = parseJson(text) as { error?: { code?: unknown } } | undefined
  const code = body?.error?.code
  return typeof code === 'string' || typeof code === 'number' ? code : undefined
}

/** The headers the specs name on a reply: its media type, and whether it says when to retry. */
function headerDifferences (recorded: Record<string, string>, replayed: Record<string, string>): Found[] {
  const out: Found[] = []
  const read: Array<[string, (h: Record<string, string>) => string]> = [
    ['Content-Type', (h) => (h['content-type'] ?? 'none').split(';', 1)[0]!.trim().toLowerCase()],
    ['Retry-After', (h) => h['retry-after'] === undefined ? 'absent' : 'present']
  ]
  for (const [where, of] of read) {
    const [a, b] = [of(recorded), of(replayed)]
    if (a !== b) out.push({ kind: 'header', where, recorded: a, replayed: b })
  }
  return out
}

/**
 * A body's shape: each member's types by path. An array's elements are merged into one (`$.events[]`), so that two
 * lists that hold the same kinds of things in another number or order have the same shape.
 */
export function bodyShape (text: string): Map<string, Set<string>> {
  const shape = new Map<string, Set<string>>()
  if (text === '') return shape
  const parsed = parseJson(text)
  if (parsed === undefined) {
    shape.set('$', new Set(['text']))
    return shape
  }
  const add = (path: string, value: unknown): void => {
    let types = shape.get(path)
    if (types === undefined) shape.set(path, types = new Set())
    types.add(value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value)
    if (Array.isArray(value)) {
      for (const v of value) add(`${path}[]`, v)
    } else if (value !== null && typeof value === 'object') {
      for (const [k, v] of Object.entries(value)) add(`${path}.${k}`, v)
    }
  }
  add('$', parsed)
  return shape
}

/** A path inside a list that was empty on this side: there was nothing to compare with the other's elements. */
function underEmptyList (shape: Map<string, Set<string>>, path: string): boolean {
  for (let at = path.indexOf('[]'); at !== -1; at = path.indexOf('[]', at + 2)) {
    const list = path.slice(0, at)
    if (shape.get(list)?.has('array') === true && !shape.has(`${list}[]`)) return true
  }
  return false
}

/** Paths with other types on each side, or on one side only; none beneath a path that differs already. */
function shapeDifferences (
  recorded: Map<string, Set<string>>,
  replayed: Map<string, Set<string>>,
  root: string
): Array<{ where: string, recorded: string, replayed: string }> {
  const out: Array<{ where: string, recorded: string, replayed: string }> = []
  const paths = [...new Set([...recorded.keys(), ...replayed.keys()])].filter((p) => p.startsWith(root)).sort()
  const text = (s: Set<string> | undefined): string => s === undefined ? 'absent' : [...s].sort().join(' or ')
  for (const path of paths) {
    if (out.some((d) => path.startsWith(`${d.where}.`) || path.startsWith(`${d.where}[`))) continue
    if (underEmptyList(recorded, path) || underEmptyList(replayed, path)) continue
    const a = text(recorded.get(path))
    const b = text(replayed.get(path))
    if (a !== b) out.push({ where: path, recorded: a, replayed: b })
  }
  return out
}
