import t from 'tap'
import fc from 'fast-check'
import { spec, validatorFor } from '../src/spec/orbtile.js'
import { REFUSED_SCHEMES } from '../src/orbtile-mock/registration.js'
import { fcParams } from './helpers/fc.js'
import { adapterSetup, minimalRegistration } from './helpers/orbtile.js'
import { assertSpecError, specErrorProblem } from './helpers/assert.js'
import { arbitraryFor } from '../conformance/server/core/schema-arbitrary.js'
import { makePng } from './helpers/png.js'

const replySchema = validatorFor('RegistrationReply')
const registrationSchema = validatorFor('AdapterRegistration')
const body = (extra: Record<string, unknown>) => ({ ...minimalRegistration(), ...extra })

t.test('OT-041 a valid registration answers 200 with a RegistrationReply the spec\'s schema accepts', async (t) => {
  const { register } = await adapterSetup(t)
  const reply = await register('com.example.agent')
  t.equal(reply.status, 200)
  t.ok(replySchema(reply.json), JSON.stringify(replySchema.errors))
  t.type(reply.json.adapter, 'object')
  t.type(reply.json.enabled, 'boolean')
})

t.test('OT-042 adapter ids: lowercase reverse-DNS, at least one dot, 3 to 64 bytes', async (t) => {
  const { register } = await adapterSetup(t)
  for (const id of ['a.b', 'com.example.agent', 'dev.my-tool.x', `a.${'b'.repeat(62)}`]) {
    t.equal((await register(id)).status, 200, `${id} is accepted`)
  }
  for (const id of [
    'Com.Example',
    'com..x',
    'com.-x',
    'com.x-',
    '.com.x',
    'com.x.',
    'com_x.y',
    `a.${'b'.repeat(63)}`,
    `a.${'b'.repeat(300)}`,
    'a%2Eb%20c'
  ]) {
    assertSpecError(t, await register(encodeURIComponent(id).replace(/%25/g, '%')), 'invalid_field', 'adapterId')
  }
  await fc.assert(
    fc.asyncProperty(fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 70 }), async (raw) => {
      const id = raw.replace(/[^\x21-\x7e]/g, 'x')
      const reply = await register(encodeURIComponent(id))
      const valid = validatorFor('AdapterID')(id)
      const reserved =
        (/^[a-z0-9]+(-[a-z0-9]+)*$/.test(id) && id.length >= 3 && id.length <= 64) ||
        id === 'com.orbtile' ||
        id.startsWith('com.orbtile.')
      if (reserved) return specErrorProblem(reply, 'reserved_id') === undefined
      return valid ? reply.status === 200 : specErrorProblem(reply, 'invalid_field', 'adapterId') === undefined
    }),
    fcParams({ numRuns: 80 })
  )
})

t.test('OT-043 dotless ids are reserved for the built-in adapters', async (t) => {
  const { register } = await adapterSetup(t)
  for (const id of ['claude', 'codex', 'zcode', 'my-agent']) assertSpecError(t, await register(id), 'reserved_id')
})

t.test('OT-044 OT-A25 com.orbtile and com.orbtile.* are reserved, on every adapter route', async (t) => {
  const { register, unregister } = await adapterSetup(t)
  assertSpecError(t, await register('com.orbtile.test'), 'reserved_id')
  assertSpecError(t, await register('com.orbtile'), 'reserved_id')
  assertSpecError(t, await unregister('com.orbtile.test'), 'reserved_id')
  assertSpecError(t, await unregister('claude'), 'reserved_id')
  t.equal((await register('com.orbtiles.x')).status, 200, 'a different name that merely starts alike is fine')
})

t.test('OT-045 name is required, 1 to 32 characters', async (t) => {
  const { register } = await adapterSetup(t)
  assertSpecError(t, await register('a.b', { palette: { baseHue: 200 } }), 'invalid_field', 'name')
  assertSpecError(t, await register('a.b', body({ name: '' })), 'invalid_field', 'name')
  assertSpecError(t, await register('a.b', body({ name: 'x'.repeat(33) })), 'invalid_field', 'name')
  t.equal(
    (await register('a.b', body({ name: '🛰'.repeat(32) }))).status,
    200,
    '32 code points, whatever their bytes (OT-A24)'
  )
})

t.test('OT-046 palette is required', async (t) => {
  const { register } = await adapterSetup(t)
  assertSpecError(t, await register('a.b', { name: 'x' }), 'invalid_field', 'palette')
})

