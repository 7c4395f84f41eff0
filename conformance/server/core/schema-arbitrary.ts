import fc from 'fast-check'

type Schema = Record<string, any>

/** Replaces the arbitrary at a dotted path (`icon.png`) with one of the caller's. */
export type Overrides = Record<string, fc.Arbitrary<unknown>>

/**
 * A fast-check arbitrary of JSON values shaped by a JSON Schema (the subset the spec documents use: $ref into
 * $defs, const, enum, type, pattern, lengths, bounds, properties and required, items, uniqueItems, propertyNames
 * with additionalProperties, oneOf and anyOf). Conditionals (`if`/`then`) and cross-field rules are not modelled:
 * filter the values through the schema's validator to keep only valid ones. Shared by the test suite and the
 * conformance cases.
 */
export function arbitraryFor (
  schema: Schema,
  root: Schema,
  overrides: Overrides = {},
  path = ''
): fc.Arbitrary<unknown> {
  if (overrides[path] !== undefined) return overrides[path]!
  if (typeof schema.$ref === 'string') {
    return arbitraryFor(root.$defs[schema.$ref.replace('#/$defs/', '')], root, overrides, path)
  }
  const branches = (schema.oneOf ?? schema.anyOf) as Schema[] | undefined
  if (branches !== undefined && schema.type === undefined && schema.properties === undefined) {
    return fc.oneof(...branches.map((branch) => arbitraryFor(branch, root, overrides, path)))
  }
  if ('const' in schema) return fc.constant(schema.const)
  if (Array.isArray(schema.enum)) return fc.constantFrom(...schema.enum)
  const type =
    schema.type ?? (schema.properties !== undefined || schema.propertyNames !== undefined ? 'object' : undefined)
  const make = typeof type === 'string' && Object.hasOwn(BY_TYPE, type) ? BY_TYPE[type] : undefined
  return make === undefined ? fc.jsonValue() : make(schema, root, overrides, path)
}

/** The arbitrary of one `type` of JSON Schema; `path` is where it sits, for the caller's overrides. */
type TypedArbitrary = (schema: Schema, root: Schema, overrides: Overrides, path: string) => fc.Arbitrary<unknown>

function integerArbitrary (schema: Schema): fc.Arbitrary<number> {
  return fc.integer({
    min: schema.minimum ?? -1e6,
    max: schema.maximum ?? (schema.exclusiveMaximum === undefined ? 1e6 : schema.exclusiveMaximum - 1)
  })
}

/** Uniform over the range in steps of 1/10000 (fc.double would crowd near 0), plus the bounds themselves. */
function numberArbitrary (schema: Schema): fc.Arbitrary<number> {
  const min: number = schema.minimum ?? -1e6
  const exclusive = schema.maximum === undefined && schema.exclusiveMaximum !== undefined
  const max: number = schema.maximum ?? schema.exclusiveMaximum ?? 1e6
  const steps = fc
    .integer({ min: Math.ceil(min * 10_000), max: Math.floor(max * 10_000) - (exclusive ? 1 : 0) })
    .map((n) => n / 10_000)
  return fc.oneof(
    { weight: 9, arbitrary: steps },
    { weight: 1, arbitrary: fc.constantFrom(min, exclusive ? max - 1e-9 : max) }
  )
}

function arrayArbitrary (schema: Schema, root: Schema, overrides: Overrides, path: string): fc.Arbitrary<unknown[]> {
  const items = arbitraryFor(schema.items ?? {}, root, overrides, `${path}[]`)
  const constraints = { minLength: schema.minItems ?? 0, maxLength: schema.maxItems ?? 5 }
  return schema.uniqueItems === true
    ? fc.uniqueArray(items, { ...constraints, selector: (v) => JSON.stringify(v) })
    : fc.array(items, constraints)
}

function stringArbitrary (schema: Schema): fc.Arbitrary<string> {
  const min = schema.minLength ?? 0
  // Without a maxLength a pattern says how long its strings are (an address is 42 characters); the 40-character
  // default is for free text only, or a longer pattern's strings would be filtered out for ever.
  const max = schema.maxLength ?? (typeof schema.pattern === 'string' ? Number.MAX_SAFE_INTEGER : 40)
  const fits = (s: string): boolean => {
    const length = [...s].length
    return length >= min && length <= max
  }
  if (schema.format === 'uri') {
    return fc
      .webUrl({ validSchemes: /^\^https:/.test(schema.pattern ?? '') ? ['https'] : ['http', 'https'] })
      .filter(fits)
  }
  if (typeof schema.pattern === 'string') return fc.stringMatching(new RegExp(schema.pattern)).filter(fits)
  return fc.string({ unit: 'binary', minLength: min, maxLength: Math.min(max, 60) })
}

function objectArbitrary (schema: Schema, root: Schema, overrides: Overrides, path: string): fc.Arbitrary<unknown> {
  const join = (key: string): string => path === '' ? key : `${path}.${key}`
  if (schema.properties === undefined && schema.propertyNames !== undefined) {
    // A map with constrained keys (StateColours).
    const keys = arbitraryFor(schema.propertyNames, root)
    const values = arbitraryFor(schema.additionalProperties ?? {}, root)
    return fc.dictionary(keys as fc.Arbitrary<string>, values, {
      minKeys: schema.minProperties ?? 0,
      maxKeys: schema.maxProperties ?? 10
    })
  }
  const properties = (schema.properties ?? {}) as Record<string, Schema>
  const record = fc.record(
    Object.fromEntries(
      Object.entries(properties).map(([key, child]) => [key, arbitraryFor(child, root, overrides, join(key))])
    ),
    { requiredKeys: (schema.required ?? []) as string[] }
  )
  return schema.minProperties === undefined
    ? record
    : record.filter((value) => Object.keys(value).length >= schema.minProperties)
}

/** Each JSON Schema `type` the spec documents use, and its arbitrary; any other is any JSON value. */
const BY_TYPE: Record<string, TypedArbitrary> = {
  null: () => fc.constant(null),
  boolean: () => fc.boolean(),
  integer: integerArbitrary,
  number: numberArbitrary,
  string: stringArbitrary,
  array: arrayArbitrary,
  object: objectArbitrary
}
