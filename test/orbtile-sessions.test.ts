import t from 'tap'
import fc from 'fast-check'
import { validatorFor } from '../src/spec/orbtile.js'
import { cleanProject, keepLastBytes } from '../src/orbtile-mock/sessions/update.js'
import { fcParams } from './helpers/fc.js'
import { agentSetup, newSession } from './helpers/orbtile.js'
import { assertSpecError, specErrorProblem } from './helpers/assert.js'

const replySchema = validatorFor('SessionReply')

t.test('OT-089 a valid update answers 200 with session.uid, session.visible and warnings', async (t) => {
  const a = await agentSetup(t)
  const reply = await a.post('s1', newSession())
  t.equal(reply.status, 200)
  t.ok(replySchema(reply.json), JSON.stringify(replySchema.errors))
  t.type(reply.json.session.uid, 'string')
  t.equal(reply.json.session.visible, true)
})

t.test('OT-090 sessionId is 1..128 of [A-Za-z0-9._:-]', async (t) => {
  const a = await agentSetup(t)
  t.equal((await a.post('a.B_c:d-1', newSession())).status, 200)
  t.equal((await a.post('x'.repeat(128), newSession())).status, 200)
  for (const id of ['x'.repeat(129), '%20', 'a%2Fb', '%C3%A9']) {
    assertSpecError(t, await a.post(id, newSession()), 'invalid_field', 'sessionId')
  }
})

t.test('OT-091 creating a session needs title and activity', async (t) => {
  const a = await agentSetup(t)
  assertSpecError(t, await a.post('s1', { activity: 'idle' }), 'invalid_field', 'title')
  assertSpecError(t, await a.post('s1', { title: 'x' }), 'invalid_field', 'activity')
  assertSpecError(t, await a.post('s1', {}), 'invalid_field', 'title')
  t.equal(a.session('s1'), undefined, 'nothing was created')
})

t.test('OT-092 merge: an absent field keeps its value, null clears it', async (t) => {
  const a = await agentSetup(t)
  await a.post('s1', newSession({ model: 'm1', cwd: '/x' }))
  await a.post('s1', { activity: 'tool' })
  t.same([a.session('s1')!.model, a.session('s1')!.cwd, a.session('s1')!.activity], ['m1', '/x', 'tool'])
  await a.post('s1', { model: null })
  t.same([a.session('s1')!.model, a.session('s1')!.cwd], [null, '/x'])
  for (const key of [
    'cwd',
    'project',
    'model',
    'toolLabel',
    'toolKind',
    'message',
    'statusDetail',
    'openURL',
    'pid',
    'approval',
    'question'
  ]) {
    t.equal((await a.post('s1', { [key]: null })).status, 200, `${key} is nullable`)
  }
})

t.test('OT-093 null on a non-nullable field is invalid_field', async (t) => {
  const a = await agentSetup(t)
  await a.post('s1', newSession())
  for (const key of ['title', 'activity', 'subagentCount', 'host', 'background', 'liveText', 'ttlSeconds']) {
    assertSpecError(t, await a.post('s1', { [key]: null }), 'invalid_field', key)
  }
})

t.test('OT-094 OT-095 OT-096 OT-098 OT-099 OT-104 field lengths and the activity enum', async (t) => {
  const a = await agentSetup(t)
  await a.post('s1', newSession())
  const cases: Array<[string, unknown]> = [
    ['title', ''],
    ['title', 'x'.repeat(121)],
    ['activity', 'empty'],
    ['activity', 'napping'],
    ['cwd', 'x'.repeat(1025)],
    ['model', 'x'.repeat(65)],
    ['toolLabel', 'x'.repeat(81)],
    ['statusDetail', 'x'.repeat(121)]
  ]
  for (const [key, value] of cases) assertSpecError(t, await a.post('s1', { [key]: value }), 'invalid_field', key)
  for (const activity of [
    'starting',
    'idle',
    'thinking',
    'tool',
    'streaming',
    'waitingPermission',
    'waitingQuestion',
    'done',
    'error',
    'compacting',
    'offline'
  ]) {
    t.equal((await a.post('s1', { activity })).status, 200, activity)
  }
  t.equal(
    (
      await a.post('s1', {
        title: 'x'.repeat(120),
        cwd: 'x'.repeat(1024),
        model: 'x'.repeat(64),
        toolLabel: 'x'.repeat(80),
        statusDetail: 'x'.repeat(120)
      })
    ).status,
    200
  )
})

