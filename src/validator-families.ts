import { controlFamily, loadControlDocument } from './control/openapi.js'
import { orbOperationsFamily } from './orb-mock/spec.js'
import { orbtileOptionsFamily } from './orbtile-mock/options.js'
import type { ValidatorFamily } from './shared/ajv.js'
import { orbRepliesFamily } from './spec/orb.js'
import { orbtileSpecFamily } from './spec/orbtile.js'

/**
 * Every validator family the fakes use, for the build to write as ajv's standalone code (scripts/build-if-stale.js;
 * see ValidatorFamily). A family left out here still works: it is compiled at run time, on first use.
 */
export function validatorFamilies (): ValidatorFamily[] {
  return [orbtileSpecFamily(), orbOperationsFamily(), controlFamily(loadControlDocument()), orbtileOptionsFamily,
    orbRepliesFamily()]
}
