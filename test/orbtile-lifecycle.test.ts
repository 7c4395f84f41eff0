import { join } from 'node:path'
import { readdirSync } from 'node:fs'
import t from 'tap'
import { startOrbtest } from '../src/orbtest.js'
import { ControlError } from '../src/shared/control-error.js'
import { agentSetup, approval, minimalRegistration, newSession, question } from './helpers/orbtile.js'
import { assertSpecError } from './helpers/assert.js'
import { httpRequest, SocketClient } from './helpers/client.js'
import { readDiscovery, scratch } from './helpers/fake.js'

const item = (id: string, extra: Record<string, unknown> = {}) => ({ id, ...newSession(), ...extra })
const held = async (a: { snapshot(): { events: { pollHeld: boolean } | null } }) => {
  for (let i = 0; i < 500 && a.snapshot().events?.pollHeld !== true; i++) {
    await new Promise((resolve) => setImmediate(resolve))
  }
}
const userError = (action: () => unknown): ControlError | undefined => {
  try {
    action()
  } catch (err) {
    return err as ControlError
  }
  return undefined
}

t.test('OT-114 OT-029 a batch replaces the set even when the adapter holds 32 sessions, offline ones included', async (t) => {
  const a = await agentSetup(t, { fake: { leaseSilenceMs: 3_600_000 } })
  for (let i = 0; i < 32; i++) await a.post(`old${i}`, newSession({ ttlSeconds: 10 }))
  await a.advance(11_000)
  const reply = await a.batch(Array.from({ length: 32 }, (_, i) => item(`new${i}`)))
  t.equal(reply.status, 200)
  t.equal(reply.json.ended.length, 32)
  t.equal(a.snapshot().sessions.length, 32)
})

t.test('OT-A08 a lease\'s silence window shrinks with its sessions: lowering a long TTL brings the deadline forward', async (t) => {
  const a = await agentSetup(t, { fake: { leaseSilenceMs: 120_000 } })
  await a.post('s1', newSession({ ttlSeconds: 3600 }))
  await a.advance(120_000)
  t.ok(a.snapshot().lease, 'the long TTL stretches the window')
  await a.post('s1', { ttlSeconds: 10 })
  await a.advance(120_000)
  t.equal(a.snapshot().lease, null, 'back to 120 s of silence')
  assertSpecError(t, await a.post('s1', {}), 'adapter_not_registered')
  const b = await agentSetup(t, { fake: { leaseSilenceMs: 120_000 }, id: 'com.example.b' })
  await b.post('s1', newSession({ ttlSeconds: 3600 }))
  await b.batch([])
  await b.advance(120_000)
  t.equal(b.snapshot().lease, null, 'ending the long session shrinks the window too')
})

t.test('OT-057 OT-A22 a decision whose event was dropped undelivered can be made again', async (t) => {
  const a = await agentSetup(t, { keypad: true })
  await a.post('s1', newSession({ approval: approval('r1') }))
  a.fake.control.decide(a.id, 'r1', { decision: 'allow' })
  a.fake.control.setUser(a.id, { keypad: false })
  a.fake.control.setUser(a.id, { keypad: true })
  t.equal(a.snapshot().requests[0]!.decided, false)
  t.ok(a.fake.control.decide(a.id, 'r1', { decision: 'deny' }).event)
})

t.test('OT-127 an identical re-send that spells out a default is still identical', async (t) => {
  const a = await agentSetup(t)
  await a.post('s1', newSession({ question: question('q1') }))
  const spelled = question('q1', {
    questions: [{ text: 'Which branch?', multiSelect: false, options: [{ label: 'main' }, { label: 'dev' }] }]
  })
  t.equal((await a.post('s1', { question: spelled })).status, 200)
})

