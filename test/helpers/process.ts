// Waiting on what a test's own processes do: a condition that comes true, and a child's exit.
import type { ChildProcess } from 'node:child_process'

/** Resolves once `ready` holds, looking every 100 ms for at most `ms`; whether it held. */
export async function until (ready: () => boolean, ms: number): Promise<boolean> {
  for (let waited = 0; waited < ms; waited += 100) {
    if (ready()) return true
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  return ready()
}

/** A child's exit code, once it has exited (null when a signal ended it). */
export async function exitOf (child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null) return child.exitCode
  return await new Promise((resolve) => child.once('exit', (code) => resolve(code)))
}
