import t from 'tap'
import { startOrbtest } from '../src/orbtest.js'
import { httpRequest } from './helpers/client.js'
import { DEMO, OrbClient } from './helpers/orb.js'

// CTL-D01 (docs/decisions.md): after POST /control/reset, once the fakes are quiet, the control server collects
// garbage twice, and any request to a fake in between starts the wait again. The collector is counted here, not run,
// and a tick is 10 ms; what the collections give back is measured in bench/memory.ts.

const TICK_MS = 10
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

async function setup (tt: { teardown(fn: () => unknown): void }) {
  const collected: number[] = []
  const fakes = await startOrbtest({
    orbtile: false,
    orb: { port: 0 },
    controlPort: 0,
    clockMode: 'virtual',
    reclaimAfterReset: {
      collect: () => { collected.push(Date.now()) },
      tickMs: TICK_MS,
      firstQuietTicks: 2,
      secondQuietTicks: 4
    }
  })
  tt.teardown(() => fakes.close())
  const reset = async (): Promise<void> => {
    const reply = await httpRequest(fakes.control.url, { method: 'POST', path: '/control/reset', body: {} })
    if (reply.status !== 200) throw new Error(`reset answered ${reply.status}`)
  }
  return { fakes, collected, reset, bot: new OrbClient(fakes.orb!.url, DEMO.token) }
}

t.test('CTL-D01 a reset is followed, once the fakes are quiet, by two collections, and then by none', async (t) => {
  const { collected, reset } = await setup(t)
  await sleep(TICK_MS * 12)
  t.equal(collected.length, 0, 'nothing is collected before a reset')
  await reset()
  await sleep(TICK_MS * 30)
  t.equal(collected.length, 2, 'two collections after the quiet spell')
  await sleep(TICK_MS * 12)
  t.equal(collected.length, 2, 'and no more: the reclaim disarms itself')
  await reset()
  await sleep(TICK_MS * 30)
  t.equal(collected.length, 4, 'the next reset arms it again')
})

t.test('CTL-D01 requests to a fake after the reset keep postponing the collections until they stop', async (t) => {
  const { collected, reset, bot } = await setup(t)
  await reset()
  const until = Date.now() + TICK_MS * 25
  while (Date.now() < until) {
    t.equal((await bot.get('/api/bot/v1/app')).status, 200)
    await sleep(TICK_MS / 2)
  }
  t.equal(collected.length, 0, 'no collection while the fake is busy')
  await sleep(TICK_MS * 30)
  t.equal(collected.length, 2, 'both once it is quiet')
})
