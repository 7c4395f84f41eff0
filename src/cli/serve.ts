import { renameSync, unlinkSync, writeFileSync } from 'node:fs'
import { basename, dirname, join } from 'node:path'
import type { Judge } from '../../conformance/client/orbtile/judge.js'
import type { Orbtest, OrbtestOptions, ReadyInfo } from '../orbtest.js'
import { packageVersion } from '../shared/paths.js'
import { startupFault } from '../shared/startup-error.js'
import { EXIT_CODES, type Outcome } from './command.js'
import type { COMMON_FLAGS, ORB_FLAGS, ORBTILE_FLAGS } from './command-flags.js'
import type { Flags } from './flags.js'

/** The fakes a command runs, each with its own flags. */
export interface Fakes {
  orbtile?: Flags<typeof ORBTILE_FLAGS>
  orb?: Flags<typeof ORB_FLAGS>
}

/** Runs the fakes until SIGINT or SIGTERM, then removes the socket, the discovery file and the ready file. */
export async function serve (wanted: Fakes, flags: Flags<typeof COMMON_FLAGS>): Promise<Outcome> {
  // The fakes (fastify, the validators) are loaded once the flags are known to be good: --help and a usage error
  // answer in the time node takes to start.
  const [{ startOrbtest }, { removeDiscoveryFile }] = await Promise.all([
    import('../orbtest.js'),
    import('../orbtile-mock/discovery.js')
  ])
  const judgeFile = wanted.orbtile?.judge
  // The judge keeps the fake's token out of its report: the token of the fake it judges, started after it.
  const started: { fakes?: Orbtest } = {}
  // Loaded only with --judge: the client checks would slow every other start.
  const judge = judgeFile === undefined
    ? undefined
    : (await import('../../conformance/client/orbtile/judge.js'))
        .startJudge(judgeFile, () => started.fakes?.orbtile?.token ?? '')
  const fakes = await startOrbtest(orbtestOptions(wanted, flags, judge))
  started.fakes = fakes
  const readyFile = flags['ready-file']
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
  const outcome = await stopped
  if (judge === undefined || outcome !== 'ok') return outcome
  const { passed, requests } = judge.finish()
  const verdict = requests === 0 ? 'had no request to judge' : passed ? 'held' : 'were broken'
  process.stderr.write(`orbtest: the client rules ${verdict} (${requests} requests); the report is in ${judgeFile!}\n`)
  return passed ? 'ok' : 'failed'
}

/** What `startOrbtest` takes for the flags of a serve command. */
function orbtestOptions (wanted: Fakes, flags: Flags<typeof COMMON_FLAGS>, judge: Judge | undefined): OrbtestOptions {
  const logLevel = flags['log-level']
  const { orbtile, orb } = wanted
  return {
    orbtile: orbtile !== undefined && {
      ...(judge === undefined ? {} : { tap: judge.tap }),
      discoveryPath: orbtile.discovery,
      socketPath: orbtile.socket,
      apiEnabled: orbtile.api === 'on',
      rateLimit: flags['rate-limit'],
      autoAllow: orbtile['auto-allow'] === true,
      leaseSilenceMs: orbtile['lease-silence'] * 1000,
      pidCheck: orbtile['pid-check']
    },
    orb: orb !== undefined && { port: orb['orb-port'], world: orb.world, rateLimit: flags['rate-limit'] },
    controlPort: flags['control-port'],
    ...(judge === undefined ? {} : { judge: () => judge.state() }),
    clockMode: flags.clock,
    logger: logLevel === 'silent'
      ? false
      : {
          level: logLevel,
          stream: process.stderr,
          redact: ['req.headers.authorization', 'req.headers["x-orbtile-adapter-token"]']
        }
  }
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

/** Writes a ready file atomically, so that a script polling for it never reads half of it. */
export function writeReadyFile (path: string, info: ReadyInfo | { proxy: Record<string, string> }): void {
  const temp = join(dirname(path), `.${basename(path)}.${process.pid}.tmp`)
  writeFileSync(temp, `${JSON.stringify(info, null, 2)}\n`)
  renameSync(temp, path)
}

function waitForStop (
  fakes: Orbtest,
  readyFile: string | undefined,
  removeDiscoveryFile: (discoveryPath: string, socketPath: string) => void
): Promise<Outcome> {
  return new Promise((resolve) => {
    let stopping = false
    const removeReadyFile = (): void => {
      if (readyFile !== undefined) removeFile(readyFile)
    }
    const stop = (): void => {
      if (stopping) {
        // A second Ctrl-C: the user is in a hurry.
        process.exit(EXIT_CODES.interrupted)
      }
      stopping = true
      removeReadyFile()
      fakes.close().then(() => resolve('ok'), (err: unknown) => {
        process.stderr.write(`orbtest: error while stopping: ${(err as Error).message}\n`)
        resolve('failed')
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
        removeFile(orbtile.socketPath)
      }
    })
  })
}

/** Removes a file of ours at exit: one already gone is fine; any other fault is said, and the exit goes on. */
function removeFile (path: string): void {
  try {
    unlinkSync(path)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') {
      process.stderr.write(`orbtest: cannot remove ${path}: ${(err as Error).message}\n`)
    }
  }
}
