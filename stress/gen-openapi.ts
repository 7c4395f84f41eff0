// Requests from an OpenAPI 3.1 document: every operation with its path and query parameters and its JSON request
// body, each value drawn from the document's own schemas (components.schemas become $defs for schema-arbitrary).
import fc from 'fast-check'
import { arbitraryFor, type Overrides } from '../conformance/server/core/schema-arbitrary.js'
import { fillPath, queryString, type AuthChoice, type Draft } from './draft.js'
import type { ServerName } from './targets.js'

type Schema = Record<string, any>

/** One operation of a document, its references resolved. */
export interface Operation {
  method: string
  path: string
  params: Array<{ name: string, in: string, required: boolean, schema: Schema }>
  body: Schema | undefined
  bodyRequired: boolean
  /** Whether the operation asks for the bearer token (the document's security, or the operation's own). */
  secured: boolean
}

/**
 * A document with `#/components/schemas/X` references turned into `#/$defs/X`, as schema-arbitrary reads them. A
 * string pattern without a maxLength gets one of 256: schema-arbitrary would otherwise cap it at 40 characters and
 * filter forever for a pattern whose strings are longer (the passport's 42-character address).
 */
export function schemaRoot (document: Schema): Schema {
  const text = JSON.stringify(document).replaceAll('"#/components/schemas/', '"#/$defs/')
  const root = JSON.parse(text, (_key, value: unknown) => {
    const schema = value as Schema
    if (schema !== null && typeof schema === 'object' && typeof schema.pattern === 'string' &&
      schema.maxLength === undefined) return { ...schema, maxLength: 256 }
    return value
  }) as Schema
  root.$defs = root.components?.schemas ?? {}
  return root
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options']

/** Every operation of a document (run through schemaRoot first). */
export function operationsOf (root: Schema): Operation[] {
  const resolve = (ref: Schema): Schema => {
    if (typeof ref.$ref !== 'string') return ref
    const name = ref.$ref.replace('#/components/parameters/', '')
    return root.components.parameters[name] as Schema
  }
  const out: Operation[] = []
  for (const [path, item] of Object.entries(root.paths as Record<string, Schema>)) {
    for (const method of METHODS) {
      const op = item[method] as Schema | undefined
      if (op === undefined) continue
      const params = [...(item.parameters ?? []), ...(op.parameters ?? [])].map(resolve).map((p: Schema) => ({
        name: p.name as string,
        in: p.in as string,
        required: p.required === true || p.in === 'path',
        schema: (p.schema ?? {}) as Schema
      }))
      const security = (op.security ?? root.security ?? []) as unknown[]
      out.push({
        method: method.toUpperCase(),
        path,
        params,
        body: op.requestBody?.content?.['application/json']?.schema,
        bodyRequired: op.requestBody?.required === true,
        secured: security.length > 0
      })
    }
  }
  return out
}

/** What a server's generator adds to the document: values that name real things, and how long a poll may wait. */
export interface Hints {
  /** By parameter name: an arbitrary mixed in with the schema's own. */
  params: Record<string, fc.Arbitrary<unknown>>
  /** Body overrides (schema-arbitrary's dotted paths), per operation. */
  body: (operation: Operation) => Overrides
  /** The longest hold of a long poll, in virtual ms, from its query; undefined for an ordinary request. */
  holdMs?: (operation: Operation, query: Record<string, unknown>) => number | undefined
  auth: (operation: Operation) => fc.Arbitrary<AuthChoice>
}

/** A request to one operation, its values from the document's schemas and the hints. */
export function operationDraft (server: ServerName, operation: Operation, root: Schema, hints: Hints):
fc.Arbitrary<Draft> {
  const value = (name: string, schema: Schema): fc.Arbitrary<unknown> => {
    const own = arbitraryFor(schema, root)
    const hint = hints.params[name]
    return hint === undefined ? own : fc.oneof({ weight: 4, arbitrary: hint }, { weight: 1, arbitrary: own })
  }
  const params = Object.fromEntries(operation.params.map((p) => [
    `${p.in}:${p.name}`,
    p.required ? value(p.name, p.schema) : fc.option(value(p.name, p.schema), { nil: undefined, freq: 2 })
  ]))
  const body = operation.body === undefined
    ? fc.constant(undefined)
    : operation.bodyRequired
      ? arbitraryFor(operation.body, root, hints.body(operation))
      : fc.option(arbitraryFor(operation.body, root, hints.body(operation)), { nil: undefined })
  return fc.record({ params: fc.record(params), body, auth: hints.auth(operation) }).map((drawn): Draft => {
    const path: Record<string, string> = {}
    const query: Record<string, unknown> = {}
    for (const [key, v] of Object.entries(drawn.params)) {
      const [where, name] = key.split(':') as [string, string]
      if (where === 'path') path[name] = typeof v === 'string' ? v : JSON.stringify(v)
      else if (where === 'query') query[name] = v
    }
    const draft: Draft = {
      server,
      operation: `${operation.method} ${operation.path}`,
      method: operation.method,
      path: fillPath(operation.path, path),
      query: queryString(query),
      body: drawn.body,
      auth: drawn.auth,
      headers: []
    }
    const hold = hints.holdMs?.(operation, query)
    if (hold !== undefined) draft.holdMs = hold
    return draft
  })
}

/** One arbitrary over every operation of a document that `keep` lets through. */
export function documentDraft (server: ServerName, root: Schema, hints: Hints, keep: (op: Operation) => boolean):
fc.Arbitrary<Draft> {
  const operations = operationsOf(root).filter(keep)
  if (operations.length === 0) throw new Error(`no operations to fuzz on ${server}`)
  return fc.oneof(...operations.map((op) => operationDraft(server, op, root, hints)))
}
