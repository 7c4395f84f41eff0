import type { ConformanceCase } from '../core/case.js'
import { mergeFaultCases } from '../core/suite.js'
import type { OrbFault } from '../../../src/orb-mock/faults.js'
import type { OrbBotClient } from './transport.js'
import { accessCases, accessFaults } from './cases/access.js'
import { messagesCases, messagesFaults } from './cases/messages.js'
import { featuresCases, featuresFaults } from './cases/features.js'
import { eventsCases, eventsFaults } from './cases/events.js'

/** Every Orb bot API case, in the order a run takes them (auth, directory and reads first; webhooks last). */
export const ORB_CASES: ReadonlyArray<ConformanceCase<OrbBotClient>> = [
  ...accessCases,
  ...messagesCases,
  ...featuresCases,
  ...eventsCases
]

/** For the self-test: the cases each deliberate fault of the fake Orb must make fail. */
export const ORB_FAULT_CASES: Partial<Record<OrbFault, string[]>> = mergeFaultCases(
  accessFaults,
  messagesFaults,
  featuresFaults,
  eventsFaults
)
