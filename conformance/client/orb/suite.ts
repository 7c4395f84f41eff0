import { compareTwins } from '../core/check.js'
import type { ClientSuite } from '../core/engine.js'
import { ORB_CLIENT_CHECKS } from './checks.js'
import { describeScenario, EVENT_TOURS, scenarioArbitrary, WEBHOOK_TOURS, type Scenario } from './scenario.js'
import { UsageError } from '../../../src/shared/usage-error.js'
import { ALL_SCOPES, playOrbScenario } from './play.js'

/** The Orb bot suite: judges a bot against part 2's [client] and [both] rules, in events mode or as a webhook bot. */
export function orbClientSuite (options: { webhook: boolean, scopes?: readonly string[] }): ClientSuite<Scenario> {
  const mode = options.webhook ? 'webhook' : 'events'
  const unknown = (options.scopes ?? []).filter((s) => !(ALL_SCOPES as readonly string[]).includes(s))
  if (unknown.length > 0) {
    throw new UsageError(`--scopes: ${unknown.join(', ')} ${unknown.length === 1 ? 'is not a scope' : 'are not scopes'} of the bot API (${ALL_SCOPES.join(', ')})`)
  }
  return {
    name: 'orb',
    title: `Orb bot API: client conformance of a ${options.webhook ? 'webhook bot' : 'bot that fetches its events'} (orbtest)`,
    checks: ORB_CLIENT_CHECKS,
    tours: options.webhook ? WEBHOOK_TOURS : EVENT_TOURS,
    arbitrary: scenarioArbitrary(mode),
    describe: describeScenario,
    compare: (variant, twin) => compareTwins(ORB_CLIENT_CHECKS, variant, twin),
    play: async (scenario, command, name, signal) => await playOrbScenario(scenario, command, {
      name,
      ...(signal === undefined ? {} : { signal }),
      ...(options.scopes === undefined ? {} : { scopes: options.scopes })
    })
  }
}
