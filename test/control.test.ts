import { existsSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import fc from 'fast-check'
import { Ajv2020 } from 'ajv/dist/2020.js'
import addFormatsModule from 'ajv-formats'
import { startOrbtest } from '../src/orbtest.js'
import { fcParams } from './helpers/fc.js'
import { readDiscovery, scratch } from './helpers/fake.js'
import type { Teardown } from './helpers/fake.js'
import { httpRequest, SocketClient } from './helpers/client.js'
import { assertSpecError } from './helpers/assert.js'

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020

async function setup (tt: Teardown, clockMode: 'real' | 'virtual' = 'virtual') {
  const dir = scratch(tt)
  const fakes = await startOrbtest({
    orbtile: { discoveryPath: join(dir, 'd.json'), socketPath: join(dir, 'o.sock') },
    orb: { port: 0 },
    controlPort: 0,
    clockMode,
    clockStart: Date.UTC(2026, 10, 30)
  })
  tt.teardown(() => fakes.close())
  const url = fakes.control.url
  const call = (method: string, path: string, body?: unknown, headers?: Record<string, string>) =>
    httpRequest(url, { method, path, body, headers })
  return { fakes, url, call, orbtile: fakes.orbtile! }
}

t.test('CTL-01 listens on loopback only, and refuses a Host that is not a loopback name', async (t) => {
  const { fakes, call } = await setup(t)
  t.match(fakes.control.url, /^http:\/\/127\.0\.0\.1:\d+$/)
  for (const host of [
    'localhost',
    `localhost:${fakes.control.port}`,
    '127.0.0.1',
    `127.0.0.2:${fakes.control.port}`,
    '[::1]'
  ]) {
    t.equal((await call('GET', '/control/clock', undefined, { host })).status, 200, `Host ${host} is served`)
  }
  for (const host of [
    'example.com',
    'evil.localhost.example',
    '10.0.0.1',
    '0.0.0.0',
    `attacker.test:${fakes.control.port}`,
    ''
  ]) {
    const reply = await call('GET', '/control/clock', undefined, { host })
    t.equal(reply.status, 403, `Host ${JSON.stringify(host)} is refused`)
    t.equal(reply.json?.error?.code, 'forbidden_host')
  }
})

t.test('CTL-02 any Origin but the server\'s own is refused', async (t) => {
  const { fakes, call } = await setup(t)
  const own = `http://127.0.0.1:${fakes.control.port}`
  t.equal((await call('GET', '/control/clock', undefined, { origin: own })).status, 200)
  t.equal(
    (await call('GET', '/control/clock', undefined, { origin: `http://localhost:${fakes.control.port}` })).status,
    200
  )
  await fc.assert(
    fc.asyncProperty(
      fc.oneof(
        fc.webUrl(),
        fc.constantFrom(
          'null',
          '',
          'http://127.0.0.1',
          `https://127.0.0.1:${fakes.control.port}`,
          `http://127.0.0.1:${fakes.control.port + 1}`
        )
      ),
      async (origin) => {
        const reply = await call('POST', '/control/reset', undefined, { origin })
        return reply.status === 403 && reply.json?.error?.code === 'forbidden_origin'
      }
    ),
    fcParams({ numRuns: 40 })
  )
})

t.test(
  'CTL-03 the OpenAPI document is served, is valid 3.1 JSON Schema throughout, and lists exactly the served routes',
  async (t) => {
    const { call, fakes } = await setup(t)
    const reply = await call('GET', '/control/openapi.json')
    t.equal(reply.status, 200)
    const doc = reply.json
    t.equal(doc.openapi, '3.1.0')
    const ajv = new Ajv2020({ strict: false })
    addFormats(ajv)
    t.doesNotThrow(() =>
      ajv
        .addSchema({ $id: 'doc', components: doc.components })
        .compile({ $ref: 'doc#/components/schemas/OrbtileState' })
    )
    const documented = Object.entries(doc.paths as Record<string, object>)
      .flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`))
      .sort()
    t.same(
      [...fakes.control.operations].sort(),
      documented,
      'every served operation is documented, and every documented one served'
    )
    t.equal((await call('GET', '/control/nothing')).json.error.code, 'not_found')
    const wrong = await call('DELETE', '/control/clock')
    t.equal(wrong.status, 405)
    t.equal(wrong.headers.allow, 'GET')
  }
)

t.test(
  'CTL-12 GET /control, the URL the banner prints, says what the server is and lists what it serves',
  async (t) => {
    const { call, fakes } = await setup(t)
    const reply = await call('GET', '/control')
    t.equal(reply.status, 200)
    t.match(reply.headers['content-type'], /^application\/json/)
    t.same(reply.json.fakes, { orbtile: true, orb: true })
    t.equal(reply.json.name, 'orbtest control')
    t.equal(reply.json.clock, 'virtual')
    t.equal(reply.json.openapi, '/control/openapi.json')
    t.same(reply.json.operations, [...fakes.control.operations].sort())
    t.ok(reply.json.operations.includes('GET /control'), 'it lists itself')
  }
)

t.test('CTL-04 the state snapshot matches its documented schema and never holds the token', async (t) => {
  const { call, orbtile, url } = await setup(t)
  const doc = (await httpRequest(url, { path: '/control/openapi.json' })).json
  const ajv = new Ajv2020({ strict: false })
  addFormats(ajv)
  const validate = ajv
    .addSchema({ $id: 'doc', components: doc.components })
    .compile({ $ref: 'doc#/components/schemas/OrbtileState' })
  const reply = await call('GET', '/control/orbtile/state')
  t.equal(reply.status, 200)
  t.ok(validate(reply.json), JSON.stringify(validate.errors))
  t.notMatch(reply.text, orbtile.token)
  t.equal(reply.json.discovery.socketPath, orbtile.socketPath)
})

t.test('OT-A03 control: PUT /control/orbtile/api switches the API, and closes the socket on request', async (t) => {
  const { call, orbtile } = await setup(t)
  const client = new SocketClient(orbtile.socketPath, orbtile.token)
  t.teardown(() => client.close())
  t.same((await call('PUT', '/control/orbtile/api', { enabled: false })).json, { enabled: false, listening: true })
  assertSpecError(t, await client.request(), 'api_disabled')
  t.same((await call('PUT', '/control/orbtile/api', { enabled: false, listening: false })).json, {
    enabled: false,
    listening: false
  })
  t.notOk(existsSync(orbtile.discoveryPath))
  t.same((await call('PUT', '/control/orbtile/api', { enabled: true })).json, { enabled: true, listening: true })
  t.ok(existsSync(orbtile.discoveryPath))
  for (const bad of [{}, { enabled: 'yes' }, { enabled: true, extra: 1 }, [], 'x']) {
    const reply = await call('PUT', '/control/orbtile/api', bad)
    t.equal(reply.status, 400, `refuses ${JSON.stringify(bad)}`)
    t.equal(reply.json.error.code, 'bad_request')
  }
  t.equal(
    (await call('PUT', '/control/orbtile/api', '{', { 'content-type': 'application/json' })).json.error.code,
    'bad_request'
  )
})

t.test(
  'OT-023 control: token regeneration and restart rewrite the discovery file and never return the token',
  async (t) => {
    const { call, orbtile } = await setup(t)
    const before = readDiscovery(orbtile.discoveryPath).token
    const regenerated = await call('POST', '/control/orbtile/token/regenerate')
    t.equal(regenerated.status, 200)
    t.same(regenerated.json, {
      discoveryPath: orbtile.discoveryPath,
      socketPath: orbtile.socketPath,
      basePath: '/a/v1'
    })
    const middle = readDiscovery(orbtile.discoveryPath).token
    t.not(middle, before)
    const restarted = await call('POST', '/control/orbtile/restart')
    t.equal(restarted.status, 200)
    t.not(readDiscovery(orbtile.discoveryPath).token, middle)
    t.notMatch(regenerated.text + restarted.text, new RegExp(`${before}|${middle}|${orbtile.token}`))
    t.equal((await call('GET', '/control/orbtile/state')).json.restarts, 1)
  }
)

t.test('CTL-05 the clock reads and advances when virtual; advancing a real clock is 409', async (t) => {
  const { call, fakes } = await setup(t)
  const start = Date.UTC(2026, 10, 30)
  t.same((await call('GET', '/control/clock')).json, {
    mode: 'virtual',
    now: start,
    iso: '2026-11-30T00:00:00.000Z',
    pendingTimers: 0
  })
  let fired = 0
  fakes.clock.setTimer(5000, () => fired++)
  const advanced = await call('POST', '/control/clock/advance', { ms: 5000 })
  t.equal(advanced.json.now, start + 5000)
  t.equal(fired, 1, 'timers on the shared clock fire')
  for (const bad of [{ ms: -1 }, { ms: 1.5 }, { ms: '5' }, {}]) {
    t.equal((await call('POST', '/control/clock/advance', bad)).status, 400, `refuses ${JSON.stringify(bad)}`)
  }
  const real = await setup(t, 'real')
  const refused = await real.call('POST', '/control/clock/advance', { ms: 1 })
  t.equal(refused.status, 409)
  t.equal(refused.json.error.code, 'clock_not_virtual')
  t.equal((await real.call('GET', '/control/clock')).json.mode, 'real')
})

t.test('CTL-06 reset brings the API back on and refills the buckets, keeping the token', async (t) => {
  const { call, orbtile } = await setup(t)
  const client = new SocketClient(orbtile.socketPath, orbtile.token)
  t.teardown(() => client.close())
  for (let i = 0; i < 61; i++) await client.request()
  await call('PUT', '/control/orbtile/api', { enabled: false, listening: false })
  t.same((await call('POST', '/control/reset')).json, { reset: true })
  const fresh = new SocketClient(orbtile.socketPath, readDiscovery(orbtile.discoveryPath).token)
  t.teardown(() => fresh.close())
  t.equal(fresh.token, orbtile.token)
  t.equal((await fresh.request()).status, 200)
  t.same(
    (await call('GET', '/control/orbtile/state')).json.rateLimitBuckets.map((b: { tokens: number }) => b.tokens),
    [59]
  )
})

t.test('CTL-07 the in-process API drives the same fake (fake.control.advance)', async (t) => {
  const { orbtile } = await setup(t)
  const before = orbtile.control.clock().now
  const after = await orbtile.control.advance(5000)
  t.equal(after.now, before + 5000)
  t.equal(orbtile.control.state().clock.now, before + 5000)
})

t.test(
  "CTL-08 bytes no route sees still get the control API's JSON: no Host, garbage, a broken %-escape",
  async (t) => {
    const { fakes } = await setup(t)
    const { connect } = await import('node:net')
    const exchange = (bytes: string) =>
      new Promise<string>((resolve, reject) => {
        const socket = connect({ host: '127.0.0.1', port: fakes.control.port })
        let out = ''
        socket.on('data', (chunk) => {
          out += chunk
        })
        socket.on('close', () => resolve(out))
        socket.on('error', reject)
        socket.setTimeout(2000, () => socket.destroy())
        socket.write(bytes)
      })
    const noHost = await exchange('GET /control/clock HTTP/1.1\r\nConnection: close\r\n\r\n')
    t.match(noHost, /^HTTP\/1\.1 403[\s\S]*"code":"forbidden_host"/)
    const garbage = await exchange('GARBAGE\r\n\r\n')
    t.match(garbage, /^HTTP\/1\.1 400[\s\S]*"code":"bad_request"/)
    const badUrl = await exchange('GET /control/clock%ZZ HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n')
    t.match(badUrl, /^HTTP\/1\.1 400[\s\S]*"code":"bad_request"/)
  }
)

t.test('CTL-09 the typed in-process twin: reset, clockState, advance', async (t) => {
  const { fakes, orbtile } = await setup(t)
  const before = fakes.clockState().now
  t.equal((await fakes.advance(1000)).now, before + 1000)
  await orbtile.control.setApi({ enabled: false })
  await fakes.reset()
  t.equal(orbtile.control.state().api.enabled, true)
  t.equal(orbtile.control.state().restarts, 0)
})

t.test(
  'OT-A09 control: DELETE /control/orbtile/adapters/{id} forgets an id the fake no longer serves; 409 while leased, 404 when unknown',
  async (t) => {
    const { call, fakes } = await setup(t)
    const orbtile = fakes.orbtile!
    const client = new SocketClient(orbtile.socketPath, orbtile.token)
    t.teardown(() => client.close())
    t.equal(
      (await call('PUT', '/control/orbtile/adapters/com.example.forget/user', { allowed: true, keypad: true })).status,
      200
    )
    const reg = await client.request({
      method: 'PUT',
      path: '/adapters/com.example.forget',
      body: { name: 'F', palette: { baseHue: 10 } }
    })
    t.equal(reg.status, 200)
    t.equal((await call('DELETE', '/control/orbtile/adapters/com.example.forget')).status, 409, 'a live lease')
    t.equal(
      (
        await client.request({
          method: 'DELETE',
          path: '/adapters/com.example.forget',
          headers: { 'x-orbtile-adapter-token': reg.json.adapterToken }
        })
      ).status,
      204
    )
    const forgot = await call('DELETE', '/control/orbtile/adapters/com.example.forget')
    t.same([forgot.status, forgot.json], [200, { forgotten: true }])
    t.equal(
      (await call('GET', '/control/orbtile/adapters/com.example.forget')).status,
      404,
      "the user's settings went with it"
    )
    t.equal((await call('DELETE', '/control/orbtile/adapters/com.example.forget')).status, 404)
  }
)
