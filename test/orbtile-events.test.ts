import { request as httpRequest } from 'node:http'
import t from 'tap'
import fc from 'fast-check'
import { validatorFor } from '../src/spec/orbtile.js'
import { fcParams } from './helpers/fc.js'
import { agentSetup, approval, newSession, question } from './helpers/orbtile.js'
import { assertSpecError, specErrorProblem } from './helpers/assert.js'

const replySchema = validatorFor('EventsReply')
// Waits until a condition on the fake's state holds, instead of sleeping and hoping.
const until = async (condition: () => boolean) => {
  for (let i = 0; i < 5000 && !condition(); i++) await new Promise((resolve) => setImmediate(resolve))
  if (!condition()) throw new Error('the fake never reached the awaited state')
}
const held = (a: { snapshot(): { events: { pollHeld: boolean } | null } }) =>
  until(() => a.snapshot().events?.pollHeld === true)

t.test("OT-131 a poll answers 200 with events, lastSequence and acknowledged, as the spec's EventsReply", async (t) => {
  const a = await agentSetup(t)
  const reply = await a.poll()
  t.equal(reply.status, 200)
  t.ok(replySchema(reply.json), JSON.stringify(replySchema.errors))
  t.same(reply.json, { events: [], lastSequence: 0, acknowledged: 0 })
})

t.test('OT-132 after and ack are 0..2^53-1, waitSeconds 0..2, all integers', async (t) => {
  const a = await agentSetup(t)
  for (const [body, field] of [
    [{ after: -1 }, 'after'],
    [{ ack: 9007199254740992 }, 'ack'],
    [{ after: 1.5 }, 'after'],
    [{ waitSeconds: 3 }, 'waitSeconds'],
    [{ waitSeconds: '1' }, 'waitSeconds']
  ] as const) {
    assertSpecError(t, await a.poll(body), 'invalid_field', field)
  }
})

t.test('OT-142 OT-A23 an adapter without event capabilities gets events_not_supported', async (t) => {
  const a = await agentSetup(t, { capabilities: [] })
  assertSpecError(t, await a.poll(), 'events_not_supported')
})

t.test('OT-143 OT-144 a tap queues a tap event with sequence, sessionId and host', async (t) => {
  const a = await agentSetup(t)
  await a.post('s1', newSession({ host: 'devbox' }))
  const tap = a.fake.control.tap(a.id, 's1')
  t.same(tap.event, { sequence: 1, type: 'tap', sessionId: 's1', host: 'devbox' })
  const reply = await a.poll()
  t.same(reply.json.events, [{ sequence: 1, type: 'tap', sessionId: 's1', host: 'devbox' }])
  t.ok(replySchema(reply.json))
  const without = await agentSetup(t, { capabilities: ['approvals'], id: 'com.example.notap' })
  await without.post('s1', newSession())
  t.equal(without.fake.control.tap(without.id, 's1').event, null, 'no tap capability, no tap event')
})

t.test('OT-055 alsoOpen opens the openURL on a tap; eventOnly only emits the event', async (t) => {
  const a = await agentSetup(t)
  await a.post('s1', newSession({ openURL: 'vscode://file/x', pid: 4242 }))
  t.same(a.fake.control.tap(a.id, 's1'), {
    event: { sequence: 1, type: 'tap', sessionId: 's1', host: 'local' },
    opened: 'vscode://file/x',
    activated: 4242
  })
  await a.reregister({ tapBehavior: 'eventOnly' })
  const onlyEvent = a.fake.control.tap(a.id, 's1')
  t.same([onlyEvent.opened, onlyEvent.activated], [null, null])
  t.ok(onlyEvent.event)
  await a.reregister({ tapBehavior: 'alsoOpen', urlSchemes: [] })
  t.equal(a.fake.control.tap(a.id, 's1').opened, null, 'OT-A15: an openURL whose scheme was dropped is kept but not opened')
})

t.test('OT-145 OT-146 decision events carry the request id, the decision or picks, and expiresAt', async (t) => {
  const a = await agentSetup(t, { keypad: true })
  await a.post('s1', newSession({ approval: approval('r1') }))
  await a.post(
    's2',
    newSession({
      question: question('q1', {
        questions: [
          { text: 'a?', options: [{ label: 'x' }, { label: 'y' }, { label: 'z' }], multiSelect: true },
          { text: 'b?', options: [{ label: 'x' }, { label: 'y' }] }
        ]
      })
    })
  )
  a.fake.control.decide(a.id, 'r1', { decision: 'deny' })
  a.fake.control.decide(a.id, 'q1', { picks: [[0, 2], [1]] })
  const { events } = (await a.poll()).json
  const expiresAt = a.snapshot().requests[0]!.expiresAt
  t.same(events, [
    { sequence: 1, type: 'approval', sessionId: 's1', host: 'local', requestId: 'r1', expiresAt, decision: 'deny' },
    { sequence: 2, type: 'question', sessionId: 's2', host: 'local', requestId: 'q1', expiresAt, picks: [[0, 2], [1]] }
  ])
})

