import type { ConformanceCase } from './case.js'
import type { Fault } from '../../src/orbtile-mock/faults.js'
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
  merge(transportFaults, registrationFaults, leaseFaults, sessionsFaults)

/** The areas' fault maps in one: each fault's cases, in order, without repeats. */
function merge (...maps: Array<Partial<Record<Fault, string[]>>>): Partial<Record<Fault, string[]>> {
  const out: Partial<Record<Fault, string[]>> = {}
  for (const [fault, ids] of maps.flatMap((map) => Object.entries(map) as Array<[Fault, string[]]>)) {
    out[fault] = [...new Set([...(out[fault] ?? []), ...ids])]
  }
  return out
}
