// The route an exchange was for, as a template of the spec's own paths, so that a parity report counts differences
// by route rather than by every id a recording happened to use.
import { ORB_SPEC } from '../../src/spec/orb.js'
import { BASE_PATH } from '../../src/spec/orbtile.js'
import type { RecordedApi } from '../../src/proxy/recording.js'

interface Template {
  method: string
  path: string
  match: RegExp
}

const template = (method: string, path: string): Template => ({
  method,
  path,
  match: new RegExp(`^${path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}$`)
})

/** Orbtile's routes: the spec names them in its schemas' descriptions; docs/orbtile.md lists them. */
const ORBTILE: readonly Template[] = [
  template('GET', `${BASE_PATH}/info`),
  template('PUT', `${BASE_PATH}/adapters/{adapterId}`),
  template('DELETE', `${BASE_PATH}/adapters/{adapterId}`),
  template('POST', `${BASE_PATH}/adapters/{adapterId}/sessions/{sessionId}`),
  template('PUT', `${BASE_PATH}/adapters/{adapterId}/sessions`),
  template('POST', `${BASE_PATH}/adapters/{adapterId}/events`)
]

/** The Orb's routes: every operation of the OpenAPI document. */
const ORB: readonly Template[] = Object.entries(ORB_SPEC.paths).flatMap(([path, methods]) =>
  Object.keys(methods).map((m) => template(m.toUpperCase(), path)))

/** `PUT /a/v1/adapters/{adapterId}`, or the method and path as they came for a route the spec does not have. */
export function routeLabel (api: RecordedApi, method: string, target: string): string {
  const path = target.split('?', 1)[0]!
  const found = (api === 'orbtile' ? ORBTILE : ORB).find((t) => t.method === method && t.match.test(path))
  return found === undefined ? `${method} (a path of no route)` : `${method} ${found.path}`
}