t.test('OT-047 shortName is 1 to 12 characters', async (t) => {
  const { register } = await adapterSetup(t)
  assertSpecError(t, await register('a.b', body({ shortName: '' })), 'invalid_field', 'shortName')
  assertSpecError(t, await register('a.b', body({ shortName: 'x'.repeat(13) })), 'invalid_field', 'shortName')
  t.equal((await register('a.b', body({ shortName: 'x'.repeat(12) }))).status, 200)
})

t.test('OT-048 glyph needs symbol or monogram, each within its rule', async (t) => {
  const { register } = await adapterSetup(t)
  t.equal((await register('a.b', body({ glyph: { symbol: 'terminal.fill' } }))).status, 200)
  t.equal(
    (await register('a.b', body({ glyph: { monogram: 'Ab' } }), (await register('c.d')).json.adapterToken)).status,
    401,
    'a.b holds a lease now'
  )
  for (const glyph of [
    {},
    { symbol: 'Terminal' },
    { symbol: 'a b' },
    { symbol: 'a'.repeat(65) },
    { monogram: '' },
    { monogram: 'ABC' }
  ]) {
    const reply = await register('e.f', body({ glyph }))
    t.equal(specErrorProblem(reply, 'invalid_field'), undefined, `glyph ${JSON.stringify(glyph)} is refused`)
    t.match(reply.json.error.field, /^glyph/)
  }
})

t.test('OT-049 OT-050 version is at most 32 characters; homepage is an https URI of at most 512', async (t) => {
  const { register } = await adapterSetup(t)
  assertSpecError(t, await register('a.b', body({ version: 'v'.repeat(33) })), 'invalid_field', 'version')
  for (const homepage of ['http://example.com', '/relative', `https://example.com/${'p'.repeat(494)}`]) {
    assertSpecError(t, await register('a.b', body({ homepage })), 'invalid_field', 'homepage')
  }
  t.equal((await register('a.b', body({ version: '1.2.3', homepage: 'https://example.com/agent' }))).status, 200)
})

t.test('OT-051 urlSchemes: at most 4, unique, each a lowercase scheme', async (t) => {
  const { register } = await adapterSetup(t)
  for (const urlSchemes of [
    ['a', 'b', 'c', 'd', 'e'],
    ['vscode', 'vscode'],
    ['Vscode'],
    ['1abc'],
    ['-x'],
    ['a'.repeat(33)]
  ]) {
    const reply = await register('a.b', body({ urlSchemes }))
    t.equal(specErrorProblem(reply, 'invalid_field'), undefined, JSON.stringify(urlSchemes))
    t.match(reply.json.error.field, /^urlSchemes/)
  }
  t.equal((await register('a.b', body({ urlSchemes: ['vscode', 'x-agent+web'] }))).status, 200)
})

t.test('OT-052 OT-A15 a registration listing an always-refused scheme is invalid_field on that item', async (t) => {
  const { register } = await adapterSetup(t)
  for (const scheme of REFUSED_SCHEMES) {
    assertSpecError(
      t,
      await register('a.b', body({ urlSchemes: ['vscode', scheme] })),
      'invalid_field',
      'urlSchemes[1]'
    )
  }
})

t.test('OT-053 capabilities: at most 3 unique items of tap, approvals, questions', async (t) => {
  const { register } = await adapterSetup(t)
  assertSpecError(t, await register('a.b', body({ capabilities: ['tap', 'tap'] })), 'invalid_field', 'capabilities')
  assertSpecError(t, await register('a.b', body({ capabilities: ['banana'] })), 'invalid_field', 'capabilities[0]')
  t.equal((await register('a.b', body({ capabilities: ['tap', 'approvals', 'questions'] }))).status, 200)
})

t.test('OT-054 tapBehavior needs capabilities that contain "tap"', async (t) => {
  const { register } = await adapterSetup(t)
  assertSpecError(t, await register('a.b', body({ tapBehavior: 'eventOnly' })), 'invalid_field', 'tapBehavior')
  assertSpecError(
    t,
    await register('a.b', body({ tapBehavior: 'eventOnly', capabilities: ['approvals'] })),
    'invalid_field',
    'tapBehavior'
  )
  assertSpecError(
    t,
    await register('a.b', body({ tapBehavior: 'sometimes', capabilities: ['tap'] })),
    'invalid_field',
    'tapBehavior'
  )
  t.equal((await register('a.b', body({ tapBehavior: 'eventOnly', capabilities: ['tap'] }))).status, 200)
})

