// OTC-17: the judge times the adapter with its own clock, and widens each timing check by the stalls it measured in
// itself. The monitor is shown on real stalls (a busy wait), and its effect on OT-027 with and without one.
// (OTC-25, the client's own waits for a CPU, is in run-queue.test.ts.)
import t from 'tap'
import { stalls } from '../conformance/client/core/stall.js'
import { playOrbScenario } from '../conformance/client/orb/play.js'
import { Observer } from '../conformance/client/orbtile/observer.js'
import { EVENTS_BOT } from './helpers/client-run.js'
import { exchange } from './helpers/tap-exchange.js'

const busy = (ms: number): void => {
  const until = performance.now() + ms
  while (performance.now() < until) { /* a stalled judge */ }
}

t.test('OTC-17 the judge measures how long it could not run: a 300 ms busy wait is seen, a quiet 300 ms is not', async (t) => {
  const release = stalls.hold()
  t.teardown(release)
  const a = performance.now()
  busy(300)
  const b = performance.now()
  t.ok(stalls.within(a, b) >= 250, `the stall seen: ${stalls.within(a, b).toFixed(0)} ms`)
  await new Promise((resolve) => setTimeout(resolve, 300))
  const c = performance.now()
  t.ok(stalls.within(b + 1, c) < 200, `a quiet 300 ms: ${stalls.within(b + 1, c).toFixed(0)} ms`)
  t.equal(stalls.within(c + 1000, c + 2000), 0, 'nothing in the future')
})

/** A 429 (Retry-After: 1) at 0 ms, then the same connection's next request stamped 700 ms later. */
function judged (stallMs: number): number {
  const obs = new Observer('discovery-token', { only: ['OT-027'] })
  const t0 = obs.now()
  obs.exchange({ ...exchange(1, 429, ['429 injected, Retry-After 1']), startedAt: t0, sentAt: t0 })
  busy(stallMs)
  obs.exchange({ ...exchange(2, 200), startedAt: t0 + 700, sentAt: t0 + 700 })
  return obs.findings(t0 + 800).find((f) => f.id === 'OT-027')!.violationCount
}

t.test('OTC-17 OT-027 a request stamped 700 ms after a 429 breaks Retry-After, and is inconclusive when the judge stalled 400 ms between', async (t) => {
  const release = stalls.hold()
  t.teardown(release)
  t.equal(judged(0), 1, 'no stall: 0.7 s after Retry-After: 1 is a violation')
  t.equal(judged(400), 0, 'a 400 ms stall of the judge in between: the stamp may be that late, inconclusive')
})

t.test('OTC-17 a bot scenario measures the judge\'s stalls while it plays, as an adapter scenario does', async (t) => {
  t.notOk(stalls.held, 'no one holds the monitor before')
  let heldWhilePlaying = false
  const watch = setInterval(() => { heldWhilePlaying ||= stalls.held }, 50)
  await playOrbScenario({ mode: 'events', durationMs: 1500, steps: [] }, [process.execPath, EVENTS_BOT], { name: 'quiet', only: ['ORB-001'] })
  clearInterval(watch)
  t.ok(heldWhilePlaying, 'held while the scenario played')
  t.notOk(stalls.held, 'let go once it ended')
})
