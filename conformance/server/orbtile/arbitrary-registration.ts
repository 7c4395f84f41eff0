import { crc32, deflateSync } from 'node:zlib'
import fc from 'fast-check'
export { arbitraryFor } from '../core/schema-arbitrary.js'
import { spec } from '../../../src/spec/orbtile.js'

/**
 * OT-052: the schemes the spec always refuses, read from the spec's own words (the `urlSchemes` description names
 * them in quotes), so that the suite follows the document rather than a copy of it.
 */
export const REFUSED_SCHEMES: readonly string[] = (() => {
  const text = String((spec.$defs.AdapterRegistration as any).properties.urlSchemes.description)
  const names = [...text.matchAll(/'([a-z][a-z0-9+.-]*)'/g)].map((m) => m[1]!)
  if (names.length < 5) throw new Error('conformance: the spec no longer names the refused URL schemes as expected')
  return names
})()

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])

function chunk (type: string, data: Buffer, badCrc = false): Buffer {
  const out = Buffer.alloc(12 + data.length)
  out.writeUInt32BE(data.length, 0)
  out.write(type, 4, 'latin1')
  data.copy(out, 8)
  const crc = crc32(Buffer.concat([Buffer.from(type, 'latin1'), data]))
  out.writeUInt32BE(badCrc ? (crc ^ 1) >>> 0 : crc, 8 + data.length)
  return out
}

/**
 * A real PNG (8-bit RGB) of the given size: a gradient, or a solid colour that compresses to almost nothing at any
 * size. Built with node:zlib, so that the suite needs no image library.
 */
export function makePng (width: number, height: number, pattern: 'gradient' | 'solid' = 'gradient'): Buffer {
  const ihdr = Buffer.alloc(13)
  ihdr.writeUInt32BE(width, 0)
  ihdr.writeUInt32BE(height, 4)
  ihdr[8] = 8 // bit depth
  ihdr[9] = 2 // colour type: RGB
  const row = 1 + width * 3
  const raw = Buffer.alloc(row * height)
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const at = y * row + 1 + x * 3
      if (pattern === 'solid') {
        raw[at] = 40; raw[at + 1] = 120; raw[at + 2] = 200
      } else {
        raw[at] = Math.round((x / width) * 255); raw[at + 1] = Math.round((y / height) * 255); raw[at + 2] = 128
      }
    }
  }
  return Buffer.concat([
    PNG_SIGNATURE,
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(raw)),
    chunk('IEND', Buffer.alloc(0))
  ])
}

/** Inserts a chunk right after IHDR (a `tEXt` filler pads a PNG to an exact size; `badCrc` breaks its CRC). */
export function withChunk (png: Buffer, type: string, data: Buffer, badCrc = false): Buffer {
  return Buffer.concat([png.subarray(0, 33), chunk(type, data, badCrc), png.subarray(33)])
}

/** A PNG padded with a filler chunk to exactly `total` bytes. */
export function pngOfSize (total: number): Buffer {
  const base = makePng(32, 32, 'solid')
  return withChunk(base, 'tEXt', Buffer.alloc(total - base.length - 12, 0x61))
}

/** The PNG with an `acTL` chunk (one frame, played once): an APNG whose default image is its IDAT (OT-A14). */
export function toApng (png: Buffer): Buffer {
  const data = Buffer.alloc(8)
  data.writeUInt32BE(1, 0)
  data.writeUInt32BE(0, 4)
  return withChunk(png, 'acTL', data)
}

/** Standard base64 of some bytes. */
export const b64 = (bytes: Buffer): string => bytes.toString('base64')

/** A few real PNGs as base64, for registrations generated from the schema (its pattern alone gives no PNG). */
export const PNG_SAMPLES: readonly string[] = [makePng(16, 16), makePng(64, 64), makePng(200, 200, 'solid')].map(b64)

/** A hue in [0, 360) in steps of 0.0001, plus the arcs' edges: fc.double would crowd near 0. */
export const hueArbitrary: fc.Arbitrary<number> = fc.oneof(
  { weight: 9, arbitrary: fc.integer({ min: 0, max: 3_599_999 }).map((n) => n / 10_000) },
  { weight: 1, arbitrary: fc.constantFrom(0, 345.9, 75.9, 18.9, 55, 359.9999, 75.89999999999999, 345.90000000000003) }
)
