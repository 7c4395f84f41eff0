import t from 'tap'
import { ControlError } from '../src/shared/control-error.js'
import { agentSetup, approval, newSession, question } from './helpers/orbtile.js'
import { assertSpecError } from './helpers/assert.js'

t.test('OT-120 an approval needs id, toolName 1..80 and commandSummary 1..512; null clears it', async (t) => {
  const a = await agentSetup(t)
  await a.post('s1', newSession())
  for (const [bad, field] of [
    [{ id: 'r', toolName: '', commandSummary: 'x' }, 'approval.toolName'],
    [{ id: 'r', toolName: 'x'.repeat(81), commandSummary: 'x' }, 'approval.toolName'],
    [{ id: 'r', toolName: 'x', commandSummary: '' }, 'approval.commandSummary'],
    [{ id: 'r', toolName: 'x', commandSummary: 'x'.repeat(513) }, 'approval.commandSummary'],
    [{ toolName: 'x', commandSummary: 'x' }, 'approval.id']
  ] as const) assertSpecError(t, await a.post('s1', { approval: bad }), 'invalid_field', field)
  t.equal((await a.post('s1', { approval: approval('r1') })).status, 200)
  t.same(a.snapshot().requests.map((r) => [r.id, r.kind, r.sessionId]), [['r1', 'approval', 's1']])
  await a.post('s1', { approval: null })
  t.same(a.snapshot().requests, [])
})

t.test('OT-121 a question has 1..4 questions of 2..4 options, text 1..1024, header up to 12', async (t) => {
  const a = await agentSetup(t)
  await a.post('s1', newSession())
  const q = (questions: unknown) => ({ id: 'q', questions })
  const opt = [{ label: 'a' }, { label: 'b' }]
  for (const [bad, field] of [
    [q([]), 'question.questions'],
    [q(Array(5).fill({ text: 't', options: opt })), 'question.questions'],
    [q([{ text: 't', options: [{ label: 'a' }] }]), 'question.questions[0].options'],
    [q([{ text: 't', options: Array(5).fill({ label: 'a' }) }]), 'question.questions[0].options'],
    [q([{ text: 't', header: 'x'.repeat(13), options: opt }]), 'question.questions[0].header'],
    [q([{ text: '', options: opt }]), 'question.questions[0].text'],
    [q([{ text: 't', options: [{ label: '' }, { label: 'b' }] }]), 'question.questions[0].options[0].label']
  ] as const) assertSpecError(t, await a.post('s1', { question: bad }), 'invalid_field', field)
  t.equal((await a.post('s1', { question: question('q1') })).status, 200)
})

t.test(
  'OT-122 OT-A22 one pending request per session: setting the other kind needs a null for the first',
  async (t) => {
    const a = await agentSetup(t)
    await a.post('s1', newSession({ approval: approval('r1') }))
    assertSpecError(t, await a.post('s1', { question: question('q1') }), 'invalid_field', 'question')
    assertSpecError(
      t,
      await a.post('s1', { approval: approval('r2'), question: question('q2') }),
      'invalid_field',
      'approval'
    )
    t.equal((await a.post('s1', { approval: null, question: question('q1') })).status, 200)
    t.same(
      a.snapshot().requests.map((r) => r.id),
      ['q1']
    )
  }
)

t.test('OT-A22 a new approval with another id replaces the pending one, and the old id retires', async (t) => {
  const a = await agentSetup(t)
  await a.post('s1', newSession({ approval: approval('r1') }))
  await a.post('s1', { approval: approval('r2') })
  t.same(a.snapshot().requests.map((r) => r.id), ['r2'])
  await a.post('s2', newSession())
  assertSpecError(t, await a.post('s2', { approval: approval('r1') }), 'invalid_field', 'approval.id')
})

t.test('OT-123 OT-030 32 pending requests are accepted; a 33rd cannot arise, as 32 sessions hold one each', async (t) => {
  const a = await agentSetup(t)
  for (let i = 0; i < 32; i++) t.equal((await a.post(`s${i}`, newSession({ approval: approval(`r${i}`) }))).status, 200)
  t.equal(a.snapshot().requests.length, 32)
  assertSpecError(t, await a.post('s32', newSession({ approval: approval('r32') })), 'limit_exceeded')
  t.equal((await a.post('s0', { approval: approval('r0b') })).status, 200, 'replacing one is not a 33rd')
  t.equal(a.snapshot().requests.length, 32)
})

t.test('OT-124 request ids are 1..128 of [A-Za-z0-9._:-]', async (t) => {
  const a = await agentSetup(t)
  await a.post('s1', newSession())
  assertSpecError(t, await a.post('s1', { approval: approval('a b') }), 'invalid_field', 'approval.id')
  assertSpecError(t, await a.post('s1', { question: question('x'.repeat(129)) }), 'invalid_field', 'question.id')
})

t.test('OT-125 ids share one namespace across sessions and kinds', async (t) => {
  const a = await agentSetup(t)
  await a.post('A', newSession({ approval: approval('r1') }))
  await a.post('B', newSession())
  assertSpecError(t, await a.post('B', { question: question('r1') }), 'invalid_field', 'question.id')
  assertSpecError(t, await a.post('B', { approval: approval('r1') }), 'invalid_field', 'approval.id')
})

t.test('OT-126 a retired id is refused, whatever retired it', async (t) => {
  const a = await agentSetup(t, { fake: { leaseSilenceMs: 3_600_000 } })
  await a.post('s1', newSession({ approval: approval('r1') }))
  await a.post('s1', { approval: null })
  assertSpecError(t, await a.post('s1', { approval: approval('r1') }), 'invalid_field', 'approval.id')
  await a.post('s2', newSession({ question: question('q1') }))
  await a.advance(600_000)
  assertSpecError(t, await a.post('s2', { question: question('q1') }), 'invalid_field', 'question.id', undefined)
})

