import { renameSync, unlinkSync, writeFileSync } from 'node:fs'
import { basename, dirname, join } from 'node:path'
import type { Orbtest, ReadyInfo } from '../orbtest.js'
import { packageVersion } from '../shared/paths.js'
import { startupFault } from '../shared/startup-error.js'
import { flagHelp, parse, parseFlags, type FlagSpecs } from './args.js'

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']

/** Flags of every subcommand that runs fakes. */
export const COMMON_FLAGS: FlagSpecs = {
  'rate-limit': {
    type: 'string',
    placeholder: 'on|off',
    parse: parse.oneOf('on', 'off'),
    default: 'on',
    help: "the specs' rate limits and throttles (Orbtile: 20 requests/s, burst 60; Orb: ORB-A03's windows); off for load tests"
  },
  'control-port': {
    type: 'string',
    placeholder: 'PORT',
    parse: parse.port,
    default: '8788',
    help: 'control server port on 127.0.0.1, which also serves the dashboard at /; 0 picks a free one'
  },
  clock: {
    type: 'string',
    placeholder: 'real|virtual',
    parse: parse.oneOf('real', 'virtual'),
    default: 'real',
    help: 'virtual time moves only through POST /control/clock/advance'
  },
  'log-level': {
    type: 'string',
    placeholder: 'LEVEL',
    parse: parse.oneOf(...LOG_LEVELS),
    default: 'warn',
    help: `request log to stderr: ${LOG_LEVELS.join(', ')}`
  },
  'ready-file': {
    type: 'string',
    placeholder: 'PATH',
    parse: parse.path,
    help: 'once everything listens, write where it listens here as JSON (removed on exit)'
  },
  help: { type: 'boolean', help: 'show this help' }
}

/** Flags of the fake Orbtile. */
export const ORBTILE_FLAGS: FlagSpecs = {
  discovery: { type: 'string', placeholder: 'PATH', parse: parse.path, help: 'discovery file to write; else $ORBTILE_DISCOVERY, else ~/Library/Application Support/Orbtile/adapter-api.json' },
  socket: { type: 'string', placeholder: 'PATH', parse: parse.path, help: 'Unix socket to serve the Adapter API on; else $XDG_RUNTIME_DIR/orbtest/orbtile.sock or <tmp>/orbtest-<uid>/orbtile.sock' },
  api: { type: 'string', placeholder: 'on|off', parse: parse.oneOf('on', 'off'), default: 'on', help: 'the user\'s Adapter API switch at start; off means no socket and no discovery file until switched on' },
  'auto-allow': { type: 'boolean', help: 'allow every adapter at its first registration, as the user would (for CI)' },
  'lease-silence': { type: 'string', placeholder: 'SECONDS', parse: parse.seconds, default: '120', help: 'an adapter lease ends after this long without a request (OT-A08)' },
  'pid-check': { type: 'string', placeholder: 'real|off', parse: parse.oneOf('real', 'off'), default: 'real', help: 'a session\'s pid must be a live process of this user; off accepts any pid' },
  judge: { type: 'string', placeholder: 'FILE', parse: parse.path, help: 'judge the adapter client rules on every request the fake Orbtile receives: verdicts live at GET /control/judge, the report written to FILE at stop (TAP; .json, .xml for JUnit, .html for the timeline); exit 1 on a violation' }
}

/** Flags of the fake Orb. */
export const ORB_FLAGS: FlagSpecs = {
  'orb-port': {
    type: 'string',
    placeholder: 'PORT',
    parse: parse.port,
    default: '8787',
    help: 'port of the fake Orb on 127.0.0.1; 0 picks a free one'
  },
  world: {
    type: 'string',
    placeholder: 'FILE',
    parse: parse.path,
    help: "the fake Orb's world (communities, apps, installs) as JSON; default: the demo world (fixtures/orb-world.json)"
  }
}

/** The flags of the command that runs every fake. */
export const SERVE_FLAGS: FlagSpecs = { ...ORBTILE_FLAGS, ...ORB_FLAGS, ...COMMON_FLAGS }

export interface ServeCommand {
  name: string
  summary: string
  flags: FlagSpecs
  /** Which fakes this command runs. */
  fakes: { orbtile: boolean, orb: boolean }
}

export function serveHelp (command: ServeCommand): string {
  return `Usage: orbtest ${command.name} [flags]\n\n${command.summary}\n\nFlags:\n${flagHelp(command.flags)}\n`
}