t.test(
  'OT-007 OT-A10 unknown fields anywhere are dropped and reported by dotted path; the request succeeds',
  async (t) => {
    const { register, fake } = await adapterSetup(t)
    const reply = await register('a.b', {
      name: 'x',
      colour: 'red',
      palette: { baseHue: 200, foo: 1 },
      glyph: { symbol: 'x', extra: true },
      icon: { appBundleId: 'com.apple.Terminal', size: 3 }
    })
    t.equal(reply.status, 200)
    for (const path of ['colour', 'palette.foo', 'glyph.extra', 'icon.size']) {
      t.ok(
        reply.json.warnings.some((w: string) => w === `unknown-field: ${path}`),
        `warns about ${path}`
      )
    }
    const kept = fake.control.adapter('a.b')!.registration!
    t.notOk('colour' in kept)
    t.notOk('foo' in kept.palette)
  }
)

t.test(
  'OT-088 OT-A10 palette keys outside the spec are dropped with a warning, while palette.states keys stay strict',
  async (t) => {
    const { register } = await adapterSetup(t)
    const reply = await register('a.b', body({ palette: { baseHue: 200, hue2: 3 } }))
    t.equal(reply.status, 200)
    t.ok(reply.json.warnings.includes('unknown-field: palette.hue2'))
    assertSpecError(
      t,
      await register('c.d', body({ palette: { baseHue: 200, states: { glow: '#000000' } } })),
      'invalid_field',
      'palette.states.glow'
    )
  }
)

t.test('OT-009 OT-010 v1.0 and v1.1 registrations stay valid', async (t) => {
  const { register } = await adapterSetup(t)
  t.equal(
    (await register('v.one', { name: 'Old', palette: { baseHue: 120 } })).status,
    200,
    'v1.0: name and baseHue only'
  )
  t.equal(
    (
      await register('v.one-one', {
        name: 'Mid',
        palette: { baseHue: 120 },
        capabilities: ['tap'],
        tapBehavior: 'eventOnly'
      })
    ).status,
    200,
    'v1.1'
  )
})

t.test(
  'OT-059 the reply names the adapter, its effective palette with defaults, and the resolved base hue',
  async (t) => {
    const { register } = await adapterSetup(t)
    const reply = await register('com.example.agent', body({ palette: { baseHue: 10, attentionHue: 300 } }))
    t.same(reply.json.adapter, {
      id: 'com.example.agent',
      palette: { baseHue: 10, chroma: 1, lightness: 0, attentionHue: 300 },
      resolvedBaseHue: 345.9
    })
  }
)

t.test("OT-A25 invalid_field names the first bad field in the body's own order", async (t) => {
  const { register } = await adapterSetup(t)
  assertSpecError(t, await register('a.b', { palette: { baseHue: 400 }, name: '' }), 'invalid_field', 'palette.baseHue')
  assertSpecError(t, await register('a.b', { name: '', palette: { baseHue: 400 } }), 'invalid_field', 'name')
  assertSpecError(
    t,
    await register('a.b', { name: 'x', urlSchemes: ['ok', 'NO'], palette: { baseHue: 1, chroma: 9 } }),
    'invalid_field',
    'urlSchemes[1]'
  )
})

t.test(
  "OT-041 OT-A02 every body the spec's schema accepts is accepted (with a real PNG, no refused scheme)",
  async (t) => {
    const { register, unregister } = await adapterSetup(t)
    const pngs = [makePng(16, 16), makePng(64, 64, 'noise'), makePng(200, 200)].map((b) => b.toString('base64'))
    const valid = arbitraryFor(spec.$defs.AdapterRegistration!, spec as any, {
      'icon.png': fc.constantFrom(...pngs)
    }).filter(
      (value) =>
        registrationSchema(value) &&
        !((value as { urlSchemes?: string[] }).urlSchemes ?? []).some((s) => REFUSED_SCHEMES.has(s))
    )
    let n = 0
    await fc.assert(
      fc.asyncProperty(valid, async (value) => {
        const id = `com.example.p${n++}`
        const reply = await register(id, value)
        const token: string = reply.json?.adapterToken
        if (reply.status !== 200 || !replySchema(reply.json)) return false
        // Free the slot: at most 8 adapters hold leases at once (OT-028).
        return (await unregister(id, token)).status === 204
      }),
      fcParams({ numRuns: 60 })
    )
  }
)

