import t from 'tap'
import fc from 'fast-check'
import { fcParams } from './helpers/fc.js'
import { agentSetup, approval, newSession } from './helpers/orbtile.js'
import { assertSpecError, specErrorProblem } from './helpers/assert.js'

const item = (id: string, extra: Record<string, unknown> = {}) => ({ id, ...newSession(), ...extra })

t.test('OT-114 OT-A19 a batch replaces the set: listed sessions are created or updated, unlisted ones end, other adapters\' stay', async (t) => {
  const a = await agentSetup(t)
  const other = await agentSetup(t, { id: 'com.example.other' })
  await a.post('keep', newSession({ model: 'm1' }))
  await a.post('drop', newSession())
  await other.post('drop', newSession())
  const reply = await a.batch([item('keep', { activity: 'idle' }), item('new')])
  t.equal(reply.status, 200)
  t.same(reply.json, {
    sessions: [{ id: 'keep', uid: `${a.id}/keep`, visible: true }, { id: 'new', uid: `${a.id}/new`, visible: true }],
    ended: ['drop'],
    warnings: []
  })
  t.same(a.snapshot().sessions.map((s) => s.id).sort(), ['keep', 'new'])
  t.equal(a.session('keep')!.model, 'm1', 'OT-A19: each item merges; the replace is of the set, not of fields')
  t.equal(a.session('keep')!.activity, 'idle')
  t.ok(other.session('drop'), 'another adapter\'s session of the same id is untouched')
})

t.test('OT-115 sessions is required', async (t) => {
  const a = await agentSetup(t)
  assertSpecError(
    t,
    await a.client.request({
      method: 'PUT',
      path: `/adapters/${a.id}/sessions`,
      body: {},
      headers: { 'x-orbtile-adapter-token': a.token() }
    }),
    'invalid_field',
    'sessions'
  )
})

t.test('OT-116 OT-A19 33 items are invalid_field on sessions', async (t) => {
  const a = await agentSetup(t)
  assertSpecError(t, await a.batch(Array.from({ length: 33 }, (_, i) => item(`s${i}`))), 'invalid_field', 'sessions')
  t.equal((await a.batch(Array.from({ length: 32 }, (_, i) => item(`s${i}`)))).status, 200)
})

t.test('OT-117 every item needs id, title and activity, even for an existing session', async (t) => {
  const a = await agentSetup(t)
  await a.post('s0', newSession())
  assertSpecError(
    t,
    await a.batch([item('s0'), item('s1'), { id: 's0', activity: 'idle' }]),
    'invalid_field',
    'sessions[2].title'
  )
  assertSpecError(t, await a.batch([{ title: 'x', activity: 'idle' }]), 'invalid_field', 'sessions[0].id')
  assertSpecError(t, await a.batch([item('bad id')]), 'invalid_field', 'sessions[0].id')
})

t.test('OT-118 OT-A19 every SessionUpdate rule applies per item, and one bad item changes nothing', async (t) => {
  const a = await agentSetup(t)
  await a.post('s0', newSession({ model: 'before' }))
  const cases: Array<[unknown[], string]> = [
    [[item('s0', { model: 'after' }), item('s1', { ttlSeconds: 5 })], 'sessions[1].ttlSeconds'],
    [[item('s0', { model: 'after' }), item('s1', { openURL: 'https://x' })], 'sessions[1].openURL'],
    [[item('s0', { model: 'after' }), item('s1', { project: '  ' })], 'sessions[1].project'],
    [[item('s0', { model: 'after' }), item('s1', { pid: 7 })], 'sessions[1].pid'],
    [[item('s0', { approval: approval('r1') }), item('s1', { approval: approval('r1') })], 'sessions[1].approval.id']
  ]
  for (const [items, field] of cases) {
    assertSpecError(t, await a.batch(items), 'invalid_field', field)
    t.same(a.snapshot().sessions.map((s) => [s.id, s.model]), [['s0', 'before']], `nothing changed after ${field}`)
    t.same(a.snapshot().requests, [])
  }
})

t.test('OT-A19 duplicate ids in one batch are invalid_field on the second', async (t) => {
  const a = await agentSetup(t)
  assertSpecError(t, await a.batch([item('a'), item('b'), item('a')]), 'invalid_field', 'sessions[2].id')
})

t.test('OT-119 {"sessions": []} ends every session of the adapter', async (t) => {
  const a = await agentSetup(t)
  await a.post('s1', newSession({ approval: approval('r1') }))
  await a.post('s2', newSession())
  const reply = await a.batch([])
  t.same(reply.json.ended.sort(), ['s1', 's2'])
  t.same(a.snapshot().sessions, [])
  t.same(a.snapshot().requests, [], 'OT-A18: ending a session retires its request')
  assertSpecError(t, await a.post('s3', newSession({ approval: approval('r1') })), 'invalid_field', 'approval.id')
})

t.test('OT-A18 a batch is contact for the sessions it lists', async (t) => {
  const a = await agentSetup(t, { fake: { leaseSilenceMs: 3_600_000 } })
  await a.post('s1', newSession({ ttlSeconds: 60 }))
  await a.advance(59_000)
  await a.batch([item('s1', { ttlSeconds: 60 })])
  await a.advance(59_000)
  t.notOk(a.session('s1')!.offline)
})

t.test('OT-007 OT-A19 unknown keys in items are warned with their batch path', async (t) => {
  const a = await agentSetup(t)
  const reply = await a.batch([item('s1', { sparkle: true }), item('s2', { toolKind: 'banana' })])
  t.equal(reply.status, 200)
  t.ok(reply.json.warnings.includes('unknown-field: sessions[0].sparkle'))
  t.ok(reply.json.warnings.some((w: string) => w.startsWith('tool-kind:')))
})

t.test('OT-A19 atomicity: for any batch with one bad item, the stored sessions do not change', async (t) => {
  const a = await agentSetup(t)
  await a.batch([item('s0', { model: 'm' }), item('s1')])
  const before = JSON.stringify(a.snapshot().sessions)
  const bad = fc.constantFrom<Record<string, unknown>>(
    { ttlSeconds: 1 },
    { host: 'a b' },
    { activity: 'empty' },
    { subagentCount: 100 },
    { message: { id: 'x' } },
    { title: '' }
  )
  await fc.assert(
    fc.asyncProperty(
      fc.uniqueArray(fc.stringMatching(/^s[0-9]$/), { minLength: 1, maxLength: 6 }),
      fc.nat(),
      bad,
      async (ids, pick, fault) => {
        const items = ids.map((id) => item(id))
        const at = pick % items.length
        items[at] = { ...items[at]!, ...fault }
        const reply = await a.batch(items)
        return (
          specErrorProblem(reply, 'invalid_field') === undefined &&
          reply.json.error.field.startsWith(`sessions[${at}]`) &&
          JSON.stringify(a.snapshot().sessions) === before
        )
      }
    ),
    fcParams({ numRuns: 40 })
  )
})
