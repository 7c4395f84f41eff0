import type { OrbFault } from '../../../../src/orb-mock/faults.js'
import type { ConformanceCase } from '../../core/case.js'
import type { OrbBotClient } from '../transport.js'
import { appCases, appDecisions } from './access/app.js'
import { conventionCases } from './access/conventions.js'
import { directoryCases, directoryDecisions } from './access/directory.js'
import { errorCases, errorDecisions } from './access/errors.js'
import { gateCases, gateDecisions } from './access/gates.js'
import { reachCases } from './access/reach.js'
import { routeCases } from './access/routes.js'
import { throttleCases } from './access/throttle.js'

/** The access area: routes and tokens, scopes and roles, the directory, GET /app, errors and HTTP conventions. */
export const accessCases: Array<ConformanceCase<OrbBotClient>> = [
  ...routeCases,
  ...gateCases,
  ...reachCases,
  ...directoryCases,
  ...appCases,
  ...errorCases,
  // Decisions
  ...errorDecisions,
  ...appDecisions,
  ...gateDecisions,
  ...directoryDecisions,
  ...conventionCases,
  // The directory's throttle, last of all: each case starts a fresh window on a virtual clock and leaves one. On a real
  // clock the directory may stay throttled for this address until Retry-After has passed; no case after these reads it
  // (the other areas never do), and the client waits a 429 out for any that would.
  ...throttleCases
]

/** Which cases each fault of the fake Orb must make fail. */
export const accessFaults: Partial<Record<OrbFault, string[]>> = {
  'sha3-manifest': ['ORB-016'],
  'music-scope-unchecked': ['ORB-006', 'ORB-005'],
  'retry-after-early': ['ORB-019', 'ORB-099', 'ORB-A03.directory']
}
