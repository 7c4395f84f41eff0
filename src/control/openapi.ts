import type { ValidateFunction } from 'ajv/dist/2020.js'
import type { FastifyInstance, HTTPMethods } from 'fastify'
import { familyValidators, type ValidatorFamily } from '../shared/ajv.js'
import { readPackageJson } from '../shared/paths.js'
import { ControlError } from './errors.js'

/** The control API's OpenAPI 3.1 document, kept in the repo and served as it is. */
export const CONTROL_OPENAPI_FILE = 'src/control/openapi.json'

/** The parts of the OpenAPI document the control server reads. */
export interface OpenApiDocument {
  paths: Record<string, Record<string, unknown>>
  components: { schemas: Record<string, object> }
}

let shipped: OpenApiDocument | undefined

/** The control API's OpenAPI document from the package, read once per process (every control server reads it). */
export function loadControlDocument (): OpenApiDocument {
  shipped ??= readPackageJson<OpenApiDocument>(CONTROL_OPENAPI_FILE)
  return shipped
}

// Each document's validators, made once: a control server per fake (client judging starts one per scenario) would
// otherwise hash the document again to find the build's module.
const readers = new WeakMap<OpenApiDocument, (name: string) => ValidateFunction>()

/** Checks a request body against one of the document's schemas; returns it typed, or throws bad_request. */
export type BodyReader = <T>(schema: string, value: unknown) => T

/** The control API's request schemas as a validator family: each a `$ref` into the document's components. */
export const controlFamily = (document: OpenApiDocument): ValidatorFamily => ({
  name: 'control-bodies',
  options: {},
  documents: [{ $id: 'control', components: document.components }],
  entries: Object.fromEntries(Object.keys(document.components.schemas)
    .map((name) => [name, { $ref: `control#/components/schemas/${name}` }]))
})

/** A BodyReader for the document's `components.schemas` (compiled by the build; see ValidatorFamily). */
export function bodyReader (document: OpenApiDocument): BodyReader {
  let validatorFor = readers.get(document)
  if (validatorFor === undefined) {
    validatorFor = familyValidators(() => controlFamily(document))
    readers.set(document, validatorFor)
  }
  return <T>(schema: string, value: unknown): T => {
    const validate = validatorFor(schema)
    if (!validate(value)) {
      const error = validate.errors?.[0]
      const where = error?.instancePath === '' ? 'body' : `body${error?.instancePath.replaceAll('/', '.')}`
      throw new ControlError('bad_request', `${where} ${error?.message ?? 'is invalid'} (schema ${schema})`)
    }
    return value as T
  }
}

const METHODS: readonly HTTPMethods[] = ['DELETE', 'GET', 'PATCH', 'POST', 'PUT']

/** Every documented path answers 405, with Allow, to the methods the document does not list for it. */
export function registerMethodNotAllowed (app: FastifyInstance, document: OpenApiDocument): void {
  for (const [path, operations] of Object.entries(document.paths)) {
    const allow = Object.keys(operations).map((method) => method.toUpperCase())
    const others = METHODS.filter((method) => !allow.includes(method))
    app.route({
      method: others,
      url: path.replace(/\{(\w+)\}/g, ':$1'),
      handler: async function methodNotAllowed (_request, reply) {
        reply.header('allow', allow.join(', '))
        throw new ControlError('method_not_allowed', `${path} accepts ${allow.join(', ')}`)
      }
    })
  }
}
