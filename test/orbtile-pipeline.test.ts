import { connect } from 'node:net'
import t from 'tap'
import fc from 'fast-check'
import type { OrbtileRoute } from '../src/orbtile-mock/index.js'
import { fcParams } from './helpers/fc.js'
import { startFake } from './helpers/fake.js'
import type { Teardown } from './helpers/fake.js'
import { SocketClient, parseRawResponse, rawExchange } from './helpers/client.js'
import { assertSpecError, specErrorProblem } from './helpers/assert.js'

// The protocol's body-taking routes arrive with registration and sessions; until then the pipeline is proven
// through routes added beside /info, behind the very same pipeline, on the real socket.
const extraRoutes: OrbtileRoute[] = [
  { method: 'POST', path: '/echo', adapterRoute: false, handler: async (request) => ({ echoed: request.body }) },
  { method: 'GET', path: '/boom', adapterRoute: false, handler: async () => { throw new Error('secret internals at /srv/x.ts:12') } }
]

async function setup (tt: Teardown, options = {}) {
  const fake = await startFake(tt, { rateLimit: 'off', extraRoutes, ...options })
  const client = new SocketClient(fake.socketPath, fake.token)
  tt.teardown(() => client.close())
  return { fake, client }
}

t.test('OT-015 any Origin header, whatever its value, is forbidden_origin', async (t) => {
  const { client } = await setup(t)
  assertSpecError(t, await client.request({ headers: { origin: 'null' } }), 'forbidden_origin')
  assertSpecError(t, await client.request({ headers: { origin: '' } }), 'forbidden_origin')
  await fc.assert(fc.asyncProperty(
    fc.oneof(fc.webUrl(), fc.string({ unit: 'grapheme-ascii' }).filter((s) => !/[\r\n]/.test(s) && s.trim() === s)),
    async (origin) => specErrorProblem(await client.request({ headers: { origin } }), 'forbidden_origin') === undefined
  ), fcParams({ numRuns: 60 }))
})

t.test('OT-016 a missing header, another scheme, or any other token is unauthorized', async (t) => {
  const { fake, client } = await setup(t)
  const missing = await client.request({ headers: { authorization: null } })
  assertSpecError(t, missing, 'unauthorized')
  t.equal(missing.headers['www-authenticate'], 'Bearer', 'OT-A01: 401 carries WWW-Authenticate: Bearer')
  assertSpecError(t, await client.request({ headers: { authorization: `Basic ${fake.token}` } }), 'unauthorized')
  assertSpecError(t, await client.request({ headers: { authorization: 'Bearer' } }), 'unauthorized')
  assertSpecError(t, await client.request({ headers: { authorization: `Bearer ${fake.token}x` } }), 'unauthorized')
  assertSpecError(
    t,
    await client.request({ headers: { authorization: `Bearer ${fake.token.slice(0, -1)}` } }),
    'unauthorized'
  )
  t.equal((await client.request()).status, 200, 'the discovery token itself is accepted')
  await fc.assert(
    fc.asyncProperty(
      fc
        .string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 80 })
        .filter((s) => /^[\x21-\x7e]+$/.test(s) && s !== fake.token),
      async (token) =>
        specErrorProblem(await client.request({ headers: { authorization: `Bearer ${token}` } }), 'unauthorized') ===
        undefined
    ),
    fcParams({ numRuns: 80 })
  )
})

t.test('OT-A05 a missing Host or one other than localhost is bad_request, with a JSON body', async (t) => {
  const { fake, client } = await setup(t)
  assertSpecError(t, await client.request({ headers: { host: 'example.com' } }), 'bad_request')
  assertSpecError(t, await client.request({ headers: { host: '127.0.0.1' } }), 'bad_request')
  t.equal(
    (await client.request({ headers: { host: 'LocalHost:8080' } })).status,
    200,
    'localhost with a port, any case, is fine'
  )
  const raw = parseRawResponse(
    await rawExchange(
      fake.socketPath,
      `GET /a/v1/info HTTP/1.1\r\nAuthorization: Bearer ${fake.token}\r\nConnection: close\r\n\r\n`
    )
  )
  t.equal(raw.status, 400)
  t.equal(raw.json?.error?.code, 'bad_request', 'missing Host answers in the spec shape')
})

