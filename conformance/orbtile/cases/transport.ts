import { lstatSync, statSync } from 'node:fs'
import { isAbsolute } from 'node:path'
import fc from 'fast-check'
import type { Fault } from '../../../src/orbtile-mock/faults.js'
import { ACTIVITIES, def, ERROR_CODES } from '../../../src/orbtile-mock/spec.js'
import { adapterId, CaseFailure, defineCase, type CaseContext } from '../case.js'
import { forget, leaseGone, minimal, register, type Registered } from '../adapters.js'
import { expectEqual, expectError, expectSchema, expectStatus, expectThat } from '../expect.js'
import type { Reply, RequestOptions } from '../transport.js'
import {
  burst, connectionRefusal, hasVirtualClock, isRateLimited, pollsHeld, PROOF_VECTOR, proofOf, readDiscovery, refillBuckets,
  switchApi, windowProblem, within
} from '../support-transport.js'

/** OT-035: the limits `GET /info` advertises, as the ledger lists them. */
const LIMITS = {
  maxBodyBytes: 65536,
  maxSessionsPerAdapter: 32,
  maxAdapters: 8,
  requestsPerSecond: 20,
  burst: 60,
  maxPendingRequestsPerAdapter: 32,
  maxEvents: 128,
  maxRequestIDs: 4096,
  maxLongPolls: 4
} as const

/** A SessionUpdate that creates a session with the fewest fields. */
const SESSION = { title: 'orbtest conformance', activity: 'idle' } as const
const approval = (id: string): Record<string, string> => ({ id, toolName: 'Bash', commandSummary: 'ls -la' })

/** JSON with object keys sorted, so that two values compare whatever their key order. */
const canonical = (value: unknown): string => JSON.stringify(value, (_key, v: unknown) =>
  v !== null && typeof v === 'object' && !Array.isArray(v)
    ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
    : v)

const session = (ctx: CaseContext, a: Registered, sessionId: string, body: unknown, extra: RequestOptions = {}): Promise<Reply> =>
  ctx.client.request({ method: 'POST', path: `/adapters/${a.id}/sessions/${sessionId}`, headers: a.headers, body, ...extra })
const poll = (ctx: CaseContext, a: Registered, body: unknown = {}, extra: RequestOptions = {}): Promise<Reply> =>
  ctx.client.request({ method: 'POST', path: `/adapters/${a.id}/events`, headers: a.headers, body, ...extra })
const withEvents = (capabilities: string[] = ['tap']): Record<string, unknown> => ({ ...minimal(), capabilities })

/** Property runs for a costly property: the run's number, but at most `max`. */
const capped = (ctx: CaseContext, max: number): fc.Parameters<unknown> => ctx.fc({ numRuns: Math.min(ctx.fc().numRuns ?? 100, max) })

/** Printable ASCII (what an HTTP header value may hold), `min` to `max` characters. */
const printable = (min: number, max: number): fc.Arbitrary<string> =>
  fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), minLength: min, maxLength: max })
const NONCE = /^[0-9A-Fa-f]{16,64}$/

/** Any Authorization value but `Bearer <the discovery token>`: other tokens, near misses, other schemes, no scheme. */
function wrongAuthorization (token: string): fc.Arbitrary<string> {
  return fc.oneof(
    printable(1, 80).filter((s) => /^[\x21-\x7e]+$/.test(s) && s !== token).map((s) => `Bearer ${s}`),
    fc.tuple(fc.nat({ max: token.length - 1 }), fc.constantFrom(...'aZ09-_x')).map(([i, ch]) => token.slice(0, i) + ch + token.slice(i + 1))
      .filter((t) => t !== token).map((t) => `Bearer ${t}`),
    fc.constantFrom(`Bearer ${token}x`, `Bearer ${token.slice(0, -1)}`, `Bearer x${token}`, `Basic ${token}`, `Token ${token}`, `Digest ${token}`, `Bearer: ${token}`)
  )
}

/** Raw bytes of a request as an adapter would send it, over a fresh connection that closes after the reply. */
const rawHead = (ctx: CaseContext, method: string, path: string, extra = ''): string =>
  `${method} ${ctx.client.target.basePath}${path} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer {token}\r\n${extra}Connection: close\r\n\r\n`

/** The JSON body of a raw reply, or undefined. */
function rawJson (raw: string): any {
  const at = raw.indexOf('\r\n\r\n')
  if (at < 0) return undefined
  try {
    return JSON.parse(raw.slice(at + 4))
  } catch {
    return undefined
  }
}

/**
 * Transport, discovery, headers, auth, limits, rate limits, `/info` and errors (OT-001..040, OT-149..156, OT-A01..A05,
 * OT-A20's shared bucket, OT-A29). OT-A21 (what counts against each limit) is proven with the sessions' cases.
 */