/** Runs the fakes until SIGINT or SIGTERM, then removes the socket, the discovery file and the ready file. */
export async function serve (command: ServeCommand, argv: readonly string[]): Promise<number> {
  const flags = parseFlags(argv, command.flags)
  if (flags.help === true) {
    process.stdout.write(serveHelp(command))
    return 0
  }
  // The fakes (fastify, the validators) are loaded once the flags are known to be good: --help and a usage error
  // answer in the time node takes to start.
  const [{ startOrbtest }, { removeDiscoveryFile }] = await Promise.all([
    import('../orbtest.js'),
    import('../orbtile-mock/discovery.js')
  ])
  const logLevel = flags['log-level'] as string
  const judgeFile = flags.judge as string | undefined
  let fakes: Orbtest | undefined // eslint-disable-line prefer-const -- read by the judge before it is set
  // Loaded only with --judge: the client checks would slow every other start.
  const judge =
    judgeFile === undefined
      ? undefined
      : (await import('../../conformance/client/orbtile/judge.js')).startJudge(
          judgeFile,
          () => fakes?.orbtile?.token ?? ''
        )
  fakes = await startOrbtest({
    orbtile: command.fakes.orbtile && {
      ...(judge === undefined ? {} : { tap: judge.tap }),
      discoveryPath: flags.discovery as string | undefined,
      socketPath: flags.socket as string | undefined,
      apiEnabled: flags.api === 'on',
      rateLimit: flags['rate-limit'] as 'on' | 'off',
      autoAllow: flags['auto-allow'] === true,
      leaseSilenceMs: (flags['lease-silence'] as number) * 1000,
      pidCheck: flags['pid-check'] as 'real' | 'off'
    },
    orb: command.fakes.orb && {
      port: flags['orb-port'] as number,
      world: flags.world as string | undefined,
      rateLimit: flags['rate-limit'] as 'on' | 'off'
    },
    controlPort: flags['control-port'] as number,
    ...(judge === undefined ? {} : { judge: () => judge.state() }),
    clockMode: flags.clock as 'real' | 'virtual',
    logger:
      logLevel === 'silent'
        ? false
        : {
            level: logLevel,
            stream: process.stderr,
            redact: ['req.headers.authorization', 'req.headers["x-orbtile-adapter-token"]']
          }
  })
  const readyFile = flags['ready-file'] as string | undefined
  if (readyFile !== undefined) {
    try {
      writeReadyFile(readyFile, fakes.ready())
    } catch (err) {
      await fakes.close()
      throw startupFault(`cannot write the ready file ${readyFile}`, err)
    }
  }
  const stopped = waitForStop(fakes, readyFile, removeDiscoveryFile)
  process.stdout.write(banner(fakes, judgeFile))
  const code = await stopped
  if (judge === undefined || code !== 0) return code
  const { passed, requests } = judge.finish()
  const verdict = requests === 0 ? 'had no request to judge' : passed ? 'held' : 'were broken'
  process.stderr.write(`orbtest: the client rules ${verdict} (${requests} requests); the report is in ${judgeFile!}\n`)
  return passed ? 0 : 1
}

function banner (fakes: Orbtest, judgeFile: string | undefined): string {
  const lines = [`orbtest ${packageVersion()}`]
  const orbtile = fakes.orbtile
  if (orbtile !== undefined) {
    const state = orbtile.control.state()
    lines.push(`  Orbtile   socket     ${orbtile.socketPath}${state.api.listening ? '' : '  (API off: not listening)'}`)
    lines.push(`            discovery  ${orbtile.discoveryPath}  (mode 0600; holds the token)`)
    lines.push(`            basePath   ${orbtile.basePath}`)
  }
  const orb = fakes.orb
  if (orb !== undefined) {
    // The demo apps' tokens are the fake's own test data, printed as a developer console shows a new token once.
    lines.push(`  Orb       ${orb.url}/api/bot/v1  (directory: ${orb.url}/api/orb/directory)`)
    for (const app of orb.store.apps.values()) lines.push(`            app ${app.id.padEnd(12)} ${app.name.padEnd(16)} token ${app.token}`)
  }
  lines.push(`  dashboard ${fakes.control.url}/  (open it in a browser: the fakes live, and their people's hands)`)
  lines.push(`  control   ${fakes.control.url}/control  (OpenAPI: ${fakes.control.url}/control/openapi.json)`)
  if (judgeFile !== undefined) lines.push(`  judge     ${fakes.control.url}/control/judge  (the report goes to ${judgeFile} at stop)`)
  lines.push(`  clock     ${fakes.clock.mode}`)
  lines.push(`Ready. Ctrl-C stops${orbtile === undefined ? '' : ' and removes the socket and the discovery file'}.`)
  return `${lines.join('\n')}\n`
}

// Written atomically, so a script polling for the file never reads half of it.
function writeReadyFile (path: string, info: ReadyInfo): void {
  const temp = join(dirname(path), `.${basename(path)}.${process.pid}.tmp`)
  writeFileSync(temp, `${JSON.stringify(info, null, 2)}\n`)
  renameSync(temp, path)
}

function waitForStop (
  fakes: Orbtest,
  readyFile: string | undefined,
  removeDiscoveryFile: (discoveryPath: string, socketPath: string) => void
): Promise<number> {
  return new Promise((resolve) => {
    let stopping = false
    const removeReadyFile = (): void => {
      if (readyFile !== undefined) try { unlinkSync(readyFile) } catch {}
    }
    const stop = (): void => {
      if (stopping) {
        // A second Ctrl-C: the user is in a hurry.
        process.exit(130)
      }
      stopping = true
      removeReadyFile()
      fakes.close().then(() => resolve(0), (err: unknown) => {
        process.stderr.write(`orbtest: error while stopping: ${(err as Error).message}\n`)
        resolve(1)
      })
    }
    // `on`, not `once`: a second signal must reach `stop` (and exit at once) rather than kill the process outright.
    process.on('SIGINT', stop)
    process.on('SIGTERM', stop)
    process.on('SIGHUP', stop)
    // A crash or a hurried exit still leaves no socket, discovery file or ready file behind.
    process.once('exit', () => {
      removeReadyFile()
      const orbtile = fakes.orbtile
      if (orbtile !== undefined && orbtile.control.state().api.listening) {
        removeDiscoveryFile(orbtile.discoveryPath, orbtile.socketPath)
        try { unlinkSync(orbtile.socketPath) } catch {}
      }
    })
  })
}
