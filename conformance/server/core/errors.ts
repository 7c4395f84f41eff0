/** A target that cannot be reached or used: the command exits 2 with this one line. */
export class TargetError extends Error {
  constructor (message: string) {
    super(message)
    this.name = 'TargetError'
  }
}