export const transportCases = [
  // ---- 1.4 GET /info and proof -------------------------------------------------------------------------------
  defineCase({
    id: 'OT-034',
    title: 'GET /info answers 200 with an Info the spec\'s schema accepts: server orbtile, api 1, version, activities, limits, apiMinor',
    level: 'required',
    async run ({ client }) {
      const reply = await client.request({ path: '/info' })
      expectStatus(reply, 200, 'GET /info')
      expectThat(/^application\/json\b/.test(String(reply.headers['content-type'])), 'GET /info: Content-Type', 'application/json', reply.headers['content-type'])
      expectSchema(reply.json, 'Info', 'the /info body')
      const { server, api, version, activities, limits, apiMinor } = reply.json
      expectEqual({ server, api }, { server: 'orbtile', api: 1 }, 'server and api')
      expectThat(typeof version === 'string' && Array.isArray(activities) && typeof limits === 'object' && limits !== null, 'version, activities and limits are there', 'string, array, object', { version, activities, limits })
      expectEqual(apiMinor, 2, 'apiMinor')
    }
  }),
  defineCase({
    id: 'OT-035',
    title: 'limits holds exactly the spec\'s nine values',
    level: 'required',
    async run ({ client }) {
      const reply = await client.request({ path: '/info' })
      expectStatus(reply, 200, 'GET /info')
      expectThat(canonical(reply.json.limits) === canonical(LIMITS), 'the advertised limits', LIMITS, reply.json.limits)
    }
  }),
  defineCase({
    id: 'OT-036',
    title: 'every entry of activities is an Activity, and "empty" is never one',
    level: 'required',
    async run ({ client }) {
      const { activities } = (await client.request({ path: '/info' })).json
      expectThat(Array.isArray(activities), 'activities is an array', 'an array', activities)
      const strangers = (activities as unknown[]).filter((a) => typeof a !== 'string' || !ACTIVITIES.includes(a) || a === 'empty')
      expectEqual(strangers, [], 'entries that are not an Activity, or "empty"')
    }
  }),
  defineCase({
    id: 'OT-037',
    title: 'for any nonce of 16 to 64 hex characters, proof = hex(HMAC-SHA256(key: token, message: nonce)) (the ledger\'s vector holds)',
    level: 'required',
    async run (ctx) {
      expectEqual(proofOf(PROOF_VECTOR.token, PROOF_VECTOR.nonce), PROOF_VECTOR.proof, 'the suite\'s own HMAC against the ledger\'s test vector')
      const { token } = ctx.client.target
      await fc.assert(fc.asyncProperty(fc.stringMatching(/^[0-9a-f]{16,64}$/), async (nonce) => {
        const reply = await ctx.client.request({ path: '/info', headers: { 'x-orbtile-nonce': nonce } })
        expectStatus(reply, 200, `GET /info with X-Orbtile-Nonce ${nonce}`)
        expectSchema(reply.json, 'Info', 'the /info body')
        expectEqual(reply.json.proof, proofOf(token, nonce), `proof for nonce ${nonce}`)
      }), ctx.fc())
    }
  }),
  defineCase({
    id: 'OT-038',
    title: 'without X-Orbtile-Nonce the reply has no proof',
    level: 'required',
    async run ({ client }) {
      const reply = await client.request({ path: '/info' })
      expectStatus(reply, 200, 'GET /info')
      expectThat(!('proof' in reply.json), 'no nonce, no proof', 'no proof key', reply.json.proof)
    }
  }),
  defineCase({
    id: 'OT-040',
    title: 'apiMinor is an integer of at least 0, and this version answers 2',
    level: 'required',
    async run ({ client }) {
      const { apiMinor } = (await client.request({ path: '/info' })).json
      expectThat(Number.isInteger(apiMinor) && apiMinor >= 0, 'apiMinor is an integer >= 0', 'an integer >= 0', apiMinor)
      expectEqual(apiMinor, 2, 'apiMinor of a v1.2 server')
    }
  }),
  defineCase({
    id: 'OT-A29',
    title: '/info details: all 11 activities in enum order; a nonce in any case is HMACed as sent; a malformed nonce is invalid_field X-Orbtile-Nonce; /info needs the bearer',
    level: 'decision',
    async run (ctx) {
      const { client } = ctx
      expectEqual((await client.request({ path: '/info' })).json.activities, ACTIVITIES, 'activities')
      expectError(await client.request({ path: '/info', headers: { authorization: null } }), 'unauthorized', 'GET /info without Authorization')
      await fc.assert(fc.asyncProperty(fc.stringMatching(/^[0-9A-Fa-f]{16,64}$/).filter((n) => /[A-F]/.test(n)), async (nonce) => {
        const reply = await client.request({ path: '/info', headers: { 'x-orbtile-nonce': nonce } })
        expectStatus(reply, 200, `nonce ${nonce}`)
        expectEqual(reply.json.proof, proofOf(client.target.token, nonce), `proof over the nonce exactly as sent (${nonce})`)
      }), capped(ctx, 20))
      for (const nonce of ['', '0011', 'x'.repeat(16), '0'.repeat(65), '0'.repeat(15), `${'0'.repeat(15)}g`]) {
        expectError(await client.request({ path: '/info', headers: { 'x-orbtile-nonce': nonce } }), 'invalid_field', `nonce ${JSON.stringify(nonce)}`, 'X-Orbtile-Nonce')
      }
      await fc.assert(fc.asyncProperty(printable(0, 80).filter((s) => s === s.trim() && !NONCE.test(s)), async (nonce) => {
        expectError(await client.request({ path: '/info', headers: { 'x-orbtile-nonce': nonce } }), 'invalid_field', `nonce ${JSON.stringify(nonce)}`, 'X-Orbtile-Nonce')
      }), capped(ctx, 30))
    }
  }),

  // ---- 1.2 auth and headers ----------------------------------------------------------------------------------
  defineCase({
    id: 'OT-015',
    title: 'any Origin header, empty or "null" included, is forbidden_origin, for any value on any route',
    level: 'required',
    async run (ctx) {
      for (const origin of ['http://localhost', 'null', '', 'https://example.com']) {
        expectError(await ctx.client.request({ path: '/info', headers: { origin } }), 'forbidden_origin', `Origin ${JSON.stringify(origin)}`)
      }
      const id = adapterId(ctx, 'origin')
      const routes: RequestOptions[] = [
        { path: '/info' },
        { method: 'PUT', path: `/adapters/${id}`, body: minimal() },
        { method: 'POST', path: `/adapters/${id}/sessions/s1`, body: SESSION },
        { method: 'PUT', path: `/adapters/${id}/sessions`, body: { sessions: [] } },
        { method: 'POST', path: `/adapters/${id}/events`, body: {} }
      ]
      await fc.assert(fc.asyncProperty(
        fc.oneof(fc.webUrl(), printable(0, 60), fc.constantFrom('null', 'file://', 'http://localhost:8080', 'vscode-webview://x')),
        fc.nat({ max: routes.length - 1 }),
        async (origin, route) => {
          const options = routes[route]!
          const reply = await ctx.client.request({ ...options, headers: { origin } })
          expectError(reply, 'forbidden_origin', `${options.method ?? 'GET'} ${options.path} with Origin ${JSON.stringify(origin)}`)
        }
      ), ctx.fc())
    }
  }),
  defineCase({
    id: 'OT-016',
    title: 'a missing Authorization, another scheme or another token is unauthorized',
    level: 'required',
    async run ({ client }) {
      expectError(await client.request({ path: '/info', headers: { authorization: null } }), 'unauthorized', 'no Authorization')
      expectError(await client.request({ path: '/info', headers: { authorization: 'Basic dXNlcjpwYXNz' } }), 'unauthorized', 'Basic scheme')
      expectError(await client.request({ path: '/info', headers: { authorization: `Bearer ${'A'.repeat(43)}` } }), 'unauthorized', 'another token')
      expectError(await client.request({ path: '/info', headers: { authorization: 'Bearer' } }), 'unauthorized', 'no token at all')
    }
  }),
  defineCase({
    id: 'OT-016.b',
    title: 'for any Authorization but Bearer <discovery token> (other tokens, near misses, other schemes), on any route, the request is unauthorized',
    level: 'required',
    async run (ctx) {
      const id = adapterId(ctx, 'auth')
      const routes: RequestOptions[] = [
        { path: '/info' },
        { method: 'PUT', path: `/adapters/${id}`, body: minimal() },
        { method: 'POST', path: `/adapters/${id}/events`, body: {} }
      ]
      await fc.assert(fc.asyncProperty(wrongAuthorization(ctx.client.target.token), fc.nat({ max: routes.length - 1 }), async (authorization, route) => {
        const options = routes[route]!
        expectError(await ctx.client.request({ ...options, headers: { authorization } }), 'unauthorized', `${options.method ?? 'GET'} ${options.path} with a wrong Authorization`)
      }), ctx.fc())
      expectStatus(await ctx.client.request({ path: '/info' }), 200, 'the discovery token itself')
    }
  }),
  defineCase({
    id: 'OT-017',
    title: 'a body that is not application/json is unsupported_media_type',
    level: 'required',
    async run (ctx) {
      const { client } = ctx
      const id = adapterId(ctx, 'media')
      for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'application/json; charset=latin1']) {
        expectError(await client.request({ method: 'PUT', path: `/adapters/${id}`, headers: { 'content-type': type }, body: { name: 'x', palette: { baseHue: 1 } } }), 'unsupported_media_type', `Content-Type ${type}`)
      }
    }
  }),

  // ---- 1.10 errors -------------------------------------------------------------------------------------------
  defineCase({
    id: 'OT-153',
    title: 'an unknown path is not_found; a path outside the base path too',
    level: 'required',
    async run ({ client }) {
      expectError(await client.request({ path: '/nothing-here' }), 'not_found', 'an unknown path')
      expectError(await client.request({ target: '/b/v1/info' }), 'not_found', 'outside the base path')
    }
  }),
  defineCase({
    id: 'OT-153.b',
    title: 'for any path no route has, under the base path or outside it, the reply is not_found',
    level: 'required',
    async run (ctx) {
      const base = ctx.client.target.basePath
      const segment = fc.stringMatching(/^[a-z0-9._~-]{1,16}$/).filter((s) => s !== '.' && s !== '..')
      await fc.assert(fc.asyncProperty(fc.oneof(
        segment.filter((s) => s !== 'info' && s !== 'adapters').map((s) => `${base}/${s}`),
        fc.tuple(segment, segment).map(([a, b]) => `${base}/info/${a}/${b}`),
        fc.tuple(segment, segment).map(([a, b]) => `${base}/adapters/${a}/${b}/x/y`),
        segment.filter((s) => `/${s}` !== base.slice(0, s.length + 1) && !base.startsWith(`/${s}/`)).map((s) => `/${s}/info`),
        fc.constantFrom('/info', '/a/v2/info', '/a/info', '/', `${base}`, `${base}x/info`)
      ), async (target) => {
        expectError(await ctx.client.request({ target }), 'not_found', `GET ${target}`)
      }), ctx.fc())
    }
  }),
  defineCase({
    id: 'OT-154',
    title: 'bad JSON, JSON that is not an object, and duplicate keys are bad_request',
    level: 'required',
    async run (ctx) {
      const { client } = ctx
      const id = adapterId(ctx, 'json')
      for (const body of ['{"name":', '[]', '"x"', '{"name":"a","name":"b","palette":{"baseHue":1}}']) {
        expectError(await client.request({ method: 'PUT', path: `/adapters/${id}`, body: Buffer.from(body) }), 'bad_request', `body ${body}`)
      }
    }
  }),
  defineCase({
    id: 'OT-154.b',
    title: 'for any JSON value that is not an object, any truncated JSON, and invalid UTF-8, the body is bad_request',
    level: 'required',
    async run (ctx) {
      const id = adapterId(ctx, 'json')
      const valid = JSON.stringify({ ...minimal(), version: 'ü' })
      await fc.assert(fc.asyncProperty(fc.oneof(
        fc.jsonValue().filter((v) => v === null || typeof v !== 'object' || Array.isArray(v)).map((v) => Buffer.from(JSON.stringify(v))),
        fc.nat({ max: valid.length - 1 }).map((n) => Buffer.from(valid.slice(0, n))),
        fc.nat({ max: 20 }).map((n) => Buffer.concat([Buffer.from(valid.slice(0, n)), Buffer.from([0xff, 0xfe]), Buffer.from(valid.slice(n))]))
      ), async (body) => {
        expectError(await ctx.client.request({ method: 'PUT', path: `/adapters/${id}`, body }), 'bad_request', `PUT with body ${JSON.stringify(body.toString('latin1').slice(0, 80))}`)
      }), ctx.fc())
    }
  }),
  defineCase({
    id: 'OT-149',
    title: 'bytes that are not HTTP/1.1 still get a JSON error body',
    level: 'required',
    async run ({ client }) {
      const raw = await client.raw('NOT HTTP AT ALL\r\n\r\n')
      expectThat(/^HTTP\/1\.1 400 /.test(raw) && /"error":\{/.test(raw), 'garbage on the socket', 'a 400 with a JSON error body', raw.slice(0, 300))
    }
  }),
  defineCase({
    id: 'OT-149.b',
    title: 'every error reply, for any faulty request and for broken framing, is JSON {"error":{"code","message"}} as the spec\'s Error schema',
    level: 'required',
    async run (ctx) {
      const { client } = ctx
      for (const bytes of [
        `GET ${client.target.basePath}/info HTTP/1.1\r\nHost: localhost\r\nContent-Length: abc\r\nConnection: close\r\n\r\n`,
        `POST ${client.target.basePath}/info HTTP/1.1\r\nHost: localhost\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n{}`
      ]) {
        const raw = await client.raw(bytes)
        const body = rawJson(raw)
        expectThat(/^HTTP\/1\.1 4\d\d /.test(raw) && typeof body?.error?.code === 'string' && typeof body?.error?.message === 'string', `broken framing ${JSON.stringify(bytes.slice(0, 60))}`, 'a 4xx with {"error":{"code","message"}}', raw.slice(0, 300))
        expectSchema(body, 'Error', 'the error body')
      }
      await fc.assert(fc.asyncProperty(faultyRequest(ctx), async (options) => {
        const reply = await client.request(options)
        const what = `${options.method ?? 'GET'} ${options.path ?? options.target}`
        expectThat(reply.status >= 400, `${what}: a faulty request`, 'an error status', `${reply.status} ${reply.text.slice(0, 200)}`)
        expectThat(/^application\/json\b/.test(String(reply.headers['content-type'])), `${what}: Content-Type of the error`, 'application/json', reply.headers['content-type'])
        expectSchema(reply.json, 'Error', `${what}: the error body`)
        expectThat(typeof reply.json.error.message === 'string', `${what}: message`, 'a string', reply.json.error.message)
      }), ctx.fc())
    }
  }),
  defineCase({
    id: 'OT-150',
    title: 'whatever the request (any method, path, headers, body), an error\'s code is one of the spec\'s 17',
    level: 'required',
    async run (ctx) {
      const base = ctx.client.target.basePath
      const id = adapterId(ctx, 'codes')
      // The property registers and unregisters this id; once the case ends, the fake forgets it.
      ctx.cleanup(() => forget(ctx, id))
      await fc.assert(fc.asyncProperty(
        fc.constantFrom('GET', 'PUT', 'POST', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD'),
        fc.constantFrom('/info', `/adapters/${id}`, `/adapters/${id}/sessions/s1`, `/adapters/${id}/sessions`, `/adapters/${id}/events`, '/adapters/BAD%20ID', '/x', '/adapters/com.orbtile.x'),
        fc.boolean(),
        fc.record({ origin: fc.constant('http://x'), authorization: fc.constantFrom(null, 'Bearer nope'), 'content-type': fc.constantFrom('text/plain', 'application/json; charset=latin1'), 'x-orbtile-nonce': fc.constantFrom('zz', '00') }, { requiredKeys: [] }),
        fc.option(fc.oneof(fc.jsonValue({ maxDepth: 2 }).map((v) => Buffer.from(JSON.stringify(v) ?? 'null')), fc.uint8Array({ maxLength: 64 }).map((b) => Buffer.from(b))), { nil: undefined }),
        async (method, path, outside, headers, body) => {
          const options: RequestOptions = { method, ...(outside ? { target: `/q${base}${path}` } : { path }), headers, ...(method === 'GET' || method === 'HEAD' || body === undefined ? {} : { body }) }
          const reply = await ctx.client.request(options)
          if (reply.status === 200 && method === 'PUT' && path === `/adapters/${id}`) {
            await ctx.client.request({ method: 'DELETE', path, headers: { 'x-orbtile-adapter-token': reply.json.adapterToken } })
          }
          if (reply.status < 400 || method === 'HEAD') return
          expectThat(ERROR_CODES.includes(reply.json?.error?.code), `${method} ${path}: the error code`, ERROR_CODES.join('|'), `${reply.status} ${reply.text.slice(0, 200)}`)
        }
      ), ctx.fc())
    }
  }),
  defineCase({
    id: 'OT-151',
    title: 'invalid_field names the offending field, for any field of a registration, session update, poll or the nonce header',
    level: 'required',
    async run (ctx) {
      const a = await register(ctx, withEvents(), { label: 'fields' })
      const fresh = adapterId(ctx, 'fields')
      const hue = { baseHue: 200 }
      type Probe = { name: string, options: RequestOptions }
      const put = (body: unknown): RequestOptions => ({ method: 'PUT', path: `/adapters/${fresh}`, body })
      const post = (body: unknown): RequestOptions => ({ method: 'POST', path: `/adapters/${a.id}/sessions/s1`, headers: a.headers, body: { ...SESSION, ...(body as object) } })
      const probes: Probe[] = [
        { name: 'name', options: put({ name: '', palette: hue }) },
        { name: 'name', options: put({ name: 'x'.repeat(33), palette: hue }) },
        { name: 'palette', options: put({ name: 'x' }) },
        { name: 'baseHue', options: put({ name: 'x', palette: { baseHue: 'red' } }) },
        { name: 'capabilities', options: put({ name: 'x', palette: hue, capabilities: ['telepathy'] }) },
        { name: 'title', options: post({ title: '' }) },
        { name: 'activity', options: post({ activity: 'empty' }) },
        { name: 'ttlSeconds', options: post({ ttlSeconds: 9 }) },
        { name: 'subagentCount', options: post({ subagentCount: 100 }) },
        { name: 'host', options: post({ host: 'a b' }) },
        { name: 'waitSeconds', options: { method: 'POST', path: `/adapters/${a.id}/events`, headers: a.headers, body: { waitSeconds: 3 } } },
        { name: 'after', options: { method: 'POST', path: `/adapters/${a.id}/events`, headers: a.headers, body: { after: -1 } } },
        { name: 'X-Orbtile-Nonce', options: { path: '/info', headers: { 'x-orbtile-nonce': 'not-hex' } } }
      ]
      const check = async ({ name, options }: Probe): Promise<void> => {
        const reply = await ctx.client.request(options)
        const what = `${options.method ?? 'GET'} ${options.path} breaking ${name}`
        expectError(reply, 'invalid_field', what)
        expectThat(typeof reply.json.error.field === 'string' && reply.json.error.field.toLowerCase().includes(name.toLowerCase()), `${what}: field`, `a field naming ${name}`, reply.json.error.field)
      }
      for (const probe of probes) await check(probe)
      const maxima: Record<string, number> = { title: 120, cwd: 1024, model: 64, toolLabel: 80, toolKind: 32, statusDetail: 120 }
      await fc.assert(fc.asyncProperty(fc.constantFrom(...Object.keys(maxima)), fc.integer({ min: 1, max: 200 }), async (name, over) => {
        await check({ name, options: post({ [name]: 'x'.repeat(maxima[name]! + over) }) })
      }), capped(ctx, 20))
    }
  }),
  defineCase({
    id: 'OT-152',
    title: 'for any adapter id without a live registration, POST sessions, PUT batch and POST events are adapter_not_registered, whatever token is sent',
    level: 'required',
    async run (ctx) {
      await fc.assert(fc.asyncProperty(
        fc.stringMatching(/^[a-z0-9]{1,12}$/),
        fc.constantFrom(0, 1, 2),
        fc.option(fc.stringMatching(/^[A-Za-z0-9_-]{43}$/), { nil: undefined }),
        async (label, route, token) => {
          const id = adapterId(ctx, `nr-${label}`)
          const headers: Record<string, string> = token === undefined ? {} : { 'x-orbtile-adapter-token': token }
          const options: RequestOptions = [
            { method: 'POST', path: `/adapters/${id}/sessions/s1`, headers, body: SESSION },
            { method: 'PUT', path: `/adapters/${id}/sessions`, headers, body: { sessions: [{ id: 's1', ...SESSION }] } },
            { method: 'POST', path: `/adapters/${id}/events`, headers, body: {} }
          ][route]!
          expectError(await ctx.client.request(options), 'adapter_not_registered', `${options.method} ${options.path} (${token === undefined ? 'no' : 'a made-up'} adapter token)`)
        }
      ), ctx.fc())
    }
  }),
  defineCase({
    id: 'OT-156',
    title: 'fuzzed requests never get a non-JSON reply, and any 5xx is internal (a server fault cannot be caused on purpose from outside)',
    level: 'required',
    async run (ctx) {
      ctx.note('no request is known to make a conforming server fault; this fuzzes the body-taking routes and checks every reply is JSON, and a 5xx is internal')
      const a = await register(ctx, withEvents(['tap', 'approvals', 'questions']), { label: 'fuzz' })
      const keys = Object.keys((def('SessionUpdate').properties as Record<string, unknown>))
      const value = fc.oneof(fc.jsonValue({ maxDepth: 2 }), fc.integer(), fc.double(), fc.string({ unit: 'binary', maxLength: 40 }))
      await fc.assert(fc.asyncProperty(fc.oneof(
        fc.tuple(fc.stringMatching(/^[A-Za-z0-9._:-]{1,12}$/), fc.dictionary(fc.constantFrom(...keys, 'extra'), value, { maxKeys: 6 }))
          .map(([sid, body]): RequestOptions => ({ method: 'POST', path: `/adapters/${a.id}/sessions/${sid}`, headers: a.headers, body })),
        fc.uint8Array({ maxLength: 200 }).map((bytes): RequestOptions => ({ method: 'POST', path: `/adapters/${a.id}/sessions/s1`, headers: a.headers, body: Buffer.from(bytes) })),
        fc.dictionary(fc.constantFrom('after', 'ack', 'waitSeconds', 'extra'), fc.oneof(fc.integer(), fc.double(), fc.string(), fc.constant(null)), { maxKeys: 4 })
          .map((body) => ({ ...body, ...('waitSeconds' in body && body.waitSeconds !== 0 ? { waitSeconds: 3 } : {}) }))
          .map((body): RequestOptions => ({ method: 'POST', path: `/adapters/${a.id}/events`, headers: a.headers, body })),
        fc.array(fc.dictionary(fc.constantFrom(...keys, 'id'), value, { maxKeys: 4 }), { maxLength: 4 })
          .map((sessions): RequestOptions => ({ method: 'PUT', path: `/adapters/${a.id}/sessions`, headers: a.headers, body: { sessions } }))
      ), async (options) => {
        const reply = await ctx.client.request(options)
        const what = `${options.method} ${options.path}`
        expectThat(reply.json !== undefined && /^application\/json\b/.test(String(reply.headers['content-type'])), `${what}: the reply is JSON`, 'a JSON body', `${reply.status} ${reply.text.slice(0, 200)}`)
        if (reply.status >= 400) expectSchema(reply.json, 'Error', `${what}: the error body`)
        if (reply.status >= 500) expectError(reply, 'internal', `${what}: a server fault`)
      }), ctx.fc())
    }
  }),

  // ---- 1.1 transport and discovery ---------------------------------------------------------------------------
  defineCase({
    id: 'OT-002',
    title: 'the discovery file names an absolute socketPath; it is a Unix socket that speaks HTTP/1.1',
    level: 'required',
    async run (ctx) {
      const { json } = readDiscovery(ctx)
      expectThat(typeof json?.socketPath === 'string' && isAbsolute(json.socketPath), 'socketPath in the discovery file', 'an absolute path', json?.socketPath)
      expectEqual(json.socketPath, ctx.client.target.socketPath, 'the discovery file\'s socketPath is the socket the suite talks to')
      let socket = false
      try {
        socket = lstatSync(json.socketPath).isSocket()
      } catch {}
      expectThat(socket, 'socketPath names a Unix-domain socket', 'a socket', json.socketPath)
      const raw = await ctx.client.raw(rawHead(ctx, 'GET', '/info'))
      expectThat(/^HTTP\/1\.1 200 /.test(raw), 'a GET /info written as HTTP/1.1 bytes on the socket', 'HTTP/1.1 200', raw.slice(0, 200))
    }
  }),
  defineCase({
    id: 'OT-003',
    title: 'request targets are the discovery file\'s basePath followed by the endpoint path',
    level: 'required',
    async run (ctx) {
      const { json } = readDiscovery(ctx)
      expectThat(typeof json?.basePath === 'string' && json.basePath.startsWith('/'), 'basePath in the discovery file', 'a path', json?.basePath)
      const reply = await ctx.client.request({ target: `${json.basePath}/info` })
      expectStatus(reply, 200, `GET ${json.basePath}/info`)
      expectSchema(reply.json, 'Info', 'the /info body')
      expectError(await ctx.client.request({ target: `${json.basePath}/adapters/${adapterId(ctx, 'base')}/events`, method: 'POST', body: {} }), 'adapter_not_registered', 'an adapter route under basePath')
      expectError(await ctx.client.request({ target: '/info' }), 'not_found', 'the endpoint path without basePath')
    }
  }),
  defineCase({
    id: 'OT-004',
    title: 'the discovery file says api 1 and basePath /a/v1, while /info advertises apiMinor 2',
    level: 'required',
    async run (ctx) {
      const { json } = readDiscovery(ctx)
      expectEqual({ api: json?.api, basePath: json?.basePath }, { api: 1, basePath: '/a/v1' }, 'api and basePath in the discovery file')
      const info = (await ctx.client.request({ path: '/info' })).json
      expectEqual({ api: info.api, apiMinor: info.apiMinor }, { api: 1, apiMinor: 2 }, 'api and apiMinor in /info')
    }
  }),
  defineCase({
    id: 'OT-A04',
    title: 'the discovery file is {api, basePath, socketPath, token}, mode 0600, the user\'s; the socket is 0600; the file\'s token is the bearer',
    level: 'decision',
    async run (ctx) {
      const { stat, json } = readDiscovery(ctx)
      expectEqual((stat.mode & 0o777).toString(8), '600', 'the discovery file\'s mode')
      if (process.getuid !== undefined) expectEqual(stat.uid, process.getuid(), 'the discovery file belongs to the user running the suite')
      expectThat(json !== null && typeof json === 'object' && json.api === 1 && typeof json.basePath === 'string' && typeof json.socketPath === 'string' && isAbsolute(json.socketPath) && typeof json.token === 'string' && json.token !== '',
        'the discovery file\'s fields', '{"api":1,"basePath":"/a/v1","socketPath":"<absolute>","token":"<string>"}', Object.fromEntries(Object.entries(json ?? {}).map(([k, v]) => [k, k === 'token' ? typeof v : v])))
      expectEqual((statSync(json.socketPath).mode & 0o777).toString(8), '600', 'the socket\'s mode')
      expectStatus(await ctx.client.request({ path: '/info', headers: { authorization: `Bearer ${json.token}` } }), 200, 'GET /info with the file\'s token')
    }
  }),
  defineCase({
    id: 'OT-006',
    title: 'the five routes exist with exactly their methods: GET /info, PUT /adapters/{id}, POST …/sessions/{sid}, PUT …/sessions, POST …/events',
    level: 'required',
    async run (ctx) {
      const { client } = ctx
      const info = await client.request({ path: '/info' })
      expectStatus(info, 200, 'GET /info')
      const a = await register(ctx, withEvents(), { label: 'routes' })
      expectSchema(a.reply.json, 'RegistrationReply', 'PUT /adapters/{id}')
      const created = await session(ctx, a, 's1', SESSION)
      expectStatus(created, 200, 'POST /adapters/{id}/sessions/{sid}')
      expectSchema(created.json, 'SessionReply', 'POST /adapters/{id}/sessions/{sid}')
      expectStatus(await client.request({ method: 'PUT', path: `/adapters/${a.id}/sessions`, headers: a.headers, body: { sessions: [{ id: 's1', ...SESSION }] } }), 200, 'PUT /adapters/{id}/sessions')
      const events = await poll(ctx, a)
      expectStatus(events, 200, 'POST /adapters/{id}/events')
      expectSchema(events.json, 'EventsReply', 'POST /adapters/{id}/events')
      const again = await client.request({ method: 'PUT', path: `/adapters/${a.id}`, headers: a.headers, body: withEvents() })
      expectStatus(again, 200, 'PUT /adapters/{id} again (with the adapter token)')
      for (const [method, path] of [
        ['POST', '/info'], ['DELETE', '/info'], ['GET', `/adapters/${a.id}`], ['POST', `/adapters/${a.id}`],
        ['GET', `/adapters/${a.id}/sessions/s1`], ['PUT', `/adapters/${a.id}/sessions/s1`], ['POST', `/adapters/${a.id}/sessions`],
        ['GET', `/adapters/${a.id}/sessions`], ['GET', `/adapters/${a.id}/events`], ['PUT', `/adapters/${a.id}/events`]
      ] as const) {
        const reply = await client.request({ method, path, headers: a.headers, ...(method === 'GET' || method === 'DELETE' ? {} : { body: {} }) })
        expectThat(reply.status >= 400, `${method} ${path}: a method the spec does not name`, 'refused', `${reply.status} ${reply.text.slice(0, 200)}`)
      }
    }
  }),
  defineCase({
    id: 'OT-007',
    title: 'for any unknown field of a registration or session update, the request goes on as if it were absent and a warning names the field',
    level: 'required',
    async run (ctx) {
      const a = await register(ctx, withEvents(), { label: 'unknown' })
      const known = new Set([...Object.keys(def('AdapterRegistration').properties as object), ...Object.keys(def('SessionUpdate').properties as object)])
      const plainRegistration = await ctx.client.request({ method: 'PUT', path: `/adapters/${a.id}`, headers: a.headers, body: withEvents() })
      expectStatus(plainRegistration, 200, 're-registering without unknown fields')
      const plainSession = await session(ctx, a, 's1', SESSION)
      expectStatus(plainSession, 200, 'a session update without unknown fields')
      const withKey = (body: unknown, key: string, value: unknown): Buffer => {
        const text = JSON.stringify(body)
        return Buffer.from(`${text.slice(0, -1)},${JSON.stringify(key)}:${JSON.stringify(value)}}`)
      }
      const withoutWarnings = (json: any): string => canonical({ ...json, warnings: undefined })
      await fc.assert(fc.asyncProperty(
        fc.oneof(fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_-]{0,19}$/), fc.constantFrom('constructor', 'toString', 'hasOwnProperty', 'colour')).filter((k) => !known.has(k)),
        fc.jsonValue({ maxDepth: 2 }),
        async (key, value) => {
          const registration = await ctx.client.request({ method: 'PUT', path: `/adapters/${a.id}`, headers: a.headers, body: withKey(withEvents(), key, value) })
          expectStatus(registration, 200, `registering with an unknown field ${key}`)
          expectThat(Array.isArray(registration.json.warnings) && registration.json.warnings.some((w: unknown) => typeof w === 'string' && w.includes(key)), `registering with ${key}: warnings`, `a warning naming ${key}`, registration.json.warnings)
          expectEqual(withoutWarnings(registration.json), withoutWarnings(plainRegistration.json), `registering with ${key}: the reply is the one without it`)
          const update = await session(ctx, a, 's1', withKey(SESSION, key, value))
          expectStatus(update, 200, `a session update with an unknown field ${key}`)
          expectThat(Array.isArray(update.json.warnings) && update.json.warnings.some((w: unknown) => typeof w === 'string' && w.includes(key)), `a session update with ${key}: warnings`, `a warning naming ${key}`, update.json.warnings)
          expectEqual(withoutWarnings(update.json), withoutWarnings(plainSession.json), `a session update with ${key}: the reply is the one without it`)
        }
      ), ctx.fc())
    }
  }),
  defineCase({
    id: 'OT-009',
    title: 'v1.0 (name and palette.baseHue only) and v1.1 (capabilities, tapBehavior, no icon or states) registrations are accepted',
    level: 'required',
    async run (ctx) {
      const v10 = await register(ctx, { name: 'orbtest v1.0', palette: { baseHue: 120 } }, { label: 'v10' })
      expectSchema(v10.reply.json, 'RegistrationReply', 'a v1.0 registration')
      const v11 = await register(ctx, { name: 'orbtest v1.1', palette: { baseHue: 120 }, capabilities: ['tap', 'approvals', 'questions'], tapBehavior: 'eventOnly' }, { label: 'v11' })
      expectSchema(v11.reply.json, 'RegistrationReply', 'a v1.1 registration')
      expectStatus(await poll(ctx, v11), 200, 'the v1.1 adapter polls events')
    }
  }),
  defineCase({
    id: 'OT-010',
    title: 'an adapter that never sends an optional field lives a whole life: register, create, heartbeat, update, batch, re-register',
    level: 'required',
    async run (ctx) {
      const a = await register(ctx, { name: 'orbtest bare', palette: { baseHue: 40 } }, { label: 'bare' })
      for (const [what, reply] of [
        ['GET /info without a nonce', await ctx.client.request({ path: '/info' })],
        ['creating a session with title and activity only', await session(ctx, a, 's1', SESSION)],
        ['a heartbeat {}', await session(ctx, a, 's1', {})],
        ['an update of activity only', await session(ctx, a, 's1', { activity: 'thinking' })],
        ['a batch of id, title and activity', await ctx.client.request({ method: 'PUT', path: `/adapters/${a.id}/sessions`, headers: a.headers, body: { sessions: [{ id: 's2', ...SESSION }] } })],
        ['re-registering the same bare body', await ctx.client.request({ method: 'PUT', path: `/adapters/${a.id}`, headers: a.headers, body: { name: 'orbtest bare', palette: { baseHue: 40 } } })]
      ] as const) expectStatus(reply, 200, what)
    }
  }),

  // ---- 1.3 limits --------------------------------------------------------------------------------------------
  defineCase({
    id: 'OT-024',
    title: 'a body over maxBodyBytes is payload_too_large, and the server keeps serving',
    level: 'required',
    async run (ctx) {
      const { client } = ctx
      const info = (await client.request({ path: '/info' })).json
      const limit = info.limits.maxBodyBytes as number
      const reply = await client.request({ method: 'PUT', path: `/adapters/${adapterId(ctx, 'big')}`, body: Buffer.alloc(limit + 1, 0x20) })
      expectError(reply, 'payload_too_large', `a ${limit + 1}-byte body`)
      expectStatus(await client.request({ path: '/info' }), 200, 'the next request')
    }
  }),
  defineCase({
    id: 'OT-024.b',
    title: 'a body of exactly 65536 bytes passes the size check; any larger body is payload_too_large and the server keeps serving',
    level: 'required',
    async run (ctx) {
      const id = adapterId(ctx, 'exact')
      const text = JSON.stringify(minimal())
      const exact = Buffer.from(text.slice(0, -1) + ' '.repeat(LIMITS.maxBodyBytes - text.length) + '}')
      const accepted = await ctx.client.request({ method: 'PUT', path: `/adapters/${id}`, body: exact })
      if (accepted.status === 200) {
        ctx.cleanup(async () => {
          const reply = await ctx.client.request({ method: 'DELETE', path: `/adapters/${id}`, headers: { 'x-orbtile-adapter-token': accepted.json.adapterToken } })
          if (leaseGone(reply)) await forget(ctx, id)
        })
      }
      expectStatus(accepted, 200, `a valid registration of exactly ${exact.length} bytes`)
      await fc.assert(fc.asyncProperty(fc.integer({ min: LIMITS.maxBodyBytes + 1, max: 4 * LIMITS.maxBodyBytes }), async (size) => {
        expectError(await ctx.client.request({ method: 'PUT', path: `/adapters/${adapterId(ctx, 'big')}`, body: Buffer.alloc(size, 0x20) }), 'payload_too_large', `a ${size}-byte body`)
        expectStatus(await ctx.client.request({ path: '/info' }), 200, `the request after a ${size}-byte body`)
      }), capped(ctx, 10))
    }
  }),
  defineCase({
    id: 'OT-025',
    title: 'a chunked body without Content-Length is length_required',
    level: 'required',
    async run (ctx) {
      const { client } = ctx
      const id = adapterId(ctx, 'chunk')
      const raw = await client.raw(`PUT ${client.target.basePath}/adapters/${id} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n`)
      expectThat(/^HTTP\/1\.1 411 /.test(raw) && raw.includes('"length_required"'), 'a chunked PUT', '411 length_required', raw.slice(0, 300))
    }
  }),
  defineCase({
    id: 'OT-026',
    title: 'rate 20/s, burst 60: a full bucket admits exactly 60 at once, 20 more a second later; no window of t s admits more than 60 + 20t',
    level: 'required',
    async run (ctx) {
      const info: RequestOptions = { path: '/info' }
      const admittedOf = (replies: Reply[], what: string): number => {
        for (const reply of replies) if (reply.status !== 200) expectError(reply, 'rate_limited', what)
        return replies.filter((r) => r.status === 200).length
      }
      const virtual = await refillBuckets(ctx)
      const started = performance.now()
      const first = admittedOf(await burst(ctx, 100, info), '100 requests at once')
      const took = (performance.now() - started) / 1000
      if (virtual) {
        expectEqual(first, 60, '100 requests at one instant from a full bucket: how many are admitted')
        await ctx.elapse(1000)
        expectEqual(admittedOf(await burst(ctx, 30, info), '30 requests a second later'), 20, '30 requests one second after the bucket ran dry: how many are admitted')
        await fc.assert(fc.asyncProperty(
          fc.array(fc.record({ advance: fc.integer({ min: 0, max: 3000 }), n: fc.integer({ min: 0, max: 80 }) }), { minLength: 1, maxLength: 5 }),
          async (steps) => {
            await ctx.elapse(3000)
            let now = 0
            const admitted: number[] = []
            for (const [i, { advance, n }] of steps.entries()) {
              if (advance > 0) await ctx.elapse(advance)
              now += advance
              const count = admittedOf(await burst(ctx, n, info), `${n} requests at ${now} ms`)
              if (i === 0) expectThat(count >= Math.min(n, 60), `${n} requests from a full bucket`, `at least ${Math.min(n, 60)} admitted`, count)
              for (let k = 0; k < count; k++) admitted.push(now)
            }
            const problem = windowProblem(admitted)
            if (problem !== undefined) throw new CaseFailure(`the rate limit let too much through: ${problem}`, 'at most 60 + 20 t requests within any t seconds', steps)
          }
        ), capped(ctx, 10))
      } else {
        ctx.note(`no virtual clock: checked in real time (100 requests took ${took.toFixed(3)} s); the exact refill needs --control with a virtual clock`)
        expectThat(first >= 60 && first <= 60 + 20 * took + 1, '100 requests at once from a full bucket', `60 to ${Math.floor(60 + 20 * took + 1)} admitted`, first)
        if (took < 1) expectThat(100 - first >= 20, '100 requests in under 1 s', 'at least 20 rate_limited', 100 - first)
        const rested = performance.now()
        await ctx.elapse(1000)
        const again = admittedOf(await burst(ctx, 40, info), '40 requests a second later')
        const span = (performance.now() - rested) / 1000 + took
        expectThat(again >= 19 && again <= 20 * span + 1, '40 requests about one second after the bucket ran dry', `19 to ${Math.floor(20 * span + 1)} admitted`, again)
      }
    }
  }),
  defineCase({
    id: 'OT-A20.shared',
    title: 'a 429 carries Retry-After (whole seconds, >= 1) and waiting it out succeeds; the bucket refills one token per 50 ms; each adapter has its own bucket',
    level: 'decision',
    async run (ctx) {
      const info: RequestOptions = { path: '/info' }
      const virtual = await refillBuckets(ctx)
      const replies = await burst(ctx, 80, info)
      const refused = replies.find(isRateLimited)
      expectThat(refused !== undefined, '80 requests at once', 'some rate_limited', replies.map((r) => r.status))
      const retryAfter = String(refused!.headers['retry-after'])
      expectThat(/^\d+$/.test(retryAfter) && Number(retryAfter) >= 1, 'Retry-After of a 429', 'whole seconds, at least 1', retryAfter)
      const one = async (): Promise<number> => (await ctx.client.request({ ...info, retryRateLimited: false })).status
      if (virtual) {
        expectEqual(replies.filter((r) => r.status === 200).length, 60, '80 requests at one instant from a full bucket: admitted')
        expectEqual(retryAfter, '1', 'Retry-After on an empty bucket: ceil(1 token / 20 per s)')
        await ctx.elapse(49)
        expectEqual(await one(), 429, '49 ms later (less than one token)')
        await ctx.elapse(1)
        expectEqual(await one(), 200, '50 ms later (one token)')
        expectEqual(await one(), 429, 'right after that token was spent')
        await ctx.elapse(Number(retryAfter) * 1000)
        expectEqual((await burst(ctx, 21, info)).filter((r) => r.status === 200).length, 20, `21 requests after waiting Retry-After (${retryAfter} s)`)
      } else {
        ctx.note('no virtual clock: Retry-After was waited out in real time; the 50 ms refill step is not checked')
        await ctx.elapse(Number(retryAfter) * 1000)
        expectEqual(await one(), 200, `a request after waiting Retry-After (${retryAfter} s)`)
        await burst(ctx, 40, info)
      }
      // The shared bucket is (nearly) empty now; adapters draw on their own.
      const a = await register(ctx, withEvents(), { label: 'bucket-a' })
      const b = await register(ctx, withEvents(), { label: 'bucket-b' })
      for (const adapter of [a, b]) {
        const polls = await burst(ctx, 60, { method: 'POST', path: `/adapters/${adapter.id}/events`, headers: adapter.headers, body: {} })
        const admitted = polls.filter((r) => r.status === 200).length
        if (virtual) expectEqual(admitted, 59, `60 polls of ${adapter.id} (its registration took one token of its own bucket): admitted`)
        else expectThat(admitted >= 45, `60 polls of ${adapter.id} right after the shared bucket ran dry`, 'most admitted (a bucket of its own)', admitted)
      }
      if (virtual) expectEqual(await one(), 429, 'GET /info after the adapters\' polls: the shared bucket is still empty')
    }
  }),
  defineCase({
    id: 'OT-029',
    title: 'an adapter holds 32 sessions; a POST creating a 33rd is limit_exceeded, while updating one of the 32 still works',
    level: 'required',
    async run (ctx) {
      const a = await register(ctx, minimal(), { label: 'sessions' })
      const created = await Promise.all(Array.from({ length: 32 }, (_, i) => session(ctx, a, `s${i}`, SESSION)))
      created.forEach((reply, i) => expectStatus(reply, 200, `creating session ${i + 1} of 32`))
      expectError(await session(ctx, a, 's32', SESSION), 'limit_exceeded', 'creating a 33rd session')
      expectStatus(await session(ctx, a, 's0', { activity: 'thinking' }), 200, 'updating one of the 32')
    }
  }),
  defineCase({
    id: 'OT-031',
    title: 'an EventsReply never holds more than 128 events, even with 130 queued',
    level: 'required',
    needs: ['control'],
    async run (ctx) {
      const a = await tapped(ctx, 130)
      const reply = await poll(ctx, a)
      expectStatus(reply, 200, 'polling 130 queued events')
      expectSchema(reply.json, 'EventsReply', 'the EventsReply')
      expectThat(reply.json.events.length <= 128 && reply.json.events.length > 0, 'events in one reply', '1 to 128', reply.json.events.length)
    }
  }),
  defineCase({
    id: 'OT-032',
    title: '4096 distinct request ids are accepted under one registration; the 4097th is limit_exceeded',
    level: 'required',
    // 4097 requests at 20/s: 3.5 minutes of real time.
    needs: ['slow'],
    async run (ctx) {
      // A wave of 60 after each full refill (60 tokens at 20/s: 3 s, and a little more on a real clock).
      const refill = await hasVirtualClock(ctx) ? 3000 : 3000 + 200
      const a = await register(ctx, withEvents(['approvals']), { label: 'ids' })
      const sessions = 30
      let used = 0
      while (used < LIMITS.maxRequestIDs) {
        await ctx.elapse(refill)
        const wave = Math.min(60, LIMITS.maxRequestIDs - used)
        const chains = Array.from({ length: sessions }, (_, s) => async () => {
          for (let k = s; k < wave; k += sessions) {
            const id = `r${used + k}`
            const reply = await session(ctx, a, `s${s}`, { ...SESSION, activity: 'waitingPermission', approval: approval(id) })
            expectStatus(reply, 200, `request id ${used + k + 1} of 4096 (${id})`)
          }
        })
        await Promise.all(chains.map((chain) => chain()))
        used += wave
      }
      expectError(await session(ctx, a, 's0', { approval: approval('r4096') }), 'limit_exceeded', 'a 4097th request id')
    }
  }),
  defineCase({
    id: 'OT-033',
    title: 'at most 4 long polls are held at once: with 4 held (4 adapters), a 5th adapter\'s long poll is not held',
    level: 'required',
    async run (ctx) {
      const { adapters, release } = await fourHeld(ctx)
      const fifth = poll(ctx, adapters[4]!, { waitSeconds: 1 }, { retryRateLimited: false })
      const settled = await within(fifth, 500)
      const held = await release()
      if (!settled.settled) {
        await fifth
        throw new CaseFailure('a 5th long poll was held beside 4 others', 'refused (or answered at once)', 'held')
      }
      held.forEach((reply, i) => {
        expectStatus(reply, 200, `held long poll ${i + 1}`)
        expectSchema(reply.json, 'EventsReply', `held long poll ${i + 1}`)
      })
    }
  }),

  // ---- decisions on the pipeline -----------------------------------------------------------------------------
  defineCase({
    id: 'OT-A05',
    title: 'a Host other than localhost (with or without a port), or none, is bad_request',
    level: 'decision',
    async run (ctx) {
      const { client } = ctx
      expectError(await client.request({ path: '/info', headers: { host: 'example.com' } }), 'bad_request', 'Host: example.com')
      expectStatus(await client.request({ path: '/info', headers: { host: 'localhost:8080' } }), 200, 'Host: localhost:8080')
      const raw = await client.raw(`GET ${client.target.basePath}/info HTTP/1.1\r\nAuthorization: Bearer {token}\r\nConnection: close\r\n\r\n`)
      expectThat(/^HTTP\/1\.1 400 /.test(raw) && rawJson(raw)?.error?.code === 'bad_request', 'a request without Host', '400 bad_request', raw.slice(0, 300))
      await fc.assert(fc.asyncProperty(
        fc.tuple(fc.oneof(fc.domain(), fc.ipV4(), fc.constantFrom('127.0.0.1', 'localhost.localdomain', 'evil.localhost', '[::1]')), fc.option(fc.integer({ min: 1, max: 65535 }), { nil: undefined }))
          .map(([host, port]) => (port === undefined ? host : `${host}:${port}`))
          .filter((host) => !/^localhost(?::\d+)?$/i.test(host)),
        async (host) => {
          expectError(await client.request({ path: '/info', headers: { host } }), 'bad_request', `Host: ${host}`)
        }
      ), ctx.fc())
    }
  }),
  defineCase({
    id: 'OT-A05.b',
    title: 'Content-Type application/json matches in any case, with an optional charset=utf-8; another charset is 415; a bodiless GET needs none',
    level: 'decision',
    async run (ctx) {
      const a = await register(ctx, withEvents(), { label: 'ctype' })
      for (const type of ['application/json', 'Application/JSON', 'application/json; charset=utf-8', 'application/json;charset=UTF-8']) {
        expectStatus(await poll(ctx, a, {}, { headers: { ...a.headers, 'content-type': type } }), 200, `a poll with Content-Type ${type}`)
      }
      expectError(await poll(ctx, a, {}, { headers: { ...a.headers, 'content-type': 'application/json; charset=iso-8859-1' } }), 'unsupported_media_type', 'charset=iso-8859-1')
      expectStatus(await ctx.client.request({ path: '/info', headers: { 'content-type': 'application/json' } }), 200, 'GET /info with Content-Type application/json')
      expectStatus(await ctx.client.request({ path: '/info', headers: { 'content-type': null } }), 200, 'GET /info without Content-Type')
    }
  }),
  defineCase({
    id: 'OT-A05.c',
    title: 'an empty or missing PUT/POST body is bad_request; an integral 10.0 is an integer; unknown query parameters are ignored',
    level: 'decision',
    async run (ctx) {
      const { client } = ctx
      const a = await register(ctx, withEvents(), { label: 'bodies' })
      expectError(await client.request({ method: 'PUT', path: `/adapters/${adapterId(ctx, 'empty')}`, body: Buffer.alloc(0) }), 'bad_request', 'PUT with Content-Length: 0')
      const raw = await client.raw(rawHead(ctx, 'PUT', `/adapters/${adapterId(ctx, 'bodiless')}`))
      expectThat(/^HTTP\/1\.1 400 /.test(raw) && rawJson(raw)?.error?.code === 'bad_request', 'a PUT with no body at all (no Content-Length, no Transfer-Encoding)', '400 bad_request', raw.slice(0, 300))
      expectStatus(await session(ctx, a, 's1', Buffer.from('{"title":"t","activity":"idle","ttlSeconds":10.0,"subagentCount":2.0}')), 200, 'ttlSeconds 10.0 and subagentCount 2.0')
      expectStatus(await client.request({ target: `${client.target.basePath}/info?foo=bar&x` }), 200, 'GET /info?foo=bar&x')
      expectStatus(await client.request({ method: 'POST', target: `${client.target.basePath}/adapters/${a.id}/events?debug=1`, headers: a.headers, body: {} }), 200, 'POST …/events?debug=1')
    }
  }),
  defineCase({
    id: 'OT-A01',
    title: 'a known path with another method is 405 with Allow',
    level: 'decision',
    async run ({ client }) {
      const reply = await client.request({ method: 'POST', path: '/info', body: {} })
      expectEqual({ status: reply.status, allow: reply.headers.allow }, { status: 405, allow: 'GET' }, 'POST /info')
    }
  }),
  defineCase({
    id: 'OT-A01.b',
    title: 'each error answers with its table status (401 with WWW-Authenticate: Bearer); a wrong method on any route is 405 bad_request with Allow',
    level: 'decision',
    async run (ctx) {
      const { client } = ctx
      const unauthorized = await client.request({ path: '/info', headers: { authorization: null } })
      expectError(unauthorized, 'unauthorized', 'no Authorization')
      expectEqual(unauthorized.headers['www-authenticate'], 'Bearer', 'WWW-Authenticate of a 401')
      expectError(await client.request({ path: '/info', headers: { origin: 'x' } }), 'forbidden_origin', 'an Origin')
      expectError(await client.request({ path: '/nope' }), 'not_found', 'an unknown path')
      expectError(await client.request({ path: '/info', headers: { 'x-orbtile-nonce': 'x' } }), 'invalid_field', 'a bad nonce')
      const id = adapterId(ctx, 'status')
      expectError(await client.request({ method: 'POST', path: `/adapters/${id}/events`, body: {} }), 'adapter_not_registered', 'an unregistered adapter')
      expectError(await client.request({ method: 'PUT', path: `/adapters/${id}`, body: Buffer.from('[') }), 'bad_request', 'bad JSON')
      expectError(await client.request({ method: 'PUT', path: `/adapters/${id}`, body: Buffer.alloc(LIMITS.maxBodyBytes + 1, 0x20) }), 'payload_too_large', 'a large body')
      expectError(await client.request({ method: 'PUT', path: `/adapters/${id}`, body: minimal(), headers: { 'content-type': 'text/plain' } }), 'unsupported_media_type', 'text/plain')
      const chunked = await client.raw(`PUT ${client.target.basePath}/adapters/${id} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n2\r\n{}\r\n0\r\n\r\n`)
      expectThat(/^HTTP\/1\.1 411 /.test(chunked), 'length_required', '411', chunked.slice(0, 100))
      const bare = await register(ctx, minimal(), { label: 'status' })
      expectError(await poll(ctx, bare), 'events_not_supported', 'a poll without capabilities')
      for (const [method, path, allowed] of [
        ['PATCH', '/info', 'GET'],
        ['GET', `/adapters/${id}`, 'PUT'],
        ['GET', `/adapters/${id}/sessions/s1`, 'POST'],
        ['DELETE', `/adapters/${id}/sessions/s1`, 'POST'],
        ['POST', `/adapters/${id}/sessions`, 'PUT'],
        ['GET', `/adapters/${id}/events`, 'POST']
      ] as const) {
        const reply = await client.request({ method, path })
        expectError(reply, 'bad_request', `${method} ${path}`, undefined, 405)
        const allow = String(reply.headers.allow ?? '').split(',').map((m) => m.trim())
        expectThat(allow.includes(allowed), `${method} ${path}: Allow`, `a list with ${allowed}`, reply.headers.allow)
      }
    }
  }),
  defineCase({
    id: 'OT-A02',
    title: 'with several faults the earlier check answers: Host, Origin, bearer, route, body framing (length, size, type, JSON)',
    level: 'decision',
    async run (ctx) {
      const { client } = ctx
      const id = adapterId(ctx, 'order')
      expectError(await client.request({ path: '/info', headers: { host: 'evil.example', origin: 'x' } }), 'bad_request', 'a bad Host and an Origin')
      expectError(await client.request({ path: '/info', headers: { origin: 'x', authorization: null } }), 'forbidden_origin', 'an Origin and no Authorization')
      expectError(await client.request({ path: '/nope', headers: { authorization: null } }), 'unauthorized', 'no Authorization on an unknown path')
      expectError(await client.request({ method: 'PATCH', path: '/info', headers: { authorization: 'Bearer x' } }), 'unauthorized', 'a wrong token with a wrong method')
      expectError(await client.request({ method: 'POST', path: '/nope', body: Buffer.alloc(LIMITS.maxBodyBytes + 1, 0x20) }), 'not_found', 'a large body to an unknown path')
      expectError(await client.request({ method: 'PUT', path: `/adapters/${id}`, body: Buffer.alloc(LIMITS.maxBodyBytes + 1, 0x20), headers: { 'content-type': 'text/plain' } }), 'payload_too_large', 'a large body of text/plain')
      expectError(await client.request({ method: 'PUT', path: `/adapters/${id}`, body: Buffer.from('['), headers: { 'content-type': 'text/plain' } }), 'unsupported_media_type', 'bad JSON as text/plain')
      const raw = await client.raw(`PUT ${client.target.basePath}/adapters/${id} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer {token}\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n1\r\n[\r\n0\r\n\r\n`)
      expectThat(/^HTTP\/1\.1 411 /.test(raw), 'a chunked text/plain body', '411 length_required', raw.slice(0, 200))
    }
  }),
  defineCase({
    id: 'OT-A02.b',
    title: 'requests refused before the rate limit (Origin, bearer, route, method) take no token',
    level: 'decision',
    async run (ctx) {
      await refillBuckets(ctx)
      const refused: Array<[RequestOptions, Parameters<typeof expectError>[1], number?]> = [
        [{ path: '/info', headers: { origin: 'http://x' } }, 'forbidden_origin'],
        [{ path: '/info', headers: { authorization: 'Bearer wrong' } }, 'unauthorized'],
        [{ path: '/nope' }, 'not_found'],
        [{ method: 'PATCH', path: '/info' }, 'bad_request', 405]
      ]
      for (const [options, code, status] of refused) {
        for (const reply of await burst(ctx, 25, options)) expectError(reply, code, `${options.method ?? 'GET'} ${options.path} ${JSON.stringify(options.headers ?? {})}`, undefined, status)
      }
      const served = await burst(ctx, 60, { path: '/info' })
      expectEqual(served.filter((r) => r.status === 200).length, 60, '60 GET /info after 100 refused requests: admitted')
    }
  }),
  defineCase({
    id: 'OT-A02.c',
    title: 'past the head: JSON before path parameters, path parameters before registration state, registration before the adapter token, the token before the body schema',
    level: 'decision',
    async run (ctx) {
      const { client } = ctx
      const a = await register(ctx, minimal(), { label: 'order' })
      const never = adapterId(ctx, 'never')
      expectError(await client.request({ method: 'PUT', path: '/adapters/Not_An_Id', body: Buffer.from('[') }), 'bad_request', 'bad JSON for a bad adapter id')
      expectError(await client.request({ method: 'PUT', path: '/adapters/Not_An_Id', body: { name: '' } }), 'invalid_field', 'a bad adapter id with a bad body', 'adapterId')
      expectError(await client.request({ method: 'POST', path: `/adapters/${never}/sessions/a%20b`, body: SESSION }), 'invalid_field', 'a bad session id on an unregistered adapter', 'sessionId')
      expectError(await client.request({ method: 'POST', path: `/adapters/${never}/sessions/s1`, body: { title: '' }, headers: { 'x-orbtile-adapter-token': 'x'.repeat(43) } }), 'adapter_not_registered', 'an unregistered adapter, a wrong token and a bad body')
      expectError(await client.request({ method: 'POST', path: `/adapters/${a.id}/sessions/s1`, body: { title: '' }, headers: { 'x-orbtile-adapter-token': 'x'.repeat(43) } }), 'unauthorized', 'a registered adapter, a wrong token and a bad body')
      expectError(await session(ctx, a, 's1', { title: '' }), 'invalid_field', 'the right token and a bad body', 'title')
    }
  }),

  // ---- the API switch (control), last: they close and reopen the socket ----------------------------------------
  defineCase({
    id: 'OT-155',
    title: 'with the API switched off, every adapter request (and /info) is api_disabled; switched on, it serves again',
    level: 'required',
    needs: ['control'],
    async run (ctx) {
      const a = await register(ctx, withEvents(), { label: 'off' })
      await switchApi(ctx, { enabled: false })
      const fresh = adapterId(ctx, 'off')
      for (const options of [
        { path: '/info' },
        { method: 'PUT', path: `/adapters/${fresh}`, body: minimal() },
        { method: 'PUT', path: `/adapters/${a.id}`, headers: a.headers, body: withEvents() },
        { method: 'POST', path: `/adapters/${a.id}/sessions/s1`, headers: a.headers, body: SESSION },
        { method: 'PUT', path: `/adapters/${a.id}/sessions`, headers: a.headers, body: { sessions: [] } },
        { method: 'POST', path: `/adapters/${a.id}/events`, headers: a.headers, body: {} }
      ] as RequestOptions[]) {
        expectError(await ctx.client.request({ ...options, retryRateLimited: false }), 'api_disabled', `${options.method ?? 'GET'} ${options.path} while the API is off`)
      }
      await switchApi(ctx, { enabled: true })
      expectStatus(await ctx.client.request({ path: '/info' }), 200, 'GET /info once the API is on again')
    }
  }),
  defineCase({
    id: 'OT-001',
    title: 'while the user has the Adapter API off, no adapter request succeeds (socket open or closed)',
    level: 'required',
    needs: ['control'],
    async run (ctx) {
      ctx.note('"off by default" is the state before the user first turns the API on; a running target can only be switched off and back')
      const id = adapterId(ctx, 'off')
      const tries: RequestOptions[] = [
        { path: '/info' },
        { method: 'PUT', path: `/adapters/${id}`, body: minimal() },
        { method: 'POST', path: `/adapters/${id}/sessions/s1`, body: SESSION }
      ]
      for (const listening of [true, false]) {
        await switchApi(ctx, { enabled: false, listening })
        for (const options of tries) {
          const { code, reply } = await connectionRefusal(ctx, options)
          expectThat(reply === undefined || reply.status >= 400, `${options.method ?? 'GET'} ${options.path} with the API off (socket ${listening ? 'open' : 'closed'})`, 'no success', code ?? `${reply!.status} ${reply!.text.slice(0, 200)}`)
        }
      }
      await switchApi(ctx, { enabled: true })
      expectStatus(await ctx.client.request({ path: '/info' }), 200, 'GET /info once the API is on again')
    }
  }),
  defineCase({
    id: 'OT-A03',
    title: 'API off: an open socket answers even unauthenticated /info with 503 api_disabled; a closed one is ENOENT/ECONNREFUSED with the discovery file gone; on again, both are back',
    level: 'decision',
    needs: ['control'],
    async run (ctx) {
      const path = ctx.client.target.discovery
      await switchApi(ctx, { enabled: false })
      expectError(await ctx.client.request({ path: '/info', headers: { authorization: null } }), 'api_disabled', 'GET /info without Authorization, API off')
      await switchApi(ctx, { enabled: false, listening: false })
      const { code, reply } = await connectionRefusal(ctx, { path: '/info' })
      expectThat(code === 'ENOENT' || code === 'ECONNREFUSED', 'a request with the API off and the socket closed', 'ENOENT or ECONNREFUSED', code ?? `${reply?.status} ${reply?.text.slice(0, 200)}`)
      if (path === undefined) ctx.note('no discovery file to check (unix: target)')
      else {
        let present = true
        try {
          statSync(path)
        } catch {
          present = false
        }
        expectThat(!present, 'the discovery file while the API is off', 'absent', 'present')
      }
      await switchApi(ctx, { enabled: true })
      if (path !== undefined) {
        const { json, stat } = readDiscovery(ctx)
        expectEqual({ socketPath: json.socketPath, mode: (stat.mode & 0o777).toString(8) }, { socketPath: ctx.client.target.socketPath, mode: '600' }, 'the discovery file once the API is on again')
      }
      expectStatus(await ctx.client.request({ path: '/info' }), 200, 'GET /info once the API is on again')
    }
  })
]

