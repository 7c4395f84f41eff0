import { join } from 'node:path'
import t from 'tap'
import { makePng } from './helpers/png.js'
import { startOrbtest } from '../src/orbtest.js'
import { VirtualClock } from '../src/shared/clock.js'
import { validatorFor } from '../src/spec/orbtile.js'
import { adapterSetup, minimalRegistration } from './helpers/orbtile.js'
import { assertSpecError } from './helpers/assert.js'
import { readDiscovery, scratch } from './helpers/fake.js'
import { once } from 'node:events'
import { connect } from 'node:net'
import { httpRequest, parseRawResponse, SocketClient } from './helpers/client.js'
import { BASE_PATH } from '../src/spec/orbtile.js'

const TOKEN = /^[A-Za-z0-9_-]{43}$/

t.test('OT-018 a registration reply carries a 43-character base64url adapterToken; each lease its own', async (t) => {
  const { register, unregister } = await adapterSetup(t)
  const tokens = new Set<string>()
  for (let i = 0; i < 5; i++) {
    const reply = await register('lease.a')
    t.match(reply.json.adapterToken, TOKEN)
    t.equal(Buffer.from(reply.json.adapterToken, 'base64url').length, 32)
    tokens.add(reply.json.adapterToken)
    t.equal((await unregister('lease.a', reply.json.adapterToken)).status, 204)
  }
  t.equal(tokens.size, 5, 'five leases, five tokens')
})

t.test(
  'OT-020 OT-021 OT-A06 while a lease is live, re-registration needs its token; a wrong or missing one is 401 naming the header',
  async (t) => {
    const { register } = await adapterSetup(t)
    const a = (await register('own.a')).json.adapterToken
    const b = (await register('own.b')).json.adapterToken
    assertSpecError(t, await register('own.a'), 'unauthorized', 'X-Orbtile-Adapter-Token')
    assertSpecError(
      t,
      await register('own.a', minimalRegistration(), 'x'.repeat(43)),
      'unauthorized',
      'X-Orbtile-Adapter-Token'
    )
    assertSpecError(t, await register('own.a', minimalRegistration(), b), 'unauthorized', 'X-Orbtile-Adapter-Token')
    const again = await register('own.a', { name: 'Renamed', palette: { baseHue: 250 } }, a)
    t.equal(again.status, 200)
    t.equal(again.json.adapterToken, a, 'OT-A06: the same token; the lease goes on')
    t.equal(again.json.adapter.palette.baseHue, 250, 'the reply reflects the new body')
  }
)

t.test("OT-A02 a live lease's token is checked before the body", async (t) => {
  const { register } = await adapterSetup(t)
  await register('order.a')
  assertSpecError(t, await register('order.a', { name: '' }), 'unauthorized', 'X-Orbtile-Adapter-Token')
})

t.test('OT-A07 DELETE /adapters/{id} with the token answers 204 and ends the lease; without a lease it is adapter_not_registered', async (t) => {
  const { register, unregister, fake } = await adapterSetup(t)
  const token = (await register('del.a')).json.adapterToken
  assertSpecError(t, await unregister('del.a'), 'unauthorized', 'X-Orbtile-Adapter-Token')
  assertSpecError(t, await unregister('del.a', 'y'.repeat(43)), 'unauthorized', 'X-Orbtile-Adapter-Token')
  const done = await unregister('del.a', token)
  t.equal(done.status, 204)
  t.equal(done.text, '')
  assertSpecError(t, await unregister('del.a', token), 'adapter_not_registered')
  assertSpecError(t, await unregister('never.seen', token), 'adapter_not_registered')
  t.equal(fake.control.adapter('del.a')!.lease, null)
  const fresh = await register('del.a', minimalRegistration(), token)
  t.equal(fresh.status, 200, 'OT-A06: without a live lease a stale token is ignored')
  t.not(fresh.json.adapterToken, token, 'OT-023: a new lease, a new token')
})

