import fc from 'fast-check'
import { BOT, DIRECTORY, globalCommands, type OrbContext } from '../../support.js'
import type { OrbReply, Speaker } from '../../transport.js'
import { NOT_A_TOKEN, SOME_ADDRESS, deleteIfPosted, readApp, type ScopeName } from './support.js'

// Bad requests across routes, as a property for ORB-101, ORB-102 and ORB-A01.

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

interface Speaking { who: 'full' | 'few' | 'none' | 'bogus' }

const unknownId = (prefix: string): fc.Arbitrary<string> => fc.stringMatching(/^[a-z0-9]{6,12}$/).map((s) => `${prefix}${s}`)
const notString = fc.oneof(fc.integer(), fc.boolean(), fc.constant(null), fc.array(fc.integer(), { maxLength: 2 }), fc.constant({ a: 1 }))
const notObject = fc.oneof(fc.array(fc.jsonValue({ maxDepth: 1 }), { maxLength: 3 }), fc.integer(), fc.string({ maxLength: 8 }), fc.boolean(), fc.constant(null))
const notInteger = fc.constantFrom('abc', '1.5', '', '0x10', '1e3', ' 7')

/** Every family of bad request, for a target whose text, voice channels and community are known. */
function badRequests (t: { text: string, voice: string | undefined, community: string, address: string, kind: string }): fc.Arbitrary<BadRequest> {
  const m = `${BOT}/messages`
  const families: Array<fc.Arbitrary<BadRequest>> = [
    unknownId('srv_zz').map((server) => ({ label: 'GET /app of an unknown community', method: 'GET', path: `${BOT}/app`, query: { server }, statuses: [404], decided: true })),
    notObject.map((body) => ({ label: 'POST /messages with a body that is no object', method: 'POST', path: m, body, statuses: [400], scope: 'messages:write' as const })),
    fc.constantFrom({ content: 'x' }, { channel: t.text }, {}).map((body) => ({ label: 'POST /messages without channel or content', method: 'POST', path: m, body, statuses: [400], scope: 'messages:write' as const })),
    notString.map((content) => ({ label: 'POST /messages with a content that is no string', method: 'POST', path: m, body: { channel: t.text, content }, statuses: [400], scope: 'messages:write' as const })),
    notString.map((channel) => ({ label: 'POST /messages with a channel that is no string', method: 'POST', path: m, body: { channel, content: 'x' }, statuses: [400], scope: 'messages:write' as const })),
    fc.integer({ min: 2001, max: 2100 }).map((n) => ({ label: `POST /messages with ${n} characters`, method: 'POST', path: m, body: { channel: t.text, content: 'x'.repeat(n) }, statuses: [400], scope: 'messages:write' as const })),
    fc.oneof(fc.constantFrom(1.5, -0.25), fc.string({ maxLength: 4 }), fc.boolean()).map((replyTo) => ({ label: 'POST /messages with a reply_to that is no integer', method: 'POST', path: m, body: { channel: t.text, content: 'x', reply_to: replyTo }, statuses: [400], scope: 'messages:write' as const })),
    unknownId('ch_zz').map((channel) => ({ label: 'POST /messages to an unknown channel', method: 'POST', path: m, body: { channel, content: 'orbtest: never posted' }, statuses: [404], scope: 'messages:write' as const })),
    fc.constant({ label: 'GET /messages without channel', method: 'GET', path: m, query: { limit: 5 }, statuses: [400] }),
    fc.oneof(fc.constantFrom(0, 51, -1, 1000), notInteger).map((limit) => ({ label: `GET /messages with limit ${String(limit)}`, method: 'GET', path: m, query: { channel: t.text, limit }, statuses: [400] })),
    notInteger.filter((s) => s !== '').map((before) => ({ label: `GET /messages with before ${before}`, method: 'GET', path: m, query: { channel: t.text, before }, statuses: [400] })),
    unknownId('ch_zz').map((channel) => ({ label: 'GET /messages of an unknown channel', method: 'GET', path: m, query: { channel }, statuses: [404] })),
    fc.oneof(fc.stringMatching(/^[a-z][a-z0-9]{0,8}$/), fc.constantFrom('1.5', '-x')).map((id) => ({ label: `DELETE /messages/${id}`, method: 'DELETE', path: `${m}/${id}`, statuses: [400], scope: 'messages:write' as const })),
    fc.integer({ min: 1_000_000_000, max: 2_000_000_000 }).map((id) => ({ label: 'DELETE /messages/<unknown id>', method: 'DELETE', path: `${m}/${id}`, statuses: [404], scope: 'messages:write' as const })),
    // Never a valid `wait` above 0: a held poll is not what this property is about.
    fc.oneof(
      notInteger.filter((s) => s !== '').map((after) => ({ after })),
      fc.oneof(fc.integer({ min: 26, max: 1000 }), fc.constant(-1), notInteger.filter((s) => s !== '')).map((wait) => ({ wait })),
      fc.oneof(fc.constantFrom(0, -3), fc.integer({ min: 101, max: 500 }), notInteger.filter((s) => s !== '')).map((limit) => ({ limit }))
    ).map((query) => ({ label: `GET /events?${Object.keys(query)[0]!}=${String(Object.values(query)[0])}`, method: 'GET', path: `${BOT}/events`, query, statuses: [400] })),
    fc.oneof(
      notObject,
      fc.constantFrom<unknown>({}, { commands: 'x' }, { commands: {} }),
      fc.constantFrom('Hello', 'a b', 'a'.repeat(33), '', 'play', 'ban').map((name) => ({ commands: [{ name, description: 'x' }] })),
      fc.constantFrom<unknown>(
        [{ name: 'ok', description: 'd'.repeat(141) }],
        [{ name: 'ok', right: 'admin' }],
        [{ name: 'ok', options: Array.from({ length: 7 }, (_, i) => ({ name: `o${i}` })) }],
        [{ name: 'ok', options: [{ description: 'no name' }] }],
        Array.from({ length: 51 }, (_, i) => ({ name: `c${i}` }))
      ).map((commands) => ({ commands }))
    ).map((body) => ({ label: 'PUT /commands with a body the spec refuses', method: 'PUT', path: `${BOT}/commands`, body, statuses: [400, 429] })),
    fc.constant({ label: 'DELETE /commands without name', method: 'DELETE', path: `${BOT}/commands`, statuses: [400] }),
    unknownId('zz-').map((name) => ({ label: 'DELETE /commands of a name never registered', method: 'DELETE', path: `${BOT}/commands`, query: { name }, statuses: [404] })),
    fc.tuple(unknownId('evt_zz'), fc.constantFrom<unknown>({ content: 'x' }, {}, { content: 'y'.repeat(1801) }, { content: 3 }, [])).map(([event, body]) => ({
      label: 'POST /interactions/<unknown>/respond', method: 'POST', path: `${BOT}/interactions/${event}/respond`, body, statuses: (body as any)?.content === 'x' ? [404] : [400, 404]
    })),
    fc.oneof(notObject, fc.constantFrom<unknown>({}, { action: 'dance' }, { action: 'roster' }, { action: 'join' }, { action: 'heartbeat' }, { action: 'leave' }, { action: 'grant' }, { action: 'heartbeat', call: 'call_zz', speaking: 'yes' }))
      .map((body) => ({ label: 'POST /voice with a body the spec refuses', method: 'POST', path: `${BOT}/voice`, body, statuses: [400], scope: 'voice' as const })),
    fc.tuple(fc.constantFrom('roster', 'join'), unknownId('ch_zz')).map(([action, channel]) => ({ label: `POST /voice ${action} of an unknown channel`, method: 'POST', path: `${BOT}/voice`, body: { action, channel }, statuses: [404], scope: 'voice' as const })),
    fc.tuple(fc.constantFrom('heartbeat', 'leave', 'grant'), unknownId('call_zz')).map(([action, call]) => ({ label: `POST /voice ${action} of an unknown call`, method: 'POST', path: `${BOT}/voice`, body: { action, call }, statuses: [404], scope: 'voice' as const })),
    fc.constant({ label: 'POST /voice join of a text channel', method: 'POST', path: `${BOT}/voice`, body: { action: 'join', channel: t.text }, statuses: [400], decided: true, scope: 'voice' as const }),
    fc.oneof(notObject, fc.constantFrom<unknown>({}, { action: 'state' }, ...(t.voice === undefined ? [] : [{ channel: t.voice }, { channel: t.voice, action: 'dance' }, { channel: t.voice, action: 7 }])))
      .map((body) => ({ label: 'POST /music with a body the spec refuses', method: 'POST', path: `${BOT}/music`, body, statuses: [400], scope: 'music' as const })),
    unknownId('ch_zz').map((channel) => ({ label: 'POST /music state of an unknown channel', method: 'POST', path: `${BOT}/music`, body: { channel, action: 'state' }, statuses: [404], scope: 'music' as const })),
    fc.constant({ label: 'POST /music of a text channel', method: 'POST', path: `${BOT}/music`, body: { channel: t.text, action: 'state' }, statuses: [400], decided: true, scope: 'music' as const }),
    ...(t.voice === undefined
      ? []
      : [fc.constantFrom<[string, unknown]>(['volume', 101], ['volume', -1], ['volume', 'loud'], ['seek', -5], ['seek', 'x'], ['loop', 'sometimes'], ['jump', -1], ['jump', 'x'], ['remove', -2], ['add', undefined])
          .map(([action, arg]) => ({ label: `POST /music ${action} ${JSON.stringify(arg)}`, method: 'POST', path: `${BOT}/music`, body: { channel: t.voice, action, ...(arg === undefined ? {} : { arg }) }, statuses: [400], decided: true, scope: 'music' as const }))]),
    fc.constant({ label: 'GET /music without channel', method: 'GET', path: `${BOT}/music`, statuses: [400], scope: 'music' as const }),
    unknownId('ch_zz').map((channel) => ({ label: 'GET /music of an unknown channel', method: 'GET', path: `${BOT}/music`, query: { channel }, statuses: [404], scope: 'music' as const })),
    fc.constant({ label: 'GET /music of a text channel', method: 'GET', path: `${BOT}/music`, query: { channel: t.text }, statuses: [400], decided: true, scope: 'music' as const }),
    fc.constantFrom<Record<string, string | number>>(
      { address: t.address, kind: t.kind },
      { server: t.community, kind: t.kind },
      { server: t.community, address: t.address },
      { server: t.community, address: '0x123', kind: t.kind },
      { server: t.community, address: 'abc', kind: t.kind },
      { server: t.community, address: t.address, kind: t.kind, minimum: 0 },
      { server: t.community, address: t.address, kind: t.kind, minimum: 1000 },
      { server: t.community, address: t.address, kind: t.kind, minimum: 'x' }
    ).map((query) => ({ label: 'GET /passport with parameters the spec refuses', method: 'GET', path: `${BOT}/passport`, query, statuses: [400], scope: 'passport' as const })),
    unknownId('srv_zz').map((server) => ({ label: 'GET /passport of an unknown community', method: 'GET', path: `${BOT}/passport`, query: { server, address: t.address, kind: t.kind }, statuses: [404], scope: 'passport' as const }))
  ]
  return fc.oneof(...families)
}

