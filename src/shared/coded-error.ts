/** An error with a stable `code` beside its message, for a caller to tell faults apart by; `name` names its class. */
export class CodedError<C extends string = string> extends Error {
  readonly code: C

  constructor (name: string, code: C, message: string) {
    super(message)
    this.name = name
    this.code = code
  }
}
