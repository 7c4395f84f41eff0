import fc from 'fast-check'
import { adapterId, defineCase, type ConformanceCase } from '../../orbtile-case.js'
import { REFUSED_SCHEMES } from '../../arbitrary-registration.js'
import { expectEqual, expectStatus } from '../../expect.js'
import { expectAccepted, expectInvalid, expectOk, fieldUnder, schemaRule } from './expectations.js'
import {
  body, lease, NEW_SESSION, poll, postSession, put, registrationValid, tap, withLeases, type Lease
} from './registration-support.js'

/** Names, glyph, version, homepage, URL schemes, capabilities and tap behaviour (OT-045..055). */
export const fieldCases: ConformanceCase[] = [
  defineCase(
    withLeases({
      id: 'OT-045',
      title: 'name is required, 1 to 32 characters (code points)',
      level: 'required',
      async run (ctx) {
        const id = adapterId(ctx, 'name')
        expectInvalid(await put(ctx, id, { palette: { baseHue: 200 } }), 'no name', 'name')
        expectInvalid(await put(ctx, id, body({ name: '' })), 'name ""', 'name')
        expectInvalid(await put(ctx, id, body({ name: 'x'.repeat(33) })), '33 characters', 'name')
        await expectAccepted(ctx, body({ name: '🛰'.repeat(32) }), '32 code points of 4 bytes each')
        await schemaRule(
          ctx,
          fc.string({ unit: 'binary', minLength: 0, maxLength: 40 }),
          (name) => body({ name }),
          'name'
        )
      }
    })
  ),
  defineCase(
    withLeases({
      id: 'OT-046',
      title: 'palette is required: without it, invalid_field on palette',
      level: 'required',
      async run (ctx) {
        expectInvalid(await put(ctx, adapterId(ctx, 'nopal'), { name: 'orbtest conformance' }), 'no palette', 'palette')
      }
    })
  ),
  defineCase(
    withLeases({
      id: 'OT-047',
      title: 'shortName is optional, 1 to 12 characters',
      level: 'required',
      async run (ctx) {
        const id = adapterId(ctx, 'short')
        expectInvalid(await put(ctx, id, body({ shortName: '' })), 'shortName ""', 'shortName')
        expectInvalid(await put(ctx, id, body({ shortName: 'x'.repeat(13) })), '13 characters', 'shortName')
        await expectAccepted(ctx, body({ shortName: 'x'.repeat(12) }), '12 characters')
        await schemaRule(
          ctx,
          fc.string({ unit: 'binary', minLength: 0, maxLength: 16 }),
          (shortName) => body({ shortName }),
          'shortName'
        )
        ctx.note('that the badge shows shortName (or name) is display-only')
      }
    })
  ),
  defineCase(
    withLeases({
      id: 'OT-048',
      title: 'glyph needs symbol or monogram; symbol ^[a-z0-9.]{1,64}$, monogram 1 to 2 characters',
      level: 'required',
      async run (ctx) {
        for (const glyph of [{ symbol: 'terminal.fill' }, { monogram: 'Ab' }, { symbol: 'x', monogram: 'X' }]) {
          await expectAccepted(ctx, body({ glyph }), `glyph ${JSON.stringify(glyph)}`)
        }
        const id = adapterId(ctx, 'glyph')
        for (const glyph of [
          {},
          { symbol: 'Terminal' },
          { symbol: 'a b' },
          { symbol: 'a'.repeat(65) },
          { monogram: '' },
          { monogram: 'ABC' }
        ]) {
          expectInvalid(await put(ctx, id, body({ glyph })), `glyph ${JSON.stringify(glyph)}`, fieldUnder('glyph'))
        }
        const symbol = fc.oneof(
          { weight: 3, arbitrary: fc.stringMatching(/^[a-z0-9.]{1,64}$/) },
          {
            weight: 1,
            arbitrary: fc.string({ unit: fc.constantFrom('a', '.', 'A', ' ', '_'), minLength: 0, maxLength: 66 })
          }
        )
        const monogram = fc.oneof(
          { weight: 3, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 2 }) },
          { weight: 1, arbitrary: fc.string({ unit: 'binary', minLength: 0, maxLength: 4 }) }
        )
        await schemaRule(
          ctx,
          fc.record({ symbol, monogram }, { requiredKeys: [] }),
          (glyph) => body({ glyph }),
          'glyph'
        )
      }
    })
  ),
  defineCase(
    withLeases({
      id: 'OT-049',
      title: 'version is optional, a string of at most 32 characters',
      level: 'required',
      async run (ctx) {
        expectInvalid(
          await put(ctx, adapterId(ctx, 'ver'), body({ version: 'v'.repeat(33) })),
          '33 characters',
          'version'
        )
        await expectAccepted(ctx, body({ version: 'v'.repeat(32) }), '32 characters')
        await schemaRule(
          ctx,
          fc.oneof(fc.string({ minLength: 0, maxLength: 40 }), fc.constantFrom(1, null, true)),
          (version) => body({ version }),
          'version'
        )
      }
    })
  ),
  defineCase(
    withLeases({
      id: 'OT-050',
      title: 'homepage is optional: an https:// URI of at most 512 characters',
      level: 'required',
      async run (ctx) {
        const id = adapterId(ctx, 'home')
        // 'https://example.com/' is 20 characters.
        for (const homepage of [
          'http://example.com',
          '/relative',
          'example.com',
          `https://example.com/${'p'.repeat(493)}`
        ]) {
          expectInvalid(await put(ctx, id, body({ homepage })), `homepage ${homepage.slice(0, 40)}`, 'homepage')
        }
        const longest = `https://example.com/${'p'.repeat(492)}`
        await expectAccepted(ctx, body({ homepage: longest }), 'a 512-character https URI')
        const url = fc.oneof(
          fc.webUrl({ validSchemes: ['https', 'http'] }),
          fc.webUrl({ validSchemes: ['https'] }).map((u) => `${u}/${'q'.repeat(480)}`)
        )
        await schemaRule(ctx, url, (homepage) => body({ homepage }), 'homepage')
      }
    })
  ),
  defineCase(
    withLeases({
      id: 'OT-051',
      title: 'urlSchemes: at most 4 unique items, each ^[a-z][a-z0-9+.-]{0,31}$',
      level: 'required',
      async run (ctx) {
        const id = adapterId(ctx, 'schemes')
        for (const urlSchemes of [
          ['a', 'b', 'c', 'd', 'e'],
          ['vscode', 'vscode'],
          ['Vscode'],
          ['1abc'],
          ['-x'],
          ['a'.repeat(33)]
        ]) {
          expectInvalid(
            await put(ctx, id, body({ urlSchemes })),
            `urlSchemes ${JSON.stringify(urlSchemes)}`,
            fieldUnder('urlSchemes')
          )
        }
        await expectAccepted(ctx, body({ urlSchemes: ['vscode', 'x-agent+web', 'a.b-c', 'z'] }), 'four good schemes')
        const scheme = fc.oneof(
          fc.stringMatching(/^[a-z][a-z0-9+.-]{0,31}$/).filter((s) => !REFUSED_SCHEMES.includes(s)),
          fc.constantFrom('vscode', 'Vscode', '1abc', '-x', 'a'.repeat(33), 'a'.repeat(32), 'x y', '')
        )
        await schemaRule(
          ctx,
          fc.array(scheme, { minLength: 0, maxLength: 6 }),
          (urlSchemes) => body({ urlSchemes }),
          'urlSchemes'
        )
      }
    })
  ),
  defineCase(
    withLeases({
      id: 'OT-052',
      title:
        'file, javascript, data, orbtile and x-apple.systempreferences are always refused, in a registration and in openURL',
      level: 'required',
      async run (ctx) {
        const urls: Record<string, string> = {
          file: 'file:///etc/passwd',
          javascript: 'javascript:alert(1)',
          data: 'data:text/plain,hi',
          orbtile: 'orbtile://settings',
          'x-apple.systempreferences': 'x-apple.systempreferences:com.apple.preference.security'
        }
        for (const scheme of REFUSED_SCHEMES) {
          const url = urls[scheme] ?? `${scheme}:x`
          const id = adapterId(ctx, 'refused')
          const reply = await put(ctx, id, body({ urlSchemes: ['vscode', scheme] }))
          if (reply.status === 200) {
            // Listed anyway: then its openURL must still be refused.
            ctx.note(`a registration listing ${scheme} was accepted; its openURL is refused instead`)
            const l: Lease = { id, token: reply.json.adapterToken, reply }
            expectInvalid(
              await postSession(ctx, l, 's1', { ...NEW_SESSION, openURL: url }),
              `openURL ${url} though ${scheme} is listed`,
              'openURL'
            )
          } else {
            expectInvalid(reply, `a registration listing ${scheme}`, fieldUnder('urlSchemes'))
          }
        }
        const l = await lease(ctx, body({ urlSchemes: ['vscode'] }), { label: 'open' })
        for (const scheme of REFUSED_SCHEMES) {
          const url = urls[scheme] ?? `${scheme}:x`
          expectInvalid(await postSession(ctx, l, 's1', { ...NEW_SESSION, openURL: url }), `openURL ${url}`, 'openURL')
        }
      }
    })
  ),
  defineCase(
    withLeases({
      id: 'OT-053',
      title: 'capabilities: at most 3 unique items of tap, approvals, questions',
      level: 'required',
      async run (ctx) {
        const id = adapterId(ctx, 'caps')
        expectInvalid(
          await put(ctx, id, body({ capabilities: ['tap', 'tap'] })),
          'a duplicate',
          fieldUnder('capabilities')
        )
        expectInvalid(
          await put(ctx, id, body({ capabilities: ['banana'] })),
          'an unknown item',
          fieldUnder('capabilities')
        )
        await expectAccepted(ctx, body({ capabilities: ['tap', 'approvals', 'questions'] }), 'all three')
        await expectAccepted(ctx, body({ capabilities: [] }), 'none')
        const item = fc.constantFrom('tap', 'approvals', 'questions', 'banana', 'Tap', 'approval', '')
        await schemaRule(
          ctx,
          fc.array(item, { minLength: 0, maxLength: 4 }),
          (capabilities) => body({ capabilities }),
          'capabilities'
        )
      }
    })
  ),
  defineCase(
    withLeases({
      id: 'OT-054',
      title: 'tapBehavior is alsoOpen or eventOnly, and needs capabilities that contain "tap"',
      level: 'required',
      async run (ctx) {
        const id = adapterId(ctx, 'tapb')
        for (const tapBehavior of [undefined, 'alsoOpen', 'eventOnly', 'sometimes']) {
          for (const capabilities of [undefined, [], ['tap'], ['approvals'], ['questions', 'tap']]) {
            const payload = body({
              ...(tapBehavior === undefined ? {} : { tapBehavior }),
              ...(capabilities === undefined ? {} : { capabilities })
            })
            const valid =
              tapBehavior === undefined || (tapBehavior !== 'sometimes' && capabilities?.includes('tap') === true)
            expectEqual(registrationValid(payload), valid, `the spec's schema on ${JSON.stringify(payload)}`)
            const what = `tapBehavior ${tapBehavior} with capabilities ${JSON.stringify(capabilities)}`
            if (valid) await expectAccepted(ctx, payload, what)
            else expectInvalid(await put(ctx, id, payload), what, /^(?:tapBehavior|capabilities)/)
          }
        }
      }
    })
  ),
  defineCase(
    withLeases({
      id: 'OT-055',
      title: 'a tap emits a tap event; alsoOpen also opens the openURL, eventOnly opens nothing',
      level: 'required',
      needs: ['control'],
      async run (ctx) {
        const url = 'vscode://file/tmp/orbtest'
        for (const tapBehavior of ['alsoOpen', 'eventOnly', undefined] as const) {
          const l = await lease(
            ctx,
            body({
              capabilities: ['tap'],
              urlSchemes: ['vscode'],
              ...(tapBehavior === undefined ? {} : { tapBehavior })
            }),
            { label: 'tap', allow: true }
          )
          expectOk(await postSession(ctx, l, 's1', { ...NEW_SESSION, openURL: url }), 'a session with an openURL')
          const done = await tap(ctx, l, 's1')
          const behaviour = tapBehavior ?? 'alsoOpen (the default)'
          expectEqual(done.opened, tapBehavior === 'eventOnly' ? null : url, `what a tap opened under ${behaviour}`)
          const events = await poll(ctx, l)
          expectStatus(events, 200, 'polling events')
          const taps = (events.json.events as Array<{ type: string; sessionId: string }>).filter(
            (e) => e.type === 'tap' && e.sessionId === 's1'
          )
          expectEqual(taps.length, 1, `tap events for s1 under ${behaviour}`)
        }
        ctx.note("the user's own tap preferences are not reachable from the control API")
      }
    })
  )
]

