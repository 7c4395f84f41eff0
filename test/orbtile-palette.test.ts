import t from 'tap'
import fc from 'fast-check'
import { differenceEuclidean, inGamut, parse, converter } from 'culori'
import { pushAttentionHue, pushBaseHue } from '../src/orbtile-mock/palette/arcs.js'
import { derivedWaitingHue, generatePalette, inCalmArc } from '../src/orbtile-mock/palette/generator.js'
import { FIXED_COLOURS, PALETTE_KEYS } from '../src/orbtile-mock/palette/model.js'
import { fcParams } from './helpers/fc.js'
import { adapterSetup, minimalRegistration } from './helpers/orbtile.js'
import { assertSpecError } from './helpers/assert.js'

const palette = (p: Record<string, unknown>) => ({ name: 'x', palette: p })
const hasNote = (warnings: string[], prefix: string) => warnings.some((w) => w.startsWith(prefix))
const hue = fc.double({ min: 0, max: 360, maxExcluded: true, noNaN: true })

t.test('OT-071 baseHue is a number with 0 <= h < 360', async (t) => {
  const { register } = await adapterSetup(t)
  t.equal((await register('a.zero', palette({ baseHue: 0 }))).status, 200)
  t.equal((await register('a.top', palette({ baseHue: 359.99 }))).status, 200)
  for (const baseHue of [360, -0.1, '200', null]) {
    assertSpecError(t, await register('a.b', palette({ baseHue })), 'invalid_field', 'palette.baseHue')
  }
})

t.test('OT-072 the ledger\'s reserved-arc table', async (t) => {
  const { register, unregister } = await adapterSetup(t)
  const table: Array<[number, number, boolean]> = [
    [346, 345.9, true], [359, 345.9, true], [0, 345.9, true], [20, 345.9, true], [30, 345.9, true],
    [31, 75.9, true], [40, 75.9, true], [75, 75.9, true],
    [76, 76, false], [100, 100, false], [200, 200, false], [345, 345, false]
  ]
  let n = 0
  for (const [sent, resolved, warned] of table) {
    const reply = await register(`hue.t${n++}`, palette({ baseHue: sent }))
    t.equal(reply.json.adapter.resolvedBaseHue, resolved, `${sent} resolves to ${resolved}`)
    t.equal(hasNote(reply.json.warnings, 'reserved-arc:'), warned, `${sent} ${warned ? 'warns' : 'does not warn'}`)
    t.match(reply.json.warnings.join(' '), warned ? /baseHue/ : /^(?!.*reserved-arc)/)
    await unregister(`hue.t${n - 1}`, reply.json.adapterToken)
  }
})

t.test('OT-A12 the arcs are open: 345.9, 75.9, 18.9 and 55 stay put; the midpoints go to the lower edge', async (t) => {
  t.equal(pushBaseHue(345.9), 345.9)
  t.equal(pushBaseHue(75.9), 75.9)
  t.equal(pushBaseHue(30.9), 345.9)
  t.equal(pushBaseHue(30.900000000000002), 75.9)
  t.equal(pushAttentionHue(18.9), 18.9)
  t.equal(pushAttentionHue(55), 55)
  t.equal(pushAttentionHue(36.95), 18.9)
  t.equal(pushAttentionHue(36.95000000000001), 55)
  const { register } = await adapterSetup(t)
  const edge = await register('edge.a', palette({ baseHue: 345.9, attentionHue: 18.9 }))
  t.equal(edge.json.adapter.resolvedBaseHue, 345.9)
  t.notOk(hasNote(edge.json.warnings, 'reserved-arc:') || hasNote(edge.json.warnings, 'attention-arc:'), 'no push warning on an edge')
})

t.test('OT-072 for every baseHue, resolvedBaseHue is h outside the arc and the nearer edge inside, warned exactly when moved', async (t) => {
  const { register, unregister } = await adapterSetup(t)
  await fc.assert(fc.asyncProperty(hue, async (h) => {
    const reply = await register('hue.prop', palette({ baseHue: h }))
    await unregister('hue.prop', reply.json.adapterToken)
    const inside = h > 345.9 || h < 75.9
    const distanceToLower = inside ? (h > 345.9 ? h - 345.9 : h + 360 - 345.9) : 0
    const expected = !inside ? h : distanceToLower <= 45 ? 345.9 : 75.9
    return reply.json.adapter.resolvedBaseHue === expected &&
      hasNote(reply.json.warnings, 'reserved-arc:') === (expected !== h) &&
      reply.json.adapter.palette.baseHue === h
  }), fcParams({ numRuns: 150 }))
})

