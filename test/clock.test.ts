import t from 'tap'
import fc from 'fast-check'
import { RealClock, VirtualClock, advanceClock, ClockNotVirtualError, createClock } from '../src/shared/clock.js'
import { fcParams } from './helpers/fc.js'

t.test('CLK-01 a virtual clock stands still until advanced, then fires due timers in due order, ties in set order', async (t) => {
  const clock = new VirtualClock(1000)
  const fired: Array<[string, number]> = []
  clock.setTimer(30, () => fired.push(['c', clock.now()]))
  clock.setTimer(10, () => fired.push(['a', clock.now()]))
  clock.setTimer(10, () => fired.push(['b', clock.now()]))
  const cancelled = clock.setTimer(20, () => fired.push(['x', clock.now()]))
  clock.clearTimer(cancelled)
  t.equal(clock.now(), 1000)
  clock.advance(9)
  t.same(fired, [])
  t.equal(clock.advance(100), 1109)
  t.same(fired, [['a', 1010], ['b', 1010], ['c', 1030]], 'each callback reads its own due time')
  t.equal(clock.pendingTimers(), 0)
})

t.test('CLK-02 timers set by a firing timer fire in the same advance when due', async (t) => {
  const clock = new VirtualClock(0)
  const fired: number[] = []
  const chain = (): void => { fired.push(clock.now()); if (fired.length < 5) clock.setTimer(10, chain) }
  clock.setTimer(10, chain)
  clock.advance(35)
  t.same(fired, [10, 20, 30])
  clock.advance(100)
  t.same(fired, [10, 20, 30, 40, 50])
})

t.test('CLK-03 for any set of timers and advances, every timer fires once, in due order, never early', async (t) => {
  await fc.assert(fc.property(
    fc.array(fc.integer({ min: 0, max: 10_000 }), { maxLength: 60 }),
    fc.array(fc.integer({ min: 0, max: 3000 }), { minLength: 1, maxLength: 20 }),
    (delays, advances) => {
      const clock = new VirtualClock(0)
      const fired: Array<{ due: number, at: number }> = []
      for (const delay of delays) clock.setTimer(delay, () => fired.push({ due: delay, at: clock.now() }))
      let total = 0
      for (const ms of advances) { clock.advance(ms); total += ms }
      const expected = delays.filter((d) => d <= total).sort((a, b) => a - b)
      return fired.length === expected.length &&
        fired.every((f, i) => f.due === expected[i] && f.at === f.due)
    }
  ), fcParams())
})

t.test('CLK-04 dispose cancels everything; a bad advance is refused', async (t) => {
  const clock = new VirtualClock(0)
  let fired = false
  clock.setTimer(1, () => { fired = true })
  clock.dispose()
  clock.advance(10)
  t.notOk(fired)
  t.throws(() => clock.advance(-1), RangeError)
  t.throws(() => clock.advance(Number.NaN), RangeError)
})

t.test('CLK-05 a real clock follows Date.now, fires unref()ed timers, and refuses to be advanced', async (t) => {
  const clock = createClock('real')
  t.ok(clock instanceof RealClock)
  t.ok(Math.abs(clock.now() - Date.now()) < 50)
  // The clock's timers are unref()ed; a ref'd one keeps this test's process alive meanwhile.
  const keepAlive = setTimeout(() => {}, 1000)
  const fired = await new Promise<boolean>((resolve) => clock.setTimer(5, () => resolve(true)))
  clearTimeout(keepAlive)
  t.ok(fired)
  const handle = clock.setTimer(10_000, () => t.fail('cleared timers never fire'))
  t.equal(clock.pendingTimers(), 1)
  clock.clearTimer(handle)
  t.equal(clock.pendingTimers(), 0)
  await t.rejects(advanceClock(clock, 10), ClockNotVirtualError)
  clock.dispose()
})

t.test('CLK-06 a real timer longer than setTimeout\'s 24.8-day limit does not fire early', async (t) => {
  const clock = new RealClock()
  let fired = false
  clock.setTimer(30 * 24 * 3600 * 1000, () => { fired = true })
  const keepAlive = setTimeout(() => {}, 1000)
  await new Promise((resolve) => setTimeout(resolve, 50))
  clearTimeout(keepAlive)
  t.notOk(fired)
  t.equal(clock.pendingTimers(), 1)
  clock.dispose()
})

t.test('CLK-07 a virtual timer that throws does not stop the others; time still reaches the target', async (t) => {
  const clock = new VirtualClock(0)
  const fired: number[] = []
  clock.setTimer(10, () => { throw new Error('boom') })
  clock.setTimer(50, () => fired.push(clock.now()))
  t.throws(() => clock.advance(100), /boom/)
  t.same(fired, [50])
  t.equal(clock.now(), 100)
})
