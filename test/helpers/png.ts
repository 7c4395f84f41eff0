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
        png.data[i] = random(); png.data[i + 1] = random(); png.data[i + 2] = random(); png.data[i + 3] = 255
      } else if (pattern === 'solid') {
        png.data[i] = 40; png.data[i + 1] = 120; png.data[i + 2] = 200; png.data[i + 3] = 255
      } else {
        png.data[i] = Math.round((x / width) * 255); png.data[i + 1] = Math.round((y / height) * 255); png.data[i + 2] = 128; png.data[i + 3] = 255
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
