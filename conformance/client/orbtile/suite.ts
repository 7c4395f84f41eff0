import { compareTwins } from '../core/check.js'
import type { ClientSuite } from '../core/engine.js'
import { CHECKS } from './checks/index.js'
import { describeScenario, scenarioArbitrary, TOURS, type Scenario } from './scenario.js'
import { playScenario } from './play.js'

/** The Orbtile client suite: judges an adapter against part 1's [client] and [both] rules. */
export const orbtileClientSuite: ClientSuite<Scenario> = {
  name: 'orbtile',
  title: 'Orbtile Adapter Protocol v1.2: client conformance (orbtest)',
  checks: CHECKS,
  tours: TOURS,
  arbitrary: scenarioArbitrary,
  describe: describeScenario,
  compare: (variant, twin) => compareTwins(CHECKS, variant, twin),
  play: async (scenario, command, name, signal) =>
    await playScenario(scenario, command, { name, ...(signal === undefined ? {} : { signal }) })
}
