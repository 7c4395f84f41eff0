import { crc32 } from 'node:zlib'
import { PNG } from 'pngjs'

/** Fills pixels: a smooth gradient compresses well at any size; noise does not. */
export type Pattern = 'gradient' | 'noise' | 'solid'

/** A real PNG of the given size, made with pngjs. */
export function makePng (width: number, height: number, pattern: Pattern = 'gradient', seed = 1): Buffer {
  const png = new PNG({ width, height })
  let state = seed >>> 0 || 1
  const random = (): number => { state = (state * 1664525 + 1013904223) >>> 0; return state >>> 24 }
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * 4
      if (pattern === 'noise') {
        png.data[i] = random()
        png.data[i + 1] = random()
        png.data[i + 2] = random()
        png.data[i + 3] = 255
      } else if (pattern === 'solid') {
        png.data[i] = 40
        png.data[i + 1] = 120
        png.data[i + 2] = 200
        png.data[i + 3] = 255
      } else {
        png.data[i] = Math.round((x / width) * 255)
        png.data[i + 1] = Math.round((y / height) * 255)
        png.data[i + 2] = 128
        png.data[i + 3] = 255
      }
    }
  }
  return PNG.sync.write(png)
}

/** Decodes a PNG, for checking what the fake re-encoded. */
export function readPng (bytes: Buffer): { width: number, height: number } {
  const png = PNG.sync.read(bytes)
  return { width: png.width, height: png.height }
}

/** The chunks of a PNG, each with whether its CRC is right. */
export function pngChunks (bytes: Buffer): Array<{ type: string, data: Buffer, crcOk: boolean }> {
  const chunks: Array<{ type: string, data: Buffer, crcOk: boolean }> = []
  for (let at = 8; at + 12 <= bytes.length;) {
    const length = bytes.readUInt32BE(at)
    const type = bytes.toString('latin1', at + 4, at + 8)
    const data = bytes.subarray(at + 8, at + 8 + length)
    chunks.push({
      type,
      data,
      crcOk: crc32(bytes.subarray(at + 4, at + 8 + length)) === bytes.readUInt32BE(at + 8 + length)
    })
    at += 12 + length
  }
  return chunks
}

/** Inserts a chunk right after IHDR; `badCrc` writes a wrong CRC. */
export function withChunk (png: Buffer, type: string, data: Buffer, badCrc = false): Buffer {
  const chunk = Buffer.alloc(12 + data.length)
  chunk.writeUInt32BE(data.length, 0)
  chunk.write(type, 4, 'latin1')
  data.copy(chunk, 8)
  chunk.writeUInt32BE(badCrc ? 0 : crc32(Buffer.concat([Buffer.from(type, 'latin1'), data])), 8 + data.length)
  return Buffer.concat([png.subarray(0, 33), chunk, png.subarray(33)])
}

/** The RGBA of one pixel of a PNG. */
export function pixel (bytes: Buffer, x: number, y: number): number[] {
  const png = PNG.sync.read(bytes)
  const i = (y * png.width + x) * 4
  return [...png.data.subarray(i, i + 4)]
}
