import type { ErrorObject } from 'ajv/dist/2020.js'
import { errors, type OrbtileError } from './errors.js'
import { def, validatorFor } from '../spec/orbtile.js'

type Schema = Record<string, unknown>
type Json = unknown

/** A path into a request body: object keys and array indices. */
export type FieldPath = Array<string | number>

/** OT-A25: `palette.baseHue`, `urlSchemes[2]`, `sessions[3].title`. */
export function formatField (path: FieldPath): string {
  return path.map((segment, i) => typeof segment === 'number' ? `[${segment}]` : i === 0 ? segment : `.${segment}`).join('')
}

function resolve (schema: Schema): Schema {
  const ref = schema.$ref
  if (typeof ref === 'string' && ref.startsWith('#/$defs/')) return resolve(def(ref.slice('#/$defs/'.length)))
  return schema
}

// The branch of a `oneOf`/`anyOf` that describes an object (Icon in `Icon | null`, StateColours in `… | null`);
// for an `allOf` (a batch item: SessionUpdate plus `id`), every branch's properties together.
function objectBranch (schema: Schema): Schema | undefined {
  if (Array.isArray(schema.allOf)) {
    const properties: Record<string, Schema> = { ...(schema.properties as Record<string, Schema> | undefined) }
    for (const branch of schema.allOf as Schema[]) {
      Object.assign(properties, objectBranch(resolve(branch))?.properties as Record<string, Schema> | undefined)
    }
    return { properties }
  }
  if (schema.properties !== undefined || schema.propertyNames !== undefined || schema.type === 'object') return schema
  for (const branch of [...(schema.oneOf as Schema[] ?? []), ...(schema.anyOf as Schema[] ?? [])]) {
    const found = objectBranch(resolve(branch))
    if (found !== undefined) return found
  }
  return undefined
}

/**
 * OT-007, OT-A10: drops every key the spec does not name, at any depth, and lists each by dotted path. The
 * prose rule wins over `additionalProperties: false`, so closed objects (Palette, Glyph, Message) lose their
 * unknown keys too. Maps whose keys are constrained instead (StateColours' `propertyNames`) are left whole: a bad
 * key there is an error, not an unknown field.
 */
export function stripUnknown (defName: string, value: Json): { value: Json, unknown: string[] } {
  const unknown: string[] = []
  const walk = (schema: Schema, node: Json, path: FieldPath): Json => {
    const resolved = resolve(schema)
    if (Array.isArray(node)) {
      const items = resolved.items as Schema | undefined
      return items === undefined ? node : node.map((item, i) => walk(items, item, [...path, i]))
    }
    if (node === null || typeof node !== 'object') return node
    const properties = objectBranch(resolved)?.properties as Record<string, Schema> | undefined
    if (properties === undefined) return node
    const out: Record<string, Json> = {}
    for (const [key, child] of Object.entries(node)) {
      if (Object.hasOwn(properties, key)) out[key] = walk(properties[key]!, child, [...path, key])
      else unknown.push(formatField([...path, key]))
    }
    return out
  }
  return { value: walk(def(defName), value, []), unknown }
}

/**
 * Validates a body against `$defs/<defName>` of the spec and returns the invalid_field error for the first
 * failing field in the body's own order (OT-A02 step 10, OT-A25), or undefined when the body is valid.
 */
export function schemaError (defName: string, value: Json, prefix: FieldPath = []): OrbtileError | undefined {
  return schemaFault(defName, value, prefix)?.error
}

/** Like schemaError, with the failing field's path (without `prefix`), so other checks can be ranked against it. */
export function schemaFault (defName: string, value: Json, prefix: FieldPath = []):
{ error: OrbtileError, path: FieldPath } | undefined {
  const validate = validatorFor(defName)
  if (validate(value)) return undefined
  const found = (validate.errors ?? [])
    .map((error) => ({ error, path: fieldOf(error) }))
    .filter(({ error }) => isReportable(error))
  const reportable = found.filter(({ error, path }) => !isNullBranch(error) ||
    !found.some((other) => other.error !== error && !isNullBranch(other.error) && startsWith(other.path, path)))
  const chosen = (reportable.length > 0 ? reportable : found)
    .sort((a, b) => compareKeys(orderKey(value, a.path), orderKey(value, b.path)))[0]
  if (chosen === undefined) {
    return { error: errors.invalidField(formatField(prefix), 'the body does not match the spec'), path: [] }
  }
  const field = formatField([...prefix, ...chosen.path])
  const message = `${field} ${describe(chosen.error, validate.errors ?? [])}`
  return { error: errors.invalidField(field, message), path: chosen.path }
}

