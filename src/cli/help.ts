import type { AnyCommand, HelpRow } from './command.js'
import type { FlagSpecs } from './flags.js'

/**
 * Rows laid out in two columns, the first `width` wide (default: its widest entry), the second's further lines under
 * its first.
 */
export function helpTable (rows: readonly HelpRow[], width = Math.max(...rows.map(([left]) => left.length))): string {
  const indent = ' '.repeat(width + 4)
  return rows.map(([left, text]) => `  ${left.padEnd(width)}  ${text.split('\n').join(`\n${indent}`)}`).join('\n')
}

/** A command's flags as help rows: the flag, its value's placeholder, its text and its default. */
export function flagRows (specs: FlagSpecs): HelpRow[] {
  return Object.entries(specs).filter(([, spec]) => spec.unlisted !== true).map(([name, spec]) => {
    const placeholder = spec.placeholder === undefined ? '' : ` ${spec.placeholder}`
    const left = `--${name}${placeholder}${name === 'help' ? ', -h' : ''}`
    return [left, spec.help + (spec.default === undefined ? '' : ` (default ${spec.default})`)] as const
  })
}

/** `orbtest <command> --help`: usage, what it does, its tables (targets, suites), its flags, and what follows. */
export function commandHelp (command: AnyCommand): string {
  const tables = [...(command.tables ?? []), { title: 'Flags', rows: flagRows(command.flags) }]
    .map(({ title, rows }) => `${title}:\n${helpTable(rows, command.column)}\n`)
  const footer = command.footer === undefined ? [] : [command.footer]
  return [`Usage: ${command.usage}\n`, `${command.help}\n`, ...tables, ...footer].join('\n')
}

/** The help of a word whose commands are verbs (`orbtest webhook`): the usage and description they share. */
export function verbsHelp (verbs: ReadonlyArray<AnyCommand>): string {
  return `Usage: ${verbs[0]!.usage}\n\n${verbs[0]!.help}\n`
}

/** `orbtest --help`: the commands, each on its line. */
export function programHelp (
  program: { usage: string, help: string, footer: string, column: number },
  commands: readonly AnyCommand[]
): string {
  const rows = commands.flatMap((c) => c.summary === undefined ? [] : [c.summary])
  return `Usage: ${program.usage}\n\n${program.help}\n\nCommands:\n${helpTable(rows, program.column)}\n\n${program.footer}`
}
