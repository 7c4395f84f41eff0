import { createHmac } from 'node:crypto'
import t from 'tap'
import fc from 'fast-check'
import { validatorFor, spec } from '../src/spec/orbtile.js'
import { proofFor } from '../src/orbtile-mock/routes/info.js'
import { fcParams } from './helpers/fc.js'
import { startFake } from './helpers/fake.js'
import type { Teardown } from './helpers/fake.js'
import { SocketClient } from './helpers/client.js'
import { assertSpecError, specErrorProblem } from './helpers/assert.js'

const infoSchema = validatorFor('Info')

async function setup (tt: Teardown) {
  const fake = await startFake(tt, { rateLimit: 'off' })
  const client = new SocketClient(fake.socketPath, fake.token)
  tt.teardown(() => client.close())
  return { fake, client }
}

// An independent reference for the proof: node:crypto directly, per OT-A29's byte encodings.
const reference = (token: string, nonce: string) => createHmac('sha256', token).update(nonce).digest('hex')

t.test('OT-034 GET /info answers 200 with server, api, version, activities, limits and apiMinor; the spec\'s Info schema accepts it', async (t) => {
  const { client } = await setup(t)
  const reply = await client.request()
  t.equal(reply.status, 200)
  t.match(reply.headers['content-type'], /^application\/json/)
  t.ok(infoSchema(reply.json), `Info schema: ${JSON.stringify(infoSchema.errors)}`)
  t.equal(reply.json.server, 'orbtile')
  t.equal(reply.json.api, 1)
  t.type(reply.json.version, 'string')
})

t.test('OT-035 limits hold exactly the advertised values', async (t) => {
  const { client } = await setup(t)
  t.same((await client.request()).json.limits, {
    maxBodyBytes: 65536,
    maxSessionsPerAdapter: 32,
    maxAdapters: 8,
    requestsPerSecond: 20,
    burst: 60,
    maxPendingRequestsPerAdapter: 32,
    maxEvents: 128,
    maxRequestIDs: 4096,
    maxLongPolls: 4
  })
})

t.test('OT-036 OT-A29 activities lists every Activity value in enum order, and never "empty"', async (t) => {
  const { client } = await setup(t)
  const { activities } = (await client.request()).json
  t.same(activities, (spec.$defs.Activity as { enum: string[] }).enum)
  t.equal(activities.length, 11)
  t.notOk(activities.includes('empty'))
})

t.test('OT-040 OT-004 apiMinor is 2 while the discovery file stays at api 1 and /a/v1', async (t) => {
  const { fake, client } = await setup(t)
  t.equal((await client.request()).json.apiMinor, 2)
  t.equal(fake.basePath, '/a/v1')
})

t.test('OT-037 the ledger\'s proof vector holds', async (t) => {
  t.equal(proofFor('example-discovery-token', '00112233445566778899aabbccddeeff'),
    'd46aef2004d523d1f8184aa25bac27c6b4246da88c189cfa589ffcdfe8a534fc')
})

t.test('OT-037 OT-A29 any nonce of 16 to 64 hex characters, either case, gets proof = hex HMAC-SHA256(token, nonce)', async (t) => {
  const { fake, client } = await setup(t)
  await fc.assert(fc.asyncProperty(
    fc.stringMatching(/^[0-9A-Fa-f]{16,64}$/),
    async (nonce) => {
      const reply = await client.request({ headers: { 'x-orbtile-nonce': nonce } })
      const proof = reply.json?.proof
      return reply.status === 200 && infoSchema(reply.json) && proof === reference(fake.token, nonce)
    }
  ), fcParams({ numRuns: 50 }))
})

t.test('OT-038 without X-Orbtile-Nonce there is no proof', async (t) => {
  const { client } = await setup(t)
  t.notOk('proof' in (await client.request()).json)
})

t.test('OT-A29 a malformed nonce is invalid_field naming the header', async (t) => {
  const { client } = await setup(t)
  for (const nonce of ['', '0011', 'x'.repeat(16), '0'.repeat(65), '0'.repeat(15), '0'.repeat(15) + 'g']) {
    assertSpecError(
      t,
      await client.request({ headers: { 'x-orbtile-nonce': nonce } }),
      'invalid_field',
      'X-Orbtile-Nonce'
    )
  }
  await fc.assert(
    fc.asyncProperty(
      fc
        .string({ unit: 'grapheme-ascii', maxLength: 80 })
        .filter((s) => !/^[0-9A-Fa-f]{16,64}$/.test(s) && /^[\x21-\x7e]*$/.test(s)),
      async (nonce) =>
        specErrorProblem(
          await client.request({ headers: { 'x-orbtile-nonce': nonce } }),
          'invalid_field',
          'X-Orbtile-Nonce'
        ) === undefined
    ),
    fcParams({ numRuns: 50 })
  )
})

t.test('OT-A29 /info needs the bearer token too', async (t) => {
  const { client } = await setup(t)
  assertSpecError(t, await client.request({ headers: { authorization: null } }), 'unauthorized')
})
