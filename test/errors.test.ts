import t from 'tap'
import { ERROR_CODES } from '../src/orbtile-mock/spec.js'
import { ERROR_STATUS, OrbtileError } from '../src/orbtile-mock/errors.js'
import { findDuplicateKey, parseJsonObject } from '../src/shared/json-body.js'
import fc from 'fast-check'
import { fcParams } from './helpers/fc.js'

t.test(
  "OT-150 OT-A01 the error registry holds exactly the spec's 17 codes, each with the ledger's status",
  async (t) => {
    t.same(Object.keys(ERROR_STATUS).sort(), [...ERROR_CODES].sort())
    t.equal(ERROR_CODES.length, 17)
    t.same(ERROR_STATUS, {
      bad_request: 400,
      invalid_field: 400,
      unauthorized: 401,
      forbidden_origin: 403,
      reserved_id: 403,
      not_found: 404,
      adapter_not_registered: 404,
      length_required: 411,
      payload_too_large: 413,
      unsupported_media_type: 415,
      limit_exceeded: 409,
      events_not_supported: 409,
      poll_pending: 409,
      invalid_cursor: 400,
      rate_limited: 429,
      api_disabled: 503,
      internal: 500
    })
  }
)

t.test('OT-149 an error body is exactly {error:{code,message,field?}}', async (t) => {
  t.same(new OrbtileError('invalid_field', 'm', { field: 'palette.baseHue' }).body(), {
    error: { code: 'invalid_field', message: 'm', field: 'palette.baseHue' }
  })
  t.same(new OrbtileError('not_found', 'm').body(), { error: { code: 'not_found', message: 'm' } })
})

t.test('OT-A05 duplicate keys are found at any depth, and never in JSON that has none', async (t) => {
  t.equal(findDuplicateKey('{"a":1,"b":{"a":2}}'), undefined)
  t.equal(findDuplicateKey('{"a":1,"b":[{"c":1},{"c":2}]}'), undefined)
  t.equal(findDuplicateKey('{"a":1,"a":2}'), 'a')
  t.equal(findDuplicateKey('{"x":[{"k":1,"k":2}]}'), 'k')
  t.equal(findDuplicateKey('{"\\u0061":1,"a":2}'), 'a', 'keys are compared after unescaping')
  t.equal(findDuplicateKey('{"s":"{\\"a\\":1,\\"a\\":2}"}'), undefined, 'strings are not scanned as JSON')
  t.equal(findDuplicateKey('{"a\\"b":1,"a\\"b":2}'), 'a"b', 'an escaped quote does not end a key')
  // Small objects keep their keys in an array, larger ones in a Set: a repeat is found on both sides of the switch.
  for (const size of [15, 16, 17, 40]) {
    const keys = Array.from({ length: size }, (_, i) => `"k${i}":${i}`)
    t.equal(findDuplicateKey(`{${keys.join(',')}}`), undefined, `${size} distinct keys`)
    t.equal(findDuplicateKey(`{${keys.join(',')},"k0":0}`), 'k0', `the first of ${size} keys repeated last`)
    t.equal(
      findDuplicateKey(`{${keys.join(',')},"k${size - 1}":0}`),
      `k${size - 1}`,
      `the last of ${size} keys repeated`
    )
  }
  const wide = `{${Array.from({ length: 6000 }, (_, i) => `"k${i}":0`).join(',')}}`
  t.equal(findDuplicateKey(wide), undefined, 'six thousand keys in one object')
  await fc.assert(
    fc.property(fc.jsonValue(), (value) => findDuplicateKey(JSON.stringify(value)) === undefined),
    fcParams()
  )
  await fc.assert(
    fc.property(fc.dictionary(fc.string(), fc.jsonValue(), { minKeys: 1 }), fc.nat(), (value, pick) => {
      const keys = Object.keys(value)
      const key = keys[pick % keys.length]!
      const text = JSON.stringify(value)
      // Repeat one key at the end of the object.
      const doubled = `${text.slice(0, -1)},${JSON.stringify(key)}:0}`
      return findDuplicateKey(doubled) === key && !parseJsonObject(Buffer.from(doubled)).ok
    }
    ), fcParams())
})

t.test('SPEC-01 the shipped spec document and the control OpenAPI schemas are valid JSON Schema 2020-12 (start-up skips this check)', async (t) => {
  const { Ajv2020 } = await import('ajv/dist/2020.js')
  const { readPackageJson } = await import('../src/shared/paths.js')
  const ajv = new Ajv2020({ strict: false })
  const spec = readPackageJson<object>('specs/orbtile-adapter-protocol-v1.2.schema.json')
  t.ok(ajv.validateSchema(spec), JSON.stringify(ajv.errors))
  const control = readPackageJson<{ components: { schemas: Record<string, object> } }>('src/control/openapi.json')
  for (const [name, schema] of Object.entries(control.components.schemas)) {
    t.ok(ajv.validateSchema(schema), `${name}: ${JSON.stringify(ajv.errors)}`)
  }
})
