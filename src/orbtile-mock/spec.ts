import type { Ajv2020, ValidateFunction } from 'ajv/dist/2020.js'
import { createAjv } from '../shared/ajv.js'
import { readPackageJson } from '../shared/paths.js'

/** The spec document's file, copied verbatim into `specs/` as data. */
export const SPEC_FILE = 'specs/orbtile-adapter-protocol-v1.2.schema.json'

interface SpecDocument {
  $id: string
  $defs: Record<string, Record<string, unknown>>
}

const document = readPackageJson<SpecDocument>(SPEC_FILE)

/** The spec document itself, for tests and for generators that walk it. */
export const spec: Readonly<SpecDocument> = document

// One ajv instance holds the whole document; each validator is a `$ref` into its `$defs`, so nothing is copied.
// It is made on first use: start-up does not pay for validators no request has needed yet. It collects every
// error (with the failing schema) so that the reported field can be the first in the request's own order (OT-A02).
let ajv: Ajv2020 | undefined
const validators = new Map<string, ValidateFunction>()

/** A validator compiled from `$defs/<name>` of the spec document. */
export function validatorFor (name: string): ValidateFunction {
  let validate = validators.get(name)
  if (validate === undefined) {
    if (!(name in document.$defs)) throw new Error(`the Orbtile spec has no $defs/${name}`)
    ajv ??= createAjv({ allErrors: true, verbose: true }).addSchema(document)
    validate = ajv.compile({ $ref: `${document.$id}#/$defs/${name}` })
    validators.set(name, validate)
  }
  return validate
}

/** A `$defs` entry of the spec document. */
export function def (name: string): Record<string, unknown> {
  const found = document.$defs[name]
  if (found === undefined) throw new Error(`the Orbtile spec has no $defs/${name}`)
  return found
}

/** Every `Activity` value, in the spec's enum order (OT-095, OT-A29). */
export const ACTIVITIES: readonly string[] = Object.freeze([...(def('Activity').enum as string[])])

/** Every error code of the spec's `Error` enum (OT-150). */
export const ERROR_CODES = Object.freeze([
  ...((def('Error').properties as any).error.properties.code.enum as string[])
])

type InfoLimitsSchema = Record<string, { const: number }>

/** The limits `GET /info` advertises, read from the `const`s of `Info.limits` (OT-035). */
export const LIMITS = Object.freeze(Object.fromEntries(
  Object.entries((def('Info').properties as any).limits.properties as InfoLimitsSchema)
    .map(([name, schema]) => [name, schema.const])
)) as Readonly<{
  maxBodyBytes: number
  maxSessionsPerAdapter: number
  maxAdapters: number
  requestsPerSecond: number
  burst: number
  maxPendingRequestsPerAdapter: number
  maxEvents: number
  maxRequestIDs: number
  maxLongPolls: number
}>

/** The discovery file's fixed fields (OT-003, OT-004, OT-A04). */
export const API_VERSION = 1
export const BASE_PATH = '/a/v1'
/** The minor version this fake implements (OT-040). */
export const API_MINOR = 2
