import type { Fault } from '../../../../src/orbtile-mock/faults.js'
import type { ConformanceCase } from '../orbtile-case.js'
import { authCases } from './transport/auth.js'
import { discoveryCases } from './transport/discovery.js'
import { errorFieldCases } from './transport/error-fields.js'
import { errorCases } from './transport/errors.js'
import { infoCases } from './transport/info.js'
import { limitCases } from './transport/limits.js'
import { pipelineCases } from './transport/pipeline.js'
import { switchCases } from './transport/switch.js'

/**
 * Transport, discovery, headers, auth, limits, rate limits, `/info` and errors (OT-001..040, OT-149..156, OT-A01..A05,
 * OT-A20's shared bucket, OT-A29). OT-A21 (what counts against each limit) is proven with the sessions' cases.
 * The cases live by topic in ./transport/; this keeps them in the order a run takes them.
 */
export const transportCases: ConformanceCase[] = [
  ...infoCases, // 1.4 GET /info and proof
  ...authCases, // 1.2 auth and headers
  ...errorCases, // 1.10 errors
  ...errorFieldCases,
  ...discoveryCases, // 1.1 transport and discovery
  ...limitCases, // 1.3 limits
  ...pipelineCases, // decisions on the pipeline
  ...switchCases // the API switch (control), last: they close and reopen the socket
]

/** Which cases each fault of this area must make fail. */
export const transportFaults: Partial<Record<Fault, string[]>> = {
  'origin-allowed': ['OT-015', 'OT-A01.b', 'OT-A02', 'OT-A02.b'],
  'burst-off-by-one': ['OT-026', 'OT-A20.shared']
}
