// A draft is a request as fast-check generates it: plain data, free of the run's tokens. `materialize` turns it
// into bytes-to-be against the run's state (the discovery token, leases, app tokens), then applies its mutation.
import { mutate, type Mutation } from './mutate.js'
import type { HttpRequest, RunState } from './request.js'
import type { ServerName, Target } from './targets.js'

/** Who the request says it is. */
export type AuthChoice =
  | { kind: 'orbtile' }
  | { kind: 'orb', app: string }
  | { kind: 'none' }

/** One generated request before the run's tokens are filled in. */
export interface Draft {
  server: ServerName
  /** The operation, as the document names it: `PUT /a/v1/adapters/{adapterId}`. */
  operation: string
  method: string
  /** The concrete path, base included, and its query (`?…` or ``). */
  path: string
  query: string
  /** A JSON value to send as the body; undefined for none. */
  body: unknown
  auth: AuthChoice
  /** An Orbtile adapter id whose lease token goes in X-Orbtile-Adapter-Token. */
  lease?: string
  /** Headers beside Host, Authorization and Content-Type. */
  headers: Array<[string, string]>
  /** A long poll's longest hold, in virtual ms. */
  holdMs?: number
  mutation?: Mutation
}

/** The label a report groups by: `valid GET /info` or `wrong-type PUT /a/v1/adapters/{adapterId}`. */
export function draftLabel (draft: Draft): string {
  return `${draft.mutation?.kind ?? 'valid'} ${draft.operation}`
}

/** The request a draft stands for, against this run's state, mutated if the draft says so. */
export function materialize (draft: Draft, target: Target, state: RunState): HttpRequest {
  const headers: Array<[string, string]> = [['Host', target.host]]
  if (draft.auth.kind === 'orbtile') headers.push(['Authorization', `Bearer ${state.orbtileToken}`])
  else if (draft.auth.kind === 'orb') headers.push(['Authorization', `Bearer ${state.orbToken(draft.auth.app)}`])
  if (draft.lease !== undefined) {
    const lease = state.leases.get(draft.lease)
    if (lease !== undefined) headers.push(['X-Orbtile-Adapter-Token', lease])
  }
  const body = draft.body === undefined ? undefined : Buffer.from(JSON.stringify(draft.body))
  if (body !== undefined) headers.push(['Content-Type', 'application/json'])
  headers.push(...draft.headers)
  const request: HttpRequest = { method: draft.method, target: draft.path + draft.query, headers }
  if (body !== undefined) request.body = body
  if (draft.holdMs !== undefined) request.holdMs = draft.holdMs
  return draft.mutation === undefined ? request : mutate(request, draft, target, draft.mutation)
}

/** Puts path parameters into an OpenAPI-style template, percent-encoded. */
export function fillPath (template: string, params: Record<string, string>): string {
  return template.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(params[name] ?? name))
}

/** A query string from values (undefined ones left out); arrays repeat the name. */
export function queryString (values: Record<string, unknown>): string {
  const parts: string[] = []
  for (const [name, value] of Object.entries(values)) {
    if (value === undefined) continue
    for (const one of Array.isArray(value) ? value : [value]) {
      const text = typeof one === 'string' ? one : JSON.stringify(one)
      parts.push(`${encodeURIComponent(name)}=${encodeURIComponent(text)}`)
    }
  }
  return parts.length === 0 ? '' : `?${parts.join('&')}`
}
