import type { Clock } from '../../shared/clock.js'
import type { OrbMock } from '../../orb-mock/index.js'
import type { OrbtileMock } from '../../orbtile-mock/index.js'
import type { BodyReader } from '../openapi.js'
import { ControlError } from '../errors.js'

/** What every route module of the control server is given: the fakes it fronts, their clock, the body reader. */
export interface ControlRouteContext {
  /** The clock every fake shares. */
  clock: Clock
  orbtile: OrbtileMock | undefined
  orb: OrbMock | undefined
  /** Validates a body against a schema of the control OpenAPI document. */
  body: BodyReader
}

/** The fake a route module acts on: a getter that answers not_found when this process does not run it. */
export function runningFake<T> (fake: T | undefined, name: string): () => T {
  return () => {
    if (fake === undefined) throw new ControlError('not_found', `the fake ${name} is not running in this process`)
    return fake
  }
}
