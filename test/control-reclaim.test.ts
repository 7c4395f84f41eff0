import { getHeapSpaceStatistics } from 'node:v8'
import t from 'tap'
import { Reclaimer } from '../src/control/reclaim.js'
import { startOrbtest } from '../src/orbtest.js'
import { httpRequest } from './helpers/client.js'
import { DEMO, OrbClient } from './helpers/orb.js'

// CTL-D01 (docs/decisions.md): after POST /control/reset, once the fakes are quiet, the control server collects
// garbage twice, and a request to a fake in between starts the wait again. Here the ticks come by hand; the first
// tests count the collector rather than run it (the requests are real), and the last runs V8's own. What the
// collections give back to the system is measured in bench/memory.ts.

/** A reclaim's ticker driven by hand: `tick` ticks while a reclaim is armed, and `armed` says whether one is. */
function handTicker () {
  let ticking: (() => void) | undefined
  return {
    ticker: (tick: () => void) => {
      ticking = tick
      return () => { ticking = undefined }
    },
    tick: () => ticking?.(),
    armed: () => ticking !== undefined
  }
}

async function setup (tt: { teardown(fn: () => unknown): void }) {
  let collected = 0
  const hand = handTicker()
  const fakes = await startOrbtest({
    orbtile: false,
    orb: { port: 0 },
    controlPort: 0,
    clockMode: 'virtual',
    reclaimAfterReset: {
      collect: () => { collected++ },
      ticker: hand.ticker,
      firstQuietTicks: 2,
      secondQuietTicks: 4
    }
  })
  tt.teardown(() => fakes.close())
  const reset = async (): Promise<void> => {
    const reply = await httpRequest(fakes.control.url, { method: 'POST', path: '/control/reset', body: {} })
    if (reply.status !== 200) throw new Error(`reset answered ${reply.status}`)
  }
  /** Ticks `n` times (while armed) and says how many collections there have been. */
  const tick = (n: number): number => {
    for (let i = 0; i < n; i++) hand.tick()
    return collected
  }
  const bot = new OrbClient(fakes.orb!.url, DEMO.token)
  return { reset, tick, armed: hand.armed, post: () => bot.get('/api/bot/v1/app') }
}

t.test('CTL-D01 a reset is followed, once the fakes are quiet, by two collections, and then by none', async (t) => {
  const { reset, tick, armed } = await setup(t)
  t.equal(armed(), false, 'nothing ticks before a reset')
  await reset()
  t.equal(armed(), true)
  t.equal(tick(1), 0, 'one quiet tick is not enough')
  t.equal(tick(1), 1, 'the first collection after two')
  t.equal(tick(3), 1, 'the second waits for four more')
  t.equal(tick(1), 2, 'and comes after them')
  t.equal(armed(), false, 'then the reclaim disarms itself')
  await reset()
  t.equal(tick(6), 4, 'the next reset arms it again')
})

t.test('CTL-D01 a request to a fake between ticks starts the wait again, before and after the first collection',
  async (t) => {
    const { reset, tick, post } = await setup(t)
    await reset()
    for (let i = 0; i < 5; i++) {
      t.equal((await post()).status, 200)
      t.equal(tick(1), 0, `busy tick ${i}: no collection`)
    }
    t.equal(tick(1), 0)
    t.equal(tick(1), 1, 'two quiet ticks: the first collection')
    t.equal(tick(3), 1)
    await post()
    t.equal(tick(1), 1, 'a request spoils the quiet sample the second needs')
    t.equal(tick(1), 1, 'and the wait begins from the start: two quiet ticks')
    t.equal(tick(1), 2, 'then a first collection again')
    t.equal(tick(3), 2)
    t.equal(tick(1), 3, 'and four more quiet ticks the second')
  })

// The collector itself, V8's own, in this process: 300,000 objects promoted to the old space, three in four then
// dropped. Alone, that leaves an old space of 33 to 34 MiB for 10 in use after a plain full collection, and of 11 MiB
// after a compacting one (Node 20, 22 and 24 alike): the reclaim's must leave little free.
t.test('CTL-D01 the reclaim\'s own collection compacts: a fragmented old space shrinks to about what is in use', async (t) => {
  const hand = handTicker()
  const reclaimer = new Reclaimer([], { ticker: hand.ticker, firstQuietTicks: 1, secondQuietTicks: 1 })
  t.teardown(() => reclaimer.dispose())
  const collectTwice = (): void => {
    reclaimer.arm()
    hand.tick()
    hand.tick()
  }
  const kept: Array<{ a: number, b: number[] } | null> = []
  for (let i = 0; i < 300_000; i++) kept.push({ a: i, b: [i, i + 1] })
  collectTwice() // they survive two collections: the old space holds them
  for (let i = 0; i < kept.length; i++) if (i % 4 !== 0) kept[i] = null
  collectTwice()
  const old = getHeapSpaceStatistics().find((s) => s.space_name === 'old_space')!
  const [size, used] = [old.space_size / 2 ** 20, old.space_used_size / 2 ** 20]
  // What the dropped objects held is about 23 MiB of pages: a plain collection leaves most of it free in the space.
  t.ok(size - used < 4, `old space ${size.toFixed(1)} MiB for ${used.toFixed(1)} MiB in use`)
  t.equal(kept.filter((k) => k !== null).length, 75_000, 'what was kept is all there')
})
