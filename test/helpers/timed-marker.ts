// test/_timed.test.ts and the browser's tests, kept apart: the timed file marks itself running (a file named after
// the tap run it belongs to, holding its pid), and the dashboard's browser tests wait until it is gone. With nice 19
// the browser still took enough of the machine, beside the timed file, to make its judged runs miss a seat and a
// fault; after it, the browser costs the others nothing they need. Run alone, a browser test finds no mark and
// starts at once.
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'

// Every test file of one run is a child of the same tap process.
const mark = join(tmpdir(), `orbtest-timed-${process.ppid}`)

/** Called by the timed file: marks it running until it exits. */
export function markTimedRunning (): () => void {
  writeFileSync(mark, String(process.pid))
  const clear = (): void => { rmSync(mark, { force: true }) }
  process.once('exit', clear)
  return clear
}

/** Waits (at most `limitMs`) while the timed file of this run is running; says how long it waited. */
export async function afterTimedFile (limitMs = 240_000): Promise<number> {
  const started = Date.now()
  while (existsSync(mark) && Date.now() - started < limitMs) {
    const pid = Number(readFileSync(mark, 'utf8'))
    try {
      process.kill(pid, 0)
    } catch {
      break // it died without clearing its mark
    }
    await sleep(250)
  }
  return Date.now() - started
}
