import type { ValidateFunction } from 'ajv'
import { familyValidators, type ValidatorFamily } from '../shared/ajv.js'
import { readPackageJson } from '../shared/paths.js'

// The Orb bot API as data, for the fake Orb and the Orb conformance suite alike: the spec document itself, the limits
// its schemas state (read from the document, never retyped), the few it states only in prose, and the decision
// tables the ledger adds where it is silent (ORB-A01, ORB-A02, ORB-A03, ORB-A11, ORB-A14). Nothing here is the fake's.

/** The Orb bot API's OpenAPI document, copied verbatim into `specs/` as data. */
export const ORB_SPEC_FILE = 'specs/orb-bot-api.openapi.json'

/** One parameter of an operation, as the document writes it. */
export interface OrbParameter {
  name: string
  in: 'query' | 'path' | 'header'
  required?: boolean
  description?: string
  schema: Record<string, unknown>
}

/** One operation of the document. */
export interface OrbOperation {
  summary?: string
  description?: string
  parameters?: OrbParameter[]
  requestBody?: { required?: boolean, content: Record<string, { schema: Record<string, unknown> }> }
  responses?: Record<string, unknown>
}

/** The parts of the OpenAPI document this project reads. */
export interface OrbSpecDocument {
  info: { title: string, version: string, description?: string }
  paths: Record<string, Record<string, OrbOperation>>
  components: Record<string, unknown>
}

/** The spec document, read once when this module loads. Treat it as read-only. */
export const ORB_SPEC: OrbSpecDocument = readPackageJson<OrbSpecDocument>(ORB_SPEC_FILE)

/** The spec document (the accessor older callers use; the same object as ORB_SPEC). */
export function orbSpec (): OrbSpecDocument {
  return ORB_SPEC
}

/** An operation of the document; a missing one is a broken document, reported at load. */
export function orbOperation (method: string, path: string): OrbOperation {
  const op = ORB_SPEC.paths[path]?.[method.toLowerCase()]
  if (op === undefined) throw new Error(`${ORB_SPEC_FILE} has no operation ${method.toUpperCase()} ${path}`)
  return op
}

type Schema = Record<string, unknown>

function parameter (method: string, path: string, name: string): Schema {
  const found = orbOperation(method, path).parameters?.find((p) => p.name === name)
  if (found === undefined) throw new Error(`${ORB_SPEC_FILE}: ${method.toUpperCase()} ${path} has no parameter ${name}`)
  return found.schema
}

function bodyProperty (method: string, path: string, name: string): Schema {
  const schema = orbOperation(method, path).requestBody?.content['application/json']?.schema
  const found = (schema?.properties as Record<string, Schema> | undefined)?.[name]
  if (found === undefined) throw new Error(`${ORB_SPEC_FILE}: ${method.toUpperCase()} ${path} has no body field ${name}`)
  return found
}

function componentProperty (component: string, name: string): Schema {
  const schemas = (ORB_SPEC.components as { schemas?: Record<string, { properties?: Record<string, Schema> }> }).schemas
  const found = schemas?.[component]?.properties?.[name]
  if (found === undefined) throw new Error(`${ORB_SPEC_FILE}: components.schemas.${component} has no property ${name}`)
  return found
}

function num (schema: Schema, name: string, where: string): number {
  const value = schema[name]
  if (typeof value !== 'number') throw new Error(`${ORB_SPEC_FILE}: ${where} states no ${name}`)
  return value
}

function str (schema: Schema, name: string, where: string): string {
  const value = schema[name]
  if (typeof value !== 'string') throw new Error(`${ORB_SPEC_FILE}: ${where} states no ${name}`)
  return value
}

/** An integer parameter's bounds and default, as its schema states them. */
export interface OrbRange { minimum: number, maximum: number, default: number }

function range (schema: Schema, where: string): Readonly<OrbRange> {
  return {
    minimum: num(schema, 'minimum', where),
    maximum: num(schema, 'maximum', where),
    default: num(schema, 'default', where)
  }
}

