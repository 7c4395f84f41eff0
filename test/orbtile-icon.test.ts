import { join } from 'node:path'
import { crc32 } from 'node:zlib'
import t from 'tap'
import fc from 'fast-check'
import { startOrbtest } from '../src/orbtest.js'
import { MAX_REENCODED_BYTES } from '../src/orbtile-mock/icon.js'
import { fcParams } from './helpers/fc.js'
import { adapterSetup } from './helpers/orbtile.js'
import { assertSpecError, specErrorProblem } from './helpers/assert.js'
import { makePng, pixel, pngChunks, readPng, withChunk } from './helpers/png.js'
import { httpRequest, SocketClient } from './helpers/client.js'
import { scratch } from './helpers/fake.js'

const withIcon = (icon: unknown) => ({ name: 'x', palette: { baseHue: 200 }, icon })
const b64 = (bytes: Buffer) => bytes.toString('base64')

t.test('OT-062 icon is an object with png or appBundleId, or null', async (t) => {
  const { register } = await adapterSetup(t)
  t.equal((await register('i.null', withIcon(null))).status, 200)
  t.equal((await register('i.bundle', withIcon({ appBundleId: 'com.apple.Terminal' }))).status, 200)
  t.equal((await register('i.png', withIcon({ png: b64(makePng(32, 32)) }))).status, 200)
  assertSpecError(t, await register('a.b', withIcon({})), 'invalid_field', 'icon')
  assertSpecError(t, await register('a.b', withIcon({ foo: 1 })), 'invalid_field', 'icon')
})

