import { parseArgs } from 'node:util'
import { UsageError } from '../shared/usage-error.js'

/** One flag: its help line, and for valued flags the check that turns the text into a value. */
export interface FlagSpec {
  type: 'string' | 'boolean'
  placeholder?: string
  /** Its text in --help; a line break starts a line of its own, under the first. */
  help: string
  parse?: (raw: string, name: string) => unknown
  /** The value when the flag is not given, as typed (it goes through `parse` too), and shown so in --help. */
  default?: string
  /** The flag may be given again: its value is every one given, in order. */
  multiple?: true
  /** Left out of --help's flags, for one the usage line and a table of the help already tell of. */
  unlisted?: true
}

export type FlagSpecs = Record<string, FlagSpec>

type ValueOf<S extends FlagSpec> = S extends { type: 'boolean' }
  ? boolean
  : S extends { parse: (raw: string, name: string) => infer T }
    ? (S extends { multiple: true } ? T[] : T)
    : (S extends { multiple: true } ? string[] : string)

/** The flags a command line gave, each as its check made it; one with a default is always there. */
export type Flags<F extends FlagSpecs> = {
  [K in keyof F]: F[K] extends { default: string } ? ValueOf<F[K]> : ValueOf<F[K]> | undefined
}

/** A command line read against its flags: the flags, and the operands between them when the command takes any. */
export interface ParsedLine<F extends FlagSpecs> {
  flags: Flags<F>
  operands: string[]
}

/**
 * The one flag parser of every orbtest command. Unknown flags, a missing value, a value its check refuses and
 * operands a command does not take are UsageErrors.
 */
export function parseFlags<F extends FlagSpecs> (
  argv: readonly string[],
  specs: F,
  options: { operands?: boolean } = {}
): ParsedLine<F> {
  let parsed: ReturnType<typeof parseArgs>
  try {
    const valued = new Set(Object.entries(specs).filter(([, spec]) => spec.type === 'string').map(([name]) => name))
    parsed = parseArgs({
      args: joinNegativeValues(argv, valued),
      strict: true,
      allowPositionals: options.operands === true,
      options: Object.fromEntries(Object.entries(specs).map(([name, spec]) => [name, {
        type: spec.type,
        ...(spec.multiple === true ? { multiple: true } : {}),
        ...(name === 'help' ? { short: 'h' } : {})
      }]))
    })
  } catch (err) {
    throw new UsageError(flagMessage(err as Error))
  }
  const flags: Record<string, unknown> = {}
  for (const [name, spec] of Object.entries(specs)) {
    const raw = parsed.values[name] ?? spec.default
    if (raw !== undefined) flags[name] = checked(raw, name, spec)
  }
  return { flags: flags as Flags<F>, operands: parsed.positionals }
}

function checked (raw: string | boolean | Array<string | boolean>, name: string, spec: FlagSpec): unknown {
  const check = spec.parse
  if (check === undefined || typeof raw === 'boolean') return raw
  return Array.isArray(raw) ? raw.map((one) => check(String(one), name)) : check(raw, name)
}

/**
 * parseArgs' messages, in the form every orbtest command uses ("unknown flag --x", "--x needs a value"): they are long
 * and speak of parseArgs' own API.
 */
function flagMessage (err: Error): string {
  const message = err.message.split('\n')[0]!
  const unknown = /Unknown option '([^']+)'/.exec(message)
  if (unknown !== null) return `unknown flag ${unknown[1]}`
  const positional = /Unexpected argument '([^']+)'/.exec(message)
  if (positional !== null) return unexpectedArgument(positional[1]!)
  const missing = /Option '(?:-\w, )?(--[\w-]+)[^']*' argument missing/.exec(message)
  if (missing !== null) return `${missing[1]} needs a value`
  const ambiguous = /Option '(?:-\w, )?(--[\w-]+)[^']*' argument is ambiguous/.exec(message)
  if (ambiguous !== null) return `${ambiguous[1]} needs a value; one that starts with "-" is written ${ambiguous[1]}=VALUE`
  return message.replace(/\. To specify.*$/, '')
}

/** The words for an operand a command does not take (parseArgs' own, or a command's count of operands). */
export function unexpectedArgument (arg: string): string {
  return `unexpected argument ${JSON.stringify(arg)}`
}

/**
 * `--flag -5` as `--flag=-5` for valued flags: parseArgs takes a value that starts with "-" for a flag and calls the
 * pair ambiguous, so a negative number would get another message than the same number after "=".
 */
function joinNegativeValues (argv: readonly string[], valued: ReadonlySet<string>): string[] {
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

/** Value checks shared by the commands. */
export const parse = {
  port: (raw: string, name: string): number => {
    if (!/^\d{1,5}$/.test(raw) || Number(raw) > 65535) throw new UsageError(`--${name} must be a port from 0 to 65535, not ${JSON.stringify(raw)}`)
    return Number(raw)
  },
  oneOf: <T extends string>(...choices: T[]) => (raw: string, name: string): T => {
    if (!(choices as string[]).includes(raw)) throw new UsageError(`--${name} must be one of ${choices.join(', ')}, not ${JSON.stringify(raw)}`)
    return raw as T
  },
  seconds: (raw: string, name: string): number => {
    if (!/^\d{1,5}$/.test(raw) || Number(raw) < 1 || Number(raw) > 86400) throw new UsageError(`--${name} must be whole seconds from 1 to 86400, not ${JSON.stringify(raw)}`)
    return Number(raw)
  },
  /** An http or https URL. */
  url: (raw: string, name: string): URL => {
    const url = URL.canParse(raw) ? new URL(raw) : undefined
    if (url === undefined || !['http:', 'https:'].includes(url.protocol) || url.search !== '' || url.hash !== '') {
      throw new UsageError(`--${name} must be an http or https URL (an origin, and a path prefix if any), not ${JSON.stringify(raw)}`)
    }
    return url
  },
  /** A loopback address and a port (`127.0.0.1:8787`, `[::1]:0`, `localhost:8787`), or a port alone on 127.0.0.1. */
  loopback: (raw: string, name: string): { host: string, port: number } => {
    const m = /^(?:(127(?:\.\d{1,3}){3}|localhost|\[::1\]):)?(\d{1,5})$/.exec(raw)
    if (m === null || Number(m[2]) > 65535) {
      throw new UsageError(`--${name} must be a loopback HOST:PORT (127.0.0.1:8787, [::1]:0) or a PORT, not ${JSON.stringify(raw)}`)
    }
    return { host: m[1] === undefined ? '127.0.0.1' : m[1].replace(/^\[|\]$/g, ''), port: Number(m[2]) }
  },
  path: (raw: string, name: string): string => {
    if (raw === '') throw new UsageError(`--${name} needs a path`)
    return raw
  },
  /** An integer within its bounds. */
  integer: (min: number, max: number) => (raw: string, name: string): number => {
    if (!/^-?\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
      throw new UsageError(`--${name} must be an integer from ${min} to ${max}, not ${JSON.stringify(raw)}`)
    }
    return Number(raw)
  }
}
