import { unlinkSync } from 'node:fs'

/**
 * Removes a file on the way out (a failed start, a shutdown, a stale temp file), where a throw would hide the fault
 * already in flight or stop the shutdown half-way. A file already gone is what the clean-up wants (ENOENT); any other
 * failure leaves the file behind, and is reported as a process warning so that a person learns of it.
 */
export function removeLeftover (path: string, what: string): void {
  try {
    unlinkSync(path)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return
    process.emitWarning(`could not remove ${what} ${path}: ${(err as Error).message}`)
  }
}
