import type { ErrorObject } from 'ajv/dist/2020.js'
import { familyValidators, type ValidatorFamily } from './ajv.js'
import { StartupError } from './startup-error.js'

/** An options schema as a validator family of one (`options`), compiled by the build like the spec's. */
export const optionsFamily = (name: string, schema: object): ValidatorFamily => ({
  name: `${name}-options`,
  options: { useDefaults: true, strict: true },
  documents: [],
  entries: { options: schema }
})

/**
 * An options schema as a function that fills in defaults, validates, and freezes, failing with one coded
 * StartupError that names the bad option (fastify's habit: options are validated once, at the door). Keys listed in
 * `passThrough` hold live objects (a clock, a logger) and are not validated by the schema.
 */
export function optionsValidator<T extends object> (what: string, family: ValidatorFamily,
  passThrough: readonly string[] = []): (input: object) => Readonly<T> {
  const validators = familyValidators(() => family)
  return (input) => {
    const validate = validators('options')
    const copy: Record<string, unknown> = {}
    const kept: Record<string, unknown> = {}
    for (const [key, value] of Object.entries(input)) {
      if (value === undefined) continue
      if (passThrough.includes(key)) kept[key] = value
      else copy[key] = value
    }
    if (!validate(copy)) throw new StartupError('ORBTEST_BAD_OPTION', `${what}: ${describeError(validate.errors?.[0])}`)
    return Object.freeze({ ...copy, ...kept }) as Readonly<T>
  }
}

function describeError (error: ErrorObject | undefined): string {
  if (error === undefined) return 'invalid options'
  if (error.keyword === 'additionalProperties') return `unknown option ${JSON.stringify(error.params.additionalProperty)}`
  const name = error.instancePath.replace(/^\//, '').replaceAll('/', '.') || 'options'
  return `option ${name} ${error.message ?? 'is invalid'}`
}
