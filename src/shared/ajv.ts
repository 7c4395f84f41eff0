import { createHash } from 'node:crypto'
import { existsSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import type { Ajv2020, ValidateFunction } from 'ajv/dist/2020.js'
import { packageRoot } from './paths.js'

// ajv and ajv-formats ship CommonJS; they are required when a validator is first compiled here, so that a run whose
// validators all come from the build (see ValidatorFamily) never loads ajv's compiler at all.
const require = createRequire(import.meta.url)

/** The ajv options this project compiles with. */
export interface AjvOptions {
  useDefaults?: boolean
  strict?: boolean
  allErrors?: boolean
  verbose?: boolean
}

/**
 * An ajv instance for the JSON Schema 2020-12 documents this project ships (the Orbtile spec, the OpenAPI
 * documents, option schemas), with formats. `validateSchema: false` skips compiling the meta-schema, which would
 * cost tens of milliseconds at every start-up; the tests check each document against its meta-schema instead.
 * `source` keeps each validator's code, for ajv's standalone output.
 */
export function createAjv (options: AjvOptions & { source?: boolean } = {}): Ajv2020 {
  const { Ajv2020: Ajv } = require('ajv/dist/2020.js') as typeof import('ajv/dist/2020.js')
  const addFormats = require('ajv-formats') as (ajv: Ajv2020) => Ajv2020
  const ajv = new Ajv({
    strict: options.strict ?? false,
    useDefaults: options.useDefaults ?? false,
    allErrors: options.allErrors ?? false,
    verbose: options.verbose ?? false,
    validateSchema: false,
    code: { source: options.source ?? false }
  })
  addFormats(ajv)
  return ajv
}

/**
 * A set of validators compiled alike: one ajv configuration, the documents they refer into, and each validator's
 * schema by name (often only a `$ref` into a document). The build writes every family as ajv's standalone code
 * (dist/validators/<name>.cjs, with the SHA-256 of what it was made from), so that a run loads plain functions and
 * compiles nothing (fastify's way for its own options). A family whose module is missing, or was made from other
 * inputs (a source run through tsx after an edit), is compiled here instead, each validator on its first use.
 */
export interface ValidatorFamily {
  /** The module's name under dist/validators/. */
  name: string
  options: AjvOptions
  /** Documents added to the instance, each with its `$id`. */
  documents: readonly object[]
  /** Each validator's schema, by the name it is asked for. */
  entries: Readonly<Record<string, object>>
}

/** The folder of the build's validator modules, from the package root. */
export const VALIDATORS_DIR = join('dist', 'validators')
const HASH = '__inputsSha256'

const inputsHash = (family: ValidatorFamily): string =>
  createHash('sha256').update(JSON.stringify([family.options, family.documents, family.entries])).digest('hex')

/**
 * The family's ajv instance with each entry added under a key of its own (`e0`, `e1`…: a key is the entry's base URI,
 * and a name with a slash would make a relative `$ref` in it resolve elsewhere), and the key of each name.
 */
function familyAjv (family: ValidatorFamily, source: boolean): { ajv: Ajv2020, keys: Map<string, string> } {
  const ajv = createAjv({ ...family.options, source })
  for (const document of family.documents) ajv.addSchema(document)
  const keys = new Map(Object.keys(family.entries).map((name, i) => [name, `e${i}`]))
  for (const [name, schema] of Object.entries(family.entries)) ajv.addSchema(schema, keys.get(name))
  return { ajv, keys }
}

/** Build time: the family as a CommonJS module of ajv's standalone code, stamped with the hash of its inputs. */
export function standaloneModule (family: ValidatorFamily): string {
  const { ajv, keys } = familyAjv(family, true)
  const standalone = require('ajv/dist/standalone/index.js') as (ajv: Ajv2020, refs: Record<string, string>) => string
  const refs = Object.fromEntries(keys)
  return `${standalone(ajv, refs)}\nexports[${JSON.stringify(HASH)}] = ${JSON.stringify(inputsHash(family))};\n`
}

/**
 * Run time: the family's validators by name: the build's when its module was made from these very inputs, else
 * compiled here on first use. `family` is called once, at the first validator asked for.
 */
export function familyValidators (family: () => ValidatorFamily): (name: string) => ValidateFunction {
  let made: { family: ValidatorFamily, get: (name: string) => ValidateFunction | undefined } | undefined
  const resolve = (): NonNullable<typeof made> => {
    const f = family()
    const built = loadBuilt(f)
    if (built !== undefined) {
      return { family: f, get: (name) => Object.hasOwn(f.entries, name) ? built[name] : undefined }
    }
    const { ajv, keys } = familyAjv(f, false)
    return { family: f, get: (name) => keys.has(name) ? ajv.getSchema(keys.get(name)!) as ValidateFunction : undefined }
  }
  return (name) => {
    made ??= resolve()
    const validate = made.get(name)
    if (validate === undefined) throw new Error(`no validator ${name} in ${made.family.name}`)
    return validate
  }
}

function loadBuilt (family: ValidatorFamily): Record<string, ValidateFunction> | undefined {
  const file = join(packageRoot(), VALIDATORS_DIR, `${family.name}.cjs`)
  if (!existsSync(file)) return undefined
  const built = require(file) as Record<string, ValidateFunction> & { [HASH]?: string }
  return built[HASH] === inputsHash(family) ? built : undefined
}