const MESSAGES = '/api/bot/v1/messages'
const EVENTS = '/api/bot/v1/events'
const COMMANDS = '/api/bot/v1/commands'
const RESPOND = '/api/bot/v1/interactions/{event}/respond'
const PASSPORT = '/api/bot/v1/passport'

/** The limits the document's own schemas state (`maxLength`, `maximum`, `default`, `maxItems`, `pattern`, `const`). */
export const ORB_LIMITS = Object.freeze({
  /** ORB-023: characters in a posted message's `content`. */
  messageLength: num(bodyProperty('post', MESSAGES, 'content'), 'maxLength', 'POST /messages content'),
  /** ORB-033, ORB-034: `GET /messages?limit`. */
  messagePage: range(parameter('get', MESSAGES, 'limit'), 'GET /messages limit'),
  /** ORB-044, ORB-045: `GET /events?limit`. */
  eventPage: range(parameter('get', EVENTS, 'limit'), 'GET /events limit'),
  /** ORB-050: `GET /events?wait`, in seconds. */
  pollWaitSeconds: range(parameter('get', EVENTS, 'wait'), 'GET /events wait'),
  /** ORB-057: commands in one `PUT /commands`. */
  commandsPerSync: num(bodyProperty('put', COMMANDS, 'commands'), 'maxItems', 'PUT /commands commands'),
  /** ORB-058, ORB-A15: a command's name; option names follow it too. */
  commandName: new RegExp(str(componentProperty('CommandInput', 'name'), 'pattern', 'CommandInput.name')),
  /** ORB-058: characters in a command's description. */
  commandDescriptionLength: num(componentProperty('CommandInput', 'description'), 'maxLength', 'CommandInput'),
  /** ORB-058: options of one command. */
  optionsPerCommand: num(componentProperty('CommandInput', 'options'), 'maxItems', 'CommandInput.options'),
  /** ORB-066: characters in an answer to a typed command (by route, and inline, ORB-098). */
  answerLength: num(bodyProperty('post', RESPOND, 'content'), 'maxLength', 'POST /respond content'),
  /** ORB-085: `GET /passport?minimum`. */
  passportMinimum: range(parameter('get', PASSPORT, 'minimum'), 'GET /passport minimum'),
  /** ORB-052: the `api` every event names. */
  eventApi: str(componentProperty('Event', 'api'), 'const', 'Event.api')
})

/** Limits the document states only in its prose, as the ledger reads them. */
export const ORB_PROSE_LIMITS = Object.freeze({
  /** ORB-013: apps in the directory ("up to 60"). */
  directorySize: 60,
  /** ORB-049: events wait a day ("Events wait for a day, at most 500"). */
  eventRetentionMs: 24 * 60 * 60 * 1000,
  /** ORB-049: events kept per app. */
  eventsPerApp: 500,
  /** ORB-076: a seat with no heartbeat this long is dropped ("the same ninety-second heartbeat"). */
  seatSilenceMs: 90_000,
  /** ORB-078: how long a grant's token is valid ("a 30-second LiveKit token"). */
  grantMs: 30_000
})

/**
 * ORB-102: every status the Orb answers an error with, from the operations' responses in the document (409 and 410
 * are the interactions' and voice's own, ORB-068, ORB-080).
 */
export const ORB_ERROR_STATUSES: readonly number[] = Object.freeze([...new Set(
  Object.values(ORB_SPEC.paths).flatMap((ops) => Object.values(ops).flatMap((op) => Object.keys(op.responses ?? {})))
)].map(Number).filter((status) => status >= 400).sort((a, b) => a - b))

/** ORB-101, ORB-A01: the body of every error: `error.code` is the HTTP status itself. */
export function orbErrorBody (status: number, message: string): { error: { message: string, code: number } } {
  return { error: { message, code: status } }
}