t.test('OT-028 OT-A21 at most 8 live leases, awaiting adapters included; ending one frees a slot', async (t) => {
  const { register, unregister } = await adapterSetup(t)
  const tokens: string[] = []
  for (let i = 0; i < 8; i++) {
    const reply = await register(`max.a${i}`)
    t.equal(reply.json.reason, 'awaiting_user')
    tokens.push(reply.json.adapterToken)
  }
  assertSpecError(t, await register('max.ninth'), 'limit_exceeded')
  t.equal(
    (await register('max.a3', minimalRegistration(), tokens[3])).status,
    200,
    're-registering a live one is no new slot'
  )
  await unregister('max.a0', tokens[0])
  t.equal((await register('max.ninth')).status, 200)
})

t.test('OT-023 OT-A08 a silent lease ends after the window on the fake\'s clock; any request on its routes counts', async (t) => {
  const clock = new VirtualClock(0)
  t.teardown(() => clock.dispose())
  const { register, fake } = await adapterSetup(t, { clock, leaseSilenceMs: 120_000 })
  const token = (await register('quiet.a')).json.adapterToken
  await fake.control.advance(100_000)
  t.equal((await register('quiet.a', minimalRegistration(), token)).status, 200, 'still live at 100 s')
  await fake.control.advance(119_000)
  t.ok(fake.control.adapter('quiet.a')!.lease, 'the re-registration restarted the window')
  await fake.control.advance(1_000)
  t.equal(fake.control.adapter('quiet.a')!.lease, null, 'ended after 120 s of silence')
  const next = await register('quiet.a', minimalRegistration(), token)
  t.equal(next.status, 200)
  t.not(next.json.adapterToken, token)
})

t.test('OT-A08 the silence window is configurable', async (t) => {
  const clock = new VirtualClock(0)
  t.teardown(() => clock.dispose())
  const { register, fake } = await adapterSetup(t, { clock, leaseSilenceMs: 5_000 })
  await register('quiet.b')
  await fake.control.advance(4_999)
  t.ok(fake.control.adapter('quiet.b')!.lease)
  await fake.control.advance(1)
  t.equal(fake.control.adapter('quiet.b')!.lease, null)
})

t.test('OT-023 regenerating the discovery token or restarting ends every lease', async (t) => {
  const { register, fake, client } = await adapterSetup(t)
  const a = (await register('end.a')).json.adapterToken
  fake.control.regenerateToken()
  client.token = fake.token
  t.equal(fake.control.adapter('end.a')!.lease, null)
  const b = (await register('end.a', minimalRegistration(), a)).json.adapterToken
  t.not(b, a)
  await fake.control.restart()
  const after = new SocketClient(fake.socketPath, fake.token)
  t.teardown(() => after.close())
  t.equal(fake.control.adapter('end.a')!.lease, null)
  const c = await after.request({
    method: 'PUT',
    path: '/adapters/end.a',
    body: minimalRegistration(),
    headers: { 'x-orbtile-adapter-token': b }
  })
  t.equal(c.status, 200)
  t.not(c.json.adapterToken, b)
})

t.test(
  'OT-060 OT-A09 approval: awaiting_user first, allowed by the user, disabled_by_user; kept across leases and restarts',
  async (t) => {
    const { register, unregister, fake } = await adapterSetup(t)
    const first = await register('ok.a')
    t.same([first.json.enabled, first.json.reason], [false, 'awaiting_user'])
    t.match(first.json.adapterToken, TOKEN, 'a token is issued anyway')
    fake.control.setUser('ok.a', { allowed: true })
    const allowed = await register('ok.a', minimalRegistration(), first.json.adapterToken)
    t.equal(allowed.json.enabled, true)
    t.notOk('reason' in allowed.json, 'no reason while enabled')
    await unregister('ok.a', first.json.adapterToken)
    await fake.control.restart()
    const client = new SocketClient(fake.socketPath, fake.token)
    t.teardown(() => client.close())
    const later = await client.request({ method: 'PUT', path: '/adapters/ok.a', body: minimalRegistration() })
    t.equal(later.json.enabled, true, 'the approval outlives the lease and the restart')
    fake.control.setUser('ok.a', { allowed: false })
    const disabled = await client.request({
      method: 'PUT',
      path: '/adapters/ok.a',
      body: minimalRegistration(),
      headers: { 'x-orbtile-adapter-token': later.json.adapterToken }
    })
    t.same([disabled.json.enabled, disabled.json.reason], [false, 'disabled_by_user'])
  }
)

