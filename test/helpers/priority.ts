// Imported by tap into every test process (package.json's tap node-arg, as built: dist/test/helpers/priority.js):
// every test file but test/_timed.test.ts runs at a lower CPU priority (nice 10), and so do the processes it starts.
// The timed file's client-suite runs judge real-time behaviour (a heartbeat's gap, a flood's rate, a poll held to
// its deadline); beside busy files at the same priority they missed deliberate faults. The kernel then gives them the
// CPU first, and the other files the rest: with them, the two phases of a run (all files, then the timed ones alone)
// become one.
import { setPriority } from 'node:os'

// The dashboard's tests drive a real browser, the heaviest processes of the run: they go lowest (nice 19), so that
// the browser takes what the others leave (with them at nice 10, the timed file once missed faults and a seat).
const browser = process.argv.some((arg) => /dashboard\.test\.[jt]s$/.test(arg))
if (!process.argv.some((arg) => /_timed\.test\.[jt]s$/.test(arg))) {
  try {
    setPriority(browser ? 19 : 10)
  } catch {}
}