t.test('OT-153 unknown paths and paths outside basePath are not_found; a wrong method is 405 with Allow', async (t) => {
  const { client } = await setup(t)
  assertSpecError(t, await client.request({ path: '/nope' }), 'not_found')
  assertSpecError(t, await client.request({ target: '/info' }), 'not_found')
  assertSpecError(t, await client.request({ target: '/a/v2/info' }), 'not_found')
  for (const method of ['POST', 'PUT', 'DELETE', 'PATCH']) {
    const reply = await client.request({ method, path: '/info' })
    t.equal(reply.status, 405, `${method} /info is 405`)
    t.equal(reply.headers.allow, 'GET')
    assertSpecError(t, reply, 'bad_request', undefined, 405)
  }
})

t.test('OT-017 a body that is not application/json is unsupported_media_type', async (t) => {
  const { client } = await setup(t)
  for (const type of [
    'text/plain',
    'application/x-www-form-urlencoded',
    'application/json; charset=latin1',
    'application/jsonx',
    'json'
  ]) {
    assertSpecError(
      t,
      await client.request({ method: 'POST', path: '/echo', body: {}, headers: { 'content-type': type } }),
      'unsupported_media_type'
    )
  }
  assertSpecError(
    t,
    await client.request({ method: 'POST', path: '/echo', body: {}, headers: { 'content-type': null } }),
    'unsupported_media_type'
  )
  for (const type of [
    'application/json',
    'Application/JSON',
    'application/json; charset=utf-8',
    'application/json;charset=UTF-8'
  ]) {
    t.equal(
      (await client.request({ method: 'POST', path: '/echo', body: { a: 1 }, headers: { 'content-type': type } }))
        .status,
      200,
      `${type} is accepted`
    )
  }
})

t.test('OT-025 a body without Content-Length is length_required', async (t) => {
  const { client } = await setup(t)
  const reply = await client.request({
    method: 'POST',
    path: '/echo',
    body: {},
    headers: { 'transfer-encoding': 'chunked' }
  })
  assertSpecError(t, reply, 'length_required')
})

t.test(
  'OT-024 65536 bytes pass the size check; anything larger is payload_too_large and the fake keeps serving',
  async (t) => {
    const { client } = await setup(t)
    const exact = Buffer.from(`{"pad":"${'x'.repeat(65536 - 10)}"}`)
    t.equal(exact.length, 65536)
    const ok = await client.request({ method: 'POST', path: '/echo', body: exact })
    t.equal(ok.status, 200, 'exactly maxBodyBytes is accepted')
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 65537, max: 300_000 }), async (size) => {
        const body = Buffer.alloc(size, 0x20)
        const tooLarge = await client.request({ method: 'POST', path: '/echo', body })
        const after = await client.request()
        return specErrorProblem(tooLarge, 'payload_too_large') === undefined && after.status === 200
      }),
      fcParams({ numRuns: 25 })
    )
  }
)

t.test(
  'OT-154 any JSON that is not an object, bad JSON, bad UTF-8, an empty body or duplicate keys is bad_request',
  async (t) => {
    const { client } = await setup(t)
    for (const text of [
      '[]',
      '"x"',
      '{',
      '1',
      'null',
      'true',
      '',
      '{"a":1,"a":2}',
      '{"o":{"k":1,"k":1}}',
      '{"a":1} x'
    ]) {
      assertSpecError(
        t,
        await client.request({ method: 'POST', path: '/echo', body: Buffer.from(text) }),
        'bad_request'
      )
    }
    assertSpecError(
      t,
      await client.request({
        method: 'POST',
        path: '/echo',
        body: Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d])
      }),
      'bad_request'
    )
    await fc.assert(
      fc.asyncProperty(
        fc.jsonValue().filter((v) => v === null || typeof v !== 'object' || Array.isArray(v)),
        async (value) =>
          specErrorProblem(await client.request({ method: 'POST', path: '/echo', body: value }), 'bad_request') ===
          undefined
      ),
      fcParams({ numRuns: 60 })
    )
    await fc.assert(
      fc.asyncProperty(fc.dictionary(fc.string(), fc.jsonValue()), async (value) => {
        const reply = await client.request({ method: 'POST', path: '/echo', body: value })
        return reply.status === 200 && JSON.stringify(reply.json.echoed) === JSON.stringify(value)
      }),
      fcParams({ numRuns: 60 })
    )
  }
)

