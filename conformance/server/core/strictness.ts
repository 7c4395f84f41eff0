// Error statuses the spec leaves open are orbtest's decisions (OT-A01, ORB-A01, ORB-A02). Required cases hold a server
// to the spec only; decision cases and --strict runs hold it to the decisions too. The setting belongs to the case
// being run (even with two runs in one process), not to this module: the runner gives it to the case's client
// (`RecordingClient.exact`), which stamps it on every reply it hands the case, and an expectation reads it from the
// reply or the client it is given.
//
// Not an AsyncLocalStorage: on Node 20 a store that is used at all installs a hook on every promise of the process,
// and a suite's run is promises end to end (the Orb suite spent about 9% of its CPU there).

/** What carries a case's strictness: its client, or a reply its client got. Absent: decided details are enforced. */
export interface Strictness {
  readonly exact?: boolean | undefined
}

/** Whether statuses (and other details) decided by orbtest are enforced in the case `of` belongs to. */
export function exactStatus (of: Strictness): boolean {
  return of.exact ?? true
}