t.test('OT-097 OT-A24 project is cleaned, then counted 1..128 scalars', async (t) => {
  const a = await agentSetup(t)
  await a.post('s1', newSession())
  t.equal((await a.post('s1', { project: '  My Project  ' })).status, 200)
  t.equal(a.session('s1')!.project, 'My Project')
  t.equal((await a.post('s1', { project: 'a\n\n b\u200f\u0007c' })).status, 200)
  t.equal(a.session('s1')!.project, 'a bc')
  assertSpecError(t, await a.post('s1', { project: '   ' }), 'invalid_field', 'project')
  assertSpecError(t, await a.post('s1', { project: '\u200e\u0000' }), 'invalid_field', 'project')
  t.equal(
    (await a.post('s1', { project: `  ${'🛰'.repeat(128)}  ` })).status,
    200,
    '128 scalars after trimming, however many bytes'
  )
  assertSpecError(t, await a.post('s1', { project: 'x'.repeat(129) }), 'invalid_field', 'project')
  t.equal((await a.post('s1', { project: null })).status, 200)
  t.equal(a.session('s1')!.project, null, 'null restores the cwd fallback')
  await fc.assert(
    fc.property(fc.string({ unit: 'binary', maxLength: 200 }), (raw) => {
      const cleaned = cleanProject(raw)
      return (
        cleaned === cleaned.trim() &&
        !/[\p{Cc}\p{Cf}]/u.test(cleaned) &&
        !/\s{2}/u.test(cleaned) &&
        !/[^\S ]/u.test(cleaned)
      )
    }),
    fcParams()
  )
})

t.test('OT-100 an unknown toolKind is accepted with a warning; 33 characters are refused', async (t) => {
  const a = await agentSetup(t)
  const reply = await a.post('s1', newSession({ toolKind: 'banana' }))
  t.equal(reply.status, 200)
  t.ok(reply.json.warnings.some((w: string) => w.startsWith('tool-kind:') && w.includes('banana')))
  t.same((await a.post('s1', { toolKind: 'shell' })).json.warnings, [])
  assertSpecError(t, await a.post('s1', { toolKind: 'x'.repeat(33) }), 'invalid_field', 'toolKind')
})

t.test('OT-101 message is {id, text}: both required, a closed object, text up to 16384', async (t) => {
  const a = await agentSetup(t)
  await a.post('s1', newSession())
  t.equal((await a.post('s1', { message: { id: 'm', text: '' } })).status, 200)
  assertSpecError(t, await a.post('s1', { message: { id: 'm' } }), 'invalid_field', 'message.text')
  assertSpecError(t, await a.post('s1', { message: { text: 'x' } }), 'invalid_field', 'message.id')
  assertSpecError(t, await a.post('s1', { message: { id: '', text: 'x' } }), 'invalid_field', 'message.id')
  assertSpecError(
    t,
    await a.post('s1', { message: { id: 'm', text: 'x'.repeat(16385) } }),
    'invalid_field',
    'message.text'
  )
  const extra = await a.post('s1', { message: { id: 'm', text: 'x', colour: 'red' } })
  t.equal(extra.status, 200, 'OT-A10: an unknown key in the closed object is dropped')
  t.ok(extra.json.warnings.includes('unknown-field: message.colour'))
})

t.test('OT-102 OT-A24 the fake keeps the last 4096 bytes of message.text, cut on a code point', async (t) => {
  const a = await agentSetup(t)
  const text = `${'a'.repeat(5000)}${'é'.repeat(3000)}`
  await a.post('s1', newSession({ message: { id: 'm', text } }))
  const kept = a.session('s1')!.message!.text
  t.ok(Buffer.byteLength(kept) <= 4096 && Buffer.byteLength(kept) >= 4093)
  t.ok(text.endsWith(kept))
  await fc.assert(
    fc.property(fc.string({ unit: 'binary', maxLength: 3000 }), fc.integer({ min: 1, max: 64 }), (s, limit) => {
      const out = keepLastBytes(s, limit)
      const bytes = Buffer.byteLength(out)
      return (
        s.endsWith(out) &&
        bytes <= limit &&
        bytes > limit - 4 - (Buffer.byteLength(s) < limit ? limit : 0) &&
        !out.includes('\ufffd')
      )
    }),
    fcParams()
  )
})

t.test('OT-105 OT-106 OT-111 subagentCount 0..99, host an ssh-style alias, ttlSeconds 10..3600', async (t) => {
  const a = await agentSetup(t)
  await a.post('s1', newSession())
  for (const subagentCount of [100, -1, 1.5]) {
    assertSpecError(t, await a.post('s1', { subagentCount }), 'invalid_field', 'subagentCount')
  }
  for (const host of ['user@host', 'a b', 'x'.repeat(65)]) {
    assertSpecError(t, await a.post('s1', { host }), 'invalid_field', 'host')
  }
  for (const ttlSeconds of [9, 3601]) {
    assertSpecError(t, await a.post('s1', { ttlSeconds }), 'invalid_field', 'ttlSeconds')
  }
  t.equal((await a.post('s1', { subagentCount: 99, host: 'build-box.lan', ttlSeconds: 10 })).status, 200)
  t.equal(
    (await a.post('s1', { subagentCount: 3.0, ttlSeconds: 3600 })).status,
    200,
    'OT-A05: an integral number such as 3.0 is an integer'
  )
})