t.test('OT-A02 with several faults, the earlier check answers', async (t) => {
  const { fake, client } = await setup(t)
  assertSpecError(t, await client.request({ headers: { host: 'evil', origin: 'x' } }), 'bad_request', undefined)
  assertSpecError(t, await client.request({ headers: { origin: 'x', authorization: null } }), 'forbidden_origin')
  assertSpecError(t, await client.request({ path: '/nope', headers: { authorization: null } }), 'unauthorized')
  assertSpecError(t, await client.request({ method: 'POST', path: '/nope', body: Buffer.alloc(70000) }), 'not_found')
  assertSpecError(
    t,
    await client.request({
      method: 'POST',
      path: '/echo',
      body: Buffer.alloc(70000),
      headers: { 'content-type': 'text/plain' }
    }),
    'payload_too_large'
  )
  assertSpecError(
    t,
    await client.request({
      method: 'POST',
      path: '/echo',
      body: Buffer.from('['),
      headers: { 'content-type': 'text/plain' }
    }),
    'unsupported_media_type'
  )
  await fake.control.setApi({ enabled: false })
  assertSpecError(t, await client.request({ headers: { authorization: null } }), 'api_disabled')
  assertSpecError(t, await client.request({ headers: { origin: 'x' } }), 'forbidden_origin')
})

t.test('OT-155 while the API is switched off every request is api_disabled; switched on, it serves again', async (t) => {
  const { fake, client } = await setup(t)
  await fake.control.setApi({ enabled: false })
  assertSpecError(t, await client.request(), 'api_disabled')
  assertSpecError(t, await client.request({ method: 'POST', path: '/echo', body: {} }), 'api_disabled')
  await fake.control.setApi({ enabled: true })
  t.equal((await client.request()).status, 200)
})

t.test('OT-156 an unexpected fault is internal, JSON, with no stack or path, and the fake keeps serving', async (t) => {
  const { client } = await setup(t)
  const reply = await client.request({ path: '/boom' })
  assertSpecError(t, reply, 'internal')
  t.notMatch(reply.text, /secret|\/srv|at .*\.ts/, 'nothing of the fault leaks')
  t.equal((await client.request()).status, 200)
})

t.test('OT-149 OT-A05 bytes that are not HTTP/1.1 get a JSON bad_request, never a bare or HTML reply', async (t) => {
  const { fake, client } = await setup(t)
  for (const bytes of [
    'GET /a/v1/info HTTP/1.1\r\nHost: localhost\r\nContent-Length: abc\r\n\r\n',
    'GARBAGE\r\n\r\n',
    'POST /a/v1/echo HTTP/1.1\r\nHost: localhost\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n{}',
    `GET /a/v1/info HTTP/1.1\r\nHost: localhost\r\nX-Big: ${'a'.repeat(20000)}\r\n\r\n`
  ]) {
    const raw = parseRawResponse(await rawExchange(fake.socketPath, bytes))
    t.equal(raw.status, 400, JSON.stringify(bytes.slice(0, 40)))
    t.equal(raw.json?.error?.code, 'bad_request')
    t.match(raw.headers['content-type'], /^application\/json/)
  }
  t.equal((await client.request()).status, 200, 'the fake keeps serving')
})

