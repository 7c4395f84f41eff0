import t from 'tap'
import { adapterSetup, minimalRegistration } from './helpers/orbtile.js'
import { makePng } from './helpers/png.js'

// Alone in its file, so that this process has decoded no icon yet: the first decode loads the codecs, which
// yields to the event loop, and that is when a later request of the same id could overtake the PUT.
t.test('OT-A07 requests of one id take effect in arrival order: a PUT still decoding its icon cannot undo a later DELETE', async (t) => {
  // The first icon a fake decodes loads its codecs, which yields to the event loop: the later request lands then.
  const icon = { png: makePng(256, 256).toString('base64') }
  {
    const { register, unregister, fake } = await adapterSetup(t, { rateLimit: 'on', clockMode: 'virtual' })
    const token = (await register('order.b')).json.adapterToken
    const spent = () => fake.control.state().rateLimitBuckets.find((b) => b.key === 'adapter:order.b')?.tokens ?? 60
    const before = spent()
    const put = register('order.b', { ...minimalRegistration(), name: 'older', icon }, token)
    // Wait until the PUT has reached the fake (its rate-limit token is spent), then send the DELETE.
    while (spent() === before) await new Promise((resolve) => setImmediate(resolve))
    await new Promise((resolve) => setTimeout(resolve, 1))
    const del = await unregister('order.b', token)
    t.equal((await put).status, 200, 'the PUT, first in line, commits')
    t.equal(del.status, 204, 'then the DELETE ends the lease')
    t.equal(fake.control.adapter('order.b')!.lease, null, 'and no lease is left behind')
  }
})