/** The voice and music actions that change something (the spec's enums less `roster` and `state`). */
const CHANGING_ACTIONS = new Set(['join', 'heartbeat', 'leave', 'grant', 'add', 'play', 'pause', 'next', 'back', 'jump', 'remove', 'seek', 'volume', 'loop', 'shuffle', 'clear'])

/**
 * Whether a bad request would change the target if a server accepted it after all: posting, deleting, syncing,
 * responding, and voice or music actions other than the roster and the player's state. A read-only run sends none.
 */
function changesTarget (request: BadRequest): boolean {
  if (request.method === 'PUT' || request.method === 'DELETE') return true
  if (request.method !== 'POST') return false
  if (request.path === `${BOT}/voice` || request.path === `${BOT}/music`) {
    const action = (request.body as { action?: unknown } | null)?.action
    return typeof action === 'string' && CHANGING_ACTIONS.has(action)
  }
  return request.path !== DIRECTORY
}

const speakers: fc.Arbitrary<Speaking> = fc.oneof(
  { weight: 6, arbitrary: fc.constant<Speaking>({ who: 'full' }) },
  { weight: 2, arbitrary: fc.constant<Speaking>({ who: 'few' }) },
  { weight: 1, arbitrary: fc.constant<Speaking>({ who: 'none' }) },
  { weight: 1, arbitrary: fc.constant<Speaking>({ who: 'bogus' }) }
)

