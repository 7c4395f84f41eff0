import t from 'tap'
import fc from 'fast-check'
import { VirtualClock } from '../src/shared/clock.js'
import { TokenBuckets } from '../src/shared/token-bucket.js'
import { fcParams } from './helpers/fc.js'
import { startFake } from './helpers/fake.js'
import type { Teardown } from './helpers/fake.js'
import { SocketClient } from './helpers/client.js'
import { assertSpecError } from './helpers/assert.js'

async function setup (tt: Teardown, rateLimit: 'on' | 'off' = 'on') {
  const clock = new VirtualClock(Date.UTC(2026, 0, 1))
  const fake = await startFake(tt, { clock, rateLimit })
  tt.teardown(() => clock.dispose())
  const client = new SocketClient(fake.socketPath, fake.token)
  tt.teardown(() => client.close())
  return { fake, client, clock }
}

t.test('OT-026 100 back-to-back requests: the first 60 succeed, the other 40 are rate_limited', async (t) => {
  const { client } = await setup(t)
  const statuses: number[] = []
  for (let i = 0; i < 100; i++) statuses.push((await client.request()).status)
  t.same(statuses.slice(0, 60), Array(60).fill(200))
  t.same(statuses.slice(60), Array(40).fill(429))
})

t.test('OT-A20 a 429 carries Retry-After, and waiting it out on the clock succeeds', async (t) => {
  const { client, fake } = await setup(t)
  for (let i = 0; i < 60; i++) await client.request()
  const refused = await client.request()
  assertSpecError(t, refused, 'rate_limited')
  t.equal(refused.headers['retry-after'], '1', 'ceil(1 token / 20 per s) is 1 s, the minimum')
  await fake.control.advance(49)
  t.equal((await client.request()).status, 429, '49 ms refill less than one token')
  await fake.control.advance(1)
  t.equal((await client.request()).status, 200, 'at 50 ms one token is back')
  t.equal((await client.request()).status, 429)
  await fake.control.advance(Number(refused.headers['retry-after']) * 1000)
  const after = await Promise.all(Array.from({ length: 20 }, () => client.request()))
  t.same(after.map((r) => r.status), Array(20).fill(200), 'Retry-After seconds bring back 20 tokens')
})

t.test('OT-A02 OT-A20 requests refused before the rate-limit step take no token', async (t) => {
  const { client } = await setup(t)
  for (let i = 0; i < 100; i++) await client.request({ headers: { authorization: 'Bearer wrong' } })
  for (let i = 0; i < 100; i++) await client.request({ headers: { origin: 'x' } })
  const statuses = await Promise.all(Array.from({ length: 60 }, () => client.request()))
  t.same(statuses.map((r) => r.status), Array(60).fill(200))
})

t.test('OT-026 over the socket, no window of t seconds admits more than 60 + 20t requests', async (t) => {
  const { client, fake } = await setup(t)
  // Each step: advance the virtual clock, then send a burst; every admitted request is stamped with the clock.
  await fc.assert(
    fc.asyncProperty(
      fc.array(fc.record({ advance: fc.integer({ min: 0, max: 4000 }), burst: fc.integer({ min: 0, max: 90 }) }), {
        minLength: 1,
        maxLength: 8
      }),
      async (steps) => {
        await fake.control.advance(10_000) // start each run with a full bucket
        const admitted: number[] = []
        for (const { advance, burst } of steps) {
          await fake.control.advance(advance)
          const now = fake.clock.now()
          const replies = await Promise.all(Array.from({ length: burst }, () => client.request()))
          for (const reply of replies) if (reply.status === 200) admitted.push(now)
        }
        return windowsHold(admitted)
      }
    ),
    fcParams({ numRuns: 15 })
  )
})

