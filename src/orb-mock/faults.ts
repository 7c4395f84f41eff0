import { FaultSet } from '../shared/faults.js'

/**
 * Deliberate faults the fake Orb can be started with (the `faults` option of `startOrbMock`; no CLI flag), for one
 * purpose: proving that the Orb conformance suite bites. Each breaks one rule of the spec in one place, and the suite's
 * self-test shows that the cases named beside it fail. Never use them for anything else.
 */
export const ORB_FAULTS = {
  'signature-parsed-body': 'webhooks are signed over a re-serialisation of the event, not the bytes sent (ORB-091)',
  'retry-after-early': 'a 429\'s Retry-After is one second short of the window (ORB-099, ORB-A03)',
  'everyone-allowed': 'a post that mentions @everyone is accepted (ORB-026)',
  'cursor-off-by-one': 'GET /events returns the event at `after` again (ORB-045)',
  'no-webhook-retry': 'a failed delivery is not tried a second time (ORB-093)',
  'sync-merges': 'PUT /commands adds to the registered commands instead of replacing them (ORB-056)',
  'sha3-manifest': 'manifest.hash is FIPS SHA3-256, not Keccak-256 (ORB-016)',
  'late-respond-accepted': 'an interaction can be answered after the member stopped waiting (ORB-068)',
  'music-scope-unchecked': 'music routes serve an app without the music scope (ORB-084)',
  'paging-includes-before': 'GET /messages?before=N returns message N too (ORB-033)',
  'holds-ignores-minimum': 'passport holds whenever the count is positive, whatever the minimum (ORB-087)',
  'seat-never-dropped': 'a voice seat outlives 90 s without a heartbeat (ORB-076)'
} as const

/** The name of one deliberate fault. */
export type OrbFault = keyof typeof ORB_FAULTS

/** The faults one fake Orb runs with; the empty set for every real use. An unknown name is refused. */
export class OrbFaults extends FaultSet<OrbFault> {
  constructor (on: readonly OrbFault[] = []) {
    super(on, ORB_FAULTS, 'the fake Orb')
  }
}