t.test('OT-A02 refused routes (404, 405) take no rate-limit token', async (t) => {
  const limited = await startFake(t, { extraRoutes, clockMode: 'virtual' })
  const client = new SocketClient(limited.socketPath, limited.token)
  t.teardown(() => client.close())
  for (let i = 0; i < 70; i++) await client.request({ path: '/nope' })
  for (let i = 0; i < 70; i++) await client.request({ method: 'PATCH', path: '/info' })
  const replies = await Promise.all(Array.from({ length: 60 }, () => client.request()))
  t.same(replies.map((r) => r.status), Array(60).fill(200))
})

t.test('OT-A02 the rate limit answers before body framing', async (t) => {
  const limited = await startFake(t, { extraRoutes, clockMode: 'virtual' })
  const client = new SocketClient(limited.socketPath, limited.token)
  t.teardown(() => client.close())
  await Promise.all(Array.from({ length: 60 }, () => client.request()))
  assertSpecError(t, await client.request({ method: 'POST', path: '/echo', body: Buffer.alloc(70000) }), 'rate_limited')
  assertSpecError(
    t,
    await client.request({ method: 'POST', path: '/echo', body: {}, headers: { 'transfer-encoding': 'chunked' } }),
    'rate_limited'
  )
  assertSpecError(
    t,
    await client.request({ method: 'POST', path: '/echo', body: {}, headers: { 'content-type': 'text/plain' } }),
    'rate_limited'
  )
})

t.test('OT-A05 a PUT or POST without any body, typed or not, is bad_request', async (t) => {
  const { fake } = await setup(t)
  for (const head of ['Content-Length: 0\r\n', '', 'Content-Length: 0\r\nContent-Type: application/json\r\n']) {
    const raw = parseRawResponse(await rawExchange(fake.socketPath,
      `POST /a/v1/echo HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${fake.token}\r\n${head}Connection: close\r\n\r\n`))
    t.equal(raw.status, 400, JSON.stringify(head))
    t.equal(raw.json?.error?.code, 'bad_request')
  }
})

t.test(
  'OT-015 OT-A05 no header can hide: an Origin after 2000 others still counts; two Hosts or two Authorizations are refused',
  async (t) => {
    const { fake } = await setup(t)
    const head = (extra: string) =>
      `GET /a/v1/info HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${fake.token}\r\n${extra}Connection: close\r\n\r\n`
    const fillers = Array.from({ length: 2000 }, (_, i) => `X-F${i}: 1\r\n`).join('')
    t.equal(
      parseRawResponse(await rawExchange(fake.socketPath, head(`${fillers}Origin: http://evil.example\r\n`))).json
        ?.error?.code,
      'forbidden_origin'
    )
    const twoHosts = parseRawResponse(await rawExchange(fake.socketPath, head('Host: evil.example\r\n')))
    t.same([twoHosts.status, twoHosts.json?.error?.code], [400, 'bad_request'])
    const twoAuth = parseRawResponse(await rawExchange(fake.socketPath, head('Authorization: Bearer other\r\n')))
    t.same([twoAuth.status, twoAuth.json?.error?.code], [401, 'unauthorized'])
  }
)

t.test(
  'OT-024 OT-A02 a refused body is never invited or swallowed: no 100 Continue before 413, and the connection closes',
  async (t) => {
    const { fake } = await setup(t)
    const raw = await rawExchange(
      fake.socketPath,
      `POST /a/v1/echo HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${fake.token}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\nExpect: 100-continue\r\n\r\n`
    )
    t.notMatch(raw, /100 Continue/)
    const reply = parseRawResponse(raw)
    t.equal(reply.status, 413)
    t.equal(reply.headers.connection, 'close')
    const accepted = await rawExchange(
      fake.socketPath,
      `POST /a/v1/echo HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${fake.token}\r\nContent-Type: application/json\r\nContent-Length: 2\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n{}`
    )
    t.match(accepted, /^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 200/, 'a request that passes its checks is invited')
  }
)