t.test(
  'OT-146 picks are validated against the pending question: one array per question, indices in range, unique, one for single-select',
  async (t) => {
    const a = await agentSetup(t, { keypad: true })
    await a.post('s1', newSession({ question: question('q1') }))
    for (const picks of [[[0, 1]], [[2]], [[0], [1]], [[-1]], [['0']], [[]], [[0, 0]], []]) {
      t.throws(
        () => a.fake.control.decide(a.id, 'q1', { picks: picks as number[][] }),
        { name: 'ControlError' },
        JSON.stringify(picks)
      )
    }
    t.ok(a.fake.control.decide(a.id, 'q1', { picks: [[1]] }).event)
  }
)

t.test('OT-135 OT-136 events after `after`, ascending; a cumulative ack that never goes down', async (t) => {
  const a = await agentSetup(t)
  await a.post('s1', newSession())
  for (let i = 0; i < 5; i++) a.fake.control.tap(a.id, 's1')
  t.same((await a.poll()).json.events.map((e: { sequence: number }) => e.sequence), [1, 2, 3, 4, 5])
  t.same((await a.poll({ after: 3 })).json.events.map((e: { sequence: number }) => e.sequence), [4, 5])
  const acked = await a.poll({ after: 4, ack: 4 })
  t.same([acked.json.acknowledged, acked.json.events.map((e: { sequence: number }) => e.sequence)], [4, [5]])
  const lower = await a.poll({ after: 2, ack: 1 })
  t.equal(lower.json.acknowledged, 4, 'OT-A23: a lower ack is a no-op')
  t.same(lower.json.events.map((e: { sequence: number }) => e.sequence), [5], 'acknowledged events never come back')
})

t.test('OT-137 invalid_cursor exactly when ack > after or after is beyond what was delivered', async (t) => {
  const a = await agentSetup(t)
  await a.post('s1', newSession())
  for (let i = 0; i < 4; i++) a.fake.control.tap(a.id, 's1')
  assertSpecError(t, await a.poll({ after: 1 }), 'invalid_cursor')
  await a.poll()
  assertSpecError(t, await a.poll({ after: 3, ack: 5 }), 'invalid_cursor')
  assertSpecError(t, await a.poll({ after: 10 }), 'invalid_cursor')
  t.equal((await a.poll({ after: 4, ack: 4 })).status, 200)
})

t.test('OT-031 OT-A21 a reply holds at most 128 events; past 128 unacknowledged, the oldest is dropped and its sequence never reused', async (t) => {
  const a = await agentSetup(t)
  await a.post('s1', newSession())
  for (let i = 0; i < 130; i++) a.fake.control.tap(a.id, 's1')
  const reply = (await a.poll()).json
  t.equal(reply.events.length, 128)
  t.equal(reply.events[0].sequence, 3, 'sequences 1 and 2 were dropped: the client sees a gap')
  t.equal(reply.lastSequence, 130)
})

t.test('OT-140 a long poll is held and answered at once when an event arrives; [] at the deadline on the fake\'s clock', async (t) => {
  const a = await agentSetup(t)
  await a.post('s1', newSession())
  const holding = a.poll({ waitSeconds: 2 })
  await held(a)
  a.fake.control.tap(a.id, 's1')
  t.equal((await holding).json.events.length, 1)
  const empty = a.poll({ after: 1, waitSeconds: 2 })
  await held(a)
  await a.advance(1999)
  t.equal(a.snapshot().events!.pollHeld, true, 'still held at 1.999 s')
  await a.advance(1)
  t.same((await empty).json.events, [])
  t.equal((await a.poll({ after: 1, waitSeconds: 0 })).json.events.length, 0, 'waitSeconds 0 answers at once')
})

