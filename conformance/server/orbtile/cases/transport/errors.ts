import fc from 'fast-check'
import { ERROR_CODES } from '../../../../../src/spec/orbtile.js'
import { adapterId, defineCase, type CaseContext, type ConformanceCase } from '../../orbtile-case.js'
import { forget, minimal } from '../../adapters.js'
import { expectError, expectSchema, expectThat } from '../../expect.js'
import type { RequestOptions } from '../../transport.js'
import { freshPut, LIMITS, NONCE, printable, rawJson, SESSION, wrongAuthorization } from './transport-support.js'

/**
 * Every request that must fail, for OT-149: a generator of requests each with one fault (Origin, token, route,
 * method, JSON, media type, nonce, an unregistered adapter).
 */
function faultyRequest (ctx: CaseContext): fc.Arbitrary<RequestOptions> {
  const id = adapterId(ctx, 'faulty')
  return fc.oneof(
    printable(0, 40).map((origin): RequestOptions => ({ path: '/info', headers: { origin } })),
    wrongAuthorization(ctx.client.target.token).map((authorization): RequestOptions => ({
      path: '/info',
      headers: { authorization }
    })),
    fc
      .stringMatching(/^[a-z0-9_-]{1,16}$/)
      .filter((s) => s !== 'info' && s !== 'adapters')
      .map((s): RequestOptions => ({ path: `/${s}` })),
    fc.constantFrom('POST', 'PUT', 'DELETE', 'PATCH').map((method): RequestOptions => ({ method, path: '/info' })),
    fc
      .oneof(
        fc.constantFrom('{', '[]', '"x"', '1', 'null', '{"a":1,"a":2}', ''),
        fc
          .jsonValue()
          .filter((v) => v === null || typeof v !== 'object' || Array.isArray(v))
          .map((v) => JSON.stringify(v))
      )
      .map((text): RequestOptions => ({ method: 'PUT', path: `/adapters/${id}`, body: Buffer.from(text) })),
    fc
      .constantFrom('text/plain', 'application/xml', 'application/json; charset=latin1', 'multipart/form-data')
      .map((type): RequestOptions => ({
        method: 'PUT',
        path: `/adapters/${id}`,
        body: { name: '' },
        headers: { 'content-type': type }
      })),
    printable(1, 70)
      .filter((s) => s === s.trim() && !NONCE.test(s))
      .map((nonce): RequestOptions => ({ path: '/info', headers: { 'x-orbtile-nonce': nonce } })),
    fc
      .constantFrom('sessions/s1', 'events')
      .map((route): RequestOptions => ({
        method: 'POST',
        path: `/adapters/${id}/${route}`,
        body: route === 'events' ? {} : SESSION
      })),
    fc
      .integer({ min: 1, max: 1000 })
      .map((extra): RequestOptions => ({
        method: 'PUT',
        path: `/adapters/${id}`,
        body: Buffer.alloc(LIMITS.maxBodyBytes + extra, 0x20)
      }))
  )
}

/**
 * Errors: unknown paths, bad JSON, the Error body and its codes, invalid_field, unregistered adapters, fuzzing
 * (OT-149..156).
 */