t.test(
  'OT-A25 every mutation the schema refuses is 400 invalid_field, naming the mutated field or one around it',
  async (t) => {
    const { register } = await adapterSetup(t)
    const valid = arbitraryFor(spec.$defs.AdapterRegistration!, spec as any, {
      'icon.png': fc.constant(makePng(16, 16).toString('base64'))
    }).filter((value) => registrationSchema(value))
    const mutation = fc.record({
      pick: fc.nat(),
      value: fc.oneof(fc.jsonValue(), fc.constantFrom(-1, 360, '', 'x'.repeat(600), null, [], {}))
    })
    let n = 0
    await fc.assert(
      fc.asyncProperty(valid, mutation, async (base, { pick, value }) => {
        const paths = leafPaths(base)
        const path = paths[pick % paths.length]!
        const mutated = setAt(structuredClone(base), path, value)
        fc.pre(!registrationSchema(mutated))
        const reply = await register(`com.example.m${n++}`, mutated)
        if (specErrorProblem(reply, 'invalid_field') !== undefined) return false
        const field: string = reply.json.error.field
        const mutatedField = formatPath(path)
        // A conditional rule names the key that triggers it (docs/decisions.md): `tapBehavior` needs the `tap`
        // capability, so taking `tap` out of `capabilities` is answered at `tapBehavior`.
        const coupled =
          mutatedField.startsWith('capabilities') &&
          field === 'tapBehavior' &&
          (mutated as { tapBehavior?: unknown }).tapBehavior !== undefined
        return field.startsWith(mutatedField) || mutatedField.startsWith(field) || coupled
      }),
      fcParams({ numRuns: 80 })
    )
  }
)

t.test('OT-A05 an empty PUT body is bad_request, not invalid_field', async (t) => {
  const { client } = await adapterSetup(t)
  assertSpecError(t, await client.request({ method: 'PUT', path: '/adapters/a.b' }), 'bad_request')
  assertSpecError(
    t,
    await client.request({ method: 'PUT', path: '/adapters/a.b', body: Buffer.alloc(0) }),
    'bad_request'
  )
})

type Path = Array<string | number>

function leafPaths (value: unknown, prefix: Path = []): Path[] {
  if (value === null || typeof value !== 'object') return [prefix]
  const entries = Array.isArray(value) ? value.map((v, i) => [i, v] as const) : Object.entries(value)
  return [prefix, ...entries.flatMap(([key, child]) => leafPaths(child, [...prefix, key]))].filter((p) => p.length > 0)
}

function setAt (root: any, path: Path, value: unknown): any {
  let node = root
  for (const key of path.slice(0, -1)) node = node[key]
  node[path[path.length - 1]!] = value
  return root
}

function formatPath (path: Path): string {
  return path.map((s, i) => (typeof s === 'number' ? `[${s}]` : i === 0 ? s : `.${s}`)).join('')
}

t.test(
  "OT-A25 faults the schema cannot see (a refused scheme, a bad icon) are ranked in the body's order too",
  async (t) => {
    const { register } = await adapterSetup(t)
    assertSpecError(
      t,
      await register('a.b', { icon: { png: 'AAAA' }, name: '', palette: { baseHue: 1 } }),
      'invalid_field',
      'icon.png'
    )
    assertSpecError(
      t,
      await register('a.b', { urlSchemes: ['file'], name: '', palette: { baseHue: 1 } }),
      'invalid_field',
      'urlSchemes[0]'
    )
    assertSpecError(
      t,
      await register('a.b', { name: 'x', palette: { baseHue: 1 }, urlSchemes: ['file', 'javascript', 'NO'] }),
      'invalid_field',
      'urlSchemes[0]'
    )
    assertSpecError(
      t,
      await register('a.b', { name: '', icon: { png: 'AAAA' }, palette: { baseHue: 1 } }),
      'invalid_field',
      'name'
    )
    assertSpecError(
      t,
      await register('a.b', { palette: { baseHue: 1 }, icon: { png: 'AAAA' } }),
      'invalid_field',
      'name',
      undefined
    )
  }
)

t.test('OT-054 OT-045 error messages say what the rule wants', async (t) => {
  const { register } = await adapterSetup(t)
  t.equal(
    (await register('a.b', body({ tapBehavior: 'eventOnly' }))).json.error.message,
    'tapBehavior requires capabilities as well'
  )
  t.equal(
    (await register('a.b', body({ tapBehavior: 'eventOnly', capabilities: ['approvals'] }))).json.error.message,
    'tapBehavior requires capabilities to contain "tap"'
  )
  t.equal((await register('a.b', { palette: { baseHue: 1 } })).json.error.message, 'name is required')
})
