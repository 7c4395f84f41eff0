/**
 * The deliberate faults one fake runs with, out of its catalogue of them (name → what it breaks): a test hook for the
 * conformance suites' self-tests only; the empty set for every real use.
 */
export class FaultSet<F extends string> {
  readonly #on: ReadonlySet<F>

  /** `catalogue` and `fake`, when given, refuse a name the catalogue lacks (`no fault x in the fake Orb`). */
  constructor (on: readonly F[] = [], catalogue?: Readonly<Record<F, string>>, fake = 'the fake') {
    if (catalogue !== undefined) {
      for (const fault of on) if (!(fault in catalogue)) throw new Error(`no fault ${String(fault)} in ${fake}`)
    }
    this.#on = new Set(on)
  }

  /** Whether the fake runs with this fault. */
  has (fault: F): boolean {
    return this.#on.has(fault)
  }

  /** Every fault the fake runs with, in the order given. */
  get list (): F[] {
    return [...this.#on]
  }
}