t.test(
  'OT-026 the bucket itself: for any schedule, any window admits at most 60 + 20t, and a full bucket admits 60 at once',
  async (t) => {
    await fc.assert(
      fc.property(
        fc.array(fc.record({ advance: fc.integer({ min: 0, max: 3000 }), takes: fc.integer({ min: 0, max: 80 }) }), {
          maxLength: 40
        }),
        (steps) => {
          const clock = new VirtualClock(0)
          const buckets = new TokenBuckets({ burst: 60, perSecond: 20 }, clock)
          const admitted: number[] = []
          for (const { advance, takes } of steps) {
            clock.advance(advance)
            for (let i = 0; i < takes; i++) if (buckets.take('k').ok) admitted.push(clock.now())
          }
          return windowsHold(admitted)
        }
      ),
      fcParams()
    )
    const clock = new VirtualClock(0)
    const buckets = new TokenBuckets({ burst: 60, perSecond: 20 }, clock)
    let ok = 0
    for (let i = 0; i < 61; i++) if (buckets.take('k').ok) ok++
    t.equal(ok, 60)
  }
)

t.test('OT-A20 a refused take reports an honest Retry-After: waiting it always brings a token back', async (t) => {
  await fc.assert(
    fc.property(fc.array(fc.integer({ min: 0, max: 200 }), { maxLength: 50 }), (gaps) => {
      const clock = new VirtualClock(0)
      const buckets = new TokenBuckets({ burst: 60, perSecond: 20 }, clock)
      for (const gap of gaps) {
        clock.advance(gap)
        for (;;) {
          const taken = buckets.take('k')
          if (taken.ok) continue
          if (taken.retryAfterSeconds < 1) return false
          clock.advance(taken.retryAfterSeconds * 1000)
          if (!buckets.take('k').ok) return false
          break
        }
      }
      return true
    }),
    fcParams()
  )
})

t.test('OT-A20 buckets that refilled are forgotten, so invented keys cannot grow memory without bound', async (t) => {
  const clock = new VirtualClock(0)
  const buckets = new TokenBuckets({ burst: 60, perSecond: 20 }, clock, 100)
  for (let i = 0; i < 1000; i++) {
    buckets.take(`key-${i}`)
    clock.advance(3000) // every earlier bucket is full again
  }
  t.ok(buckets.snapshot().length <= 1, 'only the latest bucket is not full')
})

t.test('OT-026 --rate-limit off lifts the limit for load tests', async (t) => {
  const { client } = await setup(t, 'off')
  const replies = await Promise.all(Array.from({ length: 150 }, () => client.request()))
  t.same(replies.map((r) => r.status), Array(150).fill(200))
})

/** True when, for every pair of admitted timestamps, the count between them is at most 60 + 20 * seconds. */
function windowsHold (admitted: number[]): boolean {
  for (let i = 0; i < admitted.length; i++) {
    for (let j = i; j < admitted.length; j++) {
      const seconds = (admitted[j]! - admitted[i]!) / 1000
      if (j - i + 1 > 60 + 20 * seconds + 1e-9) return false
    }
  }
  return true
}

t.test('OT-A20 adapter routes draw on their adapter\'s own bucket; everything else shares one', async (t) => {
  const clock = new VirtualClock(0)
  t.teardown(() => clock.dispose())
  // The adapter routes arrive with registration; a route flagged as one exercises the same keying.
  const fake = await startFake(t, {
    clock,
    extraRoutes: [{ method: 'GET', path: '/adapters/:adapterId/probe', adapterRoute: true, handler: async () => ({}) }]
  })
  const client = new SocketClient(fake.socketPath, fake.token)
  t.teardown(() => client.close())
  const burst = (path: string, n: number) =>
    Promise.all(Array.from({ length: n }, () => client.request({ path }))).then((rs) => rs.map((r) => r.status))
  t.same(await burst('/adapters/a.one/probe', 61), [...Array(60).fill(200), 429], 'a.one spends its 60')
  t.same(await burst('/adapters/b.two/probe', 60), Array(60).fill(200), 'b.two has its own 60')
  t.same(await burst('/info', 60), Array(60).fill(200), 'the shared bucket is untouched by adapters')
  t.equal((await client.request()).status, 429)
  const buckets = fake.control.state().rateLimitBuckets.map((b) => b.key).sort()
  t.same(buckets, ['adapter:a.one', 'adapter:b.two', 'shared'])
})