t.test('OT-133 OT-A02 an adapter\'s second poll is poll_pending even when the fake holds 4 long polls', async (t) => {
  const a = await agentSetup(t)
  const others = []
  for (let i = 1; i <= 3; i++) {
    a.fake.control.setUser(`com.example.o${i}`, { allowed: true })
    const token = (await a.register(`com.example.o${i}`, { ...minimalRegistration(), capabilities: ['tap'] })).json
      .adapterToken
    others.push(
      a.client.request({
        method: 'POST',
        path: `/adapters/com.example.o${i}/events`,
        body: { waitSeconds: 2 },
        headers: { 'x-orbtile-adapter-token': token }
      })
    )
  }
  const first = a.poll({ waitSeconds: 2 })
  await held(a)
  assertSpecError(t, await a.poll({ waitSeconds: 2 }), 'poll_pending')
  await a.advance(2000)
  await Promise.all([first, ...others])
})

t.test('OT-A25 session faults are reported in the body\'s order', async (t) => {
  const a = await agentSetup(t)
  await a.post('s1', newSession())
  assertSpecError(t, await a.post('s1', { pid: 999999999, openURL: 'https://x' }), 'invalid_field', 'pid')
  assertSpecError(t, await a.post('s1', { openURL: 'https://x', pid: 999999999 }), 'invalid_field', 'openURL')
  assertSpecError(
    t,
    await a.batch([item('a'), item('a'), { id: 'c', title: '', activity: 'idle' }]),
    'invalid_field',
    'sessions[1].id'
  )
})

t.test(
  'OT-A05 OT-012 a bodiless DELETE with Content-Type: application/json is fine; so is a bodiless control tap',
  async (t) => {
    const dir = scratch(t)
    const fakes = await startOrbtest({
      orb: false,
      orbtile: {
        discoveryPath: join(dir, 'd.json'),
        socketPath: join(dir, 'o.sock'),
        rateLimit: 'off',
        autoAllow: true
      },
      controlPort: 0
    })
    t.teardown(() => fakes.close())
    const client = new SocketClient(fakes.orbtile!.socketPath, readDiscovery(join(dir, 'd.json')).token)
    t.teardown(() => client.close())
    const token = (
      await client.request({
        method: 'PUT',
        path: '/adapters/del.a',
        body: { ...minimalRegistration(), capabilities: ['tap'] }
      })
    ).json.adapterToken
    await client.request({
      method: 'POST',
      path: '/adapters/del.a/sessions/s1',
      body: newSession(),
      headers: { 'x-orbtile-adapter-token': token }
    })
    const tap = await httpRequest(fakes.control.url, {
      method: 'POST',
      path: '/control/orbtile/adapters/del.a/sessions/s1/tap',
      headers: { 'content-type': 'application/json' }
    })
    t.equal(tap.status, 200)
    t.equal(tap.json.event.type, 'tap')
    const del = await client.request({
      method: 'DELETE',
      path: '/adapters/del.a',
      headers: { 'x-orbtile-adapter-token': token, 'content-type': 'application/json' }
    })
    t.equal(del.status, 204)
  }
)