t.test('OT-065 icon.png is strict RFC 4648 base64', async (t) => {
  const { register } = await adapterSetup(t)
  const good = b64(makePng(16, 16))
  for (const png of [
    good.replace(/\+/g, '-').replace(/\//g, '_') + '-_',
    good.slice(0, 8) + ' ' + good.slice(8),
    good.slice(0, 8) + '\n' + good.slice(8),
    good.replace(/=+$/, '') + 'A',
    '',
    'A'.repeat(43697)
  ]) {
    assertSpecError(t, await register('a.b', withIcon({ png })), 'invalid_field', 'icon.png')
  }
})

t.test('OT-066 decoded bytes over 32768 are refused, even within the character limit', async (t) => {
  const { register } = await adapterSetup(t)
  const png = 'A'.repeat(43696)
  t.equal(Buffer.from(png, 'base64').length, 32772)
  assertSpecError(t, await register('a.b', withIcon({ png })), 'invalid_field', 'icon.png')
})

t.test('OT-067 the PNG must be square, 16 to 256 pixels, and decode whole', async (t) => {
  const { register, unregister } = await adapterSetup(t)
  for (const side of [16, 256]) {
    const reply = await register(`i.s${side}`, withIcon({ png: b64(makePng(side, side)) }))
    t.equal(reply.status, 200, `${side}x${side} is accepted`)
    await unregister(`i.s${side}`, reply.json.adapterToken)
  }
  const bad: Array<[string, Buffer]> = [
    ['15x15', makePng(15, 15)],
    ['257x257', makePng(257, 257)],
    ['32x16', makePng(32, 16)],
    ['JPEG bytes', Buffer.from('/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAAgGBgcGBQgHBwcJCQgKDBQNDAsLDBkSEw8UHRofHh0aHBwgJC4nICIsIxwcKDcpLDAxNDQ0Hyc5PTgyPC4zNDL/wAALCAABAAEBAREA/8QAFAABAAAAAAAAAAAAAAAAAAAACf/EABQQAQAAAAAAAAAAAAAAAAAAAAD/2gAIAQEAAD8AKp//2Q==', 'base64')],
    ['GIF bytes', Buffer.from('R0lGODlhEAAQAIAAAAAAAP///yH5BAEAAAAALAAAAAAQABAAAAIOhI+py+0Po5y02ouzPgUAOw==', 'base64')],
    ['truncated', makePng(32, 32).subarray(0, 60)],
    ['bad IHDR CRC', corrupt(makePng(32, 32), 30)],
    ['corrupt image data', corrupt(makePng(32, 32, 'noise'), 100)]
  ]
  for (const [what, bytes] of bad) {
    t.equal(
      specErrorProblem(await register('a.b', withIcon({ png: b64(bytes) })), 'invalid_field', 'icon.png'),
      undefined,
      `${what} is refused`
    )
  }
})

t.test('OT-067 any PNG that is not square, or not 16..256, is refused', async (t) => {
  const { register } = await adapterSetup(t)
  await fc.assert(
    fc.asyncProperty(fc.integer({ min: 1, max: 300 }), fc.integer({ min: 1, max: 300 }), async (width, height) => {
      fc.pre(width !== height || width < 16 || width > 256)
      return (
        specErrorProblem(
          await register('a.b', withIcon({ png: b64(makePng(width, height, 'solid')) })),
          'invalid_field',
          'icon.png'
        ) === undefined
      )
    }),
    fcParams({ numRuns: 40 })
  )
})

t.test('OT-068 every accepted PNG re-encodes to 28x28 and 56x56 sRGB images within 16384 bytes', async (t) => {
  const { register, unregister, fake } = await adapterSetup(t)
  await fc.assert(fc.asyncProperty(
    fc.integer({ min: 16, max: 256 }), fc.constantFrom('gradient', 'noise', 'solid'), fc.nat(),
    async (side, pattern, seed) => {
      const png = makePng(side, side, pattern as 'gradient', seed)
      fc.pre(png.length <= 32768)
      const reply = await register('i.prop', withIcon({ png: b64(png) }))
      if (reply.status !== 200) return false
      const ok = ([28, 56] as const).every((size) => {
        const image = fake.control.icon('i.prop', size)
        if (image === undefined || image.length > MAX_REENCODED_BYTES) return false
        const decoded = readPng(image)
        return decoded.width === size && decoded.height === size && image.includes(Buffer.from('sRGB'))
      })
      await unregister('i.prop', reply.json.adapterToken)
      return ok
    }
  ), fcParams({ numRuns: 30 }))
})

t.test('OT-068 the control server serves the two re-encoded PNGs, and the snapshot links them', async (t) => {
  const dir = scratch(t)
  const fakes = await startOrbtest({
    orb: false,
    orbtile: { discoveryPath: join(dir, 'd.json'), socketPath: join(dir, 'o.sock'), rateLimit: 'off' },
    controlPort: 0
  })
  t.teardown(() => fakes.close())
  const client = new SocketClient(fakes.orbtile!.socketPath, fakes.orbtile!.token)
  t.teardown(() => client.close())
  await client.request({ method: 'PUT', path: '/adapters/i.ctl', body: withIcon({ png: b64(makePng(100, 100)) }) })
  const adapter = (await httpRequest(fakes.control.url, { path: '/control/orbtile/adapters/i.ctl' })).json
  t.same(adapter.icon, {
    28: '/control/orbtile/adapters/i.ctl/icon/28.png',
    56: '/control/orbtile/adapters/i.ctl/icon/56.png'
  })
  for (const size of [28, 56]) {
    const reply = await httpRequest(fakes.control.url, { path: adapter.icon[size] })
    t.equal(reply.status, 200)
    t.equal(reply.headers['content-type'], 'image/png')
  }
  t.equal((await httpRequest(fakes.control.url, { path: '/control/orbtile/adapters/i.ctl/icon/64.png' })).status, 404)
  t.equal((await httpRequest(fakes.control.url, { path: '/control/orbtile/adapters/no.icon/icon/28.png' })).status, 404)
})

t.test(
  'OT-063 OT-A14 re-registering without icon clears it; a refused icon refuses the whole registration and keeps the old one',
  async (t) => {
    const { register, fake } = await adapterSetup(t)
    const first = await register('i.keep', { ...withIcon({ png: b64(makePng(64, 64)) }), capabilities: ['tap'] })
    const token = first.json.adapterToken
    const before = fake.control.icon('i.keep', 56)
    t.ok(before)
    const refused = await register('i.keep', { ...withIcon({ png: b64(makePng(10, 10)) }), capabilities: [] }, token)
    assertSpecError(t, refused, 'invalid_field', 'icon.png')
    t.same(fake.control.icon('i.keep', 56), before, 'the previous icon stays')
    t.same(
      fake.control.adapter('i.keep')!.registration!.capabilities,
      ['tap'],
      'and nothing else of the refused body was applied'
    )
    t.equal((await register('i.keep', withIcon(null), token)).status, 200)
    t.equal(fake.control.icon('i.keep', 56), undefined, 'icon: null clears it')
    await register('i.keep', withIcon({ png: b64(makePng(64, 64)) }), token)
    await register('i.keep', { name: 'x', palette: { baseHue: 200 } }, token)
    t.equal(fake.control.icon('i.keep', 28), undefined, 'leaving icon out clears it too')
  }
)

t.test(
  'OT-069 OT-A14 appBundleId: 3..128 characters of reverse-DNS; one that does not resolve is accepted silently',
  async (t) => {
    const { register } = await adapterSetup(t)
    const ok = await register('i.app', withIcon({ appBundleId: 'com.apple.Terminal' }))
    t.equal(ok.status, 200)
    t.notOk(
      ok.json.warnings.some((w: string) => /icon|appBundleId/.test(w)),
      'no warning about the unresolved bundle id'
    )
    for (const appBundleId of ['Terminal', 'com..x', 'com.x.', 'a_b.c', `a.${'b'.repeat(127)}`]) {
      assertSpecError(t, await register('a.b', withIcon({ appBundleId })), 'invalid_field', 'icon.appBundleId')
    }
  }
)

t.test('OT-A14 an APNG is accepted (its first frame)', async (t) => {
  const { register } = await adapterSetup(t)
  t.equal((await register('i.apng', withIcon({ png: b64(toApng(makePng(32, 32))) }))).status, 200)
})

// Flips one byte, which breaks the CRC of the chunk it lands in.
function corrupt (png: Buffer, at: number): Buffer {
  const copy = Buffer.from(png)
  copy[at] = copy[at]! ^ 0xff
  return copy
}

// Inserts an acTL chunk (one frame, played once) after IHDR: an animated PNG whose default image is the IDAT.
function toApng (png: Buffer): Buffer {
  const data = Buffer.alloc(8)
  data.writeUInt32BE(1, 0)
  data.writeUInt32BE(0, 4)
  const type = Buffer.from('acTL')
  const chunk = Buffer.alloc(12 + data.length)
  chunk.writeUInt32BE(data.length, 0)
  type.copy(chunk, 4)
  data.copy(chunk, 8)
  chunk.writeUInt32BE(crc32(Buffer.concat([type, data])), 8 + data.length)
  return Buffer.concat([png.subarray(0, 33), chunk, png.subarray(33)])
}

t.test('OT-070 OT-A14 with both png and appBundleId, both are kept; off macOS the png is the icon drawn', async (t) => {
  const { register, fake } = await adapterSetup(t)
  t.equal(
    (await register('i.both', withIcon({ png: b64(makePng(48, 48)), appBundleId: 'com.apple.Terminal' }))).status,
    200
  )
  t.same(fake.control.adapter('i.both')!.registration!.icon, {
    appBundleId: 'com.apple.Terminal',
    png: { width: 48, height: 48, bytes: makePng(48, 48).length }
  })
  t.ok(fake.control.icon('i.both', 28))
  await register('i.bundle', withIcon({ appBundleId: 'com.apple.Terminal' }))
  t.equal(fake.control.icon('i.bundle', 28), undefined, 'a bundle id alone draws no custom icon here')
})

t.test(
  'OT-068 the re-encoded icons carry a valid sRGB chunk right after IHDR, and every chunk CRC holds',
  async (t) => {
    const { register, fake } = await adapterSetup(t)
    await register('i.srgb', withIcon({ png: b64(makePng(64, 64)) }))
    for (const size of [28, 56] as const) {
      const chunks = pngChunks(fake.control.icon('i.srgb', size)!)
      t.same(chunks.map((c) => c.type).slice(0, 2), ['IHDR', 'sRGB'])
      t.same([...chunks[1]!.data], [0], 'rendering intent: perceptual')
      t.ok(
        chunks.every((c) => c.crcOk),
        'every CRC is right'
      )
      t.equal(chunks.at(-1)!.type, 'IEND')
    }
  }
)

t.test(
  'OT-068 the icon is resampled, not cropped: a full-width gradient stays a full-width gradient at 28 and 56',
  async (t) => {
    const { register, fake } = await adapterSetup(t)
    await register('i.grad', withIcon({ png: b64(makePng(200, 200)) }))
    for (const size of [28, 56] as const) {
      const image = fake.control.icon('i.grad', size)!
      const [left] = pixel(image, 0, size / 2)
      const [middle] = pixel(image, size / 2, size / 2)
      const [right] = pixel(image, size - 1, size / 2)
      t.ok(
        left! < 20 && right! > 235 && Math.abs(middle! - 128) < 20,
        `${size}: left ${left}, middle ${middle}, right ${right}`
      )
    }
    const [a] = pixel(fake.control.icon('i.grad', 56)!, 28, 28)
    await register('i.small', withIcon({ png: b64(makePng(16, 16)) }))
    t.ok(
      Math.abs(pixel(fake.control.icon('i.small', 56)!, 28, 28)[0]! - a!) < 25,
      'an upscaled 16x16 keeps its gradient too'
    )
  }
)

t.test(
  'OT-066 a real PNG of 32769..32772 bytes (within 43696 characters) is refused for its size; one of 32768 is accepted',
  async (t) => {
    const { register } = await adapterSetup(t)
    const base = makePng(64, 64)
    const padded = (total: number) => withChunk(base, 'teXt', Buffer.alloc(total - base.length - 12, 0x61))
    const over = padded(32770)
    t.equal(over.length, 32770)
    t.ok(b64(over).length <= 43696, 'within the character limit')
    assertSpecError(t, await register('a.b', withIcon({ png: b64(over) })), 'invalid_field', 'icon.png')
    const exact = padded(32768)
    t.equal(exact.length, 32768)
    t.equal((await register('i.exact', withIcon({ png: b64(exact) }))).status, 200)
  }
)

t.test('OT-067 OT-A14 a bad CRC in any chunk is refused; bytes after IEND are ignored', async (t) => {
  const { register } = await adapterSetup(t)
  assertSpecError(
    t,
    await register('a.b', withIcon({ png: b64(withChunk(makePng(32, 32), 'tEXt', Buffer.from('Comment\0hi'), true)) })),
    'invalid_field',
    'icon.png'
  )
  const idat = makePng(32, 32)
  const at = idat.indexOf('IDAT') - 4
  const badIdatCrc = Buffer.from(idat)
  const crcAt = at + 8 + badIdatCrc.readUInt32BE(at)
  badIdatCrc.writeUInt32BE(badIdatCrc.readUInt32BE(crcAt) ^ 1, crcAt)
  assertSpecError(t, await register('a.b', withIcon({ png: b64(badIdatCrc) })), 'invalid_field', 'icon.png')
  t.equal((await register('i.trail', withIcon({ png: b64(Buffer.concat([makePng(32, 32), Buffer.from('trailing')])) }))).status, 200)
})
