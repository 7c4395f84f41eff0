import type { FastifyServerOptions } from 'fastify'
import type { Clock, ClockMode } from '../shared/clock.js'
import type { OrbtileRoute } from './app.js'
import type { ProcessCheck } from './sessions/process-table.js'
import type { OrbtileTap } from './tap.js'
import { optionsFamily, optionsValidator } from '../shared/options.js'
import { FAULTS, type Fault } from './faults.js'

/** Options of `startOrbtileMock`. Every one has a default. */
export interface OrbtileMockOptions {
  /** Where to write the discovery file; else `ORBTILE_DISCOVERY`, else the spec's path under `$HOME`. */
  discoveryPath?: string
  /** Where to bind the socket; else a private per-user default. */
  socketPath?: string
  /** A clock to share with other fakes; else one of `clockMode` is made for this fake alone. */
  clock?: Clock
  clockMode?: ClockMode
  /** false starts with the Adapter API off: no socket, no discovery file (OT-001). Default true. */
  apiEnabled?: boolean
  /** `off` lifts the request rate limit, for load tests of an adapter. Default `on` (OT-026). */
  rateLimit?: 'on' | 'off'
  /** `--auto-allow`: allow every adapter at its first registration, as a user would in CI. Default false. */
  autoAllow?: boolean
  /** OT-A08: how long a lease survives without a request on its routes. Default 120 000 ms. */
  leaseSilenceMs?: number
  /**
   * OT-108, OT-A16: how a session's `pid` is checked: `real` (a live process of this user), `off` (any pid), or a
   * function standing in for the process table.
   */
  pidCheck?: 'real' | 'off' | ProcessCheck
  /** The `version` string `GET /info` reports (OT-A29). */
  version?: string
  /** fastify's logger option; default: no logging. */
  logger?: FastifyServerOptions['logger']
  /**
   * Test hook, not part of the fake's product surface: routes served under basePath beside the protocol's own,
   * behind the same request pipeline. It exists for the pipeline's own tests (test/orbtile-pipeline.test.ts) and
   * for prototyping an extension of the protocol; no CLI flag sets it.
   */
  extraRoutes?: readonly OrbtileRoute[]
  /**
   * Test hook for the conformance suite's self-test only: deliberate faults, each breaking one rule of the spec, to
   * prove that the suite's cases bite (see faults.ts). No CLI flag sets it. Default none.
   */
  faults?: readonly Fault[]
  /**
   * The client suites' and `orbtest up --judge`'s view of the wire (tap.ts): every request and reply, and the wire's
   * faults. Without one, the fake installs none of its hooks.
   */
  tap?: OrbtileTap
}

type Live = 'discoveryPath' | 'socketPath' | 'clock' | 'logger' | 'extraRoutes' | 'pidCheck' | 'tap'
/** The options after validation and defaults; the live objects (clock, logger, routes, pid check) pass through. */
export type ResolvedOrbtileOptions = Required<Omit<OrbtileMockOptions, Live>> & Pick<OrbtileMockOptions, Live>

const schema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    discoveryPath: { type: 'string', minLength: 1 },
    socketPath: { type: 'string', minLength: 1 },
    clockMode: { enum: ['real', 'virtual'], default: 'real' },
    apiEnabled: { type: 'boolean', default: true },
    rateLimit: { enum: ['on', 'off'], default: 'on' },
    autoAllow: { type: 'boolean', default: false },
    leaseSilenceMs: { type: 'integer', minimum: 1000, maximum: 86400000, default: 120000 },
    version: { type: 'string', minLength: 1, default: '0.2.17' },
    faults: { type: 'array', uniqueItems: true, items: { enum: Object.keys(FAULTS) }, default: [] }
  }
}

/** The options schema as a validator family (compiled by the build). */
export const orbtileOptionsFamily = optionsFamily('orbtile', schema)

/** Validates, defaults and freezes the options of one fake Orbtile. */
export const resolveOrbtileOptions = optionsValidator<ResolvedOrbtileOptions>(
  'orbtile', orbtileOptionsFamily, ['clock', 'logger', 'extraRoutes', 'pidCheck', 'tap']
)
