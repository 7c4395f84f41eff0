import type { ErrorObject, ValidateFunction } from 'ajv'
import { createAjv } from '../shared/ajv.js'
import { readPackageJson } from '../shared/paths.js'
import { orbErrors } from './errors.js'
import { jsonPointerToPath } from './world.js'

/** The Orb bot API's OpenAPI document, copied verbatim into `specs/` as data. */
export const ORB_SPEC_FILE = 'specs/orb-bot-api.openapi.json'

interface Parameter { name: string, in: 'query' | 'path' | 'header', required?: boolean, schema: Record<string, unknown> }
interface Operation { parameters?: Parameter[], requestBody?: { required?: boolean, content: Record<string, { schema: object }> } }
interface OpenApi { paths: Record<string, Record<string, Operation>>, components: Record<string, unknown> }

let doc: OpenApi | undefined
/** The spec document, read once. */
export function orbSpec (): OpenApi {
  doc ??= readPackageJson<OpenApi>(ORB_SPEC_FILE)
  return doc
}

let ajv: ReturnType<typeof createAjv> | undefined
function specAjv (): ReturnType<typeof createAjv> {
  if (ajv === undefined) {
    ajv = createAjv({ useDefaults: true })
    const { paths, components } = orbSpec()
    ajv.addSchema({ $id: 'orb', paths, components })
  }
  return ajv
}

export interface OperationValidator {
  /** Validates (and for a query, converts) the request's parts; throws the spec's 400 on the first fault. */
  query(raw: unknown): Record<string, unknown>
  params(raw: unknown): Record<string, unknown>
  body(raw: unknown): Record<string, unknown>
}

const cache = new Map<string, OperationValidator>()

/**
 * The validators of one operation, compiled from the spec document itself (its parameter and request-body schemas).
 * Query and path values are strings on the wire: one that spells an integer becomes that integer where the schema
 * wants one, anything else stays a string and fails the schema (so `limit=abc` and `limit=1.5` are 400).
 */
export function operation (method: string, path: string): OperationValidator {
  const key = `${method} ${path}`
  let found = cache.get(key)
  if (found !== undefined) return found
  const op = orbSpec().paths[path]?.[method.toLowerCase()]
  if (op === undefined) throw new Error(`the spec has no operation ${key}`)
  const compileParams = (where: 'query' | 'path'): ((raw: unknown) => Record<string, unknown>) => {
    const params = (op.parameters ?? []).filter((p) => p.in === where)
    const schema = {
      type: 'object',
      properties: Object.fromEntries(params.map((p) => [p.name, structuredClone(p.schema)])),
      required: params.filter((p) => p.required === true).map((p) => p.name)
    }
    const validate = specAjv().compile(schema)
    const integers = new Set(params.filter((p) => p.schema.type === 'integer').map((p) => p.name))
    const declared = new Set(params.map((p) => p.name))
    return (raw) => {
      // ORB-A23: parameters the operation does not declare are ignored, however often they come.
      const value: Record<string, unknown> = {}
      for (const [name, given] of Object.entries((raw ?? {}) as Record<string, unknown>)) {
        if (!declared.has(name)) continue
        if (Array.isArray(given)) throw orbErrors.bad(`${where}.${name} is given more than once`)
        value[name] = integers.has(name) && typeof given === 'string' && INTEGER.test(given) ? toInteger(given) : given
      }
      if (!validate(value)) throw orbErrors.bad(describe(where, validate.errors))
      return value
    }
  }
  const media = op.requestBody?.content['application/json']
  let bodyValidate: ValidateFunction | undefined
  const pointer = `orb#/paths/${path.replaceAll('~', '~0').replaceAll('/', '~1')}/${method.toLowerCase()}/requestBody/content/application~1json/schema`
  found = {
    query: compileParams('query'),
    params: compileParams('path'),
    body: (raw) => {
      if (media === undefined) return (raw ?? {}) as Record<string, unknown>
      if (raw === undefined || raw === null) {
        if (op.requestBody?.required === true) throw orbErrors.bad('A JSON body is required')
        return {}
      }
      bodyValidate ??= specAjv().compile({ $ref: pointer })
      if (!bodyValidate(raw)) throw orbErrors.bad(describe('body', bodyValidate.errors))
      return raw as Record<string, unknown>
    }
  }
  cache.set(key, found)
  return found
}

const INTEGER = /^-?(?:0|[1-9][0-9]*)$/

// An integer past what a double holds exactly is still an integer: it stands at the safe bound, so `before` of
// 10^20 means "everything", an id of 10^20 is simply unknown (404), and `limit` of 10^20 is over its maximum.
function toInteger (text: string): number {
  const n = Number(text)
  return Number.isSafeInteger(n) ? n : n < 0 ? Number.MIN_SAFE_INTEGER : Number.MAX_SAFE_INTEGER
}

function describe (where: string, errors: ErrorObject[] | null | undefined): string {
  const error = errors?.[0]
  if (error === undefined) return `${where} is not valid`
  const path = jsonPointerToPath(error.instancePath)
  const at = path === '' ? where : path.startsWith('[') ? `${where}${path}` : `${where}.${path}`
  if (error.keyword === 'required') return `${at}.${(error.params as { missingProperty: string }).missingProperty} is required`
  if (error.keyword === 'enum') return `${at} must be one of ${((error.params as { allowedValues: unknown[] }).allowedValues).map((v) => JSON.stringify(v)).join(', ')}`
  return `${at} ${error.message ?? 'is not valid'}`
}