t.test('OT-107 OT-A15 openURL needs a scheme the registration declared; refused schemes stay refused', async (t) => {
  const a = await agentSetup(t, { urlSchemes: ['vscode', 'file'.replace('file', 'x-agent')] })
  await a.post('s1', newSession())
  t.equal((await a.post('s1', { openURL: 'vscode://file/tmp/x' })).status, 200)
  t.equal((await a.post('s1', { openURL: 'VSCode://file/tmp/x' })).status, 200, 'schemes compare case-insensitively')
  for (const openURL of ['https://example.com', 'file:///etc/passwd', 'javascript:alert(1)', 'relative/path', `vscode://${'x'.repeat(2048)}`]) {
    assertSpecError(t, await a.post('s1', { openURL }), 'invalid_field', 'openURL')
  }
  const none = await agentSetup(t, { urlSchemes: [], id: 'com.example.plain' })
  await none.post('s1', newSession())
  assertSpecError(t, await none.post('s1', { openURL: 'vscode://x' }), 'invalid_field', 'openURL')
})

t.test('OT-108 OT-A16 pid must be a process of the calling user; 0 is invalid', async (t) => {
  const a = await agentSetup(t)
  await a.post('s1', newSession())
  t.equal((await a.post('s1', { pid: 4242 })).status, 200, 'the stubbed process table knows 4242')
  assertSpecError(t, await a.post('s1', { pid: 4243 }), 'invalid_field', 'pid')
  assertSpecError(t, await a.post('s1', { pid: 0 }), 'invalid_field', 'pid')
  const real = await agentSetup(t, { fake: { pidCheck: 'real' }, id: 'com.example.real' })
  await real.post('s1', newSession())
  t.equal((await real.post('s1', { pid: process.pid })).status, 200, 'the real table knows this test\'s own process')
  assertSpecError(t, await real.post('s1', { pid: 2 ** 22 + 12345 }), 'invalid_field', 'pid')
})

t.test('OT-109 OT-110 OT-A17 background and liveText are booleans; defaults on creation', async (t) => {
  const a = await agentSetup(t)
  await a.post('s1', newSession())
  const s = a.session('s1')!
  t.same(
    {
      host: s.host,
      ttlSeconds: s.ttlSeconds,
      subagentCount: s.subagentCount,
      background: s.background,
      liveText: s.liveText,
      cwd: s.cwd,
      model: s.model,
      pid: s.pid
    },
    {
      host: 'local',
      ttlSeconds: 120,
      subagentCount: 0,
      background: false,
      liveText: true,
      cwd: null,
      model: null,
      pid: null
    }
  )
  assertSpecError(t, await a.post('s1', { background: 'yes' }), 'invalid_field', 'background')
  assertSpecError(t, await a.post('s1', { liveText: 1 }), 'invalid_field', 'liveText')
  t.equal(
    (await a.post('s1', { background: true, liveText: false })).json.session.visible,
    true,
    'background does not change visible'
  )
})

t.test("OT-A17 uid is stable and unique across adapters; visible follows the user's approval", async (t) => {
  const a = await agentSetup(t)
  const first = (await a.post('s1', newSession())).json.session.uid
  t.equal((await a.post('s1', { activity: 'idle' })).json.session.uid, first)
  const b = await agentSetup(t, { id: 'com.example.other', allowed: false })
  const other = await b.post('s1', newSession())
  t.not(other.json.session.uid, first)
  t.equal(other.json.session.visible, false, 'OT-A09: an adapter awaiting the user is accepted, not shown')
})

t.test('OT-029 OT-A21 at most 32 sessions per adapter, offline ones included', async (t) => {
  const a = await agentSetup(t, { fake: { leaseSilenceMs: 3_600_000 } })
  for (let i = 0; i < 32; i++) t.equal((await a.post(`s${i}`, newSession({ ttlSeconds: 10 }))).status, 200)
  await a.advance(11_000)
  t.ok(a.session('s0')!.offline, 'the sessions are offline now')
  assertSpecError(t, await a.post('s32', newSession()), 'limit_exceeded')
  await a.advance(600_000)
  t.equal(a.snapshot().sessions.length, 0, 'removed 600 s later')
  t.equal((await a.post('s32', newSession())).status, 200, 'then the slots are free')
})