t.test('OT-A09 PUT replaces the whole registration: omitted fields return to their defaults', async (t) => {
  const { register, fake } = await adapterSetup(t)
  const token = (
    await register('rep.a', {
      name: 'Full',
      shortName: 'F',
      palette: { baseHue: 200, chroma: 0.7 },
      glyph: { symbol: 'x' },
      urlSchemes: ['vscode'],
      capabilities: ['tap', 'approvals'],
      tapBehavior: 'eventOnly'
    })
  ).json.adapterToken
  await register('rep.a', { name: 'Plain name that is long', palette: { baseHue: 200 } }, token)
  const { registration, badge } = fake.control.adapter('rep.a')!
  t.same(registration, {
    name: 'Plain name that is long',
    palette: { baseHue: 200, chroma: 1, lightness: 0 },
    icon: null,
    urlSchemes: [],
    capabilities: [],
    tapBehavior: 'alsoOpen'
  })
  t.equal(badge, 'Plain name t', 'a long name without shortName is cut to 12 for display')
})

t.test(
  "OT-056 OT-057 keypad decisions need the user's switch, and the reply shows it as of registration",
  async (t) => {
    const { register, fake } = await adapterSetup(t)
    const first = await register('kp.a', { ...minimalRegistration(), capabilities: ['approvals', 'questions'] })
    t.equal(first.json.keypadDecisions, false, 'declaring approvals does not enable them')
    fake.control.setUser('kp.a', { keypad: true })
    t.equal(fake.control.adapter('kp.a')!.keypadDecisions, false, 'a snapshot: unchanged until the next registration')
    const second = await register(
      'kp.a',
      { ...minimalRegistration(), capabilities: ['approvals'] },
      first.json.adapterToken
    )
    t.equal(second.json.keypadDecisions, true)
    const noCaps = await register('kp.a', minimalRegistration(), first.json.adapterToken)
    t.equal(noCaps.json.keypadDecisions, false, 'nothing to decide without approvals or questions')
  }
)

t.test(
  'OT-A26 control: PUT /control/orbtile/adapters/{id}/user, the snapshot per adapter, and --auto-allow',
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
      controlPort: 0,
      clockMode: 'virtual'
    })
    t.teardown(() => fakes.close())
    const client = new SocketClient(fakes.orbtile!.socketPath, readDiscovery(join(dir, 'd.json')).token)
    t.teardown(() => client.close())
    const reply = await client.request({ method: 'PUT', path: '/adapters/auto.a', body: minimalRegistration() })
    t.equal(reply.json.enabled, true, '--auto-allow allows a first registration')
    const call = (method: string, path: string, body?: unknown) =>
      httpRequest(fakes.control.url, { method, path, body })
    const changed = await call('PUT', '/control/orbtile/adapters/auto.a/user', {
      allowed: false,
      keypad: true,
      baseHue: 120,
      anchorAttention: true
    })
    t.equal(changed.status, 200)
    t.same(changed.json.user, { approval: 'disabled_by_user', keypad: true, baseHue: 120, anchorAttention: true })
    t.equal(changed.json.palette.resolvedBaseHue, 120)
    const state = (await call('GET', '/control/orbtile/state')).json
    t.equal(state.adapters.length, 1)
    t.notMatch(JSON.stringify(state), reply.json.adapterToken, 'never the adapter token')
    t.ok(state.adapters[0].lease.silenceDeadline)
    for (const bad of [{}, { baseHue: 360 }, { allowed: 'yes' }, { extra: 1 }]) {
      t.equal((await call('PUT', '/control/orbtile/adapters/auto.a/user', bad)).status, 400, JSON.stringify(bad))
    }
    t.equal(
      (await call('PUT', '/control/orbtile/adapters/claude/user', { allowed: true })).status,
      400,
      'reserved ids have no settings'
    )
    const pre = await call('PUT', '/control/orbtile/adapters/later.a/user', { allowed: true })
    t.equal(pre.json.enabled, true, 'a user can allow an id before it ever registers')
    t.equal((await call('GET', '/control/orbtile/adapters/never.seen')).status, 404)
    await call('POST', '/control/reset')
    t.same((await call('GET', '/control/orbtile/state')).json.adapters, [], 'reset forgets adapters and settings')
  }
)

