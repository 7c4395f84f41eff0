/**
 * A usage mistake: a flag, a value or an operand the command cannot take. The CLI prints it on one line with the
 * command's --help and exits 2. It lives here, below every layer, because the suites also find such mistakes once
 * they read what a flag names (a target of no known kind, a --grep that selects nothing).
 */
export class UsageError extends Error {
  constructor (message: string) {
    super(message)
    this.name = 'UsageError'
  }
}