t.test('OT-133 one outstanding poll per adapter: a second is poll_pending, and the first carries on', async (t) => {
  const a = await agentSetup(t)
  await a.post('s1', newSession())
  const first = a.poll({ waitSeconds: 2 })
  await held(a)
  assertSpecError(t, await a.poll(), 'poll_pending')
  a.fake.control.tap(a.id, 's1')
  t.equal((await first).json.events.length, 1)
})

t.test(
  'OT-033 OT-141 OT-A21 at most 4 long polls across the fake; a 5th is limit_exceeded; waitSeconds 0 never counts',
  async (t) => {
    const agents = [await agentSetup(t)]
    const { fake } = agents[0]!
    const clients = []
    for (let i = 1; i < 5; i++) {
      fake.control.setUser(`com.example.a${i}`, { allowed: true })
      const reply = await agents[0]!.register(`com.example.a${i}`, {
        name: 'x',
        palette: { baseHue: 200 },
        capabilities: ['tap']
      })
      clients.push({ id: `com.example.a${i}`, token: reply.json.adapterToken as string })
    }
    const poll = (id: string, token: string, waitSeconds: number) =>
      agents[0]!.client.request({
        method: 'POST',
        path: `/adapters/${id}/events`,
        body: { waitSeconds },
        headers: { 'x-orbtile-adapter-token': token }
      })
    const held = [agents[0]!.poll({ waitSeconds: 2 }), ...clients.slice(0, 3).map((c) => poll(c.id, c.token, 2))]
    await until(() => fake.control.state().adapters.filter((adapter) => adapter.events?.pollHeld === true).length === 4)
    assertSpecError(t, await poll(clients[3]!.id, clients[3]!.token, 1), 'limit_exceeded')
    t.equal((await poll(clients[3]!.id, clients[3]!.token, 0)).status, 200)
    await fake.control.advance(2000)
    for (const reply of await Promise.all(held)) t.equal(reply.status, 200)
    t.equal((await poll(clients[3]!.id, clients[3]!.token, 0)).status, 200)
  }
)

t.test('OT-141 a client that disconnects mid-poll frees its slot at once', async (t) => {
  const a = await agentSetup(t)
  const req = httpRequest({
    socketPath: a.fake.socketPath,
    method: 'POST',
    path: `/a/v1/adapters/${a.id}/events`,
    headers: {
      host: 'localhost',
      authorization: `Bearer ${a.fake.token}`,
      'content-type': 'application/json',
      'x-orbtile-adapter-token': a.token()
    }
  })
  req.on('error', () => {})
  req.end(JSON.stringify({ waitSeconds: 2 }))
  await held(a)
  t.equal(a.snapshot().events!.pollHeld, true)
  req.destroy()
  await until(() => a.snapshot().events!.pollHeld === false)
  t.equal(a.snapshot().events!.pollHeld, false, 'freed without waiting for the deadline')
  t.equal((await a.poll()).status, 200, 'and the next poll is not poll_pending')
})

t.test('OT-057 switching keypad decisions off drops decisions not yet delivered', async (t) => {
  const a = await agentSetup(t, { keypad: true })
  await a.post('s1', newSession({ approval: approval('r1') }))
  await a.post('s2', newSession({ approval: approval('r2') }))
  a.fake.control.decide(a.id, 'r1', { decision: 'allow' })
  await a.poll()
  a.fake.control.decide(a.id, 'r2', { decision: 'allow' })
  a.fake.control.tap(a.id, 's1')
  a.fake.control.setUser(a.id, { keypad: false })
  t.same(a.snapshot().events!.queued.map((e) => e.type), ['approval', 'tap'], 'the delivered decision stays until acked; the undelivered one is gone')
})

t.test('OT-A21 decision events whose expiresAt passed are dropped from the queue', async (t) => {
  const a = await agentSetup(t, { keypad: true, fake: { leaseSilenceMs: 3_600_000 } })
  await a.post('s1', newSession({ approval: approval('r1') }))
  a.fake.control.decide(a.id, 'r1', { decision: 'allow' })
  await a.advance(600_000)
  t.same(a.snapshot().events!.queued, [])
  t.same((await a.poll()).json.events, [])
})

t.test('OT-A23 sequences are per lease: they go on across re-registration and restart at 1 with a new lease', async (t) => {
  const a = await agentSetup(t)
  await a.post('s1', newSession())
  a.fake.control.tap(a.id, 's1')
  await a.reregister()
  a.fake.control.tap(a.id, 's1')
  t.same((await a.poll()).json.events.map((e: { sequence: number }) => e.sequence), [1, 2])
  await a.unregister(a.id, a.token())
  await a.reregister()
  assertSpecError(t, await a.poll({ after: 2 }), 'invalid_cursor')
  await a.post('s1', newSession())
  a.fake.control.tap(a.id, 's1')
  t.same((await a.poll()).json.events.map((e: { sequence: number }) => e.sequence), [1])
})