t.test('OT-041 a reply validates against the spec for every approval state', async (t) => {
  const { register, fake } = await adapterSetup(t)
  const schema = validatorFor('RegistrationReply')
  const first = await register('val.a')
  t.ok(schema(first.json))
  fake.control.setUser('val.a', { allowed: true })
  t.ok(schema((await register('val.a', minimalRegistration(), first.json.adapterToken)).json))
})

t.test('OT-055 OT-A09 tapBehavior defaults to alsoOpen and is kept as registered (the tap event arrives with sessions)', async (t) => {
  const { register, fake } = await adapterSetup(t)
  await register('tap.a', { ...minimalRegistration(), capabilities: ['tap'] })
  t.equal(fake.control.adapter('tap.a')!.registration!.tapBehavior, 'alsoOpen')
  await register('tap.b', { ...minimalRegistration(), capabilities: ['tap'], tapBehavior: 'eventOnly' })
  t.equal(fake.control.adapter('tap.b')!.registration!.tapBehavior, 'eventOnly')
})

t.test('OT-A09 --auto-allow allows only an id the user never decided on; a disable stands', async (t) => {
  const { register, fake } = await adapterSetup(t, { autoAllow: true })
  fake.control.setUser('auto.no', { allowed: false })
  const reply = await register('auto.no')
  t.same([reply.json.enabled, reply.json.reason], [false, 'disabled_by_user'])
  t.equal((await register('auto.yes')).json.enabled, true)
})

t.test('OT-021 OT-A06 two first registrations racing for one id: one lease, the other is 401', async (t) => {
  const { register } = await adapterSetup(t)
  const icon = { png: makePng(80, 80, 'noise').toString('base64') }
  const replies = await Promise.all([
    register('race.a', { ...minimalRegistration(), icon }),
    register('race.a'),
    register('race.a', { ...minimalRegistration(), icon })
  ])
  t.same(replies.map((r) => r.status).sort(), [200, 401, 401])
})

t.test(
  'OT-023 a new token or the API switched off while a registration body is on its way refuses it: no lease under the new token',
  async (t) => {
    const { fake } = await adapterSetup(t)
    const body = JSON.stringify(minimalRegistration())
    const send = async (between: () => unknown): Promise<ReturnType<typeof parseRawResponse>> => {
      const socket = connect(fake.socketPath)
      t.teardown(() => socket.destroy())
      await once(socket, 'connect')
      const head = `PUT ${BASE_PATH}/adapters/late.a HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${fake.token}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`
      socket.write(head)
      let raw = ''
      socket.on('data', (chunk: Buffer) => { raw += chunk.toString('latin1') })
      await new Promise((resolve) => setTimeout(resolve, 50))
      await between()
      socket.end(body)
      await once(socket, 'close')
      return parseRawResponse(raw)
    }
    const refused = await send(() => { fake.control.regenerateToken() })
    t.equal(refused.status, 401, 'the bearer was the old token by the time the body was in')
    t.equal(refused.json.error.code, 'unauthorized')
    t.equal(fake.control.adapter('late.a')?.lease ?? null, null, 'no lease was opened')
    const off = await send(async () => await fake.control.setApi({ enabled: false, listening: true }))
    t.equal(off.status, 503)
    t.equal(off.json.error.code, 'api_disabled')
    await fake.control.setApi({ enabled: true, listening: true })
    t.equal(fake.control.adapter('late.a')?.lease ?? null, null, 'still no lease')
    const served = await send(() => {})
    t.equal(served.status, 200, 'with nothing changed in between, the same request is served')
  }
)
