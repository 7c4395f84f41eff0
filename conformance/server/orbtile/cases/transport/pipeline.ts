import fc from 'fast-check'
import { adapterId, defineCase, type ConformanceCase } from '../../orbtile-case.js'
import { minimal, register } from '../../adapters.js'
import { expectEqual, expectError, expectStatus, expectThat } from '../../expect.js'
import type { RequestOptions } from '../../transport.js'
import { burst, refillBuckets } from '../../support-transport.js'
import { LIMITS, poll, rawHead, rawJson, SESSION, session, tapAdapter } from './transport-support.js'

/** Decisions on the request pipeline: Host, Content-Type, bodies, statuses, the order of checks (OT-A01, A02, A05). */
export const pipelineCases: ConformanceCase[] = [
  defineCase({
    id: 'OT-A05',
    title: 'a Host other than localhost (with or without a port), or none, is bad_request',
    level: 'decision',
    async run (ctx) {
      const { client } = ctx
      expectError(
        await client.request({ path: '/info', headers: { host: 'example.com' } }),
        'bad_request',
        'Host: example.com'
      )
      expectStatus(
        await client.request({ path: '/info', headers: { host: 'localhost:8080' } }),
        200,
        'Host: localhost:8080'
      )
      const raw = await client.raw(
        `GET ${client.target.basePath}/info HTTP/1.1\r\nAuthorization: Bearer {token}\r\nConnection: close\r\n\r\n`
      )
      expectThat(
        /^HTTP\/1\.1 400 /.test(raw) && rawJson(raw)?.error?.code === 'bad_request',
        'a request without Host',
        '400 bad_request',
        raw.slice(0, 300)
      )
      await fc.assert(
        fc.asyncProperty(
          fc
            .tuple(
              fc.oneof(
                fc.domain(),
                fc.ipV4(),
                fc.constantFrom('127.0.0.1', 'localhost.localdomain', 'evil.localhost', '[::1]')
              ),
              fc.option(fc.integer({ min: 1, max: 65535 }), { nil: undefined })
            )
            .map(([host, port]) => (port === undefined ? host : `${host}:${port}`))
            .filter((host) => !/^localhost(?::\d+)?$/i.test(host)),
          async (host) => {
            expectError(await client.request({ path: '/info', headers: { host } }), 'bad_request', `Host: ${host}`)
          }
        ),
        ctx.fc()
      )
    }
  }),
  defineCase({
    id: 'OT-A05.b',
    title:
      'Content-Type application/json matches in any case, with an optional charset=utf-8; another charset is 415; a bodiless GET needs none',
    level: 'decision',
    async run (ctx) {
      const a = await tapAdapter(ctx, 'ctype')
      for (const type of [
        'application/json',
        'Application/JSON',
        'application/json; charset=utf-8',
        'application/json;charset=UTF-8'
      ]) {
        expectStatus(
          await poll(ctx, a, {}, { headers: { ...a.headers, 'content-type': type } }),
          200,
          `a poll with Content-Type ${type}`
        )
      }
      expectError(
        await poll(ctx, a, {}, { headers: { ...a.headers, 'content-type': 'application/json; charset=iso-8859-1' } }),
        'unsupported_media_type',
        'charset=iso-8859-1'
      )
      expectStatus(
        await ctx.client.request({ path: '/info', headers: { 'content-type': 'application/json' } }),
        200,
        'GET /info with Content-Type application/json'
      )
      expectStatus(
        await ctx.client.request({ path: '/info', headers: { 'content-type': null } }),
        200,
        'GET /info without Content-Type'
      )
    }
  }),
  defineCase({
    id: 'OT-A05.c',
    title:
      'an empty or missing PUT/POST body is bad_request; an integral 10.0 is an integer; unknown query parameters are ignored',
    level: 'decision',
    async run (ctx) {
      const { client } = ctx
      const a = await tapAdapter(ctx, 'bodies')
      expectError(
        await client.request({ method: 'PUT', path: `/adapters/${adapterId(ctx, 'empty')}`, body: Buffer.alloc(0) }),
        'bad_request',
        'PUT with Content-Length: 0'
      )
      const raw = await client.raw(rawHead(ctx, 'PUT', `/adapters/${adapterId(ctx, 'bodiless')}`))
      expectThat(
        /^HTTP\/1\.1 400 /.test(raw) && rawJson(raw)?.error?.code === 'bad_request',
        'a PUT with no body at all (no Content-Length, no Transfer-Encoding)',
        '400 bad_request',
        raw.slice(0, 300)
      )
      expectStatus(
        await session(
          ctx,
          a,
          's1',
          Buffer.from('{"title":"t","activity":"idle","ttlSeconds":10.0,"subagentCount":2.0}')
        ),
        200,
        'ttlSeconds 10.0 and subagentCount 2.0'
      )
      expectStatus(
        await client.request({ target: `${client.target.basePath}/info?foo=bar&x` }),
        200,
        'GET /info?foo=bar&x'
      )
      expectStatus(
        await client.request({
          method: 'POST',
          target: `${client.target.basePath}/adapters/${a.id}/events?debug=1`,
          headers: a.headers,
          body: {}
        }),
        200,
        'POST …/events?debug=1'
      )
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
      expectError(
        await client.request({ path: '/info', headers: { 'x-orbtile-nonce': 'x' } }),
        'invalid_field',
        'a bad nonce'
      )
      const id = adapterId(ctx, 'status')
      expectError(
        await client.request({ method: 'POST', path: `/adapters/${id}/events`, body: {} }),
        'adapter_not_registered',
        'an unregistered adapter'
      )
      expectError(
        await client.request({ method: 'PUT', path: `/adapters/${id}`, body: Buffer.from('[') }),
        'bad_request',
        'bad JSON'
      )
      expectError(
        await client.request({
          method: 'PUT',
          path: `/adapters/${id}`,
          body: Buffer.alloc(LIMITS.maxBodyBytes + 1, 0x20)
        }),
        'payload_too_large',
        'a large body'
      )
      expectError(
        await client.request({
          method: 'PUT',
          path: `/adapters/${id}`,
          body: minimal(),
          headers: { 'content-type': 'text/plain' }
        }),
        'unsupported_media_type',
        'text/plain'
      )
      const chunked = await client.raw(
        `PUT ${client.target.basePath}/adapters/${id} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n2\r\n{}\r\n0\r\n\r\n`
      )
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
    title:
      'with several faults the earlier check answers: Host, Origin, bearer, route, body framing (length, size, type, JSON)',
    level: 'decision',
    async run (ctx) {
      const { client } = ctx
      const id = adapterId(ctx, 'order')
      expectError(
        await client.request({ path: '/info', headers: { host: 'evil.example', origin: 'x' } }),
        'bad_request',
        'a bad Host and an Origin'
      )
      expectError(
        await client.request({ path: '/info', headers: { origin: 'x', authorization: null } }),
        'forbidden_origin',
        'an Origin and no Authorization'
      )
      expectError(
        await client.request({ path: '/nope', headers: { authorization: null } }),
        'unauthorized',
        'no Authorization on an unknown path'
      )
      expectError(
        await client.request({ method: 'PATCH', path: '/info', headers: { authorization: 'Bearer x' } }),
        'unauthorized',
        'a wrong token with a wrong method'
      )
      expectError(
        await client.request({ method: 'POST', path: '/nope', body: Buffer.alloc(LIMITS.maxBodyBytes + 1, 0x20) }),
        'not_found',
        'a large body to an unknown path'
      )
      expectError(
        await client.request({
          method: 'PUT',
          path: `/adapters/${id}`,
          body: Buffer.alloc(LIMITS.maxBodyBytes + 1, 0x20),
          headers: { 'content-type': 'text/plain' }
        }),
        'payload_too_large',
        'a large body of text/plain'
      )
      expectError(
        await client.request({
          method: 'PUT',
          path: `/adapters/${id}`,
          body: Buffer.from('['),
          headers: { 'content-type': 'text/plain' }
        }),
        'unsupported_media_type',
        'bad JSON as text/plain'
      )
      const raw = await client.raw(
        `PUT ${client.target.basePath}/adapters/${id} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer {token}\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n1\r\n[\r\n0\r\n\r\n`
      )
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
        for (const reply of await burst(ctx, 25, options)) {
          expectError(
            reply,
            code,
            `${options.method ?? 'GET'} ${options.path} ${JSON.stringify(options.headers ?? {})}`,
            undefined,
            status
          )
        }
      }
      const served = await burst(ctx, 60, { path: '/info' })
      expectEqual(
        served.filter((r) => r.status === 200).length,
        60,
        '60 GET /info after 100 refused requests: admitted'
      )
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
      expectError(
        await client.request({ method: 'PUT', path: '/adapters/Not_An_Id', body: Buffer.from('[') }),
        'bad_request',
        'bad JSON for a bad adapter id'
      )
      expectError(
        await client.request({ method: 'PUT', path: '/adapters/Not_An_Id', body: { name: '' } }),
        'invalid_field',
        'a bad adapter id with a bad body',
        'adapterId'
      )
      expectError(
        await client.request({ method: 'POST', path: `/adapters/${never}/sessions/a%20b`, body: SESSION }),
        'invalid_field',
        'a bad session id on an unregistered adapter',
        'sessionId'
      )
      expectError(
        await client.request({
          method: 'POST',
          path: `/adapters/${never}/sessions/s1`,
          body: { title: '' },
          headers: { 'x-orbtile-adapter-token': 'x'.repeat(43) }
        }),
        'adapter_not_registered',
        'an unregistered adapter, a wrong token and a bad body'
      )
      expectError(
        await client.request({
          method: 'POST',
          path: `/adapters/${a.id}/sessions/s1`,
          body: { title: '' },
          headers: { 'x-orbtile-adapter-token': 'x'.repeat(43) }
        }),
        'unauthorized',
        'a registered adapter, a wrong token and a bad body'
      )
      expectError(
        await session(ctx, a, 's1', { title: '' }),
        'invalid_field',
        'the right token and a bad body',
        'title'
      )
    }
  })
]
