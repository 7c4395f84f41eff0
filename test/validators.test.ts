import { existsSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { isDeepStrictEqual } from 'node:util'
import fc from 'fast-check'
import t from 'tap'
import { familyValidators, VALIDATORS_DIR, type ValidatorFamily } from '../src/shared/ajv.js'
import { validatorFamilies } from '../src/validator-families.js'
import { spec } from '../src/spec/orbtile.js'
import { arbitraryFor } from '../conformance/server/core/schema-arbitrary.js'
import './helpers/cli.js' // the build is up to date: dist/validators is what it writes
import { fcParams } from './helpers/fc.js'
import { ROOT } from './helpers/root.js'

const root = ROOT
const require = createRequire(import.meta.url)
const families = validatorFamilies()

/** The same family under a name the build never wrote: compiled here, by ajv, on first use. */
const compiledHere = (family: ValidatorFamily): ValidatorFamily => ({ ...family, name: `${family.name}-compiled-here` })

t.test('VAL-01 the build writes every family the fakes use, and a run loads its functions instead of compiling', async (t) => {
  for (const family of families) {
    const file = join(root, VALIDATORS_DIR, `${family.name}.cjs`)
    t.ok(existsSync(file), `${family.name}: the build wrote ${VALIDATORS_DIR}/${family.name}.cjs`)
    const built = require(file) as Record<string, unknown>
    const names = Object.keys(family.entries)
    t.same(names.filter((name) => typeof built[name] !== 'function'), [], `${family.name}: a function for each entry`)
    const validators = familyValidators(() => family)
    t.equal(validators(names[0]!), built[names[0]!], `${family.name}: the run's validator is the built one`)
    t.not(familyValidators(() => compiledHere(family))(names[0]!), built[names[0]!], 'one compiled here is not')
  }
  t.ok(families.length >= 4, `${families.length} families (the Orbtile spec, the Orb operations, the control API, options)`)
})

t.test('VAL-02 a family whose inputs changed since the build is compiled at run time, never served stale', async (t) => {
  const options = families.find((f) => f.name === 'orbtile-options')!
  const schema = options.entries.options as { properties: Record<string, unknown> }
  const changed: ValidatorFamily = {
    ...options,
    entries: { options: { ...schema, properties: { ...schema.properties, extra: { type: 'integer' } } } }
  }
  const built = require(join(root, VALIDATORS_DIR, 'orbtile-options.cjs')) as Record<string, unknown>
  const validate = familyValidators(() => changed)('options')
  t.not(validate, built.options, 'not the built function')
  t.equal(validate({ extra: 3 }), true, 'the new property is known')
  t.equal((built.options as (v: unknown) => boolean)({ extra: 3 }), false, 'where the built one refuses it')
  t.throws(() => familyValidators(() => options)('nope'), /no validator nope in orbtile-options/, 'an unknown name')
})

/** Every property name and enum value in a family's documents and entries: the words its values are made of. */
function vocabulary (family: ValidatorFamily): { names: string[], words: unknown[] } {
  const names = new Set<string>()
  const words: unknown[] = []
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) { node.forEach(walk); return }
    if (node === null || typeof node !== 'object') return
    const o = node as Record<string, unknown>
    if (o.properties !== null && typeof o.properties === 'object') {
      Object.keys(o.properties).forEach((k) => names.add(k))
    }
    if (Array.isArray(o.enum)) words.push(...o.enum)
    if ('const' in o) words.push(o.const)
    Object.values(o).forEach(walk)
  }
  walk([family.documents, family.entries])
  return { names: [...names], words }
}

/** Values shaped like the family's: objects of its own property names holding its enums, or anything at all. */
function valuesFor (family: ValidatorFamily): fc.Arbitrary<unknown> {
  const { names, words } = vocabulary(family)
  const leaf = fc.oneof(fc.constantFrom(...words), fc.jsonValue({ maxDepth: 1 }), fc.string())
  const shaped = fc.letrec((tie) => ({
    value: fc.oneof({ depthSize: 'small' }, leaf, tie('object'), fc.array(tie('value'), { maxLength: 3 })),
    object: fc.dictionary(fc.constantFrom(...names), tie('value'), { maxKeys: 6 })
  }))
  return fc.oneof(shaped.object, shaped.value)
}

t.test('VAL-03 property: each built validator answers as ajv compiling the same schema does, errors included', async (t) => {
  for (const family of families) {
    const built = familyValidators(() => family)
    const here = familyValidators(() => compiledHere(family))
    const names = Object.keys(family.entries)
    const orbtile = family.name === 'orbtile-spec'
    const value = (name: string): fc.Arbitrary<unknown> => orbtile
      ? fc.oneof(arbitraryFor((spec.$defs as Record<string, object>)[name]!, spec as object), valuesFor(family))
      : valuesFor(family)
    let valid = 0
    let runs = 0
    await fc.assert(
      fc.property(fc.constantFrom(...names).chain((name) => fc.tuple(fc.constant(name), value(name))), ([name, v]) => {
        const [a, b] = [built(name), here(name)]
        const [okA, okB] = [a(structuredClone(v)), b(structuredClone(v))]
        runs++
        if (okA) valid++
        return okA === okB && isDeepStrictEqual(a.errors ?? null, b.errors ?? null)
      }),
      fcParams({ numRuns: 300 })
    )
    t.pass(`${family.name}: ${runs} values over ${names.length} validators agree (${valid} valid)`)
  }
})

t.test("VAL-04 the built modules need ajv's runtime helpers and ajv-formats' formats, never ajv's compiler", async (t) => {
  for (const family of families) {
    const text = readFileSync(join(root, VALIDATORS_DIR, `${family.name}.cjs`), 'utf8')
    const required = [...new Set([...text.matchAll(/require\("([^"]+)"\)/g)].map((m) => m[1]!))]
    t.same(required.filter((r) => !/^ajv\/dist\/runtime\/|^ajv-formats\/dist\/formats$/.test(r)), [],
      `${family.name} requires ${required.join(', ') || 'nothing'}`)
  }
})