/**
 * Every request that must fail, for OT-149: a generator of requests each with one fault (Origin, token, route,
 * method, JSON, media type, nonce, an unregistered adapter).
 */
function faultyRequest (ctx: CaseContext): fc.Arbitrary<RequestOptions> {
  const id = adapterId(ctx, 'faulty')
  return fc.oneof(
    printable(0, 40).map((origin): RequestOptions => ({ path: '/info', headers: { origin } })),
    wrongAuthorization(ctx.client.target.token).map((authorization): RequestOptions => ({ path: '/info', headers: { authorization } })),
    fc.stringMatching(/^[a-z0-9_-]{1,16}$/).filter((s) => s !== 'info' && s !== 'adapters').map((s): RequestOptions => ({ path: `/${s}` })),
    fc.constantFrom('POST', 'PUT', 'DELETE', 'PATCH').map((method): RequestOptions => ({ method, path: '/info' })),
    fc.oneof(fc.constantFrom('{', '[]', '"x"', '1', 'null', '{"a":1,"a":2}', ''), fc.jsonValue().filter((v) => v === null || typeof v !== 'object' || Array.isArray(v)).map((v) => JSON.stringify(v)))
      .map((text): RequestOptions => ({ method: 'PUT', path: `/adapters/${id}`, body: Buffer.from(text) })),
    fc.constantFrom('text/plain', 'application/xml', 'application/json; charset=latin1', 'multipart/form-data')
      .map((type): RequestOptions => ({ method: 'PUT', path: `/adapters/${id}`, body: { name: '' }, headers: { 'content-type': type } })),
    printable(1, 70).filter((s) => s === s.trim() && !NONCE.test(s)).map((nonce): RequestOptions => ({ path: '/info', headers: { 'x-orbtile-nonce': nonce } })),
    fc.constantFrom('sessions/s1', 'events').map((route): RequestOptions => ({ method: 'POST', path: `/adapters/${id}/${route}`, body: route === 'events' ? {} : SESSION })),
    fc.integer({ min: 1, max: 1000 }).map((extra): RequestOptions => ({ method: 'PUT', path: `/adapters/${id}`, body: Buffer.alloc(LIMITS.maxBodyBytes + extra, 0x20) }))
  )
}

