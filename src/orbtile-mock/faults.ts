import { FaultSet } from '../shared/faults.js'

/**
 * Test hook for the conformance suite's self-test only (test/conformance.test.ts): deliberate faults the fake can
 * be started with (the `faults` option of `startOrbtileMock`; no CLI flag). Each breaks one rule of the spec, in
 * one place, and the self-test shows that the cases named beside it fail. Never use them for anything else.
 */
export const FAULTS = {
  'origin-allowed': 'requests with an Origin header are served (OT-015)',
  'burst-off-by-one': 'the rate limit admits one request more than the burst (OT-026)',
  'reserved-id-allowed': 'com.orbtile ids can be registered (OT-044)',
  'lease-token-ignored': 'adapter routes accept any X-Orbtile-Adapter-Token during a lease (OT-020)',
  'hue-edge': 'a base hue in a reserved arc is pushed to the wrong edge (OT-072)',
  'sessions-off-by-one': 'an adapter may hold 33 sessions (OT-029)',
  'no-merge': 'a session update replaces every field instead of merging (OT-092)',
  'batch-not-atomic': 'a batch applies the items before a bad one (OT-A19)',
  'cursor-from-zero': 'event sequences start at 0 (OT-132)',
  'ack-decreases': 'a smaller ack moves the acknowledged cursor back (OT-135)',
  'no-poll-pending': 'a second poll of one adapter is held too (OT-140)'
} as const

/** One deliberate fault's name. */
export type Fault = keyof typeof FAULTS

/** The faults one fake runs with (one set per fake, made by its factory); the empty set for every real use. */
export class Faults extends FaultSet<Fault> {}

/** The empty set, for parts built without a fake (unit tests of one module). Immutable, so safe to share. */
export const NO_FAULTS = new Faults()
