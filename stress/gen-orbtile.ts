// Requests to the fake Orbtile, generated from the spec's own JSON Schema (specs/orbtile-adapter-protocol-v1.2):
// each route's body from its $defs entry through conformance/server/core/schema-arbitrary.ts, ids from the spec's patterns.
import fc from 'fast-check'
import { b64, makePng } from '../conformance/server/orbtile/arbitrary-registration.js'
import { arbitraryFor } from '../conformance/server/core/schema-arbitrary.js'
import { fillPath, type Draft } from './draft.js'
import { readDocument } from './targets.js'

const SPEC = readDocument('specs/orbtile-adapter-protocol-v1.2.schema.json')
const def = (name: string): Record<string, any> => SPEC.$defs[name]

/** Adapter ids a run reuses, so that leases, sessions and polls build up (the spec allows 8 live leases). */
export const ADAPTER_POOL: readonly string[] = [
  'com.example.alpha', 'com.example.beta', 'dev.fuzz.gamma', 'org.test.delta', 'io.fz.epsilon', 'net.fz.zeta'
]

/** Session ids a run reuses. */
export const SESSION_POOL: readonly string[] = ['s1', 's2', 'main', 'task:42', 'a.b-c_d']

/** OT-006 and OT-A07: the routes under basePath, with the $defs entry of each body. */
export const ORBTILE_ROUTES: ReadonlyArray<{ method: string, path: string, body?: string, weight: number }> = [
  { method: 'GET', path: '/info', weight: 3 },
  { method: 'PUT', path: '/adapters/{adapterId}', body: 'AdapterRegistration', weight: 10 },
  { method: 'DELETE', path: '/adapters/{adapterId}', weight: 1 },
  { method: 'POST', path: '/adapters/{adapterId}/sessions/{sessionId}', body: 'SessionUpdate', weight: 10 },
  { method: 'PUT', path: '/adapters/{adapterId}/sessions', body: 'SessionBatch', weight: 3 },
  { method: 'POST', path: '/adapters/{adapterId}/events', body: 'EventsPoll', weight: 6 }
]

const adapterId = fc.oneof(
  { weight: 9, arbitrary: fc.constantFrom(...ADAPTER_POOL) },
  { weight: 1, arbitrary: arbitraryFor(def('AdapterID'), SPEC) as fc.Arbitrary<string> }
)
const sessionId = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...SESSION_POOL) },
  { weight: 1, arbitrary: arbitraryFor(def('SessionID'), SPEC) as fc.Arbitrary<string> }
)

// Real PNGs now and then, so that icons reach the decoder and the resampler, not only the base64 check.
const PNGS = [makePng(16, 16, 'solid'), makePng(32, 32), makePng(64, 64, 'solid')].map(b64)
const overrides = {
  'icon.png': fc.oneof(
    { weight: 1, arbitrary: fc.constantFrom(...PNGS) },
    { weight: 4, arbitrary: arbitraryFor(def('Icon').properties.png, SPEC) }
  )
}

/** A session update that names title and activity most of the time, as a first post must (OT-A10). */
const sessionUpdate = fc.tuple(
  arbitraryFor(def('SessionUpdate'), SPEC, overrides) as fc.Arbitrary<Record<string, unknown>>,
  arbitraryFor(def('SessionUpdate').properties.title, SPEC),
  arbitraryFor(def('Activity'), SPEC),
  fc.integer({ min: 0, max: 3 })
).map(([update, title, activity, fill]) => fill === 0 ? update : { title, activity, ...update })

const bodies: Record<string, fc.Arbitrary<unknown>> = {
  AdapterRegistration: arbitraryFor(def('AdapterRegistration'), SPEC, overrides),
  SessionUpdate: sessionUpdate,
  SessionBatch: arbitraryFor(def('SessionBatch'), SPEC, overrides),
  EventsPoll: arbitraryFor(def('EventsPoll'), SPEC)
}

// OT-A29: GET /info with a nonce asks for a proof.
const nonce = fc.option(fc.stringMatching(/^[0-9a-f]{16,64}$/), { nil: undefined })

/** A request to one of the Orbtile's routes, as the spec describes it (valid as far as the schema goes). */
export function orbtileDraft (base: string): fc.Arbitrary<Draft> {
  return fc.oneof(...ORBTILE_ROUTES.map((route) => ({
    weight: route.weight,
    arbitrary: fc.record({
      adapterId,
      sessionId,
      body: route.body === undefined ? fc.constant(undefined) : bodies[route.body]!,
      nonce
    }).map(({ adapterId, sessionId, body, nonce }): Draft => {
      const draft: Draft = {
        server: 'orbtile',
        operation: `${route.method} ${base}${route.path}`,
        method: route.method,
        path: base + fillPath(route.path, { adapterId, sessionId }),
        query: '',
        body,
        auth: { kind: 'orbtile' },
        headers: route.path === '/info' && nonce !== undefined ? [['X-Orbtile-Nonce', nonce]] : []
      }
      if (route.path !== '/info') draft.lease = adapterId
      const wait = (body as { waitSeconds?: unknown } | undefined)?.waitSeconds
      if (route.body === 'EventsPoll' && typeof wait === 'number') draft.holdMs = wait * 1000
      return draft
    })
  })))
}

/** A registration that declares every event capability, for the long polls the raw lane holds and cuts off. */
export function pollerRegistration (): Record<string, unknown> {
  return { name: 'Poller', palette: { baseHue: 200 }, capabilities: ['tap', 'approvals', 'questions'] }
}