/** What the spec allows a bad request sent as `who`: 401 without a valid token; a missing scope adds 403 (ORB-006). */
function allowedFor (request: BadRequest, who: Speaking['who'], fewScopes: ReadonlySet<string>): { statuses: number[], decided: boolean } {
  if (who === 'none' || who === 'bogus') return { statuses: [401], decided: false }
  const statuses = [...request.statuses]
  if (who === 'few' && request.scope !== undefined && !fewScopes.has(request.scope)) statuses.push(403)
  return { statuses, decided: request.decided === true }
}

function speakerOf (who: Speaking['who']): Speaker {
  if (who === 'full') return 'full'
  if (who === 'few') return 'few'
  if (who === 'none') return null
  return NOT_A_TOKEN
}

/** Runs the bad-request property with `check` for each reply. */
export async function badRequestProperty (ctx: OrbContext, check: (reply: OrbReply, request: BadRequest, allowed: { statuses: number[], decided: boolean }, what: string) => void, runs?: number): Promise<void> {
  const target = ctx.client.target
  const haveFew = target.few !== undefined
  // The few app's scopes, as it says itself (messages:read with orbtest's control API).
  const fewScopes = new Set<string>(haveFew ? ((await readApp(ctx, 'few')).app?.scopes ?? []) : [])
  const all = badRequests({ text: target.channels.text, voice: target.channels.voice, community: target.community, address: target.passport?.address ?? SOME_ADDRESS, kind: target.passport?.kind ?? 'human' })
  let arb = all
  if (ctx.readOnly) {
    arb = all.filter((request) => !changesTarget(request))
    ctx.note('read-only: only bad requests that could change nothing were sent (no posts, deletes, syncs, responses, voice or music actions)')
  } else {
    // A refused sync that was accepted all the same must not leave the apps' commands changed.
    await restoreCommandsIfChanged(ctx, 'full')
    if (haveFew) await restoreCommandsIfChanged(ctx, 'few')
  }
  await fc.assert(fc.asyncProperty(fc.array(fc.tuple(arb, speakers), { minLength: 1, maxLength: 6 }), async (requests) => {
    for (const [request, speaking] of requests) {
      const who = speaking.who === 'few' && !haveFew ? 'full' : speaking.who
      const as = speakerOf(who)
      const reply = await ctx.client.request({ method: request.method, path: request.path, query: request.query, body: request.body, as, retryThrottled: false })
      // A bad request that was accepted all the same must not leave a post behind.
      if (request.method === 'POST' && request.path === `${BOT}/messages`) deleteIfPosted(ctx, reply, as)
      check(reply, request, allowedFor(request, who, fewScopes), `${request.label} as ${who}`)
    }
  }), ctx.fc(runs === undefined ? {} : { numRuns: Math.min(runs, ctx.fc().numRuns ?? runs) }))
}

/**
 * The case ends with `as`'s global commands as they are now, if they changed (support's keepCommands always syncs
 * back; this syncs only when a request the case expected refused was accepted, so no sync is spent otherwise).
 */
async function restoreCommandsIfChanged (ctx: OrbContext, as: Speaker): Promise<void> {
  const key = (commands: Array<Record<string, unknown>>): string => JSON.stringify([...commands].sort((a, b) => String(a.name).localeCompare(String(b.name))))
  const before = await globalCommands(ctx, as)
  ctx.cleanup(async () => {
    if (key(await globalCommands(ctx, as)) !== key(before)) await ctx.client.request({ method: 'PUT', path: `${BOT}/commands`, body: { commands: before }, as })
  })
}
