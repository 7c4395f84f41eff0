import { Ajv2020 } from 'ajv/dist/2020.js'
import addFormatsModule from 'ajv-formats'

// ajv-formats ships CommonJS whose default export is the plugin function.
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020

/**
 * An ajv instance for the JSON Schema 2020-12 documents this project ships (the Orbtile spec, the OpenAPI
 * documents, option schemas), with formats. `validateSchema: false` skips compiling the meta-schema, which would
 * cost tens of milliseconds at every start-up; the tests check each document against its meta-schema instead.
 */
export function createAjv (
  options: { useDefaults?: boolean, strict?: boolean, allErrors?: boolean, verbose?: boolean } = {}
): Ajv2020 {
  const ajv = new Ajv2020({
    strict: options.strict ?? false,
    useDefaults: options.useDefaults ?? false,
    allErrors: options.allErrors ?? false,
    verbose: options.verbose ?? false,
    validateSchema: false
  })
  addFormats(ajv)
  return ajv
}
