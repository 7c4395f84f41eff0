import fc from 'fast-check'
import { spec, validatorFor } from '../../../../../src/spec/orbtile.js'
import { adapterId, defineCase, type ConformanceCase } from '../../orbtile-case.js'
import { arbitraryFor, PNG_SAMPLES, REFUSED_SCHEMES } from '../../arbitrary-registration.js'
import { errorProblem, expectError, expectSchema, expectStatus, expectThat } from '../../expect.js'
import type { Reply } from '../../transport.js'
import { expectAccepted, expectOk } from './expectations.js'
import { body, del, put, registrationValid, withLeases } from './registration-support.js'

const NAMESPACE = 'org.orbtest.conformance.'

const adapterIdValid = validatorFor('AdapterID')

/** Request, reply and the adapter id (OT-041..044). */
export const idCases: ConformanceCase[] = [
  defineCase(
    withLeases({
      id: 'OT-041',
      title:
        "every registration the spec's schema accepts is 200 with a RegistrationReply (adapter object, enabled boolean)",
      level: 'required',
      async run (ctx) {
        const valid = arbitraryFor(spec.$defs.AdapterRegistration!, spec, {
          'icon.png': fc.constantFrom(...PNG_SAMPLES)
        }).filter(
          (value) =>
            registrationValid(value) &&
            !((value as { urlSchemes?: string[] }).urlSchemes ?? []).some((s) => REFUSED_SCHEMES.includes(s))
        )
        await fc.assert(
          fc.asyncProperty(valid, async (value) => {
            const reply = await expectAccepted(ctx, value, `registering ${JSON.stringify(value).slice(0, 300)}`)
            expectSchema(reply.json, 'RegistrationReply', 'the reply')
            expectThat(
              typeof reply.json.adapter === 'object' &&
                reply.json.adapter !== null &&
                typeof reply.json.enabled === 'boolean',
              'the reply has adapter (object) and enabled (boolean)',
              'both',
              reply.json
            )
          }),
          ctx.fc({ endOnFailure: true })
        )
      }
    })
  ),
  defineCase(
    withLeases({
      id: 'OT-042',
      title: 'adapter ids are lowercase reverse-DNS with a dot, 3 to 64 bytes: exactly those are accepted',
      level: 'required',
      async run (ctx) {
        const refusedOk = (reply: Reply): boolean =>
          errorProblem(reply, 'invalid_field') === undefined || errorProblem(reply, 'reserved_id') === undefined
        for (const id of [
          'Com.Example',
          'com..x',
          'com.-x',
          'com.x-',
          '.com.x',
          'com.x.',
          'com_x.y',
          `${NAMESPACE}${'x'.repeat(65 - NAMESPACE.length)}`
        ]) {
          const reply = await put(ctx, encodeURIComponent(id), body())
          expectThat(
            refusedOk(reply),
            `adapter id ${JSON.stringify(id)} is refused`,
            'invalid_field (OT-A25)',
            `${reply.status} ${reply.text.slice(0, 300)}`
          )
        }
        const base = adapterId(ctx, 'len')
        const longest = `${base}.${'x'.repeat(64 - base.length - 1)}`
        await expectAccepted(ctx, body(), 'a plain id')
        const reply = await put(ctx, longest, body())
        expectStatus(reply, 200, 'a 64-byte id')
        expectOk(await del(ctx, longest, reply.json.adapterToken), "ending the 64-byte id's lease")
        // Ids under this suite's own namespace with a generated tail: dots, dashes, uppercase, underscores, lengths.
        const tail = fc.string({
          unit: fc.constantFrom('a', 'z', '0', '9', '-', '.', '_', 'A'),
          minLength: 0,
          maxLength: 46
        })
        await fc.assert(
          fc.asyncProperty(tail, async (rest) => {
            const id = `${NAMESPACE}${rest}`
            const reply = await put(ctx, id, body())
            if (adapterIdValid(id)) {
              expectStatus(reply, 200, `adapter id ${JSON.stringify(id)} (${id.length} bytes)`)
              await del(ctx, id, reply.json.adapterToken)
            } else {
              expectThat(
                refusedOk(reply),
                `adapter id ${JSON.stringify(id)} is refused`,
                'invalid_field (OT-A25)',
                `${reply.status} ${reply.text.slice(0, 300)}`
              )
            }
          }),
          ctx.fc({ endOnFailure: true })
        )
      }
    })
  ),
  defineCase(
    withLeases({
      id: 'OT-043',
      title: 'ids without a dot are reserved for the built-in adapters: reserved_id',
      level: 'required',
      async run (ctx) {
        for (const id of ['claude', 'codex', 'zcode', 'my-agent']) {
          expectError(await put(ctx, id, body()), 'reserved_id', `adapter id ${id}`)
        }
        const dotless = fc.stringMatching(/^[a-z0-9]+(-[a-z0-9]+)*$/).filter((id) => id.length >= 3 && id.length <= 64)
        await fc.assert(
          fc.asyncProperty(dotless, async (id) => {
            expectError(await put(ctx, id, body()), 'reserved_id', `adapter id ${id}`)
          }),
          ctx.fc({ endOnFailure: true })
        )
      }
    })
  ),
  defineCase(
    withLeases({
      id: 'OT-044',
      title: 'com.orbtile.* ids are reserved: reserved_id',
      level: 'required',
      async run (ctx) {
        for (const id of ['com.orbtile.test', 'com.orbtile.agent', 'com.orbtile.x-y.z']) {
          expectError(await put(ctx, id, body()), 'reserved_id', `adapter id ${id}`)
        }
        ctx.note("bare com.orbtile is OT-A25's question, not checked here")
      }
    })
  )
]
