import { existsSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

let root: string | undefined

/** The package's root folder, found from this module whether it runs from `src/` (tsx) or from `dist/`. */
export function packageRoot (): string {
  if (root !== undefined) return root
  let dir = dirname(fileURLToPath(import.meta.url))
  for (;;) {
    const manifest = join(dir, 'package.json')
    if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name === 'orbtest') {
      root = dir
      return dir
    }
    const parent = dirname(dir)
    if (parent === dir) throw new Error('orbtest: cannot find the package root (package.json named "orbtest")')
    dir = parent
  }
}

/** Reads a JSON file shipped with the package, by its path from the package root. */
export function readPackageJson<T = unknown> (relativePath: string): T {
  return JSON.parse(readFileSync(join(packageRoot(), relativePath), 'utf8')) as T
}

/** The package's version, from package.json. */
export function packageVersion (): string {
  return readPackageJson<{ version: string }>('package.json').version
}
