import { CodedError } from './coded-error.js'

/**
 * A fault that stops a fake from starting: a socket path that is too long or in use, a folder that is not
 * private, a bad option. `code` is stable; the CLI prints `message` on one line and exits non-zero.
 */
export class StartupError extends CodedError {
  constructor (code: string, message: string) {
    super('StartupError', code, message)
  }
}

/** Wraps a file-system or network fault met while starting into a StartupError that says what was being done. */
export function startupFault (doing: string, err: unknown): StartupError {
  if (err instanceof StartupError) return err
  const code = (err as { code?: string }).code
  return new StartupError(`ORBTEST_${code ?? 'START'}`, `${doing}: ${(err as Error).message}`)
}