t.test(
  'OT-127 an identical re-send is accepted and keeps the original expiry; other content under the same id is refused',
  async (t) => {
    const a = await agentSetup(t, { keypad: true, fake: { leaseSilenceMs: 3_600_000 } })
    await a.post('s1', newSession({ approval: approval('r1') }))
    const expiresAt = a.snapshot().requests[0]!.expiresAt
    await a.advance(300_000)
    t.equal((await a.post('s1', { approval: approval('r1') })).status, 200)
    t.equal(a.snapshot().requests[0]!.expiresAt, expiresAt, 'the expiry did not move')
    assertSpecError(
      t,
      await a.post('s1', { approval: approval('r1', { commandSummary: 'rm -rf /' }) }),
      'invalid_field',
      'approval.id'
    )
    const { event } = a.fake.control.decide(a.id, 'r1', { decision: 'allow' })
    t.equal((event as { expiresAt: number }).expiresAt, expiresAt, 'the decision carries the original expiresAt')
  }
)

t.test(
  'OT-129 OT-A22 OT-A31 requests expire 600 s after they first became pending; expiresAt is whole epoch seconds',
  async (t) => {
    const a = await agentSetup(t, { fake: { leaseSilenceMs: 3_600_000 } })
    const start = a.clock.now()
    await a.post('s1', newSession({ question: question('q1') }))
    const { expiresAt } = a.snapshot().requests[0]!
    t.ok(Number.isInteger(expiresAt))
    t.equal(expiresAt, Math.ceil((start + 600_000) / 1000))
    await a.advance(599_999)
    t.equal(a.snapshot().requests.length, 1)
    await a.advance(1)
    t.same(a.snapshot().requests, [], 'expired: removed')
    t.equal(a.session('s1')!.question, null, 'and cleared from the session')
  }
)

t.test(
  "OT-130 OT-056 decisions need the capability and the user's keypad switch; posting without the switch is allowed",
  async (t) => {
    const a = await agentSetup(t, { keypad: false })
    t.equal(
      (await a.post('s1', newSession({ approval: approval('r1') }))).status,
      200,
      'OT-A22: posting is allowed without keypad decisions'
    )
    t.throws(() => a.fake.control.decide(a.id, 'r1', { decision: 'allow' }), ControlError)
    const noCaps = await agentSetup(t, { capabilities: ['tap'], id: 'com.example.tap' })
    await noCaps.post('s1', newSession())
    assertSpecError(t, await noCaps.post('s1', { approval: approval('r1') }), 'invalid_field', 'approval')
    assertSpecError(t, await noCaps.post('s1', { question: question('q1') }), 'invalid_field', 'question')
  }
)

t.test('OT-A22 after a decision the request is not decidable again, and stays pending until cleared', async (t) => {
  const a = await agentSetup(t, { keypad: true })
  await a.post('s1', newSession({ approval: approval('r1') }))
  a.fake.control.decide(a.id, 'r1', { decision: 'deny' })
  const again = (() => {
    try {
      a.fake.control.decide(a.id, 'r1', { decision: 'allow' })
    } catch (err) {
      return err
    }
  })()
  t.equal((again as ControlError).code, 'conflict')
  t.equal(a.snapshot().requests[0]!.decided, true)
  t.equal(a.session('s1')!.approval?.id, 'r1', 'still pending')
})

t.test('OT-A22 a capability downgrade retires that kind\'s requests and drops their queued events', async (t) => {
  const a = await agentSetup(t, { keypad: true })
  await a.post('s1', newSession({ approval: approval('r1') }))
  await a.post('s2', newSession({ question: question('q1') }))
  a.fake.control.decide(a.id, 'r1', { decision: 'allow' })
  await a.reregister({ capabilities: ['tap', 'questions'] })
  t.same(a.snapshot().requests.map((r) => r.id), ['q1'])
  t.equal(a.session('s1')!.approval, null)
  t.same(a.snapshot().events!.queued, [], 'the approval event is gone')
})

t.test('OT-032 OT-A22 4096 distinct ids per lease; the 4097th is limit_exceeded until a new lease', async (t) => {
  const a = await agentSetup(t, { fake: { rateLimit: 'off' } })
  await a.post('s1', newSession())
  for (let i = 0; i < 4096; i++) {
    const reply = await a.post('s1', { approval: approval(`r${i}`) })
    if (reply.status !== 200) { t.fail(`id ${i}: ${reply.text}`); break }
  }
  assertSpecError(t, await a.post('s1', { approval: approval('r4096') }), 'limit_exceeded')
  await a.reregister()
  assertSpecError(t, await a.post('s1', { approval: approval('r4096') }), 'limit_exceeded', undefined)
  await a.unregister(a.id, a.token())
  const fresh = await a.reregister()
  t.equal(fresh.status, 200)
  await a.post('s1', newSession())
  t.equal((await a.post('s1', { approval: approval('r0') })).status, 200, 'a new lease, a fresh namespace')
})

t.test('OT-A22 a lease that ends retires its pending ids; sessions kept after silence lose their requests', async (t) => {
  const a = await agentSetup(t, { fake: { leaseSilenceMs: 120_000 } })
  await a.post('s1', newSession({ approval: approval('r1') }))
  await a.advance(120_000)
  t.equal(a.snapshot().lease, null)
  t.same(a.snapshot().requests, [])
  t.equal(a.session('s1')!.approval, null)
})
