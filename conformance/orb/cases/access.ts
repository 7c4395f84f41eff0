import { keccak_256 } from '@noble/hashes/sha3.js'
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js'
import fc from 'fast-check'
import type { OrbFault } from '../../../src/orb-mock/faults.js'
import { CaseFailure, CaseSkip, defineCase, type ConformanceCase } from '../../case.js'
import { exactStatus } from '../../strictness.js'
import { expectComponent, expectEqual, expectOk, expectOrbError, expectRetryAfter, expectThat } from '../expect.js'
import { BOT, DIRECTORY, channel, controlled, drain, few, fullAppId, globalCommands, post, syncCommands, type OrbContext } from '../support.js'
import type { OrbBotClient, OrbReply, OrbRequest, Speaker } from '../transport.js'

// ---------------------------------------------------------------------------------------------------------------
// Vocabulary and small helpers
// ---------------------------------------------------------------------------------------------------------------

/** ORB-007: the whole scope vocabulary. */
const SCOPES = ['messages:read', 'messages:write', 'voice', 'music', 'passport'] as const
type ScopeName = typeof SCOPES[number]
/** The channel rights a role can carry (CommandInput.right's enum). */
const RIGHTS = ['send_messages', 'attach_files', 'manage_messages', 'connect', 'speak', 'stream', 'move_members'] as const
/** ORB-102: the statuses an error may have. */
const TABLE = [400, 401, 403, 404, 409, 410, 429]
/** A well-formed address for passport calls when the config names none. */
const SOME_ADDRESS = `0x${'1'.repeat(40)}`
/** ORB-A03: the directory's window and limit. */
const DIRECTORY_WINDOW_MS = 60_000
const DIRECTORY_LIMIT = 60
/** A required case gives up looking for the directory's throttle after this many back-to-back requests. */
const THROTTLE_SEARCH = 300

const short = (reply: OrbReply): string => `${reply.status} ${reply.text.slice(0, 400)}`
const HEX32 = /^(0x)?[0-9a-fA-F]{64}$/

/**
 * Every bot route, as the spec lists them, with a request each that is harmless without a valid token (ORB-003).
 * `writes`: with a valid token it would change the target if it were accepted (ORB-001 leaves those out when read-only).
 */
const BOT_ROUTES: Array<{ method: string, path: string, query?: Record<string, string>, body?: unknown, writes?: true }> = [
  { method: 'GET', path: `${BOT}/app` },
  { method: 'POST', path: `${BOT}/messages`, body: { channel: 'x', content: 'x' }, writes: true },
  { method: 'GET', path: `${BOT}/messages`, query: { channel: 'x' } },
  { method: 'DELETE', path: `${BOT}/messages/1`, writes: true },
  { method: 'GET', path: `${BOT}/events` },
  { method: 'GET', path: `${BOT}/commands` },
  { method: 'PUT', path: `${BOT}/commands`, body: { commands: [] }, writes: true },
  { method: 'DELETE', path: `${BOT}/commands`, query: { name: 'orbtest-never-registered' }, writes: true },
  { method: 'POST', path: `${BOT}/interactions/evt_x/respond`, body: { content: 'x' }, writes: true },
  { method: 'POST', path: `${BOT}/voice`, body: { action: 'roster', channel: 'x' } },
  { method: 'POST', path: `${BOT}/music`, body: { channel: 'x', action: 'state' } },
  { method: 'GET', path: `${BOT}/music`, query: { channel: 'x' } },
  { method: 'GET', path: `${BOT}/passport`, query: { server: 'x', address: SOME_ADDRESS, kind: 'human' } }
]

/** Authorization headers that carry no valid token: none, other schemes, malformed, and random tokens. */
const badAuthorization = fc.oneof(
  fc.constant(null),
  fc.constant(''),
  fc.constant('Bearer'),
  fc.constant('Bearer '),
  fc.constantFrom('Basic b3JiOm9yYg==', 'Token abc', 'bearer'),
  fc.string({ minLength: 1, maxLength: 64 }).filter((s) => /^[\x21-\x7e]+$/.test(s)).map((s) => `Bearer ${s}`),
  fc.stringMatching(/^orb_[A-Za-z0-9_-]{32}$/).map((s) => `Bearer ${s}`)
)

/** The directory, as anybody (the client waits out a 429 unless told not to). */
async function readDirectory (ctx: OrbContext, options: Partial<OrbRequest> = {}): Promise<any> {
  return expectOk(await ctx.client.request({ path: DIRECTORY, as: null, ...options }), 'GET /api/orb/directory', { method: 'GET', path: DIRECTORY })
}

/** GET /app (or /app?server=) as `as`; fails unless 200 JSON. */
async function readApp (ctx: OrbContext, as: Speaker = 'full', server?: string): Promise<any> {
  const reply = await ctx.client.get(`${BOT}/app`, server === undefined ? undefined : { server }, as)
  return expectOk(reply, `GET /app${server === undefined ? '' : `?server=${server}`}`, { method: 'GET', path: `${BOT}/app` })
}

/** The passport query of the target (its config's address and kind, or a well-formed stand-in). */
function passportQuery (ctx: OrbContext, server = ctx.client.target.community): Record<string, string> {
  const p = ctx.client.target.passport
  return { server, address: p?.address ?? SOME_ADDRESS, kind: p?.kind ?? 'human' }
}

/** Fails unless the reply is an error of one of `statuses`, with the spec's Error body (ORB-101). */
function expectErrorIn (reply: OrbReply, statuses: readonly number[], what: string): void {
  if (!statuses.includes(reply.status)) throw new CaseFailure(`${what}: status ${reply.status}`, `one of ${statuses.join(', ')} with an Error body`, short(reply))
  expectErrorBody(reply, what)
}

/** ORB-101: a JSON `{"error":{"message":<string>,"code":<integer>}}`. */
function expectErrorBody (reply: OrbReply, what: string): void {
  if (!/^application\/json\b/i.test(String(reply.headers['content-type']))) throw new CaseFailure(`${what}: an error that is not JSON (content-type ${String(reply.headers['content-type'])})`, '{"error":{"message":"…","code":…}}', short(reply))
  const error = reply.json?.error
  if (typeof error?.message !== 'string' || !Number.isInteger(error?.code)) throw new CaseFailure(`${what}: not the spec's Error body (ORB-101)`, '{"error":{"message":"…","code":<integer>}}', short(reply))
  expectComponent(reply.json, 'Error', what)
}

/** A message the case did not mean to leave (a refusal that was accepted) is deleted again. */
function deleteIfPosted (ctx: OrbContext, reply: OrbReply, as: Speaker): void {
  if (reply.status === 200 && Number.isInteger(reply.json?.id)) {
    ctx.cleanup(async () => { await ctx.client.request({ method: 'DELETE', path: `${BOT}/messages/${reply.json.id as number}`, as }) })
  }
}

interface OwnApp { id: string, token: string, member: string, as: Speaker }

/**
 * An app of the case's own, made through the control API (the developer's console), deleted when the case ends (or
 * earlier with `dropApp`). Its token is masked in the report.
 */
async function ownApp (ctx: OrbContext, label: string, scopes: readonly ScopeName[]): Promise<OwnApp> {
  const { control } = controlled(ctx)
  const made = await control.must('POST', '/control/orb/apps', { id: `app_${ctx.uid(label)}`, name: `orbtest ${label}`, scopes: [...scopes], rights: ['send_messages'] })
  ctx.client.secret(made.token, '$OWN_TOKEN')
  ctx.cleanup(async () => { await control.call('DELETE', `/control/orb/apps/${encodeURIComponent(made.id)}?messages=delete`) })
  return { id: made.id, token: made.token, member: made.member, as: { token: made.token } }
}

async function dropApp (ctx: OrbContext, id: string): Promise<void> {
  await ctx.control?.call('DELETE', `/control/orb/apps/${encodeURIComponent(id)}?messages=delete`)
}

interface StateInstall { server: string, app: string, role: { name: string, rights: string[] }, channels: string[], hidden: string[], channelRights: Record<string, string[]> }

/** The install of `app` in `server` as the control API reports it. */
async function installOf (ctx: OrbContext, server: string, app: string): Promise<StateInstall | undefined> {
  const state = await controlled(ctx).control.orbState()
  return (state.installs as StateInstall[]).find((i) => i.server === server && i.app === app)
}

