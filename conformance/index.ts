import type { ClientSuiteEntry } from './client/core/run.js'
import type { SuiteEntry } from './server/core/suite.js'

export { TargetError } from './server/core/suite.js'

/**
 * The suites `orbtest conformance` knows, in `--list` order. Each is loaded only when a run needs it: the cases
 * would slow the start of a run of the other suite.
 */
export const SUITES: readonly SuiteEntry[] = [
  {
    name: 'orbtile',
    accepts: (target) => target === 'orbtile' || target.startsWith('orbtile:') || target.startsWith('unix:'),
    load: async () => (await import('./server/orbtile/suite.js')).orbtileSuite
  },
  {
    name: 'orb',
    accepts: (target) => /^https?:/i.test(target),
    load: async () => (await import('./server/orb/suite.js')).orbSuite
  }
]

/** The client suites (`--client NAME`): each judges a client run against the suite's fake. */
export const CLIENT_SUITES: readonly ClientSuiteEntry[] = [
  { name: 'orbtile', load: async () => (await import('./client/orbtile/suite.js')).orbtileClientSuite },
  {
    name: 'orb',
    load: async (options) => (await import('./client/orb/suite.js')).orbClientSuite({
      webhook: options?.webhook === true,
      ...(options?.scopes === undefined ? {} : { scopes: options.scopes })
    })
  }
]
