import { adapterId, CaseSkip, defineCase, type CaseContext, type ConformanceCase } from '../../orbtile-case.js'
import type { ControlReply } from '../../../core/control.js'
import { expectEqual, expectError, expectSchema, expectStatus, expectThat } from '../../expect.js'
import type { Reply } from '../../transport.js'
import { expectInvalid, expectOk, fieldUnder, hasNote, pushWarned, warningsOf } from './expectations.js'
import {
  body, del, lease, NEW_SESSION, poll, postSession, put, TOKEN_PATTERN, withLeases, withPalette, type Lease
} from './registration-support.js'

/** A session `s1` asking approval `r1`, then the user allows it on the keypad: control's answer. */
async function allowOnKeypad (ctx: CaseContext, l: Lease): Promise<ControlReply> {
  const asking = { ...NEW_SESSION, approval: { id: 'r1', toolName: 'Bash', commandSummary: 'npm test' } }
  expectOk(await postSession(ctx, l, 's1', asking), 'a session with an approval')
  return await ctx.control!.decide(l.id, 'r1', { decision: 'allow' })
}

/** Keypad decisions and the reply's fields (OT-056..061). */
export const replyCases: ConformanceCase[] = [
  defineCase(
    withLeases({
      id: 'OT-056',
      title:
        'declaring approvals and questions does not enable keypad decisions: keypadDecisions false and no decision events',
      level: 'required',
      needs: ['control'],
      async run (ctx) {
        const l = await lease(ctx, body({ capabilities: ['approvals', 'questions'] }), { label: 'kp', allow: true })
        expectEqual(l.reply.json.keypadDecisions, false, 'keypadDecisions before the user opts in')
        const decided = await allowOnKeypad(ctx, l)
        ctx.note(`a keypad decision without the switch: control answered ${decided.status}`)
        const events = await poll(ctx, l)
        expectStatus(events, 200, 'polling events')
        const decisions = (events.json.events as Array<{ type: string }>).filter(
          (e) => e.type === 'approval' || e.type === 'question'
        )
        expectEqual(decisions, [], 'decision events while the user has not opted in')
      }
    })
  ),
  defineCase(
    withLeases({
      id: 'OT-057',
      title: 'keypadDecisions is a snapshot at registration; switching it off drops queued decisions',
      level: 'required',
      needs: ['control'],
      async run (ctx) {
        const l = await lease(ctx, body({ capabilities: ['approvals'] }), { label: 'snap', allow: true, keypad: false })
        expectEqual(l.reply.json.keypadDecisions, false, 'keypadDecisions with the switch off')
        await ctx.control!.user(l.id, { keypad: true })
        const on = await put(ctx, l.id, body({ capabilities: ['approvals'] }), l.token)
        expectEqual(on.json.keypadDecisions, true, 'keypadDecisions in the next reply after the user switched it on')
        const decided = await allowOnKeypad(ctx, l)
        expectThat(decided.status === 200, 'the user decides on the keypad', 200, decided)
        await ctx.control!.user(l.id, { keypad: false })
        const events = await poll(ctx, l)
        expectStatus(events, 200, 'polling events')
        expectEqual(
          (events.json.events as Array<{ type: string }>).filter((e) => e.type === 'approval'),
          [],
          'the queued decision after the switch went off'
        )
        const off = await put(ctx, l.id, body({ capabilities: ['approvals'] }), l.token)
        expectEqual(off.json.keypadDecisions, false, 'keypadDecisions in the next reply after the switch went off')
      }
    })
  ),
  defineCase(
    withLeases({
      id: 'OT-059',
      title: "the reply's adapter: id is the path id, palette the registered one, resolvedBaseHue after the push",
      level: 'required',
      async run (ctx) {
        for (const [baseHue, resolved] of [
          [200, 200],
          [10, 345.9],
          [300, 300]
        ] as const) {
          const l = await lease(ctx, withPalette({ baseHue, attentionHue: 300 }), { label: 'reply' })
          expectSchema(l.reply.json, 'RegistrationReply', 'the reply')
          expectEqual(l.reply.json.adapter.id, l.id, 'adapter.id')
          expectEqual(l.reply.json.adapter.palette?.baseHue, baseHue, 'adapter.palette.baseHue without a user override')
          expectEqual(l.reply.json.adapter.palette?.attentionHue, 300, 'adapter.palette.attentionHue')
          expectEqual(l.reply.json.adapter.resolvedBaseHue, resolved, `adapter.resolvedBaseHue for ${baseHue}`)
        }
      }
    })
  ),
  defineCase(
    withLeases({
      id: 'OT-060',
      title: 'when enabled is false, reason is awaiting_user or disabled_by_user',
      level: 'required',
      async run (ctx) {
        const check = (reply: Reply, what: string): void => {
          if (reply.json.enabled === false) {
            expectThat(
              ['awaiting_user', 'disabled_by_user'].includes(reply.json.reason),
              `${what}: reason`,
              'awaiting_user or disabled_by_user',
              reply.json.reason
            )
          }
        }
        const l = await lease(ctx, body(), { label: 'why' })
        check(l.reply, 'a first registration')
        if (l.reply.json.enabled !== false) ctx.note('the first registration was enabled already')
        if (ctx.control !== undefined) {
          await ctx.control.user(l.id, { allowed: false })
          const off = await put(ctx, l.id, body(), l.token)
          expectEqual(off.json.enabled, false, 'enabled after the user disabled the adapter')
          check(off, 'after the user disabled it')
        }
      }
    })
  ),
  defineCase(
    withLeases({
      id: 'OT-061',
      title: "warnings is an array of strings with unknown fields, the reserved-arc push and the generator's notes",
      level: 'required',
      async run (ctx) {
        // A key no generator note could contain by chance (notes speak of "colour").
        const a = await lease(
          ctx,
          { name: 'orbtest conformance', orbtestColour: 'red', palette: { baseHue: 10, attentionHue: 330 } },
          { label: 'warn' }
        )
        const warnings = a.reply.json.warnings
        expectThat(
          Array.isArray(warnings) && warnings.every((w: unknown) => typeof w === 'string'),
          'warnings is an array of strings',
          'string[]',
          warnings
        )
        expectThat(
          warnings.some((w: string) => w.includes('orbtestColour')),
          'a warning names the unknown field orbtestColour',
          'orbtestColour',
          warnings
        )
        expectThat(
          pushWarned(a.reply, 'baseHue') !== undefined,
          'a warning reports the reserved-arc push of baseHue 10',
          'baseHue',
          warnings
        )
        expectThat(hasNote(a.reply, 'proximity:'), 'attentionHue 330 gets a proximity: note', 'proximity: …', warnings)
        const b = await lease(ctx, withPalette({ baseHue: 180 }), { label: 'warn' })
        expectThat(
          hasNote(b.reply, 'attention:'),
          'baseHue 180 without attentionHue gets an attention: note',
          'attention: …',
          b.reply.json.warnings
        )
      }
    })
  )
]