t.test(
  "OT-144 OT-145 the user's actions over the control HTTP API: 404 for nothing there, 409 for not now, 400 for a bad answer",
  async (t) => {
    const dir = scratch(t)
    const fakes = await startOrbtest({
      orb: false,
      orbtile: { discoveryPath: join(dir, 'd.json'), socketPath: join(dir, 'o.sock'), rateLimit: 'off' },
      controlPort: 0
    })
    t.teardown(() => fakes.close())
    const client = new SocketClient(fakes.orbtile!.socketPath, readDiscovery(join(dir, 'd.json')).token)
    t.teardown(() => client.close())
    const call = (path: string, body?: unknown) => httpRequest(fakes.control.url, { method: 'POST', path, body })
    const token = (
      await client.request({
        method: 'PUT',
        path: '/adapters/h.a',
        body: { ...minimalRegistration(), capabilities: ['tap', 'approvals', 'questions'] }
      })
    ).json.adapterToken
    const headers = { 'x-orbtile-adapter-token': token }
    await client.request({
      method: 'POST',
      path: '/adapters/h.a/sessions/s1',
      body: newSession({ approval: approval('r1') }),
      headers
    })
    t.equal(
      (await call('/control/orbtile/adapters/h.a/sessions/s1/tap')).json.error.code,
      'conflict',
      'not enabled: its keys are not shown'
    )
    await httpRequest(fakes.control.url, {
      method: 'PUT',
      path: '/control/orbtile/adapters/h.a/user',
      body: { allowed: true }
    })
    t.equal((await call('/control/orbtile/adapters/h.a/sessions/nope/tap')).status, 404)
    t.equal(
      (await call('/control/orbtile/adapters/h.a/requests/r1/decide', { decision: 'allow' })).status,
      409,
      'keypad decisions are off'
    )
    await httpRequest(fakes.control.url, {
      method: 'PUT',
      path: '/control/orbtile/adapters/h.a/user',
      body: { keypad: true }
    })
    t.equal((await call('/control/orbtile/adapters/h.a/requests/nope/decide', { decision: 'allow' })).status, 404)
    t.equal(
      (await call('/control/orbtile/adapters/h.a/requests/r1/decide', { picks: [[0]] })).status,
      400,
      'an approval takes a decision, not picks'
    )
    t.equal((await call('/control/orbtile/adapters/h.a/requests/r1/decide', { decision: 'maybe' })).status, 400)
    const ok = await call('/control/orbtile/adapters/h.a/requests/r1/decide', { decision: 'allow' })
    t.equal(ok.status, 200)
    t.equal(ok.json.event.decision, 'allow')
    t.equal(
      (await call('/control/orbtile/adapters/h.a/requests/r1/decide', { decision: 'allow' })).status,
      409,
      'decided already'
    )
  }
)

t.test('OT-092 null clears every nullable field, as stored', async (t) => {
  const a = await agentSetup(t)
  const full = {
    cwd: '/x',
    project: 'P',
    model: 'm',
    toolLabel: 'l',
    toolKind: 'shell',
    message: { id: 'm1', text: 't' },
    statusDetail: 's',
    openURL: 'vscode://x',
    pid: 4242,
    approval: approval('r1')
  }
  await a.post('s1', newSession(full))
  for (const key of Object.keys(full)) {
    t.not(a.session('s1')![key as 'cwd'], null, `${key} was set`)
    await a.post('s1', { [key]: null })
    t.equal(a.session('s1')![key as 'cwd'], null, `${key}: null clears it`)
  }
  await a.post('s1', { question: question('q1') })
  await a.post('s1', { question: null })
  t.equal(a.session('s1')!.question, null)
})

t.test('OT-112 the snapshot\'s deadlines: offlineAt is last contact + ttl, removeAt 600 s later', async (t) => {
  const a = await agentSetup(t)
  const start = a.clock.now()
  await a.post('s1', newSession({ ttlSeconds: 45 }))
  const s = a.session('s1')!
  t.equal(s.lastContact, new Date(start).toISOString())
  t.equal(s.offlineAt, new Date(start + 45_000).toISOString())
  t.equal(s.removeAt, new Date(start + 645_000).toISOString())
})

t.test('OT-A07 OT-023 a poll held when the lease ends by unregistering is answered adapter_not_registered; a restart ends the sessions', async (t) => {
  const a = await agentSetup(t)
  await a.post('s1', newSession())
  const poll = a.poll({ waitSeconds: 2 })
  await held(a)
  await a.unregister(a.id, a.token())
  assertSpecError(t, await poll, 'adapter_not_registered')
  const b = await agentSetup(t, { id: 'com.example.b' })
  await b.post('s1', newSession())
  await b.fake.control.restart()
  t.same(b.fake.control.adapter(b.id)!.sessions, [])
})

