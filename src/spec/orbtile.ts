import { homedir } from 'node:os'
import { join } from 'node:path'
import type { ValidateFunction } from 'ajv/dist/2020.js'
import { familyValidators, type ValidatorFamily } from '../shared/ajv.js'
import { readPackageJson } from '../shared/paths.js'

/**
 * The Orbtile Adapter Protocol as data, for the fake and the conformance suite alike: the spec document, validators
 * of its `$defs`, the values the document fixes (its `const`s and enums), and the ledger's decisions the spec leaves
 * open (OT-A01's status table). Nothing here belongs to the fake.
 */

/** The spec document's file, copied verbatim into `specs/` as data. */
export const SPEC_FILE = 'specs/orbtile-adapter-protocol-v1.2.schema.json'

/** The parts of the spec document the code walks. */
export interface SpecDocument {
  $id: string
  $defs: Record<string, Record<string, unknown>>
}

const document = readPackageJson<SpecDocument>(SPEC_FILE)

/** The spec document itself, for tests and for generators that walk it. */
export const spec: Readonly<SpecDocument> = document

/** A `$defs` entry of the spec document. */
export function def (name: string): Record<string, unknown> {
  const found = document.$defs[name]
  if (found === undefined) throw new Error(`the Orbtile spec has no $defs/${name}`)
  return found
}

/**
 * Every `$defs` entry of the document as one validator family: a `$ref` into the document each, so nothing is copied.
 * The build compiles them (dist/validators/orbtile-spec.cjs); a source run compiles each on first use. They collect
 * every error (with the failing schema) so that the reported field can be the first in the request's own order
 * (OT-A02). Pure results of a fixed document: every fake in the process may share them.
 */
export const orbtileSpecFamily = (): ValidatorFamily => ({
  name: 'orbtile-spec',
  options: { allErrors: true, verbose: true },
  documents: [document],
  entries: Object.fromEntries(Object.keys(document.$defs)
    .map((name) => [name, { $ref: `${document.$id}#/$defs/${name}` }]))
})

const validators = familyValidators(orbtileSpecFamily)

// Each name's validator, once looked up: the request path asks for a few by name on every request, and a lookup in
// the 60-odd `$defs` (twice: the document's, the family's) cost about 0.3 µs a session update.
// Kept: with the other kept shortcuts, a session update runs at 61% of bare fastify, 48% without (benchmarks.md).
const byName = new Map<string, ValidateFunction>()

/** A validator of `$defs/<name>` of the spec document. */
export function validatorFor (name: string): ValidateFunction {
  let validate = byName.get(name)
  if (validate === undefined) {
    if (!(name in document.$defs)) throw new Error(`the Orbtile spec has no $defs/${name}`)
    validate = validators(name)
    byName.set(name, validate)
  }
  return validate
}

type Properties = Record<string, Record<string, unknown>>
const infoProperties = def('Info').properties as Properties

/** The `const` of one property of `Info`, or of `Info.limits` (OT-035). */
function infoConst<T> (properties: Properties, name: string): T {
  const value = properties[name]?.const
  if (value === undefined) throw new Error(`the Orbtile spec's Info has no const ${name}`)
  return value as T
}

/** Every `Activity` value, in the spec's enum order (OT-095, OT-A29). */
export const ACTIVITIES: readonly string[] = Object.freeze([...(def('Activity').enum as string[])])

/** Every error code of the spec's `Error` enum (OT-150). */
export const ERROR_CODES: readonly string[] = Object.freeze([
  ...((def('Error').properties as any).error.properties.code.enum as string[])
])

/** The limits of `Info.limits`, each one of the document's `const`s (OT-035). */
export interface Limits {
  maxBodyBytes: number
  maxSessionsPerAdapter: number
  maxAdapters: number
  requestsPerSecond: number
  burst: number
  maxPendingRequestsPerAdapter: number
  maxEvents: number
  maxRequestIDs: number
  maxLongPolls: number
}

const limitProperties = (infoProperties.limits as { properties: Properties }).properties

/** The limits `GET /info` advertises and the fake enforces, read from the `const`s of `Info.limits` (OT-035). */
export const LIMITS: Readonly<Limits> = Object.freeze(Object.fromEntries(
  Object.keys(limitProperties).map((name) => [name, infoConst<number>(limitProperties, name)])
)) as unknown as Readonly<Limits>

/** `Info.server`'s const: the name `GET /info` reports (OT-034). */
export const SERVER_NAME = infoConst<string>(infoProperties, 'server')

/** `Info.api`'s const, also the discovery file's `api` (OT-003, OT-A04). */
export const API_VERSION = infoConst<number>(infoProperties, 'api')

/** The discovery file's `basePath` (OT-004); the document says it in prose only ("/a/v1"). */
export const BASE_PATH = '/a/v1'

/** The minor version this fake implements (OT-040); `Info.apiMinor`'s description names 2. */
export const API_MINOR = 2

/**
 * OT-A01: every code of the spec's `Error` enum and the HTTP status it answers with. The spec names the codes but no
 * statuses; this table is the ledger's decision. A test keeps it in step with the spec's enum.
 */
export const ERROR_STATUS = {
  bad_request: 400,
  invalid_field: 400,
  unauthorized: 401,
  forbidden_origin: 403,
  reserved_id: 403,
  not_found: 404,
  adapter_not_registered: 404,
  length_required: 411,
  payload_too_large: 413,
  unsupported_media_type: 415,
  limit_exceeded: 409,
  events_not_supported: 409,
  poll_pending: 409,
  invalid_cursor: 400,
  rate_limited: 429,
  api_disabled: 503,
  internal: 500
} as const

/** One of the spec's error codes (OT-150). */
export type ErrorCode = keyof typeof ERROR_STATUS

/** OT-002: where the real app keeps the file, under the user's home. */
export const SPEC_DISCOVERY_SUFFIX = join('Library', 'Application Support', 'Orbtile', 'adapter-api.json')

/**
 * The discovery path: an explicit one (the `--discovery` flag) wins, then `ORBTILE_DISCOVERY`, then the spec's
 * place under the home folder, so an adapter written for macOS finds the fake unchanged.
 */
export function resolveDiscoveryPath (explicit?: string, env: NodeJS.ProcessEnv = process.env): string {
  if (explicit !== undefined && explicit !== '') return explicit
  const fromEnv = env.ORBTILE_DISCOVERY
  if (fromEnv !== undefined && fromEnv !== '') return fromEnv
  return join(env.HOME ?? homedir(), SPEC_DISCOVERY_SUFFIX)
}
