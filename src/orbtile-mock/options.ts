import type { FastifyServerOptions } from 'fastify'
import type { Clock, ClockMode } from '../shared/clock.js'
import type { OrbtileRoute } from './app.js'
import type { ProcessCheck } from './sessions/process-table.js'
import { optionsValidator } from '../shared/options.js'
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
   * Routes to serve under basePath beside the protocol's own, behind the same request pipeline. For prototyping
   * an extension of the protocol, and for tests of the pipeline itself.
   */
  extraRoutes?: readonly OrbtileRoute[]
  /** Deliberate faults, to prove the conformance suite bites (see faults.ts). Default none. */
  faults?: readonly Fault[]
}

type Live = 'discoveryPath' | 'socketPath' | 'clock' | 'logger' | 'extraRoutes' | 'pidCheck'
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

/** Validates, defaults and freezes the options of one fake Orbtile. */
export const resolveOrbtileOptions = optionsValidator<ResolvedOrbtileOptions>('orbtile', schema, ['clock', 'logger', 'extraRoutes', 'pidCheck'])
