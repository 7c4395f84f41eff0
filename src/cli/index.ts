#!/usr/bin/env node
import { StartupError } from '../shared/startup-error.js'
import { packageVersion } from '../shared/paths.js'
import { UsageError } from './args.js'
import { COMMON_FLAGS, ORB_FLAGS, ORBTILE_FLAGS, serve, SERVE_FLAGS, type ServeCommand } from './serve.js'

const COMMANDS: Record<string, ServeCommand> = {
  up: {
    name: 'up',
    summary: 'Runs every fake (the fake Orbtile and the fake Orb) with the control server. This is what `npm start` runs.',
    flags: SERVE_FLAGS,
    fakes: { orbtile: true, orb: true }
  },
  orbtile: {
    name: 'orbtile',
    summary: 'Runs the fake Orbtile alone (Adapter API v1.2 on a Unix socket, found through the discovery file), with the control server.',
    flags: { ...ORBTILE_FLAGS, ...COMMON_FLAGS },
    fakes: { orbtile: true, orb: false }
  },
  orb: {
    name: 'orb',
    summary: 'Runs the fake Orb alone (the Orb bot API on loopback HTTP, with a seeded world), with the control server.',
    flags: { ...ORB_FLAGS, ...COMMON_FLAGS },
    fakes: { orbtile: false, orb: true }
  }
}

const HELP = `Usage: orbtest <command> [flags]

Stateful fakes and conformance tests for the Orbtile Adapter Protocol and the Orb bot API.

Commands:
  up        run every fake with the control server (npm start)
  orbtile   run the fake Orbtile with the control server
  orb       run the fake Orb with the control server
  conformance --target T   run the conformance suite against an Orbtile or an Orb (see 'orbtest conformance --help')
  webhook sign|send        sign a body as Orb does; send a genuine or forged delivery to a bot's endpoint
  summary REPORT.json      a run's JSON report as Markdown (a CI job's summary page; --github for Actions)

Run 'orbtest <command> --help' for a command's flags. 'orbtest --version' prints the version.
`

/** Runs the CLI; resolves to the exit code. */
export async function main (argv: readonly string[]): Promise<number> {
  const [first, ...rest] = argv
  if (first === undefined || first === '--help' || first === '-h' || first === 'help') {
    process.stdout.write(HELP)
    return first === undefined ? 2 : 0
  }
  if (first === '--version' || first === '-v') {
    process.stdout.write(`${packageVersion()}\n`)
    return 0
  }
  if (first === 'conformance') {
    // Loaded only when asked for: the suite and its cases would slow every fake's start-up.
    const { conformance, TargetError } = await import('../../conformance/index.js')
    try {
      return await conformance(rest)
    } catch (err) {
      if (err instanceof UsageError) {
        process.stderr.write(`orbtest: ${err.message}. Run 'orbtest conformance --help'.\n`)
        return 2
      }
      if (err instanceof TargetError) {
        process.stderr.write(`orbtest: ${err.message}\n`)
        return 2
      }
      throw err
    }
  }
  if (first === 'summary') {
    const { summary } = await import('./summary.js')
    try {
      return await summary(rest)
    } catch (err) {
      if (err instanceof UsageError) {
        process.stderr.write(`orbtest: ${err.message}. Run 'orbtest summary --help'.\n`)
        return 2
      }
      throw err
    }
  }
  if (first === 'webhook') {
    const { webhook } = await import('./webhook.js')
    try {
      return await webhook(rest)
    } catch (err) {
      if (err instanceof UsageError) {
        process.stderr.write(`orbtest: ${err.message}. Run 'orbtest webhook --help'.\n`)
        return 2
      }
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
        process.stderr.write(`orbtest: ${(err as Error).message}\n`)
        return 2
      }
      throw err
    }
  }
  const command = COMMANDS[first]
  try {
    if (command === undefined) throw new UsageError(`unknown command ${JSON.stringify(first)}`)
    return await serve(command, rest)
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`orbtest: ${err.message}. Run 'orbtest ${command === undefined ? '' : `${command.name} `}--help'.\n`)
      return 2
    }
    if (err instanceof StartupError) {
      process.stderr.write(`orbtest: ${err.message}\n`)
      return 1
    }
    // Anything else is a bug of ours; still one line for the person, the details only when asked for.
    process.stderr.write(`orbtest: unexpected error: ${(err as Error).message}${process.env.ORBTEST_DEBUG ? `\n${(err as Error).stack}` : ''}\n`)
    return 1
  }
}

const code = await main(process.argv.slice(2))
// Exit at once: a stopped fake must not linger on a keep-alive socket a client left open.
process.exit(code)