t.test('OT-073 without an override the reply echoes the registered baseHue and resolves the pushed one', async (t) => {
  const { register } = await adapterSetup(t)
  const reply = await register('a.b', palette({ baseHue: 10 }))
  t.equal(reply.json.adapter.palette.baseHue, 10)
  t.equal(reply.json.adapter.resolvedBaseHue, 345.9)
})

t.test('OT-075 OT-076 chroma is 0.5..1.3 and lightness -0.05..0.05', async (t) => {
  const { register } = await adapterSetup(t)
  for (const chroma of [0.49, 1.31]) assertSpecError(t, await register('a.b', palette({ baseHue: 200, chroma })), 'invalid_field', 'palette.chroma')
  for (const lightness of [-0.051, 0.051]) assertSpecError(t, await register('a.b', palette({ baseHue: 200, lightness })), 'invalid_field', 'palette.lightness')
  t.equal((await register('a.b', palette({ baseHue: 200, chroma: 1.3, lightness: -0.05 }))).status, 200)
})

t.test('OT-077 OT-078 attentionHue is 0 <= h < 360; inside 18.9..55 it moves to the nearer edge, with a warning (OT-A12)', async (t) => {
  const { register } = await adapterSetup(t)
  assertSpecError(t, await register('a.b', palette({ baseHue: 200, attentionHue: 360 })), 'invalid_field', 'palette.attentionHue')
  const cases: Array<[number, number]> = [[19, 18.9], [30, 18.9], [40, 55], [54, 55], [16, 16], [72, 72], [330, 330]]
  let n = 0
  for (const [sent, resolved] of cases) {
    const reply = await register(`att.t${n++}`, palette({ baseHue: 200, attentionHue: sent }))
    t.equal(reply.status, 200)
    t.equal(pushAttentionHue(sent), resolved)
    t.equal(hasNote(reply.json.warnings, 'attention-arc:'), sent !== resolved, `${sent}: warned iff moved`)
    t.equal(reply.json.adapter.palette.attentionHue, sent, 'the echo keeps what was sent; there is no resolvedAttentionHue (OT-A12)')
    t.notOk('resolvedAttentionHue' in reply.json.adapter)
  }
})

t.test('OT-078 for every attentionHue, the push lands on the nearer edge and is warned exactly when it moves', async (t) => {
  const { register, unregister } = await adapterSetup(t)
  await fc.assert(fc.asyncProperty(hue, async (h) => {
    const reply = await register('att.prop', palette({ baseHue: 200, attentionHue: h }))
    await unregister('att.prop', reply.json.adapterToken)
    const expected = h > 18.9 && h < 55 ? (h - 18.9 <= 55 - h ? 18.9 : 55) : h
    return pushAttentionHue(h) === expected && hasNote(reply.json.warnings, 'attention-arc:') === (expected !== h)
  }), fcParams({ numRuns: 150 }))
})

t.test('OT-079 baseHue 180 without attentionHue gets an attention: note; the note follows the derived waiting colour', async (t) => {
  const { register } = await adapterSetup(t)
  t.ok(hasNote((await register('a.calm', palette({ baseHue: 180 }))).json.warnings, 'attention:'))
  t.notOk(hasNote((await register('a.alarm', palette({ baseHue: 300 }))).json.warnings, 'attention:'))
  t.notOk(hasNote((await register('a.set', palette({ baseHue: 180, attentionHue: 330 }))).json.warnings, 'attention:'), 'an attentionHue silences it')
  await fc.assert(fc.property(hue, (h) => {
    const base = pushBaseHue(h)
    const notes = generatePalette({ baseHue: base, chroma: 1, lightness: 0, anchorAttention: false }).notes
    return hasNote(notes, 'attention:') === inCalmArc(derivedWaitingHue(base))
  }), fcParams())
  // The ledger's "about 115..235": the centre of that range is calm, the far side of both ends is not.
  for (const base of [120, 150, 180, 210, 235]) t.ok(inCalmArc(derivedWaitingHue(base)), `${base} is calm`)
  for (const base of [100, 250, 300]) t.notOk(inCalmArc(derivedWaitingHue(base)), `${base} is not calm`)
})