t.test(
  'OT-149 OT-153 odd methods and targets: CONNECT, WebDAV methods, broken %-escapes all answer in JSON',
  async (t) => {
    const { fake, client } = await setup(t)
    const connect = parseRawResponse(
      await rawExchange(fake.socketPath, 'CONNECT localhost:80 HTTP/1.1\r\nHost: localhost\r\n\r\n')
    )
    t.same([connect.status, connect.json?.error?.code], [400, 'bad_request'])
    for (const method of ['PROPFIND', 'SEARCH', 'TRACE', 'LOCK', 'QUERY']) {
      const reply = await client.request({ method, path: '/info' })
      t.equal(reply.status, 405, `${method} is 405`)
      t.equal(reply.headers.allow, 'GET')
    }
    for (const target of ['/a/v1/%E0%A4%A', '/a/v1/info%ZZ']) {
      assertSpecError(t, await client.request({ target }), 'bad_request')
    }
  }
)

t.test('OT-149 a valid request pipelined before garbage still gets its answer, then the JSON 400', async (t) => {
  const { fake } = await setup(t)
  const raw = await rawExchange(fake.socketPath,
    `GET /a/v1/info HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${fake.token}\r\n\r\nGARBAGE\r\n\r\n`)
  t.match(raw, /^HTTP\/1\.1 200 OK/)
  t.match(raw, /HTTP\/1\.1 400 Bad Request[\s\S]*"code":"bad_request"/)
})

/** Writes `pieces` on one connection, 20 ms apart, and resolves to all that came back once the server closed. */
function piecewise (socketPath: string, pieces: Buffer[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ path: socketPath })
    const got: Buffer[] = []
    socket.on('data', (chunk) => got.push(chunk))
    socket.on('close', () => { resolve(Buffer.concat(got).toString('utf8')) })
    socket.on('error', reject)
    let i = 0
    const next = (): void => {
      socket.write(pieces[i++]!)
      if (i < pieces.length) setTimeout(next, 20)
    }
    next()
  })
}

t.test('OT-154 a body that comes in pieces is read whole: a character split between them, bad UTF-8 across them', async (t) => {
  // a fake without a tap reads the body's chunks itself (readBodyBytes) rather than through fastify's copy.
  const { fake, client } = await setup(t)
  const head = (length: number) => Buffer.from('POST /a/v1/echo HTTP/1.1\r\nHost: localhost\r\n' +
    `Authorization: Bearer ${fake.token}\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n` +
    'Connection: close\r\n\r\n')
  const body = Buffer.from('{"word":"café","n":[1,2,3]}')
  const cut = body.indexOf(0xc3) + 1 // between the two bytes of é
  const pieces = [head(body.length), body.subarray(0, cut), body.subarray(cut)]
  const whole = parseRawResponse(await piecewise(fake.socketPath, pieces))
  const sent = { word: 'café', n: [1, 2, 3] }
  t.same([whole.status, whole.json], [200, { echoed: sent }], 'three pieces, é split: parsed as sent')
  const bad = Buffer.from('{"word":"caf\xc3","x":1}', 'latin1')
  const lead = bad.indexOf(0xc3) + 1 // the first piece ends on the lone lead byte, as it would on a split character
  const split = parseRawResponse(
    await piecewise(fake.socketPath, [head(bad.length), bad.subarray(0, lead), bad.subarray(lead)])
  )
  t.same([split.status, split.json?.error?.code], [400, 'bad_request'], 'a lone lead byte across pieces is not UTF-8')
  // A client that leaves half-way through its body gets nothing, and takes nothing of the fake with it.
  await new Promise<void>((resolve) => {
    const socket = connect({ path: fake.socketPath }, () => {
      socket.write(Buffer.concat([head(body.length), body.subarray(0, 5)]))
      setTimeout(() => { socket.destroy(); resolve() }, 20)
    })
  })
  const after = await client.request({ method: 'POST', path: '/echo', body: { still: true } })
  t.same([after.status, after.json], [200, { echoed: { still: true } }], 'the fake serves on')
})
