import { mkdirSync, statSync } from 'node:fs'
import { dirname, resolve } from 'node:path'

/**
 * `mkdir -p` that always ends: each missing folder is made in turn, from the first one that exists. Node's own
 * `mkdirSync(path, { recursive: true })` loops for ever under a file system that answers ENOENT for a folder whose
 * parent exists (`/proc/nope` on Linux), which froze start-up at 100% CPU. Here such a folder fails with its code.
 */
export function makeDirectory (path: string, mode: number): void {
  const missing: string[] = []
  let at = resolve(path)
  for (;;) {
    try {
      if (statSync(at).isDirectory()) break
      throw Object.assign(new Error(`${at} is not a folder`), { code: 'ENOTDIR' })
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
    }
    missing.push(at)
    const parent = dirname(at)
    if (parent === at) break
    at = parent
  }
  for (const folder of missing.reverse()) {
    try {
      mkdirSync(folder, { mode })
    } catch (err) {
      // Made meanwhile by another process: fine. Any other fault (ENOENT from /proc, EACCES) is the caller's.
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
    }
  }
}