t.test('OT-112 OT-A18 offline after ttlSeconds without contact, removed 600 s later; {} is a heartbeat', async (t) => {
  // A long lease window, so that the lease outlives the sessions it is watching here.
  const a = await agentSetup(t, { fake: { leaseSilenceMs: 3_600_000 } })
  await a.post('s1', newSession({ ttlSeconds: 30, activity: 'tool' }))
  await a.advance(29_000)
  t.notOk(a.session('s1')!.offline)
  t.equal((await a.post('s1', {})).status, 200, 'a heartbeat')
  await a.advance(29_999)
  t.notOk(a.session('s1')!.offline, 'the heartbeat restarted the TTL')
  await a.advance(1)
  t.ok(a.session('s1')!.offline)
  t.equal(a.session('s1')!.activity, 'offline')
  t.equal(a.session('s1')!.lastActivity, 'tool')
  await a.post('s1', {})
  t.same(
    [a.session('s1')!.offline, a.session('s1')!.activity],
    [false, 'tool'],
    'a heartbeat revives it with its last activity'
  )
  await a.advance(30_000 + 599_999)
  t.ok(a.session('s1'), 'still there 1 ms before removal')
  await a.advance(1)
  t.equal(a.session('s1'), undefined, 'removed at ttl + 600 s')
  assertSpecError(t, await a.post('s1', {}), 'invalid_field', 'title')
})

t.test('OT-112 the default TTL: offline after 120 s, removed after 720 s; an events poll is no contact', async (t) => {
  const a = await agentSetup(t)
  await a.post('s1', newSession())
  await a.advance(60_000)
  await a.poll()
  await a.advance(60_000)
  t.ok(a.session('s1')!.offline)
  await a.advance(600_000)
  t.equal(a.session('s1'), undefined)
})

t.test(
  "OT-A08 the lease outlives its window while a session's longer TTL runs; the sessions then follow their clocks",
  async (t) => {
    const a = await agentSetup(t, { fake: { leaseSilenceMs: 120_000 } })
    await a.post('s1', newSession({ ttlSeconds: 600 }))
    await a.advance(300_000)
    t.ok(a.snapshot().lease, 'a 600 s TTL stretches the 120 s window')
    await a.advance(300_000)
    t.equal(a.snapshot().lease, null, 'ended at 600 s of silence')
    t.ok(a.session('s1')!.offline, 'the session is offline, not gone')
    await a.advance(600_000)
    t.equal(a.session('s1'), undefined)
  }
)

t.test('OT-152 OT-A06 session routes need a live lease and its token', async (t) => {
  const a = await agentSetup(t)
  assertSpecError(
    t,
    await a.client.request({ method: 'POST', path: `/adapters/${a.id}/sessions/s1`, body: newSession() }),
    'unauthorized',
    'X-Orbtile-Adapter-Token'
  )
  assertSpecError(
    t,
    await a.client.request({ method: 'POST', path: '/adapters/never.registered/sessions/s1', body: newSession() }),
    'adapter_not_registered'
  )
  await a.unregister(a.id, a.token())
  assertSpecError(t, await a.post('s1', newSession()), 'adapter_not_registered')
  assertSpecError(
    t,
    await a.client.request({ method: 'POST', path: '/adapters/claude/sessions/s1', body: newSession() }),
    'reserved_id'
  )
})

t.test('OT-A18 there is no route to delete one session: DELETE on a session path is 405', async (t) => {
  const a = await agentSetup(t)
  const reply = await a.client.request({ method: 'DELETE', path: `/adapters/${a.id}/sessions/s1` })
  t.equal(reply.status, 405)
  t.equal(reply.headers.allow, 'POST')
})

t.test('OT-A07 unregistering ends every session of the adapter', async (t) => {
  const a = await agentSetup(t)
  await a.post('s1', newSession())
  await a.post('s2', newSession())
  await a.unregister(a.id, a.token())
  t.same(a.snapshot().sessions, [])
})

t.test('OT-092 any update the schema accepts is accepted, and stored as merged', async (t) => {
  const a = await agentSetup(t)
  await a.post('s1', newSession())
  const update = fc.record({
    title: fc.string({ minLength: 1, maxLength: 120 }),
    model: fc.option(fc.string({ maxLength: 64 })),
    statusDetail: fc.option(fc.string({ maxLength: 120 })),
    subagentCount: fc.integer({ min: 0, max: 99 }),
    background: fc.boolean()
  }, { requiredKeys: [] })
  await fc.assert(fc.asyncProperty(update, async (patch) => {
    const before = a.session('s1')!
    const reply = await a.post('s1', patch)
    if (specErrorProblem(reply, 'invalid_field') === undefined) return false
    const after = a.session('s1')! as unknown as Record<string, unknown>
    return reply.status === 200 && Object.entries({ ...before, ...patch }).every(([key, value]) =>
      ['lastContact', 'offlineAt', 'removeAt'].includes(key) || JSON.stringify(after[key]) === JSON.stringify(value))
  }), fcParams({ numRuns: 60 }))
})
