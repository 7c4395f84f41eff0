import { crc32 } from 'node:zlib'
import type { PNG as PngClass } from 'pngjs'
import { errors, type OrbtileError } from './errors.js'

/** OT-066: decoded icon bytes. */
export const MAX_ICON_BYTES = 32768
/** OT-067: square, 16..256 pixels. */
export const MIN_ICON_SIDE = 16
export const MAX_ICON_SIDE = 256
/** OT-068: the two re-encoded sizes, each at most this many bytes. */
export const ICON_SIZES = [28, 56] as const
export const MAX_REENCODED_BYTES = 16384

/** An accepted icon: what was sent, and the two images the app would draw. */
export interface Icon {
  width: number
  height: number
  bytes: number
  png28: Buffer
  png56: Buffer
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])
// pica ships ESM under a .d.ts that TypeScript reads as CommonJS; at run time its default export is the factory.
type Pica = {
  resizeBuffer(options: {
    src: Uint8Array, width: number, height: number, toWidth: number, toHeight: number, filter?: string
  }): Promise<Uint8Array>
}
type PicaFactory = (options: { features: string[] }) => Pica

// The codecs load with the first icon, so that start-up does not pay for them.
let codecs: Promise<{ PNG: typeof PngClass, pica: Pica }> | undefined
function loadCodecs (): Promise<{ PNG: typeof PngClass, pica: Pica }> {
  codecs ??= Promise.all([import('pngjs'), import('pica')]).then(([pngjs, picaModule]) => ({
    PNG: pngjs.PNG,
    pica: (picaModule as unknown as { default: PicaFactory }).default({ features: ['js', 'wasm'] })
  }))
  return codecs
}
const refuse = (message: string): OrbtileError => errors.invalidField('icon.png', message)

/**
 * OT-065..068, OT-A14: decodes `icon.png` (already checked against the spec's base64 pattern), checks the PNG
 * (signature, IHDR first with a valid CRC, square 16..256, the whole image decodes; APNG gives its first frame),
 * and re-encodes it to 28x28 and 56x56 sRGB PNGs. Throws invalid_field on `icon.png` for any fault.
 */
export async function readIcon (base64: string): Promise<Icon> {
  const bytes = Buffer.from(base64, 'base64')
  if (bytes.length === 0) throw refuse('icon.png decodes to no bytes')
  if (bytes.length > MAX_ICON_BYTES) throw refuse(`icon.png decodes to ${bytes.length} bytes; at most ${MAX_ICON_BYTES}`)
  const { width, height } = readHeader(bytes)
  const png = checkChunks(bytes)
  const { PNG, pica } = await loadCodecs()
  let image: PngClass
  try {
    image = PNG.sync.read(png, { checkCRC: true })
  } catch (err) {
    throw refuse(`icon.png does not decode as a PNG: ${(err as Error).message}`)
  }
  const rgba = new Uint8Array(image.data.buffer, image.data.byteOffset, image.data.length)
  const [png28, png56] = await Promise.all(ICON_SIZES.map((side) => resize(PNG, pica, rgba, width, side)))
  return { width, height, bytes: bytes.length, png28: png28!, png56: png56! }
}

// OT-067, OT-A14: signature, then IHDR as the first chunk, square and within bounds (checkChunks checks every CRC).
function readHeader (bytes: Buffer): { width: number, height: number } {
  if (bytes.length < 33 || !bytes.subarray(0, 8).equals(PNG_SIGNATURE)) {
    throw refuse('icon.png is not a PNG (bad signature)')
  }
  const length = bytes.readUInt32BE(8)
  if (length !== 13 || bytes.toString('latin1', 12, 16) !== 'IHDR') {
    throw refuse('icon.png does not start with an IHDR chunk')
  }
  const width = bytes.readUInt32BE(16)
  const height = bytes.readUInt32BE(20)
  if (width !== height) throw refuse(`icon.png is ${width}x${height}; it must be square`)
  if (width < MIN_ICON_SIDE || width > MAX_ICON_SIDE) throw refuse(`icon.png is ${width}x${height}; sides must be ${MIN_ICON_SIDE} to ${MAX_ICON_SIDE}`)
  return { width, height }
}

/**
 * Walks every chunk: each must fit in the data and carry a valid CRC, whatever its type (pngjs checks only the
 * chunks it knows), and the stream must reach IEND. Bytes after IEND are ignored, as decoders do. Returns the PNG
 * up to and including IEND.
 */
function checkChunks (bytes: Buffer): Buffer {
  let at = 8
  while (at + 12 <= bytes.length) {
    const length = bytes.readUInt32BE(at)
    const end = at + 12 + length
    if (length > 0x7fffffff || end > bytes.length) throw refuse('icon.png is truncated: a chunk runs past the end')
    const type = bytes.toString('latin1', at + 4, at + 8)
    if (!/^[A-Za-z]{4}$/.test(type)) throw refuse('icon.png has a malformed chunk type')
    if (crc32(bytes.subarray(at + 4, at + 8 + length)) !== bytes.readUInt32BE(at + 8 + length)) {
      throw refuse(`icon.png has a bad CRC in its ${type} chunk`)
    }
    if (type === 'IEND') return bytes.subarray(0, end)
    at = end
  }
  throw refuse('icon.png is truncated: no IEND chunk')
}

// Lanczos resampling (pica), then an sRGB-tagged PNG at the highest compression. Pixels are taken as sRGB, as
// they are sent (a gAMA or iCCP chunk is not applied), and resampled in that encoding, as most tools do.
async function resize (PNG: typeof PngClass, pica: Pica, rgba: Uint8Array, side: number, to: number): Promise<Buffer> {
  const resized = await pica.resizeBuffer({
    src: rgba, width: side, height: side, toWidth: to, toHeight: to, filter: 'lanczos3'
  })
  const png = new PNG({ width: to, height: to })
  Buffer.from(resized.buffer, resized.byteOffset, resized.length).copy(png.data)
  const encoded = PNG.sync.write(png, { colorType: 6, deflateLevel: 9 })
  return withSrgbChunk(encoded)
}

/** Inserts an sRGB chunk (rendering intent: perceptual) right after IHDR, so the image says what it is. */
function withSrgbChunk (png: Buffer): Buffer {
  const afterIhdr = 8 + 8 + 13 + 4
  const type = Buffer.from('sRGB', 'latin1')
  const data = Buffer.from([0])
  const chunk = Buffer.alloc(4 + 4 + 1 + 4)
  chunk.writeUInt32BE(1, 0)
  type.copy(chunk, 4)
  data.copy(chunk, 8)
  chunk.writeUInt32BE(crc32(Buffer.concat([type, data])), 9)
  return Buffer.concat([png.subarray(0, afterIhdr), chunk, png.subarray(afterIhdr)])
}