/** The decisions on URL schemes (OT-A15). */
export const fieldDecisions: ConformanceCase[] = [
  defineCase(
    withLeases({
      id: 'OT-A15',
      title:
        'a registration listing a refused scheme is invalid_field on urlSchemes[i]; openURL schemes compare case-insensitively and must be absolute',
      level: 'decision',
      async run (ctx) {
        const id = adapterId(ctx, 'a15')
        for (const scheme of REFUSED_SCHEMES) {
          expectInvalid(
            await put(ctx, id, body({ urlSchemes: ['vscode', 'x-agent', scheme] })),
            `urlSchemes listing ${scheme}`,
            'urlSchemes[2]'
          )
        }
        const a = await lease(ctx, body({ urlSchemes: ['vscode'] }), { label: 'a15' })
        expectOk(
          await postSession(ctx, a, 's1', { ...NEW_SESSION, openURL: 'VSCODE://file/tmp/x' }),
          'openURL VSCODE:// with vscode listed'
        )
        expectOk(
          await postSession(ctx, a, 's2', { ...NEW_SESSION, openURL: 'VsCode:file' }),
          'openURL VsCode: with vscode listed'
        )
        expectInvalid(
          await postSession(ctx, a, 's3', { ...NEW_SESSION, openURL: 'FILE:///etc/passwd' }),
          'openURL FILE:',
          'openURL'
        )
        expectInvalid(
          await postSession(ctx, a, 's4', { ...NEW_SESSION, openURL: 'other://x' }),
          'openURL in a scheme not listed',
          'openURL'
        )
        expectInvalid(
          await postSession(ctx, a, 's5', { ...NEW_SESSION, openURL: 'relative/path' }),
          'a relative openURL',
          'openURL'
        )
      }
    })
  ),
  defineCase(
    withLeases({
      id: 'OT-A15.b',
      title: 'a re-registration that drops a scheme keeps the openURL but no longer opens it',
      level: 'decision',
      needs: ['control'],
      async run (ctx) {
        const url = 'vscode://file/tmp/orbtest'
        const a = await lease(ctx, body({ capabilities: ['tap'], urlSchemes: ['vscode'] }), {
          label: 'a15b',
          allow: true
        })
        expectOk(await postSession(ctx, a, 's1', { ...NEW_SESSION, openURL: url }), 'a session with an openURL')
        expectEqual((await tap(ctx, a, 's1')).opened, url, 'a tap opens it')
        expectStatus(
          await put(ctx, a.id, body({ capabilities: ['tap'], urlSchemes: ['zed'] }), a.token),
          200,
          're-registering without vscode'
        )
        expectEqual((await tap(ctx, a, 's1')).opened, null, 'a tap once vscode is no longer listed')
        expectStatus(
          await put(ctx, a.id, body({ capabilities: ['tap'], urlSchemes: ['vscode'] }), a.token),
          200,
          're-registering with vscode again'
        )
        expectEqual((await tap(ctx, a, 's1')).opened, url, 'a tap once vscode is listed again: the openURL was kept')
      }
    })
  )
]
