// The project's root, whether the tests run as their source (test/) or as what the build made of them (dist/test,
// which `npm test` runs): the folder of the package.json named orbtest.
import { packageRoot } from '../../src/shared/paths.js'

/** Where examples, fixtures, docs and the test sources are read from. */
export const ROOT = packageRoot()