function describe (error: ErrorObject, all: ErrorObject[]): string {
  if (error.keyword === 'if') {
    // Say what the conditional rule wanted, from its `then` branch: a key it requires, or a value it must contain.
    const then = all.filter((other) => /\/then\//.test(other.schemaPath))
    const required = then.find((other) => other.keyword === 'required')
    if (required !== undefined) return `requires ${String(required.params.missingProperty)} as well`
    const contains = then.find((other) => other.keyword === 'contains')
    const wanted = ((contains?.parentSchema as Schema | undefined)?.contains as Schema | undefined)?.const
    if (contains !== undefined) return `requires ${formatField(pointer(contains.instancePath))} to contain ${JSON.stringify(wanted)}`
  }
  if (error.keyword === 'required') return 'is required'
  if (error.propertyName !== undefined) return `is not an allowed key (${error.message ?? 'invalid'})`
  return error.message ?? 'is invalid'
}

// Combinators only summarise their branches; the `then` branch's details are replaced by the `if` that triggered it.
function isReportable (error: ErrorObject): boolean {
  if (['oneOf', 'anyOf', 'allOf', 'then', 'else', 'not'].includes(error.keyword)) return false
  return !/\/then\//.test(error.schemaPath)
}

// The `null` alternative of a nullable field fails whenever the object branch does; it is noise unless alone.
function isNullBranch (error: ErrorObject): boolean {
  return error.keyword === 'type' && error.params.type === 'null'
}

function pointer (instancePath: string): string[] {
  if (instancePath === '') return []
  return instancePath.slice(1).split('/').map((s) => s.replaceAll('~1', '/').replaceAll('~0', '~'))
}

// Where an error points, as a path of keys (array indices as numbers).
function fieldOf (error: ErrorObject): FieldPath {
  const base: FieldPath = pointer(error.instancePath).map((s) => /^(0|[1-9]\d*)$/.test(s) ? Number(s) : s)
  // Errors inside `propertyNames` name the offending key (StateColours' `error`, `empty`, …).
  if (error.propertyName !== undefined) return [...base, error.propertyName]
  switch (error.keyword) {
    case 'required':
      // A requirement of one of several keys (Icon: png or appBundleId) belongs to the object, not to a key.
      return /\/anyOf\//.test(error.schemaPath) ? base : [...base, error.params.missingProperty as string]
    case 'propertyNames':
      return [...base, error.params.propertyName as string]
    case 'additionalProperties':
      return [...base, error.params.additionalProperty as string]
    case 'dependentRequired':
      return [...base, error.params.property as string]
    case 'if': {
      // A conditional rule (tapBehavior needs capabilities with "tap") is reported on the key that triggers it.
      const condition = (error.parentSchema as Schema | undefined)?.if as Schema | undefined
      const trigger = condition?.required as string[] | undefined
      return trigger?.[0] === undefined ? base : [...base, trigger[0]]
    }
    default:
      return base
  }
}

function startsWith (path: FieldPath, prefix: FieldPath): boolean {
  return prefix.every((segment, i) => path[i] === segment)
}

/**
 * The position of a path in the body: key order of each object on the way, array index, -1 for a missing key
 * (an object's missing keys are reported before its present ones). Compare two with compareKeys.
 */
export function orderKey (value: Json, path: FieldPath): number[] {
  const key: number[] = []
  let node = value
  for (const segment of path) {
    if (typeof segment === 'number') {
      key.push(segment)
      node = Array.isArray(node) ? node[segment] : undefined
    } else if (node !== null && typeof node === 'object' && !Array.isArray(node)) {
      key.push(Object.keys(node).indexOf(segment))
      node = (node as Record<string, Json>)[segment]
    } else {
      key.push(-1)
      node = undefined
    }
  }
  return key
}

/** Orders two orderKey results: the field that stands first in the body comes first (OT-A25). */
export function compareKeys (a: number[], b: number[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    if (a[i] !== b[i]) return a[i]! - b[i]!
  }
  return a.length - b.length
}