const installSpec = (i: StateInstall): Record<string, unknown> => ({ role: i.role, channels: i.channels, hidden: i.hidden, channelRights: i.channelRights })

// ---------------------------------------------------------------------------------------------------------------
// Bad requests across routes (ORB-101, ORB-102, ORB-A01)
// ---------------------------------------------------------------------------------------------------------------

/** A request that cannot succeed, and the statuses the spec allows for it. */
interface BadRequest {
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
  return { token: 'orb_conformance_not_a_token_0000000000' }
}

/** Runs the bad-request property with `check` for each reply. */
async function badRequestProperty (ctx: OrbContext, check: (reply: OrbReply, request: BadRequest, allowed: { statuses: number[], decided: boolean }, what: string) => void, runs?: number): Promise<void> {
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

// ---------------------------------------------------------------------------------------------------------------
// The directory's throttle (ORB-019, ORB-099, ORB-A03)
// ---------------------------------------------------------------------------------------------------------------

const hitDirectory = (ctx: OrbContext): Promise<OrbReply> => ctx.client.request({ path: DIRECTORY, as: null, retryThrottled: false })

/** With a virtual clock: a full window passes now (the count starts afresh) and again when the case ends. */
async function freshDirectoryWindow (ctx: OrbContext): Promise<boolean> {
  if (!await ctx.virtualTime()) return false
  await ctx.elapse(DIRECTORY_WINDOW_MS)
  ctx.cleanup(async () => { await ctx.elapse(DIRECTORY_WINDOW_MS) })
  return true
}

/** One directory reply while counting: a 200 directory, or the spec's 429 (ORB-099); returns Retry-After or 0. */
function throttleReply (reply: OrbReply, what: string): number {
  if (reply.status === 429) {
    expectOrbError(reply, 429, what)
    return expectRetryAfter(reply, what)
  }
  expectOk(reply, what)
  expectThat(Array.isArray(reply.json?.apps), `${what}: a directory`, '{"apps":[…],…}', reply.text.slice(0, 200))
  return 0
}

/** Requests the directory until a 429 (at most THROTTLE_SEARCH); returns it and how many 200s came first. */
async function untilThrottled (ctx: OrbContext, what: string): Promise<{ reply: OrbReply, admitted: number }> {
  for (let n = 0; n < THROTTLE_SEARCH; n++) {
    const reply = await hitDirectory(ctx)
    if (throttleReply(reply, `${what}, request ${n + 1}`) > 0) return { reply, admitted: n }
  }
  throw new CaseFailure(`${what}: ${THROTTLE_SEARCH} directory requests back to back, none throttled (ORB-019)`, 'a 429 with Retry-After', `${THROTTLE_SEARCH} × 200`)
}

// ---------------------------------------------------------------------------------------------------------------
// The cases
// ---------------------------------------------------------------------------------------------------------------

export const accessCases: Array<ConformanceCase<OrbBotClient>> = [
  defineCase<OrbBotClient>({
    id: 'ORB-001',
    title: 'bot calls are served under /api/bot/v1 on the origin itself and the directory at /api/orb/directory',
    level: 'required',
    async run (ctx) {
      // ORB-001: the server URL is `/`, so the paths stand at the origin's root.
      expectOk(await ctx.client.get(`${BOT}/app`), 'GET /api/bot/v1/app', { method: 'GET', path: `${BOT}/app` })
      expectOk(await ctx.client.get(`${BOT}/commands`), 'GET /api/bot/v1/commands', { method: 'GET', path: `${BOT}/commands` })
      expectOk(await ctx.client.get(`${BOT}/events`, { after: (await drain(ctx)).next }), 'GET /api/bot/v1/events', { method: 'GET', path: `${BOT}/events` })
      expectOk(await ctx.client.get(`${BOT}/messages`, { channel: channel(ctx, 'text'), limit: 1 }), 'GET /api/bot/v1/messages', { method: 'GET', path: `${BOT}/messages` })
      await readDirectory(ctx)
      // Every route of the spec is there: an answer of the spec's (never "no such method" for its own methods).
      if (ctx.readOnly) ctx.note('read-only: the routes that change the target (posting, deleting, syncing, responding) were not sent')
      for (const route of BOT_ROUTES) {
        if (route.writes === true && ctx.readOnly) continue
        const request: OrbRequest = { method: route.method, path: route.path, query: route.query, body: route.body }
        // With the app's own token: the app's commands are synced to what they are, and only a message of the
        // case's own is deleted (message 1 may be the app's).
        if (route.method === 'PUT' && route.path === `${BOT}/commands`) request.body = { commands: await globalCommands(ctx) }
        if (route.method === 'DELETE' && route.path === `${BOT}/messages/1`) request.path = `${BOT}/messages/${(await post(ctx, 'orbtest: a route probe')).id as number}`
        const reply = await ctx.client.request(request)
        if (route.method === 'POST' && route.path === `${BOT}/messages`) deleteIfPosted(ctx, reply, 'full')
        expectThat(reply.status !== 405 && reply.status < 500, `${route.method} ${route.path} is served`, 'an answer of the route', short(reply))
        if (reply.status !== 200) expectErrorBody(reply, `${route.method} ${route.path}`)
      }
    }
  }),

  defineCase<OrbBotClient>({
    id: 'ORB-003',
    title: 'every /api/bot/v1 route answers a missing, malformed or unknown bearer token with 401 and an Error body',
    level: 'required',
    async run (ctx) {
      const valid = new Set([ctx.client.target.full.token, ctx.client.target.few?.token].filter((v) => v !== undefined).map((v) => `Bearer ${v}`))
      await fc.assert(fc.asyncProperty(fc.constantFrom(...BOT_ROUTES), badAuthorization, async (route, authorization) => {
        if (authorization !== null && valid.has(authorization)) return
        const reply = await ctx.client.request({ method: route.method, path: route.path, query: route.query, body: route.body, as: null, headers: authorization === null ? {} : { authorization } })
        expectOrbError(reply, 401, `${route.method} ${route.path} with ${authorization === null ? 'no Authorization' : `Authorization ${JSON.stringify(authorization.slice(0, 20))}`}`)
      }), ctx.fc())
    }
  }),

  defineCase<OrbBotClient>({
    id: 'ORB-005',
    title: 'a call opens only when both gates allow it: a missing scope, or a role or allow-list that does not give the channel, is 403',
    level: 'required',
    writes: true,
    async run (ctx) {
      const text = channel(ctx, 'text')
      // The scope gate alone: the few app's role may post in the text channel, its scopes do not allow it.
      const fewPost = await ctx.client.post(`${BOT}/messages`, { channel: text, content: 'orbtest: a scope gate probe' }, few(ctx))
      deleteIfPosted(ctx, fewPost, 'few')
      expectOrbError(fewPost, 403, 'POST /messages as an app without messages:write')
      // The role gate alone: the full app has every scope, the community did not give it these channels.
      for (const kind of ['outsideAllowList', 'hidden'] as const) {
        const id = ctx.client.target.channels[kind]
        if (id === undefined) continue
        const reply = await ctx.client.post(`${BOT}/messages`, { channel: id, content: 'orbtest: a role gate probe' })
        deleteIfPosted(ctx, reply, 'full')
        expectOrbError(reply, 403, `POST /messages to the ${kind} channel as an app with every scope`)
        expectOrbError(await ctx.client.get(`${BOT}/messages`, { channel: id, limit: 1 }), 403, `GET /messages of the ${kind} channel as an app with every scope`)
      }
      if (ctx.client.target.controlled === undefined) {
        ctx.note('without the control API only the fixed probes ran')
        return
      }
      // Both gates, every combination: apps of the case's own with random scopes and roles.
      const { control, target } = controlled(ctx)
      const voice = channel(ctx, 'voice')
      // ORB-005 alone says a refusal of either gate is 403, and a role with every channel right refuses nothing in a
      // channel it sees. Which right each operation needs is ORB-A08's table: enforced only under exactStatus().
      const exact = exactStatus()
      await fc.assert(fc.asyncProperty(
        fc.subarray([...SCOPES]),
        fc.oneof(fc.subarray(['send_messages', 'connect', 'speak']), fc.constant([...RIGHTS])),
        fc.constantFrom('seen', 'hidden', 'outside'),
        async (scopes, rights, placement) => {
          const app = await ownApp(ctx, 'gate', scopes)
          try {
            await control.install(target.community, app.id, { role: { name: 'orbtest gate', rights }, channels: placement === 'outside' ? [voice] : [text, voice], hidden: placement === 'hidden' ? [text] : [] })
            const has = (s: ScopeName): boolean => scopes.includes(s)
            const everyRight = RIGHTS.every((r) => rights.includes(r))
            const what = (op: string): string => `${op} as an app with scopes [${scopes.join(', ')}], role [${rights.join(', ')}], text channel ${placement}`
            /**
             * `scope` and `sight` are the spec's gates: either refusing is 403. With both open, the role's rights
             * decide: a role with every right opens the call; otherwise ORB-A08's `needs` (exact runs), or either
             * answer (200, or the role's 403) in a required run.
             */
            const judge = (reply: OrbReply, op: string, scope: ScopeName, sight: boolean, needs: string | null): boolean => {
              if (!has(scope) || !sight) {
                expectOrbError(reply, 403, what(op))
                return false
              }
              if (everyRight || (exact && (needs === null || (rights as readonly string[]).includes(needs)))) {
                expectOk(reply, what(op))
                return true
              }
              if (exact || reply.status !== 200) expectOrbError(reply, 403, `${what(op)}${exact ? ` (ORB-A08: needs ${String(needs)})` : ''}`)
              return reply.status === 200
            }
            // Posting: messages:write, a channel the role sees on the allow-list (ORB-A08: and send_messages).
            const posted = await ctx.client.post(`${BOT}/messages`, { channel: text, content: 'orbtest: a gate probe' }, app.as)
            deleteIfPosted(ctx, posted, app.as)
            if (judge(posted, 'POST /messages', 'messages:write', placement === 'seen', 'send_messages')) {
              await ctx.client.request({ method: 'DELETE', path: `${BOT}/messages/${posted.json.id as number}`, as: app.as })
            }
            // Reading: messages:read, and a channel the role sees (ORB-A08: no right beyond that).
            judge(await ctx.client.get(`${BOT}/messages`, { channel: text, limit: 1 }, app.as), 'GET /messages', 'messages:read', placement === 'seen', null)
            // Music, voice, passport: the voice channel is always on the allow-list and seen. ORB-A08: music needs
            // connect there; the roster and the passport need no right.
            judge(await ctx.client.get(`${BOT}/music`, { channel: voice }, app.as), 'GET /music', 'music', true, 'connect')
            judge(await ctx.client.post(`${BOT}/voice`, { action: 'roster', channel: voice }, app.as), 'POST /voice roster', 'voice', true, null)
            judge(await ctx.client.get(`${BOT}/passport`, passportQuery(ctx), app.as), 'GET /passport', 'passport', true, null)
          } finally {
            await dropApp(ctx, app.id)
          }
        }), ctx.fc())
    }
  }),

  defineCase<OrbBotClient>({
    id: 'ORB-006',
    title: 'scopes by route: without messages:write, voice, music (both methods) or passport the route is 403; messages:read reads',
    level: 'required',
    writes: true,
    async run (ctx) {
      const fewApp = few(ctx)
      const target = ctx.client.target
      const text = channel(ctx, 'text')
      const voice = channel(ctx, 'voice')
      // With control, the few app gets the full app's role and allow-list for the case: only the scopes differ, so a
      // 403 can only come from the scope (a route that skipped the scope check would answer 200).
      if (target.controlled !== undefined && target.few?.id !== undefined && target.full.id !== undefined) {
        const { control } = controlled(ctx)
        const before = await installOf(ctx, target.community, target.few.id)
        const fullInstall = await installOf(ctx, target.community, target.full.id)
        if (before === undefined || fullInstall === undefined) throw new CaseSkip('the suite\'s apps are not installed as discovered')
        ctx.cleanup(async () => { await control.install(target.community, target.few!.id!, installSpec(before)) })
        await control.install(target.community, target.few.id, { ...installSpec(fullInstall), role: { name: before.role.name, rights: fullInstall.role.rights } })
        ctx.note('the few app had the full app\'s role and allow-list during the case')
      } else {
        ctx.note('without the control API the few app keeps its own role: a 403 may come from the role too')
      }
      const routes: Array<[ScopeName, string, OrbRequest]> = [
        ['messages:write', 'POST /messages', { method: 'POST', path: `${BOT}/messages`, body: { channel: text, content: 'orbtest: a scope probe' } }],
        ['voice', 'POST /voice roster', { method: 'POST', path: `${BOT}/voice`, body: { action: 'roster', channel: voice } }],
        ['music', 'GET /music', { path: `${BOT}/music`, query: { channel: voice } }],
        ['music', 'POST /music state', { method: 'POST', path: `${BOT}/music`, body: { channel: voice, action: 'state' } }],
        ['passport', 'GET /passport', { path: `${BOT}/passport`, query: passportQuery(ctx) }]
      ]
      const scopes = new Set<string>((await readApp(ctx, fewApp)).app?.scopes ?? [])
      let checked = 0
      for (const [scope, what, request] of routes) {
        if (scopes.has(scope)) continue
        const reply = await ctx.client.request({ ...request, as: fewApp })
        if (request.method === 'POST' && request.path === `${BOT}/messages`) deleteIfPosted(ctx, reply, fewApp)
        expectOrbError(reply, 403, `${what} as an app without ${scope}`)
        // The same call with the scope is served: the route is reachable, the scope is what was missing.
        if (scope !== 'messages:write') expectOk(await ctx.client.request({ ...request, as: 'full' }), `${what} as the app with every scope`)
        checked++
      }
      expectThat(checked > 0, 'the few app lacks some scope of the table', 'at least one of messages:write, voice, music, passport missing', [...scopes])
      // messages:read is the scope of GET /messages: the few app has it and reads.
      if (scopes.has('messages:read')) expectOk(await ctx.client.get(`${BOT}/messages`, { channel: text, limit: 1 }, fewApp), 'GET /messages as an app with messages:read', { method: 'GET', path: `${BOT}/messages` })
      ctx.note(`${checked} routes refused for want of their scope`)
    }
  }),

  defineCase<OrbBotClient>({
    id: 'ORB-007',
    title: 'scopes are drawn from exactly messages:read, messages:write, voice, music, passport',
    level: 'required',
    async run (ctx) {
      const vocabulary = new Set<string>(SCOPES)
      const full = (await readApp(ctx)).app?.scopes
      expectThat(Array.isArray(full), 'GET /app names the app\'s scopes', 'app.scopes: [...]', full)
      // The full app asked for every scope: it holds exactly the five, once each.
      expectEqual([...full].sort(), [...SCOPES].sort(), 'the scopes of the app that asked for every scope')
      if (ctx.client.target.few !== undefined) {
        const scopes = (await readApp(ctx, 'few')).app?.scopes as unknown[]
        expectThat(Array.isArray(scopes) && scopes.every((s) => vocabulary.has(String(s))), 'the few app\'s scopes are of the vocabulary', [...SCOPES], scopes)
      }
      for (const app of (await readDirectory(ctx)).apps as any[]) {
        expectThat(Array.isArray(app.scopes) && app.scopes.every((s: unknown) => vocabulary.has(String(s))), `${String(app.id)}'s listed scopes are of the vocabulary`, [...SCOPES], app.scopes)
      }
    }
  }),

  defineCase<OrbBotClient>({
    id: 'ORB-008',
    title: 'an app is a member of its own: what it posts shows the app\'s member id as author, with bot true, in every community',
    level: 'required',
    writes: true,
    async run (ctx) {
      const me = await readApp(ctx)
      expectThat(typeof me.member === 'string' && me.member !== '', 'GET /app names the app\'s member', 'member: "<id>"', me.member)
      const posted = await post(ctx, 'orbtest: who am I')
      expectEqual(posted.author?.id, me.member, 'the author of the app\'s post is the app\'s member')
      expectEqual(posted.author?.bot, true, 'the author of the app\'s post is a bot')
      // Read back, the message keeps that author.
      const page = expectOk(await ctx.client.get(`${BOT}/messages`, { channel: channel(ctx, 'text'), limit: 50 }), 'GET /messages')
      const found = (page.messages as any[]).find((m) => m.id === posted.id)
      expectThat(found !== undefined, 'the post is read back', `message ${posted.id as number}`, page.messages?.map((m: any) => m.id))
      expectEqual({ id: found.author?.id, bot: found.author?.bot }, { id: me.member, bot: true }, 'the author of the post as read back')
      if (ctx.client.target.controlled === undefined) return
      // With control: an app installed in two communities posts in both as the same member (a row in each).
      const { control, target } = controlled(ctx)
      const state = await control.orbState()
      const other = (state.servers as any[]).find((s) => s.id === target.otherCommunity)
      const otherText = other?.channels?.find((c: any) => c.kind === 'text' && c.readOnly !== true)?.id as string | undefined
      if (otherText === undefined) {
        ctx.note('no writable text channel in a second community: one community checked')
        return
      }
      const app = await ownApp(ctx, 'member', ['messages:read', 'messages:write'])
      await control.install(target.community, app.id, { role: { name: 'orbtest member', rights: ['send_messages'] }, channels: [target.channels.text] })
      await control.install(other.id, app.id, { role: { name: 'orbtest member', rights: ['send_messages'] }, channels: [otherText] })
      const mine = await readApp(ctx, app.as)
      expectEqual((mine.servers as any[]).map((s) => s.id).sort(), [target.community, other.id].sort(), 'GET /app lists both communities')
      for (const ch of [target.channels.text, otherText]) {
        const reply = await post(ctx, 'orbtest: the same member everywhere', { channel: ch, as: app.as })
        expectEqual({ id: reply.author?.id, bot: reply.author?.bot }, { id: mine.member, bot: true }, `the author of the app's post in ${ch}`)
        await ctx.client.request({ method: 'DELETE', path: `${BOT}/messages/${reply.id as number}`, as: app.as })
      }
    }
  }),

  defineCase<OrbBotClient>({
    id: 'ORB-009',
    title: 'an app reaches only communities that installed it, and there only channels its role sees on the allow-list',
    level: 'required',
    async run (ctx) {
      const target = ctx.client.target
      let checked = 0
      // Posting probes (refused, but a post all the same) and apps of the case's own are left out of a read-only run.
      if (ctx.readOnly) ctx.note('read-only: reach checked by reading only; no posting probes, no app of the case\'s own')
      // Another community's things count as not found (ORB-102).
      if (target.otherChannel !== undefined) {
        expectOrbError(await ctx.client.get(`${BOT}/messages`, { channel: target.otherChannel, limit: 1 }), 404, 'GET /messages of a channel in a community without the app')
        if (!ctx.readOnly) {
          const reply = await ctx.client.post(`${BOT}/messages`, { channel: target.otherChannel, content: 'orbtest: a reach probe' })
          deleteIfPosted(ctx, reply, 'full')
          expectOrbError(reply, 404, 'POST /messages to a channel in a community without the app')
        }
        checked++
      }
      if (target.otherCommunity !== undefined) {
        expectOrbError(await ctx.client.get(`${BOT}/app`, { server: target.otherCommunity }), 404, 'GET /app?server= of a community without the app')
        expectOrbError(await ctx.client.get(`${BOT}/passport`, passportQuery(ctx, target.otherCommunity)), 404, 'GET /passport of a community without the app')
        const servers = (await readApp(ctx)).servers as any[]
        expectThat(Array.isArray(servers) && !servers.some((s) => s?.id === target.otherCommunity), 'GET /app does not list a community without the app', `no ${target.otherCommunity}`, servers)
        checked++
      }
      // Inside the community: the allow-list and the role's sight.
      for (const kind of ['outsideAllowList', 'hidden'] as const) {
        const id = target.channels[kind]
        if (id === undefined) continue
        expectOrbError(await ctx.client.get(`${BOT}/messages`, { channel: id, limit: 1 }), 403, `GET /messages of the ${kind} channel`)
        if (!ctx.readOnly) {
          const reply = await ctx.client.post(`${BOT}/messages`, { channel: id, content: 'orbtest: a reach probe' })
          deleteIfPosted(ctx, reply, 'full')
          expectOrbError(reply, 403, `POST /messages to the ${kind} channel`)
        }
        checked++
      }
      expectOk(await ctx.client.get(`${BOT}/messages`, { channel: channel(ctx, 'text'), limit: 1 }), 'GET /messages of the text channel')
      if (!ctx.readOnly && target.controlled !== undefined && target.otherCommunity !== undefined && target.otherChannel !== undefined) {
        // Reach follows the install: a community that installs the app opens, one that uninstalls it closes again.
        const { control } = controlled(ctx)
        const app = await ownApp(ctx, 'reach', ['messages:read'])
        const read = (): Promise<OrbReply> => ctx.client.get(`${BOT}/messages`, { channel: target.otherChannel!, limit: 1 }, app.as)
        expectOrbError(await read(), 404, 'GET /messages before the community installed the app')
        await control.install(target.otherCommunity, app.id, { channels: [target.otherChannel] })
        expectOk(await read(), 'GET /messages once the community installed the app')
        await control.uninstall(target.otherCommunity, app.id)
        expectOrbError(await read(), 404, 'GET /messages after the community uninstalled the app')
        checked++
      }
      expectThat(checked > 0, 'the target names a channel or community the app cannot reach', 'otherCommunity, otherChannel, outsideAllowList or hidden', 'none')
    }
  }),

  defineCase<OrbBotClient>({
    id: 'ORB-010',
    title: 'the directory answers 200 without Authorization',
    level: 'required',
    async run (ctx) {
      const reply = await ctx.client.request({ path: DIRECTORY, as: null })
      expectOk(reply, 'GET /api/orb/directory without Authorization', { method: 'GET', path: '/api/orb/directory' })
    }
  }),

  defineCase<OrbBotClient>({
    id: 'ORB-011',
    title: 'the directory\'s 200 is {"apps": ListedApp[], "registry": {…}}',
    level: 'required',
    async run (ctx) {
      const body = await readDirectory(ctx)
      expectThat(typeof body === 'object' && body !== null && !Array.isArray(body), 'the directory is an object', '{"apps":[…],"registry":{…}}', body)
      expectThat(Array.isArray(body.apps), 'the directory has apps: []', 'apps: ListedApp[]', body.apps)
      expectThat(typeof body.registry === 'object' && body.registry !== null && !Array.isArray(body.registry), 'the directory has registry: {}', 'registry: {…}', body.registry)
      for (const app of body.apps as unknown[]) expectComponent(app, 'ListedApp', 'a listed app')
    }
  }),

  defineCase<OrbBotClient>({
    id: 'ORB-012',
    title: 'the directory lists exactly the apps whose developer chose the public listing; unlisted apps never appear',
    level: 'required',
    needs: ['control'],
    async run (ctx) {
      const { control, target } = controlled(ctx)
      const state = await control.orbState()
      const listed = (state.apps as any[]).filter((a) => a.listed === true).map((a) => a.id as string).sort()
      const unlisted = new Set((state.apps as any[]).filter((a) => a.listed !== true).map((a) => a.id as string))
      const shown = ((await readDirectory(ctx)).apps as any[]).map((a) => a.id as string)
      const leaked = shown.filter((id) => unlisted.has(id))
      if (leaked.length > 0) throw new CaseFailure('unlisted apps appear in the directory', 'only listed apps', leaked)
      for (const own of [target.full.id, target.few?.id]) expectThat(own === undefined || !shown.includes(own), 'the suite\'s own (unlisted, installed) apps are not listed', `no ${String(own)}`, shown)
      if (listed.length <= DIRECTORY_LIMIT) expectEqual([...shown].sort(), listed, 'the directory lists every listed app')
      ctx.note(`${listed.length} listed, ${unlisted.size} unlisted`)
    }
  }),

  defineCase<OrbBotClient>({
    id: 'ORB-013',
    title: 'the directory holds at most 60 apps, most installed first',
    level: 'required',
    async run (ctx) {
      const apps = (await readDirectory(ctx)).apps as any[]
      expectThat(apps.length <= DIRECTORY_LIMIT, 'at most 60 apps', `<= ${DIRECTORY_LIMIT}`, apps.length)
      // "newest and most installed first": an app never stands before one with more installs (the tie-break is ORB-A19's).
      for (let i = 1; i < apps.length; i++) {
        if (Number(apps[i].installs) > Number(apps[i - 1].installs)) throw new CaseFailure(`${String(apps[i].id)} (${String(apps[i].installs)} installs) stands after ${String(apps[i - 1].id)} (${String(apps[i - 1].installs)})`, 'most installed first', apps.map((a) => [a.id, a.installs]))
      }
      ctx.note(`${apps.length} apps`)
    }
  }),

  defineCase<OrbBotClient>({
    id: 'ORB-014',
    title: 'each ListedApp has id, name, blurb, scopes (of the 5), rights, homepage, developer, integer installs, chain, manifest',
    level: 'required',
    async run (ctx) {
      const apps = (await readDirectory(ctx)).apps as any[]
      const vocabulary = new Set<string>(SCOPES)
      for (const app of apps) {
        const what = `listed app ${String(app?.id)}`
        for (const key of ['id', 'name', 'blurb', 'homepage', 'developer']) expectThat(typeof app[key] === 'string', `${what}: ${key} is a string`, `${key}: "…"`, app[key])
        expectThat(Array.isArray(app.scopes) && app.scopes.every((s: unknown) => vocabulary.has(String(s))), `${what}: scopes are a subset of the five`, [...SCOPES], app.scopes)
        expectThat(new Set(app.scopes).size === app.scopes.length, `${what}: each scope once`, 'no repeats', app.scopes)
        expectThat(Array.isArray(app.rights) && app.rights.every((r: unknown) => typeof r === 'string'), `${what}: rights are channel rights`, 'rights: ["send_messages", …]', app.rights)
        expectThat(Number.isInteger(app.installs) && app.installs >= 0, `${what}: installs is a count`, 'an integer >= 0', app.installs)
        expectThat('chain' in app, `${what}: chain is present`, 'chain: {…} or null', app)
        expectComponent(app, 'ListedApp', what)
      }
      if (ctx.client.target.controlled !== undefined) {
        // The listing says what the developer asked for: the scopes of the app itself.
        const state = await controlled(ctx).control.orbState()
        for (const app of apps) {
          const known = (state.apps as any[]).find((a) => a.id === app.id)
          if (known !== undefined) expectEqual([...app.scopes].sort(), [...known.scopes].sort(), `${String(app.id)}: the listing's scopes are the app's`)
        }
      }
      ctx.note(`${apps.length} listings checked`)
    }
  }),

  defineCase<OrbBotClient>({
    id: 'ORB-015',
    title: 'chain is null or {app: bytes32, price: a decimal wei string, retired: boolean}',
    level: 'required',
    async run (ctx) {
      let onChain = 0
      for (const app of (await readDirectory(ctx)).apps as any[]) {
        const chain = app.chain
        if (chain === null) continue
        const what = `listed app ${String(app.id)}`
        expectThat(typeof chain === 'object' && !Array.isArray(chain), `${what}: chain is an object or null`, '{app, price, retired} or null', chain)
        expectThat(typeof chain.app === 'string' && HEX32.test(chain.app), `${what}: chain.app is a bytes32`, '0x and 64 hex digits', chain.app)
        expectThat(typeof chain.price === 'string' && /^(0|[1-9][0-9]*)$/.test(chain.price), `${what}: chain.price is a decimal wei string`, '"0" or a decimal integer', chain.price)
        expectThat(typeof chain.retired === 'boolean', `${what}: chain.retired is a boolean`, 'true or false', chain.retired)
        onChain++
      }
      ctx.note(`${onChain} listings on the registry`)
    }
  }),

  defineCase<OrbBotClient>({
    id: 'ORB-016',
    title: 'every listing\'s manifest.hash is Keccak-256 (not SHA3-256) of the exact UTF-8 bytes of manifest.json',
    level: 'required',
    async run (ctx) {
      const body = await readDirectory(ctx)
      let checked = 0
      for (const app of body.apps as any[]) {
        if (app.manifest === undefined || app.manifest === null) continue
        expectThat(typeof app.manifest.json === 'string', `${String(app.id)}: manifest.json is a string`, 'the exact JSON text', app.manifest.json)
        const want = bytesToHex(keccak_256(utf8ToBytes(String(app.manifest.json))))
        const got = String(app.manifest.hash).toLowerCase().replace(/^0x/, '')
        if (got !== want) throw new CaseFailure(`${String(app.id)}: manifest.hash is not keccak256(manifest.json)`, `0x${want}`, app.manifest.hash)
        checked++
      }
      ctx.note(`${checked} manifests checked`)
    }
  }),

  defineCase<OrbBotClient>({
    id: 'ORB-018',
    title: 'registry has integer chainId, contract string or null, asset, feeRecipient, integer feeBps, integer apps, fees in wei',
    level: 'required',
    async run (ctx) {
      const r = (await readDirectory(ctx)).registry
      expectThat(Number.isInteger(r?.chainId), 'registry.chainId is an integer', 'e.g. 10143', r?.chainId)
      expectThat(r?.contract === null || typeof r?.contract === 'string', 'registry.contract is a string or null', 'an address or null', r?.contract)
      expectThat(typeof r?.asset === 'string', 'registry.asset is a string', 'the test token', r?.asset)
      expectThat(typeof r?.feeRecipient === 'string', 'registry.feeRecipient is a string', 'an address', r?.feeRecipient)
      expectThat(Number.isInteger(r?.feeBps) && r.feeBps >= 0 && r.feeBps <= 10_000, 'registry.feeBps is an integer in basis points', '0..10000, e.g. 500', r?.feeBps)
      expectThat(Number.isInteger(r?.apps) && r.apps >= 0, 'registry.apps is a count', 'an integer >= 0', r?.apps)
      expectThat(typeof r?.fees === 'string' && /^(0|[1-9][0-9]*)$/.test(r.fees), 'registry.fees is a decimal wei string', '"0" or a decimal integer', r?.fees)
    }
  }),

  defineCase<OrbBotClient>({
    id: 'ORB-020',
    title: 'GET /app without server is 200 with the app, its member id and the communities that installed it',
    level: 'required',
    async run (ctx) {
      const target = ctx.client.target
      const body = await readApp(ctx)
      expectThat(typeof body.app?.id === 'string' && typeof body.app?.name === 'string', 'GET /app names the app', 'app: {id, name, …}', body.app)
      if (target.full.id !== undefined) expectEqual(body.app.id, target.full.id, 'the app GET /app names is the caller')
      expectThat(typeof body.member === 'string' && body.member !== '', 'GET /app names its member id', 'member: "<id>"', body.member)
      expectThat(Array.isArray(body.servers), 'GET /app lists its communities', 'servers: [...]', body.servers)
      const ids = (body.servers as any[]).map((s) => s?.id)
      expectThat(ids.includes(target.community), 'the community that installed the app is listed', target.community, ids)
      if (target.controlled !== undefined && target.full.id !== undefined) {
        const state = await controlled(ctx).control.orbState()
        const installed = (state.installs as StateInstall[]).filter((i) => i.app === target.full.id).map((i) => i.server).sort()
        expectEqual([...ids].sort(), installed, 'GET /app lists exactly the communities that installed the app')
      }
    }
  }),

  defineCase<OrbBotClient>({
    id: 'ORB-021',
    title: 'GET /app?server= lists exactly the channels the role sees on the allow-list; others are absent',
    level: 'required',
    async run (ctx) {
      const target = ctx.client.target
      const body = await readApp(ctx, 'full', target.community)
      expectThat(Array.isArray(body.channels), 'GET /app?server= lists channels', 'channels: [...]', body)
      const ids = (body.channels as any[]).map((c) => c?.id as string)
      expectThat(ids.includes(target.channels.text), 'the text channel is listed', target.channels.text, ids)
      for (const kind of ['outsideAllowList', 'hidden'] as const) {
        const id = target.channels[kind]
        if (id !== undefined) expectThat(!ids.includes(id), `the ${kind} channel is absent`, `no ${id}`, ids)
      }
      if (target.controlled === undefined) return
      if (ctx.readOnly) {
        ctx.note('read-only: no app of the case\'s own was installed; the configured channels alone were checked')
        return
      }
      // With control: any allow-list and any hidden set an admin picks, for an app of the case's own.
      const { control } = controlled(ctx)
      const state = await control.orbState()
      const community = (state.servers as any[]).find((s) => s.id === target.community)
      const all = (community.channels as any[]).map((c) => c.id as string)
      const kinds = new Map<string, any>((community.channels as any[]).map((c) => [c.id, c]))
      const app = await ownApp(ctx, 'sight', ['messages:read'])
      await fc.assert(fc.asyncProperty(fc.subarray(all), fc.subarray(all), async (allowed, hidden) => {
        await control.install(target.community, app.id, { channels: allowed, hidden })
        const seen = expectOk(await ctx.client.get(`${BOT}/app`, { server: target.community }, app.as), 'GET /app?server= of an app of the case\'s own')
        const want = all.filter((id) => allowed.includes(id) && !hidden.includes(id))
        expectEqual((seen.channels as any[]).map((c) => c.id).sort(), [...want].sort(), `the channels of allow-list [${allowed.join(', ')}] with [${hidden.join(', ')}] hidden`)
        for (const c of seen.channels as any[]) {
          const known = kinds.get(c.id)
          expectEqual({ type: c.type, readOnly: c.readOnly }, { type: known.kind, readOnly: known.readOnly }, `channel ${String(c.id)}'s type and readOnly`)
        }
      }), ctx.fc())
    }
  }),

  defineCase<OrbBotClient>({
    id: 'ORB-022',
    title: 'GET /app with a missing or invalid token is 401 with an Error body',
    level: 'required',
    async run (ctx) {
      expectOrbError(await ctx.client.request({ path: `${BOT}/app`, as: null }), 401, 'GET /app without Authorization')
      expectOrbError(await ctx.client.request({ path: `${BOT}/app`, as: null, headers: { authorization: 'Bearer' } }), 401, 'GET /app with "Bearer" and no token')
      expectOrbError(await ctx.client.request({ path: `${BOT}/app`, as: { token: 'orb_conformance_not_a_token_0000000000' } }), 401, 'GET /app with an unknown token')
      // The valid token under another scheme (the exchange shows it masked, as $ORB_TOKEN).
      expectOrbError(await ctx.client.request({ path: `${BOT}/app`, as: null, headers: { authorization: `Token ${ctx.client.target.full.token}` } }), 401, 'GET /app with the token under another scheme')
      // And the valid token is what opens it.
      await readApp(ctx)
    }
  }),

  defineCase<OrbBotClient>({
    id: 'ORB-101',
    title: 'every error is {"error": {"message": string, "code": integer}} as JSON: random bad requests, wrong methods, unknown routes',
    level: 'required',
    async run (ctx) {
      await badRequestProperty(ctx, (reply, _request, _allowed, what) => {
        expectThat(reply.status >= 400 && reply.status < 500, `${what}: an error`, 'a 4xx', short(reply))
        expectErrorBody(reply, what)
      })
      for (const [method, path] of [['PATCH', `${BOT}/app`], ['POST', DIRECTORY], ['GET', `${BOT}/nope`], ['GET', '/api/bot/v2/app']]) {
        const reply = await ctx.client.request({ method: method!, path: path! })
        expectThat(reply.status >= 400, `${method!} ${path!}: an error`, '4xx', short(reply))
        expectErrorBody(reply, `${method!} ${path!}`)
      }
    }
  }),

  defineCase<OrbBotClient>({
    id: 'ORB-102',
    title: 'random bad requests across every route answer only the statuses of the table, each as the rule for it says',
    level: 'required',
    async run (ctx) {
      await badRequestProperty(ctx, (reply, request, allowed, what) => {
        if (allowed.decided && !exactStatus()) {
          // The exact status is orbtest's decision; the spec still allows only its table, and no 401 with a token.
          expectErrorIn(reply, TABLE.filter((s) => s !== 401 && s !== 429), what)
          return
        }
        expectErrorIn(reply, allowed.statuses, `${what} (${request.statuses.join('/')} by the rule)`)
      })
    }
  }),

  // -------------------------------------------------------------------------------------------------------------
  // Decisions
  // -------------------------------------------------------------------------------------------------------------

  defineCase<OrbBotClient>({
    id: 'ORB-A01',
    title: 'error.code equals the HTTP status, for random bad requests across every route',
    level: 'decision',
    async run (ctx) {
      await badRequestProperty(ctx, (reply, _request, _allowed, what) => {
        expectErrorBody(reply, what)
        if (reply.json.error.code !== reply.status) throw new CaseFailure(`${what}: error.code ${String(reply.json.error.code)} under status ${reply.status}`, `code ${reply.status}`, short(reply))
      }, 10)
    }
  }),

  defineCase<OrbBotClient>({
    id: 'ORB-A06',
    title: 'GET /app is {app{id,name,scopes}, member, servers[{id,name,role{name,rights}}]}; ?server= is {server, channels[…]}; another community 404',
    level: 'decision',
    async run (ctx) {
      const target = ctx.client.target
      const body = await readApp(ctx)
      expectThat(typeof body.app?.id === 'string' && typeof body.app?.name === 'string' && Array.isArray(body.app?.scopes), 'app: {id, name, scopes}', '{"app":{"id","name","scopes":[…]}}', body.app)
      expectThat(typeof body.member === 'string', 'member: a string', '"<member id>"', body.member)
      for (const s of body.servers as any[]) {
        expectThat(typeof s?.id === 'string' && typeof s?.name === 'string' && typeof s?.role?.name === 'string' && Array.isArray(s?.role?.rights) && s.role.rights.every((r: unknown) => (RIGHTS as readonly unknown[]).includes(r)),
          'servers[]: {id, name, role: {name, rights}}', '{"id","name","role":{"name","rights":[…]}}', s)
      }
      const scoped = await readApp(ctx, 'full', target.community)
      expectEqual(scoped.server, target.community, 'GET /app?server= names the community')
      for (const c of scoped.channels as any[]) {
        expectThat(typeof c?.id === 'string' && typeof c?.name === 'string' && ['text', 'voice'].includes(c?.type) && typeof c?.readOnly === 'boolean' && Array.isArray(c?.rights),
          'channels[]: {id, name, type, readOnly, rights}', '{"id","name","type":"text"|"voice","readOnly":bool,"rights":[…]}', c)
      }
      if (target.otherCommunity !== undefined) expectOrbError(await ctx.client.get(`${BOT}/app`, { server: target.otherCommunity }), 404, 'GET /app?server= of a community without the app')
      expectOrbError(await ctx.client.get(`${BOT}/app`, { server: 'srv_orbtest_no_such_community' }), 404, 'GET /app?server= of no community at all')
      if (target.controlled !== undefined && target.full.id !== undefined) {
        // The role and each channel's rights are what the admin gave.
        const install = await installOf(ctx, target.community, target.full.id)
        const server = (body.servers as any[]).find((s) => s.id === target.community)
        expectEqual([...server.role.rights].sort(), [...install!.role.rights].sort(), 'the role\'s rights')
        for (const c of scoped.channels as any[]) expectEqual([...c.rights].sort(), [...(install!.channelRights[c.id] ?? install!.role.rights)].sort(), `channel ${String(c.id)}'s rights`)
      }
    }
  }),

  defineCase<OrbBotClient>({
    id: 'ORB-A07',
    title: '/app, /events, /commands, /interactions need only a valid token (an app with messages:read is never 403 there); DELETE /messages needs messages:write',
    level: 'decision',
    writes: true,
    async run (ctx) {
      const fewApp = few(ctx)
      await readApp(ctx, fewApp)
      expectOk(await ctx.client.get(`${BOT}/app`, { server: ctx.client.target.community }, fewApp), 'GET /app?server= as the few app')
      const events = await drain(ctx, 0, fewApp)
      expectOk(await ctx.client.get(`${BOT}/events`, { after: events.next }, fewApp), 'GET /events as the few app', { method: 'GET', path: `${BOT}/events` })
      expectOk(await ctx.client.get(`${BOT}/commands`, undefined, fewApp), 'GET /commands as the few app', { method: 'GET', path: `${BOT}/commands` })
      expectOk(await syncCommands(ctx, [], fewApp), 'PUT /commands [] as the few app', { method: 'PUT', path: `${BOT}/commands` })
      expectOrbError(await ctx.client.request({ method: 'DELETE', path: `${BOT}/commands`, query: { name: 'orbtest-never-registered' }, as: fewApp }), 404, 'DELETE /commands of an unregistered name as the few app')
      expectOrbError(await ctx.client.post(`${BOT}/interactions/evt_orbtest_unknown/respond`, { content: 'x' }, fewApp), 404, 'POST /interactions/<unknown>/respond as the few app')
      // DELETE /messages/{id} needs messages:write.
      const posted = await post(ctx, 'orbtest: not the few app\'s to delete')
      expectOrbError(await ctx.client.request({ method: 'DELETE', path: `${BOT}/messages/${posted.id as number}`, as: fewApp }), 403, 'DELETE /messages/{id} as an app without messages:write')
    }
  }),

  defineCase<OrbBotClient>({
    id: 'ORB-A19',
    title: 'directory: installs descending, retired apps listed with retired true, no manifest without chain, 0x-hex hashes, installs counts current installs, Authorization ignored',
    level: 'decision',
    async run (ctx) {
      const body = await readDirectory(ctx)
      const apps = body.apps as any[]
      for (let i = 1; i < apps.length; i++) expectThat(apps[i].installs <= apps[i - 1].installs, 'installs descending', 'installs descending', apps.map((a) => [a.id, a.installs]))
      for (const app of apps) {
        if (app.chain === null) expectThat(!('manifest' in app), `${String(app.id)}: no chain, no manifest`, 'manifest omitted', app.manifest)
        else {
          expectThat(/^0x[0-9a-f]{64}$/.test(String(app.chain.app)), `${String(app.id)}: chain.app is 0x and 64 lowercase hex digits`, '0x…', app.chain.app)
          if (app.manifest !== undefined) expectThat(/^0x[0-9a-f]{64}$/.test(String(app.manifest.hash)), `${String(app.id)}: manifest.hash is 0x and 64 lowercase hex digits`, '0x…', app.manifest.hash)
        }
      }
      if (body.registry?.contract === null) expectThat(apps.every((a) => a.chain === null), 'without a registry contract every chain is null', 'chain: null', apps.map((a) => a.chain))
      // Authorization, valid or not, changes nothing.
      expectEqual((await readDirectory(ctx, { as: 'full' })).apps, apps, 'the directory with the app\'s token')
      expectEqual((await readDirectory(ctx, { as: { token: 'orb_conformance_not_a_token_0000000000' } })).apps, apps, 'the directory with an unknown token')
      if (ctx.client.target.controlled === undefined) return
      const { control } = controlled(ctx)
      const state = await control.orbState()
      const known = new Map<string, any>((state.apps as any[]).map((a) => [a.id, a]))
      for (const app of apps) if (known.has(app.id)) expectEqual(app.installs, known.get(app.id).installs, `${String(app.id)}: installs counts its current installs`)
      const listed = (state.apps as any[]).filter((a) => a.listed === true).map((a) => a.id as string)
      // Retired apps stay listed: every listed app is shown (while there are at most 60), retired or not.
      if (listed.length <= DIRECTORY_LIMIT) expectEqual(apps.map((a) => a.id).sort(), [...listed].sort(), 'every listed app is shown, retired ones too')
      for (const app of apps) if (app.chain !== null) expectThat(typeof app.chain.retired === 'boolean', `${String(app.id)}: chain.retired`, 'true or false', app.chain.retired)
      ctx.note(`${apps.filter((a) => a.chain?.retired === true).length} retired listings shown of ${listed.length} listed apps`)
      if (ctx.readOnly) {
        ctx.note('read-only: no install was made, so the install count was not moved')
        return
      }
      // An admin installs a listed app in a community that lacks it: installs goes up by one, and back down after.
      const pick = apps.flatMap((app) => (state.servers as any[])
        .filter((s) => !(state.installs as StateInstall[]).some((i) => i.app === app.id && i.server === s.id))
        .map((s) => ({ app: app.id as string, server: s.id as string, installs: app.installs as number })))[0]
      if (pick === undefined) {
        ctx.note('every listed app is installed everywhere: the install count was not moved')
        return
      }
      ctx.cleanup(async () => { await control.uninstall(pick.server, pick.app) })
      await control.install(pick.server, pick.app, {})
      const after = ((await readDirectory(ctx)).apps as any[]).find((a) => a.id === pick.app)
      expectEqual(after?.installs, pick.installs + 1, `${pick.app}'s installs once ${pick.server} installed it`)
      await control.uninstall(pick.server, pick.app)
      const back = ((await readDirectory(ctx)).apps as any[]).find((a) => a.id === pick.app)
      expectEqual(back?.installs, pick.installs, `${pick.app}'s installs once ${pick.server} uninstalled it again`)
    }
  }),

  defineCase<OrbBotClient>({
    id: 'ORB-A23',
    title: 'HTTP conventions: wrong method 405, non-JSON content type 415, broken JSON 400, unknown route 404, unknown parameters and fields ignored, success 200',
    level: 'decision',
    writes: true,
    async run (ctx) {
      const text = channel(ctx, 'text')
      for (const [method, path] of [
        ['PATCH', `${BOT}/app`], ['POST', `${BOT}/app`], ['PUT', `${BOT}/messages`], ['DELETE', `${BOT}/events`], ['POST', `${BOT}/commands`],
        ['GET', `${BOT}/voice`], ['DELETE', `${BOT}/music`], ['POST', `${BOT}/passport`], ['POST', DIRECTORY], ['GET', `${BOT}/messages/1`], ['GET', `${BOT}/interactions/evt_x/respond`]
      ] as const) {
        expectOrbError(await ctx.client.request({ method, path }), 405, `${method} ${path}`)
      }
      for (const [path, type, raw] of [
        [`${BOT}/messages`, 'text/plain', 'hello'],
        [`${BOT}/music`, 'text/plain', '{"channel":"x","action":"state"}'],
        [`${BOT}/voice`, 'application/x-www-form-urlencoded', 'action=roster']
      ] as const) {
        expectOrbError(await ctx.client.request({ method: 'POST', path, body: Buffer.from(raw), headers: { 'content-type': type } }), 415, `POST ${path} as ${type}`)
      }
      for (const [path, raw] of [[`${BOT}/messages`, '{"channel":'], [`${BOT}/voice`, 'nope'], [`${BOT}/music`, "{'a':1}"]] as const) {
        expectOrbError(await ctx.client.request({ method: 'POST', path, body: Buffer.from(raw) }), 400, `POST ${path} with a body that is not JSON`)
      }
      for (const path of [`${BOT}/nope`, `${BOT}/app/extra`, '/api/bot/v2/app', '/api/orb/nope']) {
        expectOrbError(await ctx.client.request({ path }), 404, `GET ${path}`)
      }
      // Unknown query parameters and body fields are ignored: the same answer as without them.
      const baseline = await readApp(ctx)
      const names = fc.stringMatching(/^[a-z][a-z0-9_]{0,11}$/)
      const unknownQuery = fc.dictionary(names.filter((n) => n !== 'server'), fc.string({ maxLength: 12 }), { minKeys: 1, maxKeys: 4 })
      const unknownFields = fc.dictionary(names.filter((n) => !['channel', 'action', 'arg', 'call', 'speaking', 'content', 'reply_to'].includes(n)), fc.jsonValue({ maxDepth: 2 }), { minKeys: 1, maxKeys: 4 })
      const voice = ctx.client.target.channels.voice
      const player = voice === undefined ? undefined : expectOk(await ctx.client.post(`${BOT}/music`, { channel: voice, action: 'state' }), 'POST /music state')
      await fc.assert(fc.asyncProperty(unknownQuery, unknownFields, async (query, fields) => {
        expectEqual(expectOk(await ctx.client.get(`${BOT}/app`, query), `GET /app?${new URLSearchParams(query).toString()}`), baseline, 'GET /app with unknown query parameters')
        expectThat(Array.isArray(expectOk(await ctx.client.get(DIRECTORY, query, null), 'the directory with unknown query parameters').apps), 'the directory with unknown parameters', 'apps: […]', 'no apps')
        if (voice !== undefined) {
          expectEqual(expectOk(await ctx.client.post(`${BOT}/music`, { ...fields, channel: voice, action: 'state' }), 'POST /music state with unknown fields'), player, 'the player asked with unknown body fields')
          expectOk(await ctx.client.post(`${BOT}/voice`, { ...fields, action: 'roster', channel: voice }), 'POST /voice roster with unknown fields')
        }
      }), ctx.fc({ numRuns: Math.min(10, ctx.fc().numRuns ?? 10) }))
      // Success is 200, never 201 or 204: a post with an unknown field, and its deletion.
      const posted = await ctx.client.post(`${BOT}/messages`, { channel: text, content: 'orbtest: an extra field', orbtest_extra: { a: [1] } })
      deleteIfPosted(ctx, posted, 'full')
      expectEqual(posted.status, 200, 'POST /messages with an unknown body field answers 200')
      const deleted = await ctx.client.request({ method: 'DELETE', path: `${BOT}/messages/${posted.json.id as number}` })
      expectEqual(deleted.status, 200, 'DELETE /messages/{id} answers 200 (not 204)')
      expectEqual(expectOk(await syncCommands(ctx, []), 'PUT /commands []').commands, [], 'PUT /commands [] answers 200 with no commands')
    }
  }),

  defineCase<OrbBotClient>({
    id: 'ORB-A24',
    title: 'field names are exactly as written: hasOlder, replyTo, reply_to, sent_at, chainId, feeBps, feeRecipient, readOnly',
    level: 'decision',
    writes: true,
    async run (ctx) {
      const text = channel(ctx, 'text')
      const has = (value: any, name: string, not: string, what: string): void => {
        expectThat(value !== null && typeof value === 'object' && name in value && !(not in value), `${what}: ${name} (not ${not})`, name, Object.keys(value ?? {}))
      }
      const registry = (await readDirectory(ctx)).registry
      has(registry, 'chainId', 'chain_id', 'the registry')
      has(registry, 'feeBps', 'fee_bps', 'the registry')
      has(registry, 'feeRecipient', 'fee_recipient', 'the registry')
      for (const c of (await readApp(ctx, 'full', ctx.client.target.community)).channels as any[]) has(c, 'readOnly', 'read_only', `channel ${String(c.id)}`)
      // reply_to in, replyTo out.
      const first = await post(ctx, 'orbtest: field names')
      const reply = await ctx.client.post(`${BOT}/messages`, { channel: text, content: 'orbtest: a reply', reply_to: first.id })
      deleteIfPosted(ctx, reply, 'full')
      expectOk(reply, 'POST /messages with reply_to')
      const page = expectOk(await ctx.client.get(`${BOT}/messages`, { channel: text, limit: 5 }), 'GET /messages')
      has(page, 'hasOlder', 'has_older', 'GET /messages')
      const back = (page.messages as any[]).find((m) => m.id === reply.json.id)
      has(back, 'replyTo', 'reply_to', 'a message')
      expectEqual(back.replyTo, first.id, 'replyTo of the reply')
      if (ctx.client.target.controlled === undefined) return
      // sent_at on an event (a test event the developer sends).
      const { control, target } = controlled(ctx)
      const from = (await drain(ctx)).next
      await control.testEvent(await fullAppId(ctx))
      const events = (await drain(ctx, from)).events
      expectThat(events.length > 0, 'the test event is fetched', 'an app.test event', events)
      has(events.at(-1), 'sent_at', 'sentAt', `event of ${target.full.id ?? 'the app'}`)
    }
  }),

  // -------------------------------------------------------------------------------------------------------------
  // The directory's throttle, last of all: each case starts a fresh window on a virtual clock and leaves one. On a real
  // clock the directory may stay throttled for this address until Retry-After has passed; no case after these reads it
  // (the other areas never do), and the client waits a 429 out for any that would.
  // -------------------------------------------------------------------------------------------------------------

  defineCase<OrbBotClient>({
    id: 'ORB-019',
    title: 'the directory throttles a caller: back-to-back requests end in 429 with Retry-After and an Error body; waiting it out admits again',
    level: 'required',
    async run (ctx) {
      const virtual = await freshDirectoryWindow(ctx)
      const { reply, admitted } = await untilThrottled(ctx, 'the directory')
      const wait = expectRetryAfter(reply, 'the directory\'s 429')
      ctx.note(`${admitted} requests admitted, then 429 with Retry-After ${wait}`)
      // Waiting Retry-After out is the other half of the rule. A virtual clock passes it at once; a real one waits for
      // real (the case's point), which over 15 s needs --slow: without it the retry is not checked.
      try {
        await ctx.elapse(wait * 1000)
      } catch (err) {
        if (!(err instanceof CaseSkip)) throw err
        ctx.note(`Retry-After ${wait} s is too long to wait in real time without --slow: the retry after it was not checked, and the directory stays throttled for this address until then`)
        return
      }
      expectOk(await hitDirectory(ctx), `the directory after waiting Retry-After (${wait} s)`)
      if (!virtual) ctx.note('real clock: Retry-After was waited out for real')
    }
  }),

  defineCase<OrbBotClient>({
    id: 'ORB-099',
    title: 'property: whatever the pattern of calls and pauses, a throttled directory call is 429 + integer Retry-After + Error, and waiting it out admits the call',
    level: 'required',
    needs: ['slow'],
    async run (ctx) {
      const virtual = await ctx.virtualTime()
      ctx.cleanup(async () => { await ctx.elapse(DIRECTORY_WINDOW_MS) })
      const steps = fc.array(fc.oneof(
        fc.record({ hits: fc.integer({ min: 1, max: 40 }) }),
        fc.record({ pause: fc.integer({ min: 1, max: 70 }) })
      ), { minLength: 0, maxLength: 5 })
      await fc.assert(fc.asyncProperty(steps, async (plan) => {
        await ctx.elapse(DIRECTORY_WINDOW_MS)
        for (const step of plan) {
          if ('pause' in step) {
            await ctx.elapse(step.pause * 1000)
            continue
          }
          for (let i = 0; i < step.hits; i++) throttleReply(await hitDirectory(ctx), `the directory during the plan ${JSON.stringify(plan)}`)
        }
        const { reply } = await untilThrottled(ctx, `the directory after the plan ${JSON.stringify(plan)}`)
        const wait = expectRetryAfter(reply, 'the directory\'s 429')
        await ctx.elapse(wait * 1000)
        expectOk(await hitDirectory(ctx), `the directory after waiting Retry-After (${wait} s) at the end of the plan ${JSON.stringify(plan)}`)
      }), ctx.fc(virtual ? {} : { numRuns: 2 }))
    }
  }),

  defineCase<OrbBotClient>({
    id: 'ORB-A03.directory',
    title: 'the directory admits 60 requests in any sliding 60 s (the 61st is 429) and Retry-After is the ceiling of the wait for a slot',
    level: 'decision',
    needs: ['control'],
    async run (ctx) {
      if (!await ctx.virtualTime()) throw new CaseSkip('a model of the window needs the target\'s virtual clock')
      ctx.cleanup(async () => { await ctx.elapse(DIRECTORY_WINDOW_MS) })
      const steps = fc.array(fc.oneof(
        fc.record({ hits: fc.integer({ min: 1, max: 30 }) }),
        fc.record({ pause: fc.integer({ min: 1, max: 75_000 }) })
      ), { minLength: 1, maxLength: 8 })
      await fc.assert(fc.asyncProperty(steps, async (plan) => {
        await ctx.elapse(DIRECTORY_WINDOW_MS)
        // The model: times (ms since the fresh window) of admitted requests; a request 60 000 ms old has left.
        let now = 0
        const times: number[] = []
        const hit = async (what: string): Promise<void> => {
          const live = times.filter((t) => t > now - DIRECTORY_WINDOW_MS)
          const reply = await hitDirectory(ctx)
          if (live.length < DIRECTORY_LIMIT) {
            if (reply.status !== 200) throw new CaseFailure(`${what}: ${live.length} admitted in the last 60 s, yet status ${reply.status}`, 200, short(reply))
            times.push(now)
            return
          }
          expectOrbError(reply, 429, `${what}: the ${live.length + 1}th request in 60 s`)
          const want = Math.max(1, Math.ceil((live[live.length - DIRECTORY_LIMIT]! + DIRECTORY_WINDOW_MS - now) / 1000))
          expectEqual(expectRetryAfter(reply, what), want, `${what}: Retry-After (seconds until a slot frees)`)
        }
        // A fresh window: 60 pass, the 61st does not.
        for (let i = 0; i < DIRECTORY_LIMIT + 1; i++) await hit(`request ${i + 1} of a fresh window`)
        for (const step of plan) {
          if ('pause' in step) {
            await ctx.elapse(step.pause)
            now += step.pause
          } else {
            for (let i = 0; i < step.hits; i++) await hit(`at ${now} ms of the plan ${JSON.stringify(plan)}`)
          }
        }
      }), ctx.fc({ numRuns: Math.min(10, ctx.fc().numRuns ?? 10) }))
    }
  })
]

/** Which cases each fault of the fake Orb must make fail. */
export const accessFaults: Partial<Record<OrbFault, string[]>> = {
  'sha3-manifest': ['ORB-016'],
  'music-scope-unchecked': ['ORB-006', 'ORB-005'],
  'retry-after-early': ['ORB-019', 'ORB-099', 'ORB-A03.directory']
}
