import type { ConformanceCase } from './orbtile-case.js'
import { mergeFaultCases } from '../core/suite.js'
import type { Fault } from '../../../src/orbtile-mock/faults.js'
import { transportCases, transportFaults } from './cases/transport.js'
import { registrationCases, registrationFaults } from './cases/registration.js'
import { sessionsCases, sessionsFaults } from './cases/sessions.js'
import { leaseCases, leaseFaults } from './cases/leases.js'

/** Every Orbtile case, in the order a run takes them (cheap, stateless checks first). */
export const ORBTILE_CASES: readonly ConformanceCase[] = [
  ...transportCases,
  ...registrationCases,
  ...leaseCases,
  ...sessionsCases
]

/** For the self-test: the cases each deliberate fault of the fake must make fail. */
export const FAULT_CASES: Partial<Record<Fault, string[]>> =
  mergeFaultCases(transportFaults, registrationFaults, leaseFaults, sessionsFaults)
