import fc from 'fast-check'
import { adapterId, defineCase, type ConformanceCase } from '../../orbtile-case.js'
import { b64, makePng, pngOfSize, toApng, withChunk } from '../../arbitrary-registration.js'
import { expectStatus, expectThat } from '../../expect.js'
import { expectAccepted, expectInvalid, fieldUnder, schemaRule, warningsOf } from './expectations.js'
import { body, lease, poll, put, withLeases } from './registration-support.js'

/** The base64 of `png` with non-zero padding bits (the same bytes to a lenient decoder, OT-A14). */
function dirtyPadding (png: Buffer): string | undefined {
  const text = b64(png)
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'
  const at = text.endsWith('==') ? text.length - 3 : text.endsWith('=') ? text.length - 2 : -1
  if (at < 0) return undefined
  return text.slice(0, at) + alphabet[alphabet.indexOf(text[at]!) | 1] + text.slice(at + 1)
}

/** A PNG whose byte length is not a multiple of 3, so that its base64 ends in padding. */
function paddedPng (): Buffer {
  for (let side = 16; side < 64; side++) {
    const png = makePng(side, side)
    if (png.length % 3 !== 0) return png
  }
  throw new Error('conformance: no padded PNG found')
}

/** The icon (OT-062..069). */
export const iconCases: ConformanceCase[] = [
  defineCase(
    withLeases({
      id: 'OT-062',
      title: 'icon is null or an object with png, appBundleId or both; {} and {"foo":1} are invalid_field',
      level: 'required',
      async run (ctx) {
        const png = b64(makePng(32, 32))
        for (const icon of [
          null,
          { appBundleId: 'com.apple.Terminal' },
          { png },
          { png, appBundleId: 'com.apple.Terminal' }
        ]) {
          await expectAccepted(ctx, body({ icon }), `icon ${JSON.stringify(icon).slice(0, 60)}`)
        }
        const id = adapterId(ctx, 'icon')
        for (const icon of [{}, { foo: 1 }, 'x', []]) { expectInvalid(await put(ctx, id, body({ icon })), `icon ${JSON.stringify(icon)}`, fieldUnder('icon')) }
      }
    })
  ),
  defineCase(
    withLeases({
      id: 'OT-065',
      title:
        'icon.png is strict RFC 4648 base64: base64url characters, whitespace, missing padding, "" and 43697+ characters are refused',
      level: 'required',
      async run (ctx) {
        const good = b64(paddedPng())
        const id = adapterId(ctx, 'b64')
        await expectAccepted(ctx, body({ icon: { png: good } }), 'the PNG as standard base64')
        for (const png of [
          '',
          'A'.repeat(43697),
          `${good.slice(0, 8)} ${good.slice(8)}`,
          `${good.slice(0, 8)}\n${good.slice(8)}`,
          good.replace(/=+$/, '')
        ]) {
          expectInvalid(
            await put(ctx, id, body({ icon: { png } })),
            `icon.png ${JSON.stringify(png.slice(0, 20))}… (${png.length} characters)`,
            'icon.png'
          )
        }
        const mutation = fc.oneof(
          fc.record({
            kind: fc.constant('alphabet' as const),
            at: fc.nat(),
            char: fc.constantFrom('-', '_', '.', '!', '*')
          }),
          fc.record({
            kind: fc.constant('space' as const),
            at: fc.nat(),
            char: fc.constantFrom(' ', '\n', '\r\n', '\t')
          }),
          fc.record({ kind: fc.constant('cut' as const), at: fc.integer({ min: 1, max: 3 }), char: fc.constant('') }),
          fc.record({
            kind: fc.constant('extra' as const),
            at: fc.integer({ min: 1, max: 3 }),
            char: fc.constantFrom('A', '=')
          })
        )
        await fc.assert(
          fc.asyncProperty(mutation, async ({ kind, at, char }) => {
            const i = at % good.length
            const png =
              kind === 'alphabet'
                ? good.slice(0, i) + char + good.slice(i + 1)
                : kind === 'space'
                  ? good.slice(0, i) + char + good.slice(i)
                  : kind === 'cut'
                    ? good.slice(0, -at)
                    : good + char.repeat(at)
            expectInvalid(await put(ctx, id, body({ icon: { png } })), `icon.png with a ${kind} change`, 'icon.png')
          }),
          ctx.fc({ endOnFailure: true })
        )
      }
    })
  ),
  defineCase(
    withLeases({
      id: 'OT-066',
      title: 'icon.png decodes to at most 32768 bytes: more is refused even within 43696 characters',
      level: 'required',
      async run (ctx) {
        const id = adapterId(ctx, 'size')
        expectInvalid(
          await put(ctx, id, body({ icon: { png: 'A'.repeat(43696) } })),
          '43696 characters (32772 bytes)',
          'icon.png'
        )
        for (const size of [32769, 32770, 32772]) {
          const png = b64(pngOfSize(size))
          expectThat(png.length <= 43696, 'the base64 fits the character limit', '<= 43696', png.length)
          expectInvalid(await put(ctx, id, body({ icon: { png } })), `a real PNG of ${size} bytes`, 'icon.png')
        }
        await expectAccepted(ctx, body({ icon: { png: b64(pngOfSize(32768)) } }), 'a real PNG of exactly 32768 bytes')
      }
    })
  ),
  defineCase(
    withLeases({
      id: 'OT-067',
      title: 'the PNG must be square, 16 to 256 pixels, and whole: exactly those are accepted',
      level: 'required',
      async run (ctx) {
        const id = adapterId(ctx, 'dims')
        for (const side of [16, 256]) {
          const png = b64(makePng(side, side, side === 16 ? 'gradient' : 'solid'))
          await expectAccepted(ctx, body({ icon: { png } }), `${side}x${side}`)
        }
        const png32 = makePng(32, 32)
        const idat = png32.indexOf('IDAT') - 4
        const bad: Array<[string, Buffer]> = [
          ['15x15', makePng(15, 15)],
          ['257x257', makePng(257, 257, 'solid')],
          ['32x16', makePng(32, 16)],
          [
            'JPEG bytes',
            Buffer.from(
              '/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAAgGBgcGBQgHBwcJCQgKDBQNDAsLDBkSEw8UHRofHh0aHBwgJC4nICIsIxwcKDcpLDAxNDQ0Hyc5PTgyPC4zNDL/wAALCAABAAEBAREA/8QAFAABAAAAAAAAAAAAAAAAAAAACf/EABQQAQAAAAAAAAAAAAAAAAAAAAD/2gAIAQEAAD8AKp//2Q==',
              'base64'
            )
          ],
          [
            'GIF bytes',
            Buffer.from('R0lGODlhEAAQAIAAAAAAAP///yH5BAEAAAAALAAAAAAQABAAAAIOhI+py+0Po5y02ouzPgUAOw==', 'base64')
          ],
          ['a truncated PNG', png32.subarray(0, idat + 20)],
          [
            'a PNG with a broken IHDR CRC',
            Buffer.concat([png32.subarray(0, 29), Buffer.from([png32[29]! ^ 0xff]), png32.subarray(30)])
          ]
        ]
        for (const [what, bytes] of bad) {
          expectInvalid(await put(ctx, id, body({ icon: { png: b64(bytes) } })), what, 'icon.png')
        }
        const side = fc.oneof(fc.integer({ min: 1, max: 300 }), fc.constantFrom(15, 16, 256, 257))
        await fc.assert(
          fc.asyncProperty(side, side, async (width, height) => {
            const payload = body({ icon: { png: b64(makePng(width, height, 'solid')) } })
            const square = width === height && width >= 16 && width <= 256
            if (square) await expectAccepted(ctx, payload, `a ${width}x${height} PNG`)
            else expectInvalid(await put(ctx, id, payload), `a ${width}x${height} PNG`, 'icon.png')
          }),
          ctx.fc({ endOnFailure: true })
        )
      }
    })
  ),
  defineCase(
    withLeases({
      id: 'OT-069',
      title: 'icon.appBundleId is 3 to 128 characters of ^[A-Za-z0-9-]+(\\.[A-Za-z0-9-]+)+$',
      level: 'required',
      async run (ctx) {
        await expectAccepted(ctx, body({ icon: { appBundleId: 'com.apple.Terminal' } }), 'com.apple.Terminal')
        const id = adapterId(ctx, 'bundle')
        for (const appBundleId of ['Terminal', 'com..x', 'com.x.', 'a_b.c', `a.${'b'.repeat(127)}`]) {
          expectInvalid(
            await put(ctx, id, body({ icon: { appBundleId } })),
            `appBundleId ${appBundleId.slice(0, 40)}`,
            'icon.appBundleId'
          )
        }
        const bundle = fc.oneof(
          fc.string({ unit: fc.constantFrom('a', 'Z', '0', '-', '.', '_'), minLength: 0, maxLength: 12 }),
          fc.integer({ min: 120, max: 135 }).map((n) => `com.${'x'.repeat(n - 4)}`)
        )
        await schemaRule(ctx, bundle, (appBundleId) => body({ icon: { appBundleId } }), 'icon')
      }
    })
  )
]

