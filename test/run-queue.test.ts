// OTC-25: the client's own waits for a CPU, read from Linux's schedstat for every thread of its process group, and
// what they excuse. Real processes: three busy loops pinned to one CPU with taskset share it, and each waits on its
// run queue about two thirds of the time. (Linux adds a wait to a thread's total when the thread runs again, so a
// loop starved for long stretches, as SCHED_IDLE would be, reads in jumps; equal loops take turns of milliseconds.)
// They run at the same priority as everything else: at nice 19, beside a busy test run, they were starved for long
// stretches, and their waits read in jumps after the interval. They hold one CPU for the few seconds they run.
import { existsSync } from 'node:fs'
import t, { type Test } from 'tap'
import { ClientProcess } from '../conformance/client/core/process.js'
import { RunQueueWatch } from '../conformance/client/core/run-queue.js'
import { Observer } from '../conformance/client/orbtile/observer.js'
import { exchange } from './helpers/tap-exchange.js'

const STARVED = `taskset -c 0 ${process.execPath} -e 'for (;;) {}'`
const COMPETITOR = STARVED
// Not a Node process: its helper threads go on working for a while after it starts, and wait for the CPU meanwhile.
const ASLEEP = 'taskset -c 0 sleep 60'
const sleep = async (ms: number): Promise<void> => await new Promise((resolve) => setTimeout(resolve, ms))

/** Starts a client as the suites do (its own process group: `; :` keeps sh from exec'ing), stopped with the test. */
function client (t: Test, command: string): ClientProcess {
  // Without tap's NODE_OPTIONS, whose loaders would make each loop's start slow.
  const c = new ClientProcess(['sh', '-c', `${command}; :`], { PATH: process.env.PATH }, () => 0, () => {})
  t.teardown(async () => { await c.stop(200) })
  return c
}

if (!existsSync('/proc/self/schedstat')) {
  t.pass('OTC-25 no /proc/PID/schedstat on this system: the watch reads nothing, and excuses nothing')
  t.equal(new RunQueueWatch(process.pid).watching, false, 'OTC-25 nothing is read')
} else {
  t.test('OTC-25 the watch reads how long a client waited for a CPU, and was busy, a child in its process group included: a starved loop most of the time, a sleeping process none', async (t) => {
    client(t, COMPETITOR)
    client(t, COMPETITOR)
    const starved = client(t, STARVED)
    const asleep = client(t, ASLEEP)
    const starvedWatch = new RunQueueWatch(starved.pid)
    const asleepWatch = new RunQueueWatch(asleep.pid)
    t.teardown(() => { starvedWatch.stop(); asleepWatch.stop() })
    t.ok(starvedWatch.watching && asleepWatch.watching, 'both are read')
    await sleep(600) // the loops have started: their turns are even
    const a = performance.now()
    await sleep(800)
    const b = performance.now()
    const waited = starvedWatch.waited(a, b)
    // Two thirds of the time in theory; read here, nearer half (the loops' starts, the samples' timing).
    t.ok(waited >= (b - a) / 4 && waited <= b - a + 100, `the starved child waited ${waited.toFixed(0)} of ${(b - a).toFixed(0)} ms`)
    t.ok(asleepWatch.waited(a, b) < 50, `the sleeping one ${asleepWatch.waited(a, b).toFixed(0)} ms`)
    const busy = starvedWatch.busy(a, b)
    t.ok(busy >= (b - a) * 0.8 && busy <= b - a, `busy (running or waiting) ${busy.toFixed(0)} of ${(b - a).toFixed(0)} ms`)
    t.ok(asleepWatch.busy(a, b) < 50, `the sleeping one busy ${asleepWatch.busy(a, b).toFixed(0)} ms`)
    t.equal(starvedWatch.waited(b, a), 0, 'an empty interval: none')
    const none = new RunQueueWatch(undefined)
    t.equal(none.watching, false, 'no process: nothing is read')
    t.equal(none.waited(a, b), 0, 'and nothing excused')
  })

  /**
   * OT-019 on a journal written here, against a real client process: a registration gives a lease's token on
   * connection 1, a request on connection 3 carries it (the client has it), and 350 ms later a request on
   * `connection` comes without it, while the client was starved or asleep.
   */
  const onItsWay = async (t: Test, command: string, connection: number): Promise<number> => {
    const watch = new RunQueueWatch(client(t, command).pid)
    t.teardown(() => { watch.stop() })
    await sleep(600)
    const obs = new Observer('discovery-token-0123', { only: ['OT-019'] })
    obs.watchClient(watch)
    const t0 = obs.now()
    const bearer = { authorization: 'Bearer discovery-token-0123' }
    const lease = 'adapter-token-0123456789012345678901234567890'
    const target = '/a/v1/adapters/dev.example.a'
    const given = { adapter: { id: 'dev.example.a' }, enabled: true, warnings: [], adapterToken: lease }
    const reply = JSON.stringify(given)
    const body = Buffer.from('{"name":"A"}')
    obs.exchange({ ...exchange(1, 200), target, headers: bearer, body, reply, startedAt: t0, sentAt: t0 })
    const carried = { ...bearer, 'x-orbtile-adapter-token': lease }
    obs.exchange({ ...exchange(2, 200), connection: 3, headers: carried, startedAt: t0 + 1, sentAt: t0 + 1 })
    await sleep(400)
    obs.exchange({ ...exchange(3, 401), connection, headers: bearer, startedAt: t0 + 351, sentAt: t0 + 351 })
    return obs.findings(t0 + 800).find((f) => f.id === 'OT-019')!.violationCount
  }

  t.test('OTC-25 OT-019 a request without the lease token, on another connection 350 ms after one carried it, was on its way if the client was busy meanwhile, not if it was asleep; on the lease connection never', async (t) => {
    client(t, COMPETITOR)
    client(t, COMPETITOR)
    // The starved loop is busy (running or waiting) all of the 350 ms; the excuse is 250 ms and that.
    t.equal(await onItsWay(t, STARVED, 2), 0, 'busy all along: it may have built the request before it had the token')
    t.equal(await onItsWay(t, ASLEEP, 2), 1, 'asleep all along: it had the token, and sent a request without it anyway')
    t.equal(await onItsWay(t, STARVED, 1), 1, 'on the connection the lease came on, it had read it')
  })
}