t.test('OT-080 attentionHue 330, 73 or 17 gets a proximity: note and still succeeds; every alarm-arc hue does at chroma 1', async (t) => {
  const { register } = await adapterSetup(t)
  let n = 0
  for (const attentionHue of [330, 73, 17]) {
    const reply = await register(`prox.t${n++}`, palette({ baseHue: 200, attentionHue }))
    t.equal(reply.status, 200)
    t.ok(hasNote(reply.json.warnings, 'proximity:'), `${attentionHue} is near a built-in waiting colour`)
  }
  t.notOk(hasNote((await register('prox.far', palette({ baseHue: 200, attentionHue: 180 }))).json.warnings, 'proximity:'))
  await fc.assert(fc.property(hue, (h) => {
    const alarm = h >= 280 || h <= 76
    const attentionHue = pushAttentionHue(h)
    const notes = generatePalette({ baseHue: 200, chroma: 1, lightness: 0, attentionHue, anchorAttention: false }).notes
    return !alarm || hasNote(notes, 'proximity:')
  }), fcParams())
})

t.test('OT-061 OT-A13 every generated colour lies inside sRGB, and gamut: appears exactly when a stop had to be clipped', async (t) => {
  const toOklch = converter('oklch')
  const rgbGamut = inGamut('rgb')
  await fc.assert(fc.property(
    hue, fc.double({ min: 0.5, max: 1.3, noNaN: true }), fc.double({ min: -0.05, max: 0.05, noNaN: true }), fc.option(hue, { nil: undefined }),
    (h, chroma, lightness, attention) => {
      const input = { baseHue: pushBaseHue(h), chroma, lightness, anchorAttention: false, ...(attention === undefined ? {} : { attentionHue: pushAttentionHue(attention) }) }
      const result = generatePalette(input)
      for (const key of PALETTE_KEYS) {
        const colour = parse(result.colours[key])
        if (colour === undefined || !rgbGamut(colour)) return false
        if (!/^#[0-9a-f]{6}$/.test(result.colours[key])) return false
      }
      void toOklch
      return true
    }
  ), fcParams())
  const clipped = generatePalette({ baseHue: 140, chroma: 1.3, lightness: 0, anchorAttention: false })
  t.ok(hasNote(clipped.notes, 'gamut:'), 'a vivid green at chroma 1.3 is clipped, and says so')
  const calm = generatePalette({ baseHue: 300, chroma: 0.5, lightness: 0, anchorAttention: false })
  t.notOk(hasNote(calm.notes, 'gamut:'), 'a muted violet needs no clip')
})

t.test('OT-061 the wcag: and salience: notes are reachable', async (t) => {
  const { register } = await adapterSetup(t)
  const dark = await register('note.wcag', palette({ baseHue: 200, states: { idle: '#000000' } }))
  t.ok(hasNote(dark.json.warnings, 'wcag:'), 'a black idle colour is lifted for label contrast')
  const dim = await register('note.dim', palette({ baseHue: 200, lightness: -0.05 }))
  t.ok(hasNote(dim.json.warnings, 'wcag:'), 'lightness -0.05 lifts the dimmest stop')
  const red = await register('note.red', palette({ baseHue: 200, states: { thinking: '#e14b36' } }))
  t.ok(hasNote(red.json.warnings, 'salience:'), 'a thinking colour equal to the error colour is turned away')
})

t.test('OT-082 OT-083 palette.states: null or 1..10 known keys with #rrggbb values', async (t) => {
  const { register } = await adapterSetup(t)
  t.equal((await register('s.null', palette({ baseHue: 200, states: null }))).status, 200)
  assertSpecError(t, await register('a.b', palette({ baseHue: 200, states: {} })), 'invalid_field', 'palette.states')
  for (const key of ['error', 'empty', 'glow']) {
    assertSpecError(t, await register('a.b', palette({ baseHue: 200, states: { [key]: '#000000' } })), 'invalid_field', `palette.states.${key}`)
  }
  for (const value of ['#abc', '1a2b3c', '#1a2b3c4d', 'red', null]) {
    assertSpecError(t, await register('a.b', palette({ baseHue: 200, states: { idle: value } })), 'invalid_field', 'palette.states.idle')
  }
  t.equal((await register('s.mixed', palette({ baseHue: 200, states: { idle: '#1a2B3c' } }))).status, 200)
})

t.test('OT-084 thinking supplies tool and streaming; waitingPermission supplies waitingQuestion', async (t) => {
  const { register, fake } = await adapterSetup(t)
  await register('fb.a', palette({ baseHue: 200, states: { thinking: '#88bbee', waitingPermission: '#ee99cc' } }))
  const { colours, sources } = fake.control.adapter('fb.a')!.palette!
  t.equal(colours.thinking, '#88bbee')
  t.equal(colours.tool, '#88bbee')
  t.equal(colours.streaming, '#88bbee')
  t.same([sources.tool, sources.streaming, sources.waitingQuestion], ['fallback', 'fallback', 'fallback'])
  t.equal(colours.waitingQuestion, colours.waitingPermission)
  await register('fb.b', palette({ baseHue: 200, states: { thinking: '#88bbee', tool: '#66dd99' } }))
  t.equal(fake.control.adapter('fb.b')!.palette!.colours.tool, '#66dd99', 'an explicit tool colour wins over the fallback')
})

t.test('OT-085 OT-A12 OT-A13 a user hue override replaces states, shows in the echo, and is the pushed resolved hue', async (t) => {
  const { register, fake } = await adapterSetup(t)
  const first = await register('ov.a', palette({ baseHue: 200, chroma: 0.8, states: { thinking: '#88bbee' } }))
  fake.control.setUser('ov.a', { baseHue: 20 })
  t.equal(fake.control.adapter('ov.a')!.palette!.sources.thinking, 'generated', 'the override takes effect in the app at once')
  const reply = await register('ov.a', palette({ baseHue: 200, chroma: 0.8, states: { thinking: '#88bbee' } }), first.json.adapterToken)
  t.same(reply.json.adapter.palette, { baseHue: 20, chroma: 0.8, lightness: 0 }, 'user hue, states omitted, the rest as registered')
  t.equal(reply.json.adapter.resolvedBaseHue, 345.9, 'the user hue goes through the push too')
  fake.control.setUser('ov.a', { baseHue: null })
  const cleared = await register('ov.a', palette({ baseHue: 200, chroma: 0.8, states: { thinking: '#88bbee' } }), first.json.adapterToken)
  t.same(cleared.json.adapter.palette, { baseHue: 200, chroma: 0.8, lightness: 0, states: { thinking: '#88bbee' } })
})

t.test('OT-086 anchorAttention ignores both waiting overrides', async (t) => {
  const { register, fake } = await adapterSetup(t)
  await register('anc.a', palette({ baseHue: 200, attentionHue: 330, states: { waitingPermission: '#00ff00', waitingQuestion: '#0000ff', idle: '#aaaaaa' } }))
  t.equal(fake.control.adapter('anc.a')!.palette!.colours.waitingPermission, '#00ff00')
  const after = fake.control.setUser('anc.a', { anchorAttention: true })
  t.equal(after.palette!.sources.waitingPermission, 'generated')
  t.equal(after.palette!.sources.waitingQuestion, 'generated')
  t.equal(after.palette!.colours.idle, '#aaaaaa', 'other overrides stay')
})

t.test('OT-087 the error colours and neutrals are the same for every adapter, whatever its palette', async (t) => {
  const deltaE = differenceEuclidean('oklab')
  const reference = generatePalette({ baseHue: 200, chroma: 1, lightness: 0, anchorAttention: false })
  await fc.assert(fc.property(hue, fc.double({ min: 0.5, max: 1.3, noNaN: true }), fc.double({ min: -0.05, max: 0.05, noNaN: true }), (h, chroma, lightness) => {
    const other = generatePalette({ baseHue: pushBaseHue(h), chroma, lightness, anchorAttention: true })
    return (['error', 'offline', 'empty'] as const).every((key) => other.colours[key] === reference.colours[key])
  }), fcParams())
  t.ok(deltaE(reference.colours.error, { mode: 'oklch', ...FIXED_COLOURS.error }) < 0.01, 'the error colour is the model\'s')
})

t.test('OT-061 OT-A11 warnings are "<kind>: <text>" strings', async (t) => {
  const { register } = await adapterSetup(t)
  const reply = await register('w.a', { ...minimalRegistration(10), extra: 1, palette: { baseHue: 10, attentionHue: 40 } })
  t.ok(reply.json.warnings.length >= 3)
  for (const warning of reply.json.warnings) t.match(warning, /^(unknown-field|reserved-arc|attention-arc|attention|proximity|gamut|salience|wcag): \S/)
})