/** The decisions on icons (OT-A14). */
export const iconDecisions: ConformanceCase[] = [
  defineCase(
    withLeases({
      id: 'OT-A14',
      title:
        'icons: an unresolved appBundleId passes silently; APNG and non-zero padding bits pass; an icon error refuses the whole body',
      level: 'decision',
      async run (ctx) {
        const noSuchApp = body({ icon: { appBundleId: 'org.orbtest.conformance.no-such-app' } })
        const unresolved = await expectAccepted(ctx, noSuchApp, 'an appBundleId no app has')
        expectThat(
          !warningsOf(unresolved).some((w) => /icon|appBundleId/.test(w)),
          'no warning about it',
          'no icon warning',
          unresolved.json.warnings
        )
        await expectAccepted(ctx, body({ icon: { png: b64(toApng(makePng(32, 32))) } }), 'an APNG')
        const dirty = dirtyPadding(paddedPng())
        await expectAccepted(ctx, body({ icon: { png: dirty } }), 'base64 with non-zero padding bits')
        const id = adapterId(ctx, 'a14')
        expectInvalid(
          await put(
            ctx,
            id,
            body({ icon: { png: b64(withChunk(makePng(32, 32), 'tEXt', Buffer.from('Comment\0hi'), true)) } })
          ),
          'a bad CRC in a later chunk',
          'icon.png'
        )
        expectInvalid(
          await put(ctx, id, body({ icon: { appBundleId: 'Terminal' } })),
          'a bad appBundleId',
          'icon.appBundleId'
        )
        // A refused icon refuses everything else of the body too: the capability stays.
        const a = await lease(ctx, body({ capabilities: ['tap'], icon: { png: b64(makePng(64, 64)) } }), {
          label: 'a14'
        })
        expectInvalid(
          await put(ctx, a.id, body({ capabilities: [], icon: { png: b64(makePng(10, 10)) } }), a.token),
          'a re-registration with a 10x10 icon',
          'icon.png'
        )
        expectStatus(await poll(ctx, a), 200, "polling: the refused body's downgrade was not applied")
      }
    })
  )
]