export const errorCases: ConformanceCase[] = [
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
      await fc.assert(
        fc.asyncProperty(
          fc.oneof(
            segment.filter((s) => s !== 'info' && s !== 'adapters').map((s) => `${base}/${s}`),
            fc.tuple(segment, segment).map(([a, b]) => `${base}/info/${a}/${b}`),
            fc.tuple(segment, segment).map(([a, b]) => `${base}/adapters/${a}/${b}/x/y`),
            segment
              .filter((s) => `/${s}` !== base.slice(0, s.length + 1) && !base.startsWith(`/${s}/`))
              .map((s) => `/${s}/info`),
            fc.constantFrom('/info', '/a/v2/info', '/a/info', '/', `${base}`, `${base}x/info`)
          ),
          async (target) => {
            expectError(await ctx.client.request({ target }), 'not_found', `GET ${target}`)
          }
        ),
        ctx.fc()
      )
    }
  }),
  defineCase({
    id: 'OT-154',
    title: 'bad JSON, JSON that is not an object, and duplicate keys are bad_request',
    level: 'required',
    async run (ctx) {
      const put = freshPut(ctx, 'json')
      for (const body of ['{"name":', '[]', '"x"', '{"name":"a","name":"b","palette":{"baseHue":1}}']) {
        expectError(await put({ body: Buffer.from(body) }), 'bad_request', `body ${body}`)
      }
    }
  }),
  defineCase({
    id: 'OT-154.b',
    title: 'for any JSON value that is not an object, any truncated JSON, and invalid UTF-8, the body is bad_request',
    level: 'required',
    async run (ctx) {
      const put = freshPut(ctx, 'json')
      const valid = JSON.stringify({ ...minimal(), version: 'ü' })
      await fc.assert(
        fc.asyncProperty(
          fc.oneof(
            fc
              .jsonValue()
              .filter((v) => v === null || typeof v !== 'object' || Array.isArray(v))
              .map((v) => Buffer.from(JSON.stringify(v))),
            fc.nat({ max: valid.length - 1 }).map((n) => Buffer.from(valid.slice(0, n))),
            fc
              .nat({ max: 20 })
              .map((n) =>
                Buffer.concat([Buffer.from(valid.slice(0, n)), Buffer.from([0xff, 0xfe]), Buffer.from(valid.slice(n))])
              )
          ),
          async (body) => {
            const shown = JSON.stringify(body.toString('latin1').slice(0, 80))
            expectError(await put({ body }), 'bad_request', `PUT with body ${shown}`)
          }
        ),
        ctx.fc()
      )
    }
  }),
  defineCase({
    id: 'OT-149',
    title: 'bytes that are not HTTP/1.1 still get a JSON error body',
    level: 'required',
    async run ({ client }) {
      const raw = await client.raw('NOT HTTP AT ALL\r\n\r\n')
      expectThat(
        /^HTTP\/1\.1 400 /.test(raw) && /"error":\{/.test(raw),
        'garbage on the socket',
        'a 400 with a JSON error body',
        raw.slice(0, 300)
      )
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
        expectThat(
          /^HTTP\/1\.1 4\d\d /.test(raw) &&
            typeof body?.error?.code === 'string' &&
            typeof body?.error?.message === 'string',
          `broken framing ${JSON.stringify(bytes.slice(0, 60))}`,
          'a 4xx with {"error":{"code","message"}}',
          raw.slice(0, 300)
        )
        expectSchema(body, 'Error', 'the error body')
      }
      await fc.assert(
        fc.asyncProperty(faultyRequest(ctx), async (options) => {
          const reply = await client.request(options)
          const what = `${options.method ?? 'GET'} ${options.path ?? options.target}`
          expectThat(
            reply.status >= 400,
            `${what}: a faulty request`,
            'an error status',
            `${reply.status} ${reply.text.slice(0, 200)}`
          )
          expectThat(
            /^application\/json\b/.test(String(reply.headers['content-type'])),
            `${what}: Content-Type of the error`,
            'application/json',
            reply.headers['content-type']
          )
          expectSchema(reply.json, 'Error', `${what}: the error body`)
          expectThat(
            typeof reply.json.error.message === 'string',
            `${what}: message`,
            'a string',
            reply.json.error.message
          )
        }),
        ctx.fc()
      )
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
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom('GET', 'PUT', 'POST', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD'),
          fc.constantFrom(
            '/info',
            `/adapters/${id}`,
            `/adapters/${id}/sessions/s1`,
            `/adapters/${id}/sessions`,
            `/adapters/${id}/events`,
            '/adapters/BAD%20ID',
            '/x',
            '/adapters/com.orbtile.x'
          ),
          fc.boolean(),
          fc.record(
            {
              origin: fc.constant('http://x'),
              authorization: fc.constantFrom(null, 'Bearer nope'),
              'content-type': fc.constantFrom('text/plain', 'application/json; charset=latin1'),
              'x-orbtile-nonce': fc.constantFrom('zz', '00')
            },
            { requiredKeys: [] }
          ),
          fc.option(
            fc.oneof(
              fc.jsonValue({ maxDepth: 2 }).map((v) => Buffer.from(JSON.stringify(v) ?? 'null')),
              fc.uint8Array({ maxLength: 64 }).map((b) => Buffer.from(b))
            ),
            { nil: undefined }
          ),
          async (method, path, outside, headers, body) => {
            const options: RequestOptions = {
              method,
              ...(outside ? { target: `/q${base}${path}` } : { path }),
              headers,
              ...(method === 'GET' || method === 'HEAD' || body === undefined ? {} : { body })
            }
            const reply = await ctx.client.request(options)
            if (reply.status === 200 && method === 'PUT' && path === `/adapters/${id}`) {
              await ctx.client.request({
                method: 'DELETE',
                path,
                headers: { 'x-orbtile-adapter-token': reply.json.adapterToken }
              })
            }
            if (reply.status < 400 || method === 'HEAD') return
            expectThat(
              ERROR_CODES.includes(reply.json?.error?.code),
              `${method} ${path}: the error code`,
              ERROR_CODES.join('|'),
              `${reply.status} ${reply.text.slice(0, 200)}`
            )
          }
        ),
        ctx.fc()
      )
    }
  }),
]
