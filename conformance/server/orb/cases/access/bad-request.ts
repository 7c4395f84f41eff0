import fc from 'fast-check'
import type { ScopeName } from './access-support.js'

// The shared parts of the bad-request property (bad-requests.ts): what one request is, and the values a field must
// refuse.

/** A request that cannot succeed, and the statuses the spec allows for it. */
export interface BadRequest {
  label: string
  method: string
  path: string
  query?: Record<string, string | number>
  body?: unknown
  /** What the request itself deserves, for an app allowed to make it. */
  statuses: number[]
  /** The exact status is orbtest's decision (any error of the table passes a required case unless --strict). */
  decided?: boolean
  /** The scope the route needs (ORB-006, ORB-A07). */
  scope?: ScopeName
}

/** What the families are made for: the target's text and voice channels, its community and a passport query. */
export interface BadRequestTarget {
  text: string
  voice: string | undefined
  community: string
  address: string
  kind: string
}

// 6 to 12 of [a-z0-9]: built once, where fc.stringMatching rebuilt a regex's arbitrary at each call and cost the
// Orb suite a tenth of a second.
const ID_UNIT = fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz0123456789')
const ID_TAIL = fc.string({ unit: ID_UNIT, minLength: 6, maxLength: 12 })
export const unknownId = (prefix: string): fc.Arbitrary<string> => ID_TAIL.map((s) => `${prefix}${s}`)
export const notString = fc.oneof(
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.integer(), { maxLength: 2 }),
  fc.constant({ a: 1 })
)
export const notObject = fc.oneof(
  fc.array(fc.jsonValue({ maxDepth: 1 }), { maxLength: 3 }),
  fc.integer(),
  fc.string({ maxLength: 8 }),
  fc.boolean(),
  fc.constant(null)
)
export const notInteger = fc.constantFrom('abc', '1.5', '', '0x10', '1e3', ' 7')

/** What varies between the bad requests of one route: everything but its method, its path and its scope. */
export type BadRequestFields = Omit<BadRequest, 'method' | 'path' | 'scope'>

/**
 * The maker of one route's bad requests: `method` on `path`, needing `scope`. The fields keep the order a failure
 * prints a request in (label, method, path, query, body, statuses, decided, scope).
 */
export function badRequestOf (
  method: string,
  path: string,
  scope?: ScopeName
): (fields: BadRequestFields) => BadRequest {
  return ({ label, ...rest }) => ({ label, method, path, ...rest, ...(scope === undefined ? {} : { scope }) })
}
