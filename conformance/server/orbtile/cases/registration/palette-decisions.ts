import fc from 'fast-check'
import { defineCase, type ConformanceCase } from '../../orbtile-case.js'
import { hueArbitrary } from '../../arbitrary-registration.js'
import { expectEqual, expectThat } from '../../expect.js'
import { hasNote, pushWarned } from './expectations.js'
import { lease, once, withLeases, withPalette } from './registration-support.js'
import { acceptedPalette, expectedAttentionHue, huesOf, overridden, userHue } from './palette-support.js'

/** The decisions on the reserved arcs and the palette's echo (OT-A12, OT-A13). */
export const paletteDecisions: ConformanceCase[] = [
  defineCase(
    withLeases({
      id: 'OT-A12',
      title:
        'the arcs are open (edges stay, unwarned); the attention push is warned with its edge; no resolvedAttentionHue',
      level: 'decision',
      async run (ctx) {
        for (const baseHue of [345.9, 75.9]) {
          const reply = await once(ctx, withPalette({ baseHue }))
          expectEqual(reply.json.adapter?.resolvedBaseHue, baseHue, `resolvedBaseHue for the edge ${baseHue}`)
          expectEqual(pushWarned(reply, 'baseHue'), undefined, `a push warning for the edge ${baseHue}`)
        }
        for (const [sent, edge] of [
          [18.9, 18.9],
          [55, 55],
          [19, 18.9],
          [30, 18.9],
          [40, 55],
          [54, 55],
          [16, 16],
          [72, 72]
        ] as const) {
          const reply = await acceptedPalette(ctx, { baseHue: 200, attentionHue: sent }, `attentionHue ${sent}`)
          const warned = pushWarned(reply, 'attentionHue')
          if (edge === sent) expectEqual(warned, undefined, `a push warning for attentionHue ${sent}`)
          else {
            expectThat(
              warned !== undefined && warned.includes(String(edge)),
              `attentionHue ${sent}: a warning naming attentionHue and ${edge}`,
              `… attentionHue … ${edge}`,
              reply.json.warnings
            )
          }
          expectThat(
            !('resolvedAttentionHue' in reply.json.adapter),
            'no resolvedAttentionHue in the reply',
            'absent',
            reply.json.adapter
          )
        }
        await fc.assert(
          fc.asyncProperty(
            hueArbitrary.filter((h) => h !== 36.95),
            async (h) => {
              const reply = await once(ctx, withPalette({ baseHue: 200, attentionHue: h }))
              const edge = expectedAttentionHue(h)
              const warned = pushWarned(reply, 'attentionHue')
              expectThat(
                edge === h ? warned === undefined : warned?.includes(String(edge)) === true,
                `attentionHue ${h}: warned with ${edge} exactly when moved`,
                edge === h ? 'no push warning' : `a warning naming ${edge}`,
                reply.json.warnings
              )
            }
          ),
          ctx.fc({ endOnFailure: true })
        )
      }
    })
  ),
  defineCase(
    withLeases({
      id: 'OT-A12.b',
      title: 'under a user hue override, resolvedBaseHue is the pushed user hue',
      level: 'decision',
      needs: ['control'],
      async run (ctx) {
        const override = await userHue(ctx, withPalette({ baseHue: 200 }), 'a12')
        for (const [user, resolved] of [
          [20, 345.9],
          [50, 75.9],
          [120, 120]
        ] as const) {
          const expected = { baseHue: user, resolvedBaseHue: resolved }
          expectEqual(huesOf(await override(user)), expected, `the reply under a user hue ${user}`)
        }
      }
    })
  ),
  defineCase(
    withLeases({
      id: 'OT-A13',
      title:
        'the echo without an override: the registered palette, chroma 1 and lightness 0 filled in, states exactly as sent',
      level: 'decision',
      async run (ctx) {
        const states = { thinking: '#88bbee', waitingPermission: '#EE99CC' }
        const a = await lease(ctx, withPalette({ baseHue: 200, attentionHue: 330, states }), { label: 'a13' })
        expectEqual(
          a.reply.json.adapter.palette,
          { baseHue: 200, chroma: 1, lightness: 0, attentionHue: 330, states },
          'adapter.palette'
        )
        const b = await lease(ctx, withPalette({ baseHue: 120, chroma: 0.7, lightness: -0.02 }), { label: 'a13' })
        expectEqual(b.reply.json.adapter.palette, { baseHue: 120, chroma: 0.7, lightness: -0.02 }, 'adapter.palette')
        const c = await once(ctx, withPalette({ baseHue: 180, attentionHue: 300 }))
        expectThat(
          !hasNote(c, 'attention:'),
          'no attention: note once attentionHue is set',
          'no attention: note',
          c.json.warnings
        )
      }
    })
  ),
  defineCase(
    withLeases({
      id: 'OT-A13.b',
      title: "the echo under a user override: the user's baseHue, no states, the other fields as registered",
      level: 'decision',
      needs: ['control'],
      async run (ctx) {
        const override = await userHue(ctx, overridden(), 'a13b')
        const expected = { baseHue: 20, chroma: 0.8, lightness: 0 }
        expectEqual((await override(20)).json.adapter?.palette, expected, 'adapter.palette under a user hue 20')
      }
    })
  )
]
