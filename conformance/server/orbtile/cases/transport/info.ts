import fc from 'fast-check'
import { ACTIVITIES } from '../../../../../src/spec/orbtile.js'
import { defineCase, type ConformanceCase } from '../../orbtile-case.js'
import { expectEqual, expectError, expectSchema, expectStatus, expectThat } from '../../expect.js'
import { PROOF_VECTOR, proofOf } from '../../support-transport.js'
import { canonical, capped, infoBody, infoOk, LIMITS, NONCE, printable } from './transport-support.js'

/** GET /info and its proof (OT-034..040, OT-A29). */
export const infoCases: ConformanceCase[] = [
  defineCase({
    id: 'OT-034',
    title:
      "GET /info answers 200 with an Info the spec's schema accepts: server orbtile, api 1, version, activities, limits, apiMinor",
    level: 'required',
    async run (ctx) {
      const reply = await infoOk(ctx)
      expectThat(
        /^application\/json\b/.test(String(reply.headers['content-type'])),
        'GET /info: Content-Type',
        'application/json',
        reply.headers['content-type']
      )
      expectSchema(reply.json, 'Info', 'the /info body')
      const { server, api, version, activities, limits, apiMinor } = reply.json
      expectEqual({ server, api }, { server: 'orbtile', api: 1 }, 'server and api')
      expectThat(
        typeof version === 'string' && Array.isArray(activities) && typeof limits === 'object' && limits !== null,
        'version, activities and limits are there',
        'string, array, object',
        { version, activities, limits }
      )
      expectEqual(apiMinor, 2, 'apiMinor')
    }
  }),
  defineCase({
    id: 'OT-035',
    title: 'limits holds exactly the spec\'s nine values',
    level: 'required',
    async run (ctx) {
      const reply = await infoOk(ctx)
      expectThat(canonical(reply.json.limits) === canonical(LIMITS), 'the advertised limits', LIMITS, reply.json.limits)
    }
  }),
  defineCase({
    id: 'OT-036',
    title: 'every entry of activities is an Activity, and "empty" is never one',
    level: 'required',
    async run (ctx) {
      const { activities } = await infoBody(ctx)
      expectThat(Array.isArray(activities), 'activities is an array', 'an array', activities)
      const strangers = (activities as unknown[]).filter(
        (a) => typeof a !== 'string' || !ACTIVITIES.includes(a) || a === 'empty'
      )
      expectEqual(strangers, [], 'entries that are not an Activity, or "empty"')
    }
  }),
  defineCase({
    id: 'OT-037',
    title:
      "for any nonce of 16 to 64 hex characters, proof = hex(HMAC-SHA256(key: token, message: nonce)) (the ledger's vector holds)",
    level: 'required',
    async run (ctx) {
      expectEqual(
        proofOf(PROOF_VECTOR.token, PROOF_VECTOR.nonce),
        PROOF_VECTOR.proof,
        "the suite's own HMAC against the ledger's test vector"
      )
      const { token } = ctx.client.target
      await fc.assert(
        fc.asyncProperty(fc.stringMatching(/^[0-9a-f]{16,64}$/), async (nonce) => {
          const reply = await ctx.client.request({ path: '/info', headers: { 'x-orbtile-nonce': nonce } })
          expectStatus(reply, 200, `GET /info with X-Orbtile-Nonce ${nonce}`)
          expectSchema(reply.json, 'Info', 'the /info body')
          expectEqual(reply.json.proof, proofOf(token, nonce), `proof for nonce ${nonce}`)
        }),
        ctx.fc()
      )
    }
  }),
  defineCase({
    id: 'OT-038',
    title: 'without X-Orbtile-Nonce the reply has no proof',
    level: 'required',
    async run (ctx) {
      const reply = await infoOk(ctx)
      expectThat(!('proof' in reply.json), 'no nonce, no proof', 'no proof key', reply.json.proof)
    }
  }),
  defineCase({
    id: 'OT-040',
    title: 'apiMinor is an integer of at least 0, and this version answers 2',
    level: 'required',
    async run (ctx) {
      const { apiMinor } = await infoBody(ctx)
      expectThat(
        Number.isInteger(apiMinor) && apiMinor >= 0,
        'apiMinor is an integer >= 0',
        'an integer >= 0',
        apiMinor
      )
      expectEqual(apiMinor, 2, 'apiMinor of a v1.2 server')
    }
  }),
  defineCase({
    id: 'OT-A29',
    title:
      '/info details: all 11 activities in enum order; a nonce in any case is HMACed as sent; a malformed nonce is invalid_field X-Orbtile-Nonce; /info needs the bearer',
    level: 'decision',
    async run (ctx) {
      const { client } = ctx
      expectEqual((await infoBody(ctx)).activities, ACTIVITIES, 'activities')
      expectError(
        await client.request({ path: '/info', headers: { authorization: null } }),
        'unauthorized',
        'GET /info without Authorization'
      )
      await fc.assert(
        fc.asyncProperty(
          fc.stringMatching(/^[0-9A-Fa-f]{16,64}$/).filter((n) => /[A-F]/.test(n)),
          async (nonce) => {
            const reply = await client.request({ path: '/info', headers: { 'x-orbtile-nonce': nonce } })
            expectStatus(reply, 200, `nonce ${nonce}`)
            expectEqual(
              reply.json.proof,
              proofOf(client.target.token, nonce),
              `proof over the nonce exactly as sent (${nonce})`
            )
          }
        ),
        capped(ctx, 20)
      )
      for (const nonce of ['', '0011', 'x'.repeat(16), '0'.repeat(65), '0'.repeat(15), `${'0'.repeat(15)}g`]) {
        expectError(
          await client.request({ path: '/info', headers: { 'x-orbtile-nonce': nonce } }),
          'invalid_field',
          `nonce ${JSON.stringify(nonce)}`,
          'X-Orbtile-Nonce'
        )
      }
      await fc.assert(
        fc.asyncProperty(
          printable(0, 80).filter((s) => s === s.trim() && !NONCE.test(s)),
          async (nonce) => {
            expectError(
              await client.request({ path: '/info', headers: { 'x-orbtile-nonce': nonce } }),
              'invalid_field',
              `nonce ${JSON.stringify(nonce)}`,
              'X-Orbtile-Nonce'
            )
          }
        ),
        capped(ctx, 30)
      )
    }
  })
]
