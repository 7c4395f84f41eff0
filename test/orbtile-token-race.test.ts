// A registration that takes more than one turn of the event loop (the first icon a fake process decodes loads its
// codecs) while the discovery token is made new: the lease must not open under the new token. This file's first
// registration is that first icon, which is why the test has a file of its own.
import t from 'tap'
import { makePng } from './helpers/png.js'
import { adapterSetup, minimalRegistration } from './helpers/orbtile.js'
import { assertSpecError } from './helpers/assert.js'

t.test('OT-023 a registration still decoding its icon when the token is made new is refused: no lease opens', async (t) => {
  let onHead = (): void => {}
  const { fake, register } = await adapterSetup(t, {
    tap: { request: () => { onHead(); return undefined }, exchange: () => {}, malformed: () => {} }
  })
  let leaseBefore: unknown = 'not looked'
  // In the loop's next turn after the head (the body parsed, the icon decoding), the token is made new.
  onHead = () => {
    setImmediate(() => {
      leaseBefore = fake.control.adapter('decoding.a')?.lease ?? null
      fake.control.regenerateToken()
    })
  }
  const icon = { png: makePng(80, 80, 'noise').toString('base64') }
  const reply = await register('decoding.a', { ...minimalRegistration(), icon })
  t.equal(leaseBefore, null, 'the premise: the token changed before the registration committed')
  assertSpecError(t, reply, 'unauthorized')
  t.equal(fake.control.adapter('decoding.a')?.lease ?? null, null, 'no lease was opened')
})
