import type { Fault } from '../../../../src/orbtile-mock/faults.js'
import type { ConformanceCase } from '../orbtile-case.js'
import { leaseModelCases } from './leases/state-machine.js'

/** Leases as a state machine (OT-A06.model); the case lives in ./leases/. */
export const leaseCases: ConformanceCase[] = [
  ...leaseModelCases
]

/** Which cases each fault must make fail. */
export const leaseFaults: Partial<Record<Fault, string[]>> = {
  'lease-token-ignored': ['OT-A06.model']
}
