import fc from 'fast-check'
import { spec } from '../../../../../src/spec/orbtile.js'
import { adapterId, defineCase, type ConformanceCase } from '../../orbtile-case.js'
import { hueArbitrary } from '../../arbitrary-registration.js'
import { expectEqual, expectStatus, expectThat } from '../../expect.js'
import { expectInvalid, fieldUnder, hasNote, pushWarned, schemaRule } from './expectations.js'
import { lease, put, withLeases, withPalette } from './registration-support.js'
import { acceptedPalette, expectedBaseHue, huesOf, overridden, userHue } from './palette-support.js'

/** The palette (OT-071..088). */
export const paletteCases: ConformanceCase[] = [
  defineCase(
    withLeases({
      id: 'OT-071',
      title: 'palette.baseHue is a number with 0 <= h < 360',
      level: 'required',
      async run (ctx) {
        for (const baseHue of [0, 359.99]) await acceptedPalette(ctx, { baseHue }, `baseHue ${baseHue}`)
        const id = adapterId(ctx, 'hue')
        for (const baseHue of [360, -0.1, '200', null]) {
          expectInvalid(
            await put(ctx, id, withPalette({ baseHue })),
            `baseHue ${JSON.stringify(baseHue)}`,
            'palette.baseHue'
          )
        }
        const hue = fc.oneof(
          hueArbitrary,
          fc.double({ min: -720, max: 720, noNaN: true }),
          fc.constantFrom(360, 360.0001, -1e-9, 1e9, '10', true, [], {})
        )
        await schemaRule(ctx, hue, (baseHue) => withPalette({ baseHue }), 'palette')
      }
    })
  ),
  defineCase(
    withLeases({
      id: 'OT-072',
      title: 'a baseHue in the reserved arc 345.9..75.9 moves to the nearer edge, reported in warnings',
      level: 'required',
      async run (ctx) {
        const table: Array<[number, number]> = [
          [346, 345.9],
          [359, 345.9],
          [0, 345.9],
          [20, 345.9],
          [30, 345.9],
          [31, 75.9],
          [40, 75.9],
          [75, 75.9],
          [76, 76],
          [100, 100],
          [200, 200],
          [345, 345]
        ]
        const check = async (sent: number, resolved: number): Promise<void> => {
          const reply = await acceptedPalette(ctx, { baseHue: sent }, `baseHue ${sent}`)
          expectEqual(reply.json.adapter.resolvedBaseHue, resolved, `resolvedBaseHue for baseHue ${sent}`)
          const warned = pushWarned(reply, 'baseHue')
          expectThat(
            (warned !== undefined) === (resolved !== sent),
            `baseHue ${sent}: a push warning exactly when it moves`,
            resolved !== sent ? 'a warning naming baseHue' : 'none',
            reply.json.warnings
          )
        }
        for (const [sent, resolved] of table) await check(sent, resolved)
        // Exact midpoints are left out (OT-A12): the ledger asks tests to avoid them.
        await fc.assert(
          fc.asyncProperty(
            hueArbitrary.filter((h) => h !== 30.9),
            async (h) => {
              await check(h, expectedBaseHue(h))
            }
          ),
          ctx.fc({ endOnFailure: true })
        )
      }
    })
  ),
  defineCase(
    withLeases({
      id: 'OT-073',
      title: 'without an override, adapter.palette.baseHue is the registered 10 and resolvedBaseHue the pushed 345.9',
      level: 'required',
      async run (ctx) {
        const l = await lease(ctx, withPalette({ baseHue: 10 }), { label: 'echo' })
        expectEqual(huesOf(l.reply), { baseHue: 10, resolvedBaseHue: 345.9 }, 'the reply for baseHue 10')
      }
    })
  ),
  defineCase(
    withLeases({
      id: 'OT-075',
      title: 'palette.chroma is optional, 0.5 <= c <= 1.3',
      level: 'required',
      async run (ctx) {
        const id = adapterId(ctx, 'chroma')
        for (const chroma of [0.49, 1.31]) {
          expectInvalid(await put(ctx, id, withPalette({ baseHue: 200, chroma })), `chroma ${chroma}`, 'palette.chroma')
        }
        for (const chroma of [0.5, 1.3]) await acceptedPalette(ctx, { baseHue: 200, chroma }, `chroma ${chroma}`)
        const chroma = fc.oneof(
          { weight: 3, arbitrary: fc.noBias(fc.integer({ min: 3000, max: 16000 })).map((n) => n / 10_000) },
          { weight: 1, arbitrary: fc.constantFrom(0.5, 1.3, 0.4999999, 1.3000001, '1', null) }
        )
        await schemaRule(ctx, chroma, (value) => withPalette({ baseHue: 200, chroma: value }), 'palette')
        ctx.note('how chroma scales the colours is display-only')
      }
    })
  ),
  defineCase(
    withLeases({
      id: 'OT-076',
      title: 'palette.lightness is optional, -0.05 <= l <= 0.05',
      level: 'required',
      async run (ctx) {
        const id = adapterId(ctx, 'light')
        for (const lightness of [-0.051, 0.051]) {
          expectInvalid(
            await put(ctx, id, withPalette({ baseHue: 200, lightness })),
            `lightness ${lightness}`,
            'palette.lightness'
          )
        }
        for (const lightness of [-0.05, 0.05]) {
          await acceptedPalette(ctx, { baseHue: 200, lightness }, `lightness ${lightness}`)
        }
        const lightness = fc.oneof(
          { weight: 3, arbitrary: fc.noBias(fc.integer({ min: -800, max: 800 })).map((n) => n / 10_000) },
          { weight: 1, arbitrary: fc.constantFrom(-0.05, 0.05, -0.0500001, 0.0500001, '0', null) }
        )
        await schemaRule(ctx, lightness, (value) => withPalette({ baseHue: 200, lightness: value }), 'palette')
        ctx.note('how lightness moves the lit stops is display-only')
      }
    })
  ),
  defineCase(
    withLeases({
      id: 'OT-077',
      title: 'palette.attentionHue is optional, 0 <= h < 360',
      level: 'required',
      async run (ctx) {
        const id = adapterId(ctx, 'att')
        expectInvalid(
          await put(ctx, id, withPalette({ baseHue: 200, attentionHue: 360 })),
          'attentionHue 360',
          'palette.attentionHue'
        )
        for (const attentionHue of [0, 359.99]) {
          await acceptedPalette(ctx, { baseHue: 200, attentionHue }, `attentionHue ${attentionHue}`)
        }
        const hue = fc.oneof(
          hueArbitrary,
          fc.double({ min: -720, max: 720, noNaN: true }),
          fc.constantFrom(360, -0.0001, '30', null)
        )
        await schemaRule(ctx, hue, (attentionHue) => withPalette({ baseHue: 200, attentionHue }), 'palette')
      }
    })
  ),
  defineCase(
    withLeases({
      id: 'OT-078',
      title:
        'attention hues in and around 18.9..55 are accepted, the sent value kept in the reply (where it lands: OT-A12)',
      level: 'required',
      async run (ctx) {
        for (const attentionHue of [19, 30, 40, 54, 16, 72, 330]) {
          const reply = await acceptedPalette(ctx, { baseHue: 200, attentionHue }, `attentionHue ${attentionHue}`)
          expectEqual(
            reply.json.adapter.palette?.attentionHue,
            attentionHue,
            `adapter.palette.attentionHue for ${attentionHue}`
          )
        }
        ctx.note("the pushed attention hue shows only in colours (display) and in OT-A12's warning")
      }
    })
  ),
  defineCase(
    withLeases({
      id: 'OT-079',
      title:
        'a base hue whose derived waiting colour is calm (180, 150), with no attentionHue, gets an attention: note',
      level: 'required',
      async run (ctx) {
        for (const baseHue of [150, 180]) {
          const reply = await acceptedPalette(ctx, { baseHue }, `baseHue ${baseHue}`)
          expectThat(
            hasNote(reply, 'attention:'),
            `baseHue ${baseHue}: an attention: note`,
            'attention: …',
            reply.json.warnings
          )
        }
      }
    })
  ),
  defineCase(
    withLeases({
      id: 'OT-080',
      title: 'every attentionHue in the alarm arc 280 -> 0 -> 76 gets a proximity: note, and the registration succeeds',
      level: 'required',
      async run (ctx) {
        const check = async (attentionHue: number): Promise<void> => {
          const reply = await acceptedPalette(ctx, { baseHue: 200, attentionHue }, `attentionHue ${attentionHue}`)
          expectThat(
            hasNote(reply, 'proximity:'),
            `attentionHue ${attentionHue}: a proximity: note`,
            'proximity: …',
            reply.json.warnings
          )
        }
        for (const attentionHue of [330, 73, 17]) await check(attentionHue)
        const alarm = fc
          .oneof(fc.integer({ min: 2_800_000, max: 3_599_999 }), fc.integer({ min: 0, max: 760_000 }))
          .map((n) => n / 10_000)
        await fc.assert(fc.asyncProperty(alarm, check), ctx.fc({ endOnFailure: true }))
      }
    })
  ),
  defineCase(
    withLeases({
      id: 'OT-082',
      title: 'palette.states is null or a StateColours object; {} is invalid_field on palette.states',
      level: 'required',
      async run (ctx) {
        await acceptedPalette(ctx, { baseHue: 200, states: null }, 'states null')
        expectInvalid(
          await put(ctx, adapterId(ctx, 'states'), withPalette({ baseHue: 200, states: {} })),
          'states {}',
          'palette.states'
        )
      }
    })
  ),
  defineCase(
    withLeases({
      id: 'OT-083',
      title: 'StateColours: 1 to 10 entries of the ten state keys, values #rrggbb',
      level: 'required',
      async run (ctx) {
        const id = adapterId(ctx, 'states')
        for (const key of ['error', 'empty', 'glow']) {
          expectInvalid(
            await put(ctx, id, withPalette({ baseHue: 200, states: { [key]: '#000000' } })),
            `states key ${key}`,
            fieldUnder('palette.states')
          )
        }
        for (const value of ['#abc', '1a2b3c', '#1a2b3c4d', 'red', null]) {
          expectInvalid(
            await put(ctx, id, withPalette({ baseHue: 200, states: { idle: value } })),
            `states.idle ${JSON.stringify(value)}`,
            fieldUnder('palette.states')
          )
        }
        await acceptedPalette(ctx, { baseHue: 200, states: { idle: '#1a2B3c' } }, 'states.idle #1a2B3c')
        const keys = [...((spec.$defs.StateColours as any).propertyNames.enum as string[]), 'error', 'empty', 'glow']
        const value = fc.oneof(
          {
            weight: 4,
            arbitrary: fc.integer({ min: 0, max: 0xffffff }).map((n) => `#${n.toString(16).padStart(6, '0')}`)
          },
          { weight: 1, arbitrary: fc.constantFrom('#ABCDEF', '#abc', 'abcdef', '#12345g', '#1234567', null, 7) }
        )
        await schemaRule(
          ctx,
          fc.dictionary(fc.constantFrom(...keys), value, { minKeys: 0, maxKeys: 11 }),
          (states) => withPalette({ baseHue: 200, states }),
          'palette.states'
        )
      }
    })
  ),
  defineCase(
    withLeases({
      id: 'OT-085',
      title:
        "a user baseHue override is the reply's effective palette.baseHue; clearing it restores the registered one",
      level: 'required',
      needs: ['control'],
      async run (ctx) {
        const override = await userHue(ctx, overridden(), 'override')
        const over = await override(120)
        expectStatus(over, 200, 're-registering under the override')
        expectEqual(huesOf(over), { baseHue: 120, resolvedBaseHue: 120 }, 'the reply under a user hue 120')
        const cleared = await override(null)
        expectEqual(huesOf(cleared), { baseHue: 200, resolvedBaseHue: 200 }, 'the reply once the override is cleared')
        ctx.note('that the override replaces the state colours in what is drawn is display-only; the echo is OT-A13')
      }
    })
  ),
  defineCase(
    withLeases({
      id: 'OT-088',
      title: 'palette keeps no keys beyond baseHue, chroma, lightness, attentionHue and states (refused, or dropped)',
      level: 'required',
      async run (ctx) {
        const reply = await put(ctx, adapterId(ctx, 'palkey'), withPalette({ baseHue: 200, foo: 1, hue2: 3 }))
        if (reply.status === 200) {
          const echo = reply.json.adapter?.palette ?? {}
          expectThat(
            !('foo' in echo) && !('hue2' in echo),
            'the unknown palette keys are dropped',
            'a palette without foo and hue2',
            echo
          )
          ctx.note("accepted with the keys dropped (OT-A10's reading)")
        } else {
          expectInvalid(reply, 'unknown palette keys', fieldUnder('palette'))
          ctx.note("refused (the schema's reading)")
        }
      }
    })
  )
]
