import { crc32, deflateSync } from 'node:zlib'
import fc from 'fast-check'
import { spec } from '../../src/orbtile-mock/spec.js'

type Schema = Record<string, any>

/** Replaces the arbitrary at a dotted path (`icon.png`) with one of the caller's. */
export type Overrides = Record<string, fc.Arbitrary<unknown>>

/**
 * A fast-check arbitrary of JSON values shaped by a JSON Schema (the subset the spec document uses: $ref into $defs,
 * const, enum, type, pattern, lengths, bounds, properties and required, items, uniqueItems, propertyNames with
 * additionalProperties, oneOf and anyOf). Conditionals (`if`/`then`) and cross-field rules are not modelled: filter
 * the values through the spec's validator to keep only valid ones. (A copy of the test suite's helper: conformance
 * code does not import from test/.)
 */
export function arbitraryFor (schema: Schema, overrides: Overrides = {}, path = '', root: Schema = spec): fc.Arbitrary<unknown> {
  if (overrides[path] !== undefined) return overrides[path]!
  if (typeof schema.$ref === 'string') return arbitraryFor(root.$defs[schema.$ref.replace('#/$defs/', '')], overrides, path, root)
  const branches = (schema.oneOf ?? schema.anyOf) as Schema[] | undefined
  if (branches !== undefined && schema.type === undefined && schema.properties === undefined) {
    return fc.oneof(...branches.map((branch) => arbitraryFor(branch, overrides, path, root)))
  }
  if ('const' in schema) return fc.constant(schema.const)
  if (Array.isArray(schema.enum)) return fc.constantFrom(...schema.enum)
  const type = schema.type ?? (schema.properties !== undefined || schema.propertyNames !== undefined ? 'object' : undefined)
  switch (type) {
    case 'null': return fc.constant(null)
    case 'boolean': return fc.boolean()
    case 'integer': return fc.integer({ min: schema.minimum ?? -1e6, max: schema.maximum ?? (schema.exclusiveMaximum === undefined ? 1e6 : schema.exclusiveMaximum - 1) })
    case 'number': {
      // Uniform over the range in steps of 1/10000 (fc.double would crowd near 0), plus the bounds themselves.
      const min: number = schema.minimum ?? -1e6
      const exclusive = schema.maximum === undefined && schema.exclusiveMaximum !== undefined
      const max: number = schema.maximum ?? schema.exclusiveMaximum ?? 1e6
      const steps = fc.integer({ min: Math.ceil(min * 10_000), max: Math.floor(max * 10_000) - (exclusive ? 1 : 0) }).map((n) => n / 10_000)
      return fc.oneof({ weight: 9, arbitrary: steps }, { weight: 1, arbitrary: fc.constantFrom(min, exclusive ? max - 1e-9 : max) })
    }
    case 'string': return stringArbitrary(schema)
    case 'array': {
      const items = arbitraryFor(schema.items ?? {}, overrides, `${path}[]`, root)
      const constraints = { minLength: schema.minItems ?? 0, maxLength: schema.maxItems ?? 5 }
      return schema.uniqueItems === true
        ? fc.uniqueArray(items, { ...constraints, selector: (v) => JSON.stringify(v) })
        : fc.array(items, constraints)
    }
    case 'object': return objectArbitrary(schema, overrides, path, root)
    default: return fc.jsonValue()
  }
}

function stringArbitrary (schema: Schema): fc.Arbitrary<string> {
  const min = schema.minLength ?? 0
  const max = schema.maxLength ?? 40
  const fits = (s: string): boolean => {
    const length = [...s].length
    return length >= min && length <= max
  }
  if (schema.format === 'uri') {
    return fc.webUrl({ validSchemes: /^\^https:/.test(schema.pattern ?? '') ? ['https'] : ['http', 'https'] }).filter(fits)
  }
  if (typeof schema.pattern === 'string') return fc.stringMatching(new RegExp(schema.pattern)).filter(fits)
  return fc.string({ unit: 'binary', minLength: min, maxLength: Math.min(max, 60) })
}

function objectArbitrary (schema: Schema, overrides: Overrides, path: string, root: Schema): fc.Arbitrary<unknown> {
  const join = (key: string): string => path === '' ? key : `${path}.${key}`
  if (schema.properties === undefined && schema.propertyNames !== undefined) {
    // A map with constrained keys (StateColours).
    const keys = arbitraryFor(schema.propertyNames, {}, '', root)
    const values = arbitraryFor(schema.additionalProperties ?? {}, {}, '', root)
    return fc.dictionary(keys as fc.Arbitrary<string>, values, { minKeys: schema.minProperties ?? 0, maxKeys: schema.maxProperties ?? 10 })
  }
  const properties = (schema.properties ?? {}) as Record<string, Schema>
  const record = fc.record(
    Object.fromEntries(Object.entries(properties).map(([key, child]) => [key, arbitraryFor(child, overrides, join(key), root)])),
    { requiredKeys: (schema.required ?? []) as string[] }
  )
  return schema.minProperties === undefined ? record : record.filter((value) => Object.keys(value).length >= schema.minProperties)
}

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
  return Buffer.concat([PNG_SIGNATURE, chunk('IHDR', ihdr), chunk('IDAT', deflateSync(raw)), chunk('IEND', Buffer.alloc(0))])
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