/** ORB-A02: the status of each refused post. `@here` is not refused. */
export const ORB_A02_REFUSALS = Object.freeze({
  /** ORB-026: `@everyone` as a token of its own, in any case. */
  everyone: 403,
  /** ORB-027, ORB-A20: an onchain trade, signal or market card. */
  card: 403,
  /** ORB-028: a voice channel. */
  voiceChannel: 400,
  /** ORB-029: a read-only channel. */
  readOnly: 403,
  /** ORB-030: a channel off the community's allow-list for the app. */
  offAllowList: 403,
  /** ORB-009, ORB-102: an unknown channel, or one of a community that did not install the app. */
  unknownChannel: 404,
  /** Content of nothing but white space. */
  blankContent: 400
} as const)

/** One sliding window: at most `limit` counted requests in any `windowMs` (ORB-A03). */
export interface OrbWindow { limit: number, windowMs: number }

/** ORB-A03: the throttles' sliding windows. Refused requests never count; other routes are not throttled. */
export const ORB_A03_WINDOWS = Object.freeze({
  /** ORB-031: posts a minute per app, across communities. */
  postsPerApp: { limit: 30, windowMs: 60_000 },
  /** ORB-031: posts a minute per app and channel. */
  postsPerChannel: { limit: 12, windowMs: 60_000 },
  /** ORB-019: directory requests a minute per caller address. */
  directoryPerAddress: { limit: 60, windowMs: 60_000 },
  /** ORB-060: `PUT /commands` a minute per app. */
  syncsPerApp: { limit: 10, windowMs: 60_000 }
} as const satisfies Record<string, OrbWindow>)

/** ORB-099, ORB-A03: a 429's `Retry-After`: the ceiling of the seconds until a slot frees, at least 1. */
export function orbRetryAfterSeconds (waitMs: number): number {
  return Math.max(1, Math.ceil(waitMs / 1000))
}

/** ORB-A11: webhook delivery. */
export const ORB_A11_DELIVERY = Object.freeze({
  /** How long an `application_command` attempt may take: its member waits. */
  commandTimeoutMs: 4_000,
  /** How long any other attempt may take. */
  eventTimeoutMs: 10_000,
  /** The one retry follows a failed first attempt this long after it failed. */
  retryDelayMs: 2_000,
  /** Attempts per event, the first included. */
  attempts: 2
})

/** ORB-068, ORB-A14: the member who typed a command waits exactly this long for an answer. */
export const ORB_A14_MEMBER_WAIT_MS = 6_000

/**
 * The schema of each operation's success reply (`METHOD path`), where the document gives one, as one validator family
 * compiled by the build (dist/validators/orb-replies.cjs): what a real Orb's replies are held to through
 * `orbtest proxy orb`. Each is a `$ref` into the document: nothing is copied.
 */
export const orbRepliesFamily = (): ValidatorFamily => ({
  name: 'orb-replies',
  options: {},
  documents: [{ $id: 'orb', paths: ORB_SPEC.paths, components: ORB_SPEC.components }],
  entries: Object.fromEntries(Object.entries(ORB_SPEC.paths).flatMap(([path, ops]) =>
    Object.entries(ops)
      .filter(([, op]) => (op.responses?.['200'] as JsonReply | undefined)?.content?.['application/json'] !== undefined)
      .map(([method, _op]) => [`${method.toUpperCase()} ${path}`, {
        $ref: `orb#/paths/${path.replaceAll('~', '~0').replaceAll('/', '~1')}/${method}/responses/200/content/application~1json/schema`
      }])))
})

interface JsonReply { content?: Record<string, unknown> }

const replyValidators = familyValidators(orbRepliesFamily)
let replyNames: ReadonlySet<string> | undefined

/** The validator of an operation's success reply, or undefined where the document gives none. */
export function orbReplyValidator (method: string, path: string): ValidateFunction | undefined {
  replyNames ??= new Set(Object.keys(orbRepliesFamily().entries))
  const name = `${method.toUpperCase()} ${path}`
  return replyNames.has(name) ? replyValidators(name) : undefined
}