t.test('OT-A22 OT-A08 after silence a new lease has a fresh id namespace, while the old sessions are kept', async (t) => {
  const a = await agentSetup(t, { fake: { leaseSilenceMs: 120_000 } })
  await a.post('s1', newSession({ approval: approval('r1') }))
  await a.advance(120_000)
  await a.reregister()
  t.ok(a.session('s1'), 'the session survived the silence')
  t.equal((await a.post('s1', { approval: approval('r1') })).status, 200, 'r1 is usable again under the new lease')
})

t.test('OT-130 OT-144 not-enabled adapters get no taps or decisions; a tap without a lease makes no event', async (t) => {
  const a = await agentSetup(t, { keypad: true })
  await a.post('s1', newSession({ approval: approval('r1') }))
  a.fake.control.setUser(a.id, { allowed: false })
  t.equal(userError(() => a.fake.control.tap(a.id, 's1'))?.code, 'conflict')
  t.equal(userError(() => a.fake.control.decide(a.id, 'r1', { decision: 'allow' }))?.code, 'conflict')
  a.fake.control.setUser(a.id, { allowed: true })
  const b = await agentSetup(t, { id: 'com.example.b', fake: { leaseSilenceMs: 120_000 } })
  await b.post('s1', newSession())
  await b.advance(120_000)
  t.equal(b.snapshot().lease, null)
  t.equal(b.fake.control.tap(b.id, 's1').event, null, 'no lease, no event')
})

t.test('OT-142 OT-137 an approvals-only adapter may poll; a refused cursor changes nothing, its ack included', async (t) => {
  const a = await agentSetup(t, { capabilities: ['approvals'], keypad: true })
  t.equal((await a.poll()).status, 200)
  await a.post('s1', newSession({ approval: approval('r1') }))
  a.fake.control.decide(a.id, 'r1', { decision: 'allow' })
  await a.poll()
  assertSpecError(t, await a.poll({ after: 5, ack: 1 }), 'invalid_cursor')
  const reply = await a.poll()
  t.equal(reply.json.acknowledged, 0, 'the refused poll\'s ack was not applied')
  t.equal(reply.json.events.length, 1)
})

t.test('OT-A31 expiresAt rounds up to whole seconds: never before the request really expires', async (t) => {
  const a = await agentSetup(t)
  await a.advance(250)
  const now = a.clock.now()
  await a.post('s1', newSession({ approval: approval('r1') }))
  t.equal(a.snapshot().requests[0]!.expiresAt, Math.ceil((now + 600_000) / 1000))
  t.ok(a.snapshot().requests[0]!.expiresAt * 1000 >= now + 600_000)
})

t.test('OT-097 OT-A24 whitespace runs of any kind become one space', async (t) => {
  const a = await agentSetup(t)
  await a.post('s1', newSession({ project: 'a \t\u00a0 b\u2003\u2003c' }))
  t.equal(a.session('s1')!.project, 'a b c')
})

t.test('OT-103 a new message.id replaces the text; the same id with longer text continues it', async (t) => {
  const a = await agentSetup(t)
  await a.post('s1', newSession({ message: { id: 'm1', text: 'Hello' } }))
  await a.post('s1', { message: { id: 'm1', text: 'Hello, world' } })
  t.same(a.session('s1')!.message, { id: 'm1', text: 'Hello, world' })
  await a.post('s1', { message: { id: 'm2', text: 'Next' } })
  t.same(a.session('s1')!.message, { id: 'm2', text: 'Next' })
})

t.test('OT-108 OT-A16 the real process check takes processes, not threads', async (t) => {
  const a = await agentSetup(t, { fake: { pidCheck: 'real' } })
  await a.post('s1', newSession())
  const threads = readdirSync(`/proc/${process.pid}/task`).map(Number).filter((tid) => tid !== process.pid)
  t.ok(threads.length > 0, 'node runs helper threads beside its main one')
  assertSpecError(t, await a.post('s1', { pid: threads[0] }), 'invalid_field', 'pid')
  t.equal((await a.post('s1', { pid: process.pid })).status, 200)
})
