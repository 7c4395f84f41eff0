import type { ErrorObject, ValidateFunction } from 'ajv'
import { familyValidators, type ValidatorFamily } from '../shared/ajv.js'
import { ORB_SPEC, type OrbOperation } from '../spec/orb.js'
import { orbErrors } from './errors.js'
import { jsonPointerToPath } from './world.js'

// The fake's validators, compiled from the spec document (src/spec/orb.ts holds the document as data).
// Kept for callers of the old path (conformance/server/orb/): the document and its loader.
export { ORB_SPEC_FILE, orbSpec } from '../spec/orb.js'

/** The validators of one operation: each validates (a query also converts) one part, throwing the spec's 400. */
export interface OperationValidator {
  query(raw: unknown): Record<string, unknown>
  params(raw: unknown): Record<string, unknown>
  body(raw: unknown): Record<string, unknown>
}

type PartValidator = (raw: unknown) => Record<string, unknown>

/** A part's schema: the request body's, or an object of the query's or the path's parameters. */
function paramsSchema (op: OrbOperation, where: 'query' | 'path'): object {
  const params = (op.parameters ?? []).filter((p) => p.in === where)
  return {
    type: 'object',
    properties: Object.fromEntries(params.map((p) => [p.name, structuredClone(p.schema)])),
    required: params.filter((p) => p.required === true).map((p) => p.name)
  }
}

const operations = (): Array<[string, string, OrbOperation]> =>
  Object.entries(ORB_SPEC.paths).flatMap(([path, ops]) => Object.entries(ops).map(([method, op]) =>
    [method, path, op] as [string, string, OrbOperation]))

const key = (method: string, path: string, part: string): string => `${method.toUpperCase()} ${path} ${part}`

/**
 * Every operation's part schemas as one validator family, compiled by the build (dist/validators/orb-operations.cjs;
 * see ValidatorFamily): a body schema is a `$ref` into the document, so nothing is copied. Defaults are filled in
 * (ORB-033's `limit` of 50, ORB-044's `after` of 0).
 */
export const orbOperationsFamily = (): ValidatorFamily => ({
  name: 'orb-operations',
  options: { useDefaults: true },
  documents: [{ $id: 'orb', paths: ORB_SPEC.paths, components: ORB_SPEC.components }],
  entries: Object.fromEntries(operations().flatMap(([method, path, op]) => [
    [key(method, path, 'query'), paramsSchema(op, 'query')],
    [key(method, path, 'path'), paramsSchema(op, 'path')],
    ...(op.requestBody?.content['application/json'] === undefined
      ? []
      : [[key(method, path, 'body'), {
          $ref: `orb#/paths/${path.replaceAll('~', '~0').replaceAll('/', '~1')}/${method}/requestBody/content/application~1json/schema`
        }]])
  ]))
})

const validators = familyValidators(orbOperationsFamily)

/**
 * The validators of one operation, from the spec document itself (its parameter and request-body schemas). Query
 * and path values are strings on the wire: one that spells an integer becomes that integer where the schema wants
 * one, anything else stays a string and fails the schema (so `limit=abc` and `limit=1.5` are 400).
 */
function operationValidator (method: string, path: string, op: OrbOperation): OperationValidator {
  const hasBody = op.requestBody?.content['application/json'] !== undefined
  const required = op.requestBody?.required === true
  let validateBody: ValidateFunction | undefined
  return {
    query: paramsValidator(method, path, op, 'query'),
    params: paramsValidator(method, path, op, 'path'),
    body: (raw) => {
      if (!hasBody) return (raw ?? {}) as Record<string, unknown>
      if (raw === undefined || raw === null) {
        if (required) throw orbErrors.bad('A JSON body is required')
        return {}
      }
      validateBody ??= validators(key(method, path, 'body'))
      if (!validateBody(raw)) throw orbErrors.bad(describe('body', validateBody.errors))
      return raw as Record<string, unknown>
    }
  }
}

function paramsValidator (method: string, path: string, op: OrbOperation, where: 'query' | 'path'): PartValidator {
  const params = (op.parameters ?? []).filter((p) => p.in === where)
  const integers = new Set(params.filter((p) => p.schema.type === 'integer').map((p) => p.name))
  const declared = new Set(params.map((p) => p.name))
  let validate: ValidateFunction | undefined
  return (raw) => {
    // ORB-A23: parameters the operation does not declare are ignored, however often they come.
    const value: Record<string, unknown> = {}
    for (const [name, given] of Object.entries((raw ?? {}) as Record<string, unknown>)) {
      if (!declared.has(name)) continue
      if (Array.isArray(given)) throw orbErrors.bad(`${where}.${name} is given more than once`)
      value[name] = integers.has(name) && typeof given === 'string' && INTEGER.test(given) ? toInteger(given) : given
    }
    validate ??= validators(key(method, path, where))
    if (!validate(value)) throw orbErrors.bad(describe(where, validate.errors))
    return value
  }
}

/** Every operation's validators by `METHOD path`. A memo of pure results of a fixed document, shared in the process. */
const VALIDATORS: ReadonlyMap<string, OperationValidator> = new Map(
  operations().map(([method, path, op]) => [`${method.toUpperCase()} ${path}`, operationValidator(method, path, op)])
)

/** The compiled validators of one operation of the spec; an operation the spec lacks is a programming error. */
export function operation (method: string, path: string): OperationValidator {
  const found = VALIDATORS.get(`${method.toUpperCase()} ${path}`)
  if (found === undefined) throw new Error(`the spec has no operation ${method} ${path}`)
  return found
}

const INTEGER = /^-?(?:0|[1-9][0-9]*)$/

// An integer past what a double holds exactly is still an integer: it stands at the safe bound, so `before` of
// 10^20 means "everything", an id of 10^20 is simply unknown (404), and `limit` of 10^20 is over its maximum.
function toInteger (text: string): number {
  const n = Number(text)
  return Number.isSafeInteger(n) ? n : n < 0 ? Number.MIN_SAFE_INTEGER : Number.MAX_SAFE_INTEGER
}

/** The first schema error, as the 400's message: `query.limit must be <= 50`, `body.channel is required`. */
function describe (where: string, errors: ErrorObject[] | null | undefined): string {
  const error = errors?.[0]
  if (error === undefined) return `${where} is not valid`
  const path = jsonPointerToPath(error.instancePath)
  const at = path === '' ? where : path.startsWith('[') ? `${where}${path}` : `${where}.${path}`
  const params = error.params as { missingProperty?: string, allowedValues?: unknown[] }
  if (error.keyword === 'required') return `${at}.${params.missingProperty!} is required`
  if (error.keyword === 'enum') return `${at} must be one of ${params.allowedValues!.map((v) => JSON.stringify(v)).join(', ')}`
  return `${at} ${error.message ?? 'is not valid'}`
}