/** The decisions on the user's approval, whole replacement, hidden sessions and warnings (OT-A09..A11). */
export const replyDecisions: ConformanceCase[] = [
  defineCase(
    withLeases({
      id: 'OT-A09',
      title:
        'approval: awaiting_user first (with a token), allowed by the user, disabled_by_user; reason only when not enabled; kept across leases',
      level: 'decision',
      needs: ['control'],
      async run (ctx) {
        const a = await lease(ctx, body(), { label: 'a09' })
        expectEqual(
          [a.reply.status, a.reply.json.enabled, a.reply.json.reason],
          [200, false, 'awaiting_user'],
          'a first registration'
        )
        expectThat(
          TOKEN_PATTERN.test(a.reply.json.adapterToken),
          'a token is issued anyway',
          'a token',
          a.reply.json.adapterToken
        )
        await ctx.control!.user(a.id, { allowed: true })
        const allowed = await put(ctx, a.id, body(), a.token)
        expectEqual(
          [allowed.status, allowed.json.enabled, 'reason' in allowed.json],
          [200, true, false],
          'after the user allowed it: 200, enabled, no reason'
        )
        expectOk(await del(ctx, a.id, a.token), 'unregistering')
        const later = await put(ctx, a.id, body())
        expectEqual(later.json.enabled, true, 'a new lease of the allowed id')
        await ctx.control!.user(a.id, { allowed: false })
        const disabled = await put(ctx, a.id, body(), later.json.adapterToken)
        expectEqual(
          [disabled.status, disabled.json.enabled, disabled.json.reason],
          [200, false, 'disabled_by_user'],
          'after the user disabled it'
        )
      }
    })
  ),
  defineCase(
    withLeases({
      id: 'OT-A09.b',
      title: 'PUT replaces the whole registration: capabilities and urlSchemes left out return to none',
      level: 'decision',
      async run (ctx) {
        const a = await lease(ctx, body({ capabilities: ['tap'], urlSchemes: ['vscode'], tapBehavior: 'eventOnly' }), {
          label: 'replace'
        })
        expectStatus(await poll(ctx, a), 200, 'polling with the tap capability')
        expectOk(
          await postSession(ctx, a, 's1', { ...NEW_SESSION, openURL: 'vscode://file/x' }),
          'an openURL in a listed scheme'
        )
        expectStatus(await put(ctx, a.id, body(), a.token), 200, 're-registering with neither')
        expectError(await poll(ctx, a), 'events_not_supported', 'polling once capabilities are back to none')
        expectInvalid(
          await postSession(ctx, a, 's2', { ...NEW_SESSION, openURL: 'vscode://file/x' }),
          'an openURL once urlSchemes are back to none',
          'openURL'
        )
      }
    })
  ),
  defineCase(
    withLeases({
      id: 'OT-A09.c',
      title: 'sessions of an adapter the user has not enabled are accepted with visible: false',
      level: 'decision',
      async run (ctx) {
        const a = await lease(ctx, body(), { label: 'hidden' })
        if (a.reply.json.enabled !== false) throw new CaseSkip('a first registration is enabled at once on this target')
        const reply = await postSession(ctx, a, 's1', NEW_SESSION)
        expectStatus(reply, 200, 'a session of an adapter awaiting the user')
        expectEqual(reply.json.session?.visible, false, 'session.visible')
      }
    })
  ),
  defineCase(
    withLeases({
      id: 'OT-A10',
      title:
        'unknown keys in palette, glyph and icon are dropped and named by dotted path; states keys and an empty icon stay refused',
      level: 'decision',
      async run (ctx) {
        const a = await lease(
          ctx,
          {
            name: 'orbtest conformance',
            orbtestColour: 'red',
            palette: { baseHue: 200, orbtestFoo: 1 },
            glyph: { symbol: 'x', orbtestExtra: true },
            icon: { appBundleId: 'com.apple.Terminal', orbtestSize: 3 }
          },
          { label: 'a10' }
        )
        for (const path of ['orbtestColour', 'palette.orbtestFoo', 'glyph.orbtestExtra', 'icon.orbtestSize']) {
          expectThat(
            warningsOf(a.reply).some((w) => w.includes(path)),
            `a warning names ${path}`,
            path,
            a.reply.json.warnings
          )
        }
        expectThat(
          !('orbtestFoo' in a.reply.json.adapter.palette),
          'palette.orbtestFoo is dropped from the echo',
          'no orbtestFoo',
          a.reply.json.adapter.palette
        )
        const id = adapterId(ctx, 'a10')
        expectInvalid(
          await put(ctx, id, withPalette({ baseHue: 200, states: { glow: '#000000' } })),
          'an unknown palette.states key',
          'palette.states.glow'
        )
        expectInvalid(
          await put(ctx, id, body({ icon: { size: 3 } })),
          'an icon with neither png nor appBundleId',
          fieldUnder('icon')
        )
      }
    })
  ),
  defineCase(
    withLeases({
      id: 'OT-A11',
      title: 'every warning is "<kind>: <text>" with a known kind',
      level: 'decision',
      async run (ctx) {
        const a = await lease(
          ctx,
          {
            name: 'orbtest conformance',
            extra: 1,
            palette: { baseHue: 10, attentionHue: 40, states: { idle: '#000000' } }
          },
          { label: 'a11' }
        )
        const warnings = warningsOf(a.reply)
        const kinds =
          /^(unknown-field|reserved-arc|attention-arc|attention|proximity|gamut|salience|wcag|tool-kind): \S/
        expectThat(
          warnings.length >= 3 && warnings.every((w) => kinds.test(w)),
          'every warning has a known kind',
          kinds.source,
          warnings
        )
        for (const kind of ['unknown-field: extra', 'reserved-arc:', 'attention-arc:']) {
          expectThat(
            warnings.some((w) => w.startsWith(kind)),
            `a warning starts with ${kind}`,
            kind,
            warnings
          )
        }
      }
    })
  )
]
