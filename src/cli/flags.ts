import { parseArgs } from 'node:util'

/** A usage mistake: the CLI prints it on one line and exits with code 2. */
export class UsageError extends Error {
  constructor (message: string) {
    super(message)
    this.name = 'UsageError'
  }
}

/** One flag: its help line, and for valued flags the check that turns the text into a value. */
export interface FlagSpec {
  type: 'string' | 'boolean'
  placeholder?: string
  help: string
  parse?: (raw: string, name: string) => unknown
  default?: string
}

export type FlagSpecs = Record<string, FlagSpec>

/** Parses argv against the specs: unknown flags, stray positionals and bad values are UsageErrors. */
export function parseFlags (argv: readonly string[], specs: FlagSpecs): Record<string, unknown> {
  let parsed: ReturnType<typeof parseArgs>
  try {
    const valued = new Set(Object.entries(specs).filter(([, spec]) => spec.type === 'string').map(([name]) => name))
    parsed = parseArgs({
      args: joinNegativeValues(argv, valued),
      strict: true,
      allowPositionals: false,
      options: Object.fromEntries(
        Object.entries(specs).map(([name, spec]) => [
          name,
          { type: spec.type, ...(name === 'help' ? { short: 'h' } : {}) }
        ])
      )
    })
  } catch (err) {
    throw new UsageError(flagMessage(err as Error))
  }
  const out: Record<string, unknown> = {}
  for (const [name, spec] of Object.entries(specs)) {
    const raw = parsed.values[name] ?? spec.default
    if (raw === undefined) continue
    out[name] = typeof raw === 'string' && spec.parse !== undefined ? spec.parse(raw, name) : raw
  }
  return out
}

/**
 * parseArgs' messages, in the form every orbtest command uses ("unknown flag --x", "--x needs a value"): they are long
 * and speak of parseArgs' own API.
 */
export function flagMessage (err: Error): string {
  const message = err.message.split('\n')[0]!
  const unknown = /Unknown option '([^']+)'/.exec(message)
  if (unknown !== null) return `unknown flag ${unknown[1]}`
  const positional = /Unexpected argument '([^']+)'/.exec(message)
  if (positional !== null) return `unexpected argument ${JSON.stringify(positional[1])}`
  const missing = /Option '(?:-\w, )?(--[\w-]+)[^']*' argument missing/.exec(message)
  if (missing !== null) return `${missing[1]} needs a value`
  const ambiguous = /Option '(?:-\w, )?(--[\w-]+)[^']*' argument is ambiguous/.exec(message)
  if (ambiguous !== null) return `${ambiguous[1]} needs a value; one that starts with "-" is written ${ambiguous[1]}=VALUE`
  return message.replace(/\. To specify.*$/, '')
}

/**
 * `--flag -5` as `--flag=-5` for valued flags: parseArgs takes a value that starts with "-" for a flag and calls the
 * pair ambiguous, so a negative number would get another message than the same number after "=".
 */
export function joinNegativeValues (argv: readonly string[], valued: ReadonlySet<string>): string[] {
  const out: string[] = []
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!
    const next = argv[i + 1]
    if (
      arg.startsWith('--') &&
      !arg.includes('=') &&
      valued.has(arg.slice(2)) &&
      next !== undefined &&
      /^-\d/.test(next)
    ) {
      out.push(`${arg}=${next}`)
      i++
    } else {
      out.push(arg)
    }
  }
  return out
}

/** Value checks shared by the subcommands. */
export const parse = {
  port: (raw: string, name: string): number => {
    if (!/^\d{1,5}$/.test(raw) || Number(raw) > 65535) throw new UsageError(`--${name} must be a port from 0 to 65535, not ${JSON.stringify(raw)}`)
    return Number(raw)
  },
  oneOf: (...choices: string[]) => (raw: string, name: string): string => {
    if (!choices.includes(raw)) throw new UsageError(`--${name} must be one of ${choices.join(', ')}, not ${JSON.stringify(raw)}`)
    return raw
  },
  seconds: (raw: string, name: string): number => {
    if (!/^\d{1,5}$/.test(raw) || Number(raw) < 1 || Number(raw) > 86400) throw new UsageError(`--${name} must be whole seconds from 1 to 86400, not ${JSON.stringify(raw)}`)
    return Number(raw)
  },
  path: (raw: string, name: string): string => {
    if (raw === '') throw new UsageError(`--${name} needs a path`)
    return raw
  }
}

/** Renders the flags for --help. */
export function flagHelp (specs: FlagSpecs): string {
  const rows = Object.entries(specs).map(([name, spec]) => {
    const placeholder = spec.placeholder === undefined ? '' : ` ${spec.placeholder}`
    const left = `--${name}${placeholder}${name === 'help' ? ', -h' : ''}`
    return [left, spec.help + (spec.default === undefined ? '' : ` (default ${spec.default})`)] as const
  })
  const width = Math.max(...rows.map(([left]) => left.length))
  return rows.map(([left, help]) => `  ${left.padEnd(width)}  ${help}`).join('\n')
}
