import type { Clock } from '../../shared/clock.js'
import type { OrbMock } from '../../orb-mock/index.js'
import type { OrbtileMock } from '../../orbtile-mock/index.js'
import type { BodyReader } from '../openapi.js'

/** What every route module of the control server is given: the fakes it fronts, their clock, the body reader. */
export interface ControlRouteContext {
  /** The clock every fake shares. */
  clock: Clock
  orbtile: OrbtileMock | undefined
  orb: OrbMock | undefined
  /** Validates a body against a schema of the control OpenAPI document. */
  body: BodyReader
}
