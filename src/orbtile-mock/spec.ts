/**
 * The spec as data moved to src/spec/orbtile.ts, which the fake imports. This re-export keeps the conformance
 * suite's imports (`src/orbtile-mock/spec.js`) working until they point at src/spec/ too.
 */
export {
  ACTIVITIES, API_MINOR, API_VERSION, BASE_PATH, ERROR_CODES, LIMITS, SERVER_NAME, SPEC_FILE, def, spec, validatorFor,
  type Limits, type SpecDocument
} from '../spec/orbtile.js'
