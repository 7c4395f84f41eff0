// Requests to the fake Orb (specs/orb-bot-api.openapi.json) and to the control server (src/control/openapi.json):
// every operation of each document, with hints that make many of them name things the demo world holds.
import fc from 'fast-check'
import { arbitraryFor, type Overrides } from '../conformance/server/core/schema-arbitrary.js'
import type { AuthChoice, Draft } from './draft.js'
import { ADAPTER_POOL, SESSION_POOL } from './gen-orbtile.js'
import { documentDraft, schemaRoot, type Hints, type Operation } from './gen-openapi.js'
import { WORLD_IDS } from './request.js'
import { readDocument } from './targets.js'

const ORB_ROOT = schemaRoot(readDocument('specs/orb-bot-api.openapi.json'))
const CONTROL_ROOT = schemaRoot(readDocument('src/control/openapi.json'))

const channel = fc.constantFrom(...WORLD_IDS.channels)
const community = fc.constantFrom(...WORLD_IDS.servers)
const member = fc.constantFrom(...WORLD_IDS.members)
const app = fc.constantFrom(...WORLD_IDS.apps)
const messageId = fc.integer({ min: 1, max: 400 }).map(String)
const content = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom('hello', 'hi <@mem_ada>', '@everyone look', '@here', '   ', 'ok') },
  { weight: 2, arbitrary: fc.string({ maxLength: 200 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', minLength: 1900, maxLength: 2100 }) }
)

/** The Orb's demo app most of the time, the others now and then; public routes send no token. */
function orbAuth (operation: Operation): fc.Arbitrary<AuthChoice> {
  if (!operation.secured) return fc.constant({ kind: 'none' })
  return fc.oneof(
    { weight: 8, arbitrary: fc.constant<AuthChoice>({ kind: 'orb', app: 'app_demo' }) },
    { weight: 2, arbitrary: app.map((id): AuthChoice => ({ kind: 'orb', app: id })) }
  )
}

const ORB_HINTS: Hints = {
  params: {
    channel,
    server: community,
    id: messageId,
    address: fc.constantFrom(`0x${'1'.repeat(40)}`, `0x${'2'.repeat(40)}`),
    kind: fc.constantFrom('human', 'builder')
  },
  body: () => ({ channel, content }),
  // ORB-050: GET /events?wait=N holds the poll up to N seconds.
  holdMs: (operation, query) => operation.path.endsWith('/events') && typeof query.wait === 'number'
    ? query.wait * 1000
    : undefined,
  auth: orbAuth
}

/** A request to any operation of the Orb's document. */
export function orbDraft (): fc.Arbitrary<Draft> {
  return documentDraft('orb', ORB_ROOT, ORB_HINTS, () => true)
}

/**
 * Control operations the fuzz leaves out: they take a server away on purpose (the API switch, a restart), which
 * would be counted as drops and 503s that are no fault. The soak drives them, in its quiet moments.
 */
export const CONTROL_DISRUPTIVE: readonly string[] = ['PUT /control/orbtile/api', 'POST /control/orbtile/restart']

/**
 * Control operations whose answer never ends: the dashboard's stream (Server-Sent Events). The fuzz's client reads
 * whole answers, so each would count as a drop; DASH-12..14 test the stream's head, frames, guards and limit.
 */
export const CONTROL_STREAMS: readonly string[] = ['GET /control/dashboard/stream']

/** Every control operation the fuzz leaves out, for one reason or the other above. */
export const CONTROL_UNFUZZED: readonly string[] = [...CONTROL_DISRUPTIVE, ...CONTROL_STREAMS]

/** Endpoint URLs the fuzz may set: the local receiver, none, and refused ones; never a host off this machine. */
function endpointUrls (receiverUrl: string): fc.Arbitrary<unknown> {
  return fc.constantFrom(receiverUrl, null, 'ftp://127.0.0.1/x', 'not a url', 'http://example.invalid/hook',
    'https://127.0.0.1:1/hook', 'http://127.0.0.1:1/closed', '')
}

function controlHints (receiverUrl: string): Hints {
  return {
    params: {
      adapterId: fc.constantFrom(...ADAPTER_POOL),
      sessionId: fc.constantFrom(...SESSION_POOL),
      app,
      server: community,
      id: messageId
    },
    body: (operation): Overrides => {
      if (operation.path.endsWith('/endpoint')) return { url: endpointUrls(receiverUrl) }
      if (operation.path === '/control/clock/advance') {
        return {
          ms: fc.oneof({ weight: 9, arbitrary: fc.integer({ min: 0, max: 120_000 }) },
            { weight: 1, arbitrary: arbitraryFor(CONTROL_ROOT.$defs.Advance.properties.ms, CONTROL_ROOT) })
        }
      }
      if (operation.path.startsWith('/control/orb/') && !operation.path.endsWith('/voice')) {
        return { server: community, channel, member, content, app }
      }
      return {}
    },
    auth: () => fc.constant({ kind: 'none' })
  }
}

/** A request to any control operation but the disruptive ones; endpoint URLs point at `receiverUrl`. */
export function controlDraft (receiverUrl: string): fc.Arbitrary<Draft> {
  return documentDraft('control', CONTROL_ROOT, controlHints(receiverUrl),
    (op) => !CONTROL_UNFUZZED.includes(`${op.method} ${op.path}`))
}