/** An allowed adapter with the tap capability, one session, and `n` taps queued through the control API. */
async function tapped (ctx: CaseContext, n: number): Promise<Registered> {
  const a = await register(ctx, withEvents(), { label: 'taps' })
  expectStatus(await session(ctx, a, 's1', SESSION), 200, 'creating the session to tap')
  for (let i = 0; i < n; i += 10) {
    const taps = await Promise.all(Array.from({ length: Math.min(10, n - i) }, () => ctx.control!.tap(a.id, 's1')))
    for (const tap of taps) if (tap.status !== 200) throw new Error(`control tap answered ${tap.status}: ${JSON.stringify(tap.json)}`)
  }
  return a
}

/**
 * Five adapters with the tap capability, the first four holding a long poll (waitSeconds 2) each. `release` ends the
 * polls (advancing a virtual clock, or waiting) and returns their replies; it also runs when the case ends.
 */
async function fourHeld (ctx: CaseContext): Promise<{ adapters: Registered[], release: () => Promise<Reply[]> }> {
  const adapters: Registered[] = []
  for (let i = 0; i < 5; i++) adapters.push(await register(ctx, withEvents(), { label: 'long' }))
  const virtual = await hasVirtualClock(ctx)
  const held = adapters.slice(0, 4).map((a) => poll(ctx, a, { waitSeconds: 2 }, { retryRateLimited: false }))
  // Awaited by `release`; until then a failed poll must not count as an unhandled rejection.
  for (const p of held) p.catch(() => {})
  let released: Promise<Reply[]> | undefined
  const release = (): Promise<Reply[]> => {
    released ??= (async () => {
      if (virtual) await ctx.elapse(2000)
      return Promise.all(held)
    })()
    return released
  }
  ctx.cleanup(release)
  await pollsHeld(ctx, adapters.slice(0, 4).map((a) => a.id))
  return { adapters, release }
}

/** Which cases each fault of this area must make fail. */
export const transportFaults: Partial<Record<Fault, string[]>> = {
  'origin-allowed': ['OT-015', 'OT-A01.b', 'OT-A02', 'OT-A02.b'],
  'burst-off-by-one': ['OT-026', 'OT-A20.shared']
}
