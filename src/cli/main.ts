import { Writable } from 'node:stream'
import { packageVersion } from '../shared/paths.js'
import { StartupError } from '../shared/startup-error.js'
import { UsageError } from '../shared/usage-error.js'
import { EXIT_CODES, type AnyCommand, type Outcome } from './command.js'
import { COMMANDS, ORBTEST } from './commands.js'
import { parseFlags } from './flags.js'
import { commandHelp, programHelp, verbsHelp } from './help.js'

/** What a command line asks for: a command to run with its arguments, or a text to print (a help, the version). */
type Selection = { command: AnyCommand, args: string[] } | { print: string, outcome: Outcome }

const HELP_WORDS = new Set(['--help', '-h', 'help'])

/** Finds the command of the table a command line names. An unknown command or verb is a UsageError. */
export function select (argv: readonly string[]): Selection {
  const [name, ...args] = argv
  // Bare `orbtest` shows the help, as a usage mistake does: exit 2.
  if (name === undefined) return { print: programHelp(ORBTEST, COMMANDS), outcome: 'refused' }
  if (HELP_WORDS.has(name)) return { print: programHelp(ORBTEST, COMMANDS), outcome: 'ok' }
  if (name === '--version' || name === '-v') return { print: `${packageVersion()}\n`, outcome: 'ok' }
  const named = COMMANDS.filter((c) => c.name === name)
  if (named.length === 0) throw new UsageError(`unknown command ${JSON.stringify(name)}`)
  if (named.some((c) => c.verb !== undefined)) return selectVerb(name, named, args)
  const flags = args.includes('--') ? args.slice(0, args.indexOf('--')) : args
  const given = (flag: string): boolean => flags.some((a) => a === flag || a.startsWith(`${flag}=`))
  const chosen = named.find((c) => c.chosenBy !== undefined && given(c.chosenBy))
  return { command: chosen ?? named.find((c) => c.chosenBy === undefined)!, args }
}

function selectVerb (name: string, verbs: readonly AnyCommand[], [verb, ...args]: readonly string[]): Selection {
  if (verb === undefined) return { print: verbsHelp(verbs), outcome: 'refused' }
  if (verb === '--help' || verb === '-h') return { print: verbsHelp(verbs), outcome: 'ok' }
  const command = verbs.find((c) => c.verb === verb)
  if (command === undefined) {
    throw new UsageError(`unknown ${name} command ${JSON.stringify(verb)} (${verbs.map((c) => c.verb).join(' or ')})`)
  }
  return { command, args }
}

/** Reads a command's flags and runs it, or shows its help when asked. */
async function runCommand (command: AnyCommand, args: readonly string[], out: NodeJS.WritableStream): Promise<Outcome> {
  const split = command.runsCommand === true ? args.indexOf('--') : -1
  const line = parseFlags(split < 0 ? args : args.slice(0, split), command.flags, { operands: command.operands })
  if (line.flags.help === true) {
    out.write(commandHelp(command))
    return 'ok'
  }
  return await command.run({ ...line, command: split < 0 ? [] : args.slice(split + 1) }, out)
}

async function execute (selection: Selection, out: NodeJS.WritableStream): Promise<number> {
  if ('print' in selection) {
    out.write(selection.print)
    return EXIT_CODES[selection.outcome]
  }
  return EXIT_CODES[await runCommand(selection.command, selection.args, out)]
}

/** Runs `orbtest ARGV…` to its exit code; a usage mistake or any other fault is thrown, as `main` would word it. */
export async function run (argv: readonly string[], out: NodeJS.WritableStream = process.stdout): Promise<number> {
  return await execute(select(argv), out)
}

/** The CLI: runs `orbtest ARGV…` and resolves to its exit code; a fault is one line on stderr. */
export async function main (
  argv: readonly string[],
  out: NodeJS.WritableStream = process.stdout,
  err: NodeJS.WritableStream = process.stderr
): Promise<number> {
  let selection: Selection | undefined
  try {
    selection = select(argv)
    return await execute(selection, out)
  } catch (fault) {
    const command = selection !== undefined && 'command' in selection ? selection.command : undefined
    const { line, outcome } = faultOutcome(fault, argv[0], command)
    err.write(`orbtest: ${line}\n`)
    return EXIT_CODES[outcome]
  }
}

/** The one mapping of a fault to its line and exit code. */
function faultOutcome (
  fault: unknown,
  name: string | undefined,
  command: AnyCommand | undefined
): { line: string, outcome: Outcome } {
  const message = (fault as Error).message
  if (fault instanceof UsageError) {
    // The command's own --help where it is known (`orbtest proxy orb --help`), else its name's, else orbtest's.
    const known = command === undefined
      ? COMMANDS.some((c) => c.name === name) ? name : undefined
      : [command.name, command.verb].filter((w) => w !== undefined).join(' ')
    return { line: `${message}. Run 'orbtest ${known === undefined ? '' : `${known} `}--help'.`, outcome: 'refused' }
  }
  if (command?.refuses?.(fault) === true) return { line: message, outcome: 'refused' }
  if (fault instanceof StartupError) return { line: message, outcome: 'failed' }
  // Anything else is a bug of ours; still one line for the person, the details only when asked for.
  const stack = process.env.ORBTEST_DEBUG ? `\n${(fault as Error).stack}` : ''
  return { line: `unexpected error: ${message}${stack}`, outcome: 'failed' }
}

/** `orbtest conformance ARGV…` in this process, to its exit code (faults are thrown). */
export async function conformance (
  argv: readonly string[],
  out: NodeJS.WritableStream = process.stdout
): Promise<number> {
  return await run(['conformance', ...argv], out)
}

/** `orbtest webhook ARGV…` in this process, each piece of its output given to `out` (faults are thrown). */
export async function webhook (
  argv: readonly string[],
  out: (text: string) => void = (text) => { process.stdout.write(text) }
): Promise<number> {
  const sink = new Writable({
    write (chunk: Buffer, _encoding, done) {
      out(chunk.toString())
      done()
    }
  })
  return await run(['webhook', ...argv], sink)
}