t.test('OT-A23 unknown poll fields are warned; polling while not enabled is allowed and empty', async (t) => {
  const a = await agentSetup(t, { allowed: false })
  const reply = await a.poll({ sparkle: 1 })
  t.equal(reply.status, 200)
  t.same(reply.json.warnings, ['unknown-field: sparkle'])
  t.same(reply.json.events, [])
})

t.test('OT-A30 events queued for a session that ended stay deliverable; no new ones are made for it', async (t) => {
  const a = await agentSetup(t, { keypad: true })
  await a.post('s1', newSession())
  a.fake.control.tap(a.id, 's1')
  await a.batch([])
  t.equal((await a.poll()).json.events.length, 1)
  t.throws(() => a.fake.control.tap(a.id, 's1'), { name: 'ControlError' })
})

t.test('OT-136 OT-137 for any interleaving of taps, polls and acks, no event is lost or delivered after its ack', async (t) => {
  const a = await agentSetup(t)
  await a.post('s1', newSession())
  let lease = 0
  await fc.assert(fc.asyncProperty(
    fc.array(fc.oneof(
      fc.record({ kind: fc.constant('tap' as const), n: fc.integer({ min: 1, max: 5 }) }),
      fc.record({ kind: fc.constant('poll' as const), ackAll: fc.boolean(), rewind: fc.nat({ max: 3 }) })
    ), { maxLength: 25 }),
    async (steps) => {
      // A fresh lease each run: sequences restart at 1.
      await a.unregister(a.id, a.token())
      await a.reregister()
      await a.post('s1', newSession())
      lease++
      let emitted = 0
      let applied = 0 // the client's `after`: the last sequence it applied
      let acked = 0
      const seen = new Set<number>()
      for (const step of steps) {
        if (step.kind === 'tap') {
          for (let i = 0; i < step.n; i++) a.fake.control.tap(a.id, 's1')
          emitted += step.n
          continue
        }
        const after = Math.max(acked, applied - step.rewind)
        const ack = step.ackAll ? after : acked
        const reply = await a.poll({ after, ack })
        if (reply.status !== 200) return false
        acked = Math.max(acked, ack)
        for (const event of reply.json.events as Array<{ sequence: number }>) {
          if (event.sequence <= acked) return false // delivered after its ack
          seen.add(event.sequence)
        }
        const sequences = reply.json.events.map((e: { sequence: number }) => e.sequence)
        if (sequences.some((s: number, i: number) => i > 0 && s <= sequences[i - 1])) return false
        if (sequences.length > 0) applied = Math.max(applied, sequences[sequences.length - 1])
      }
      const final = await a.poll({ after: Math.max(acked, applied), ack: acked })
      for (const event of final.json.events as Array<{ sequence: number }>) seen.add(event.sequence)
      // Every emitted event was seen once the client caught up (none were dropped: under 128 outstanding).
      return [...Array(emitted).keys()].every((i) => seen.has(i + 1)) && final.json.lastSequence === emitted
    }
  ), fcParams({ numRuns: 40 }))
  t.ok(lease > 0)
})

t.test('OT-133 racing polls: whatever the order, exactly one holds and the others are poll_pending, and a tap wakes the holder', async (t) => {
  const a = await agentSetup(t)
  await a.post('s1', newSession())
  await fc.assert(fc.asyncProperty(fc.scheduler(), fc.integer({ min: 2, max: 4 }), async (s, n) => {
    let answered = 0
    const polls = Array.from({ length: n }, (_, i) => s.schedule(Promise.resolve(i))
      .then(() => a.poll({ after: a.snapshot().events!.highestDelivered, waitSeconds: 2 }))
      .then((reply) => { answered++; return reply }))
    await s.waitAll()
    // One poll held, every other one already answered: only then does the tap come.
    await until(() => a.snapshot().events!.pollHeld && answered === n - 1)
    a.fake.control.tap(a.id, 's1')
    const replies = await Promise.all(polls)
    const held = replies.filter((r) => r.status === 200)
    const pending = replies.filter((r) => specErrorProblem(r, 'poll_pending') === undefined)
    return held.length === 1 && pending.length === n - 1 && held[0]!.json.events.length === 1
  }), fcParams({ numRuns: 15 }))
})
