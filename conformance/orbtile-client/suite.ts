import { compareTwins } from '../client/check.js'
import type { ClientSuite } from '../client/engine.js'
import { CHECKS } from './checks/index.js'
import { describeScenario, scenarioArbitrary, TOURS, type Scenario } from './scenario.js'
import { playScenario } from './world.js'

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
