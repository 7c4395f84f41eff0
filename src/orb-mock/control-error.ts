/** A control action that cannot be done: `kind` maps to the control API's codes. */
export class OrbControlError extends Error {
  readonly kind: 'not_found' | 'bad_request' | 'conflict'
  constructor (kind: OrbControlError['kind'], message: string) {
    super(message)
    this.name = 'OrbControlError'
    this.kind = kind
  }
}
