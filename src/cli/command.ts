import type { FlagSpecs, Flags } from './flags.js'

/** A row of a help table: what is typed, and what it means (a line break starts a line of its own). */
export type HelpRow = readonly [string, string]

/**
 * How a command ended, and the exit code that says so: the one place the CLI turns an outcome into a number.
 * A usage mistake, a target that cannot be reached and a client that never reached its fake are all "refused": nothing
 * was judged, so the run can neither pass nor fail.
 */
export const EXIT_CODES = {
  ok: 0,
  failed: 1,
  refused: 2,
  // 128 + SIGINT, as a shell reports a command Ctrl-C stopped.
  interrupted: 130
} as const

export type Outcome = keyof typeof EXIT_CODES

/** What a command's `run` receives: its flags as their checks made them, its operands, and the words after `--`. */
export interface CommandInput<F extends FlagSpecs> {
  flags: Flags<F>
  operands: string[]
  /** Everything after `--`, for a command that runs another (`conformance --client … -- COMMAND`). */
  command: string[]
}

/** One command of `orbtest`: how it is named and chosen, its help, its flags, and what it runs. */
export interface Command<F extends FlagSpecs> {
  /** The word after `orbtest`. */
  name: string
  /** The word after the name, for a name whose commands are verbs (`webhook sign`, `webhook send`). */
  verb?: string
  /** A flag that chooses this command over the other of its name when it is given before `--` (`--client`). */
  chosenBy?: string
  /**
   * Its line in `orbtest --help`: how it is typed, and what it does. A command without one is told of in the help of
   * another (`conformance --client` in `conformance --help`, `webhook send` on `webhook sign`'s line).
   */
  summary?: HelpRow
  /** The Usage: line (a second usage line starts with the indent that puts it under the first). */
  usage: string
  /** What it does, in a paragraph or more. */
  help: string
  /** Tables shown before the flags (the targets, the suites). */
  tables?: ReadonlyArray<{ title: string, rows: readonly HelpRow[] }>
  flags: F
  /** A text after the flags. */
  footer?: string
  /** The width of the help's first column, where its text is laid out wider than its longest flag. */
  column?: number
  /** It takes operands among its flags (a file, a URL); it checks how many itself. */
  operands?: boolean
  /** It runs another command, given after `--`. */
  runsCommand?: boolean
  /** Faults other than usage mistakes that are the user's to fix: one line, exit code 2 (refused). */
  refuses?: (err: unknown) => boolean
  /** Runs it; each command loads what it needs here, so that --help and a flag mistake load nothing more. */
  run(input: CommandInput<F>, out: NodeJS.WritableStream): Promise<Outcome>
}

/** A command of the table, whatever its flags. */
export type AnyCommand = Command<any>

/** A table entry, its flags' types checked against its `run`. */
export function command<F extends FlagSpecs> (spec: Command<F>): AnyCommand {
  return spec
}
