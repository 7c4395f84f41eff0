// `orbtest proxy orbtile`: the proxy in front of an Orbtile app, the judge on its traffic, and the adapter it runs.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { ServerFinding } from '../../conformance/client/core/journal.js'
import type { Judge } from '../../conformance/client/orbtile/judge.js'
import type { TapExchange, WireTap } from '../shared/tap.js'
import { resolveDiscoveryPath, SPEC_DISCOVERY_SUFFIX } from '../spec/orbtile.js'
import type { CommandInput, Outcome } from './command.js'
import type { PROXY_ORBTILE_FLAGS } from './command-flags.js'
import { writeReadyFile } from './serve.js'

/** What the judge's report says the traffic passed through. */
const VIA = { command: 'orbtest proxy orbtile', receiver: 'the proxy' }

/** How long the adapter has to exit after SIGTERM before SIGKILL: what process managers commonly allow. */
const STOP_GRACE_MS = 10_000

/** Runs the proxy until SIGINT or SIGTERM, or until the COMMAND it started exits; then writes the judge's report. */
export async function proxyOrbtile (input: CommandInput<typeof PROXY_ORBTILE_FLAGS>): Promise<Outcome> {
  const { flags, command } = input
  const { startOrbtileProxy } = await import('../proxy/orbtile.js')
  // Without --discovery, a COMMAND gets a private HOME with the file at the spec's path under it.
  const home = flags.discovery === undefined && command.length > 0
    ? mkdtempSync(join(tmpdir(), 'orbtest-proxy-home-'))
    : undefined
  const discovery = flags.discovery ?? (home === undefined ? undefined : join(home, SPEC_DISCOVERY_SUFFIX))
  if (discovery === undefined) {
    const { UsageError } = await import('../shared/usage-error.js')
    throw new UsageError('give --discovery PATH (where the adapter will look), or a COMMAND after --')
  }
  const started: { token?: () => string } = {}
  const judge: Judge | undefined = flags.judge === undefined
    ? undefined
    : (await import('../../conformance/client/orbtile/judge.js'))
        .startJudge(flags.judge, () => started.token?.() ?? '', VIA)
  const upstream = flags.upstream ?? resolveDiscoveryPath()
  const { serverFindings } = await import('../../conformance/server/orbtile/passive.js')
  const server: ServerFinding[] = []
  const tap = readingServer(judge?.tap, (x) => { server.push(...serverFindings(x)) })
  const proxy = await startOrbtileProxy({ upstream, discovery, tap })
  started.token = proxy.token
  try {
    if (flags['ready-file'] !== undefined) {
      writeReadyFile(flags['ready-file'], { proxy: { socketPath: proxy.socketPath, discovery } })
    }
    process.stderr.write(`orbtest: proxy on ${proxy.socketPath}; the adapter's discovery file is ${discovery}\n`)
    await (command.length === 0 ? stopped() : runCommand(command, discovery, home))
  } finally {
    await proxy.close()
    if (flags['ready-file'] !== undefined) rmSync(flags['ready-file'], { force: true })
    if (home !== undefined) rmSync(home, { recursive: true, force: true })
  }
  process.stderr.write(serverLines(server))
  const serverFailed = flags['strict-server'] === true && server.length > 0
  if (judge === undefined) return serverFailed ? 'failed' : 'ok'
  const { passed, requests } = judge.finish(server)
  const verdict = requests === 0 ? 'had no request to judge' : passed ? 'held' : 'were broken'
  process.stderr.write(`orbtest: the client rules ${verdict} (${requests} requests); the report is in ${flags.judge!}\n`)
  return passed && !serverFailed ? 'ok' : 'failed'
}

/** The judge's tap (when there is a judge), with each exchange also read for what the server answered. */
function readingServer (tap: WireTap | undefined, read: (x: TapExchange) => void): WireTap {
  return {
    request: () => undefined,
    malformed: () => undefined,
    ...tap,
    exchange: (x) => {
      tap?.exchange(x)
      read(x)
    }
  }
}

/** The server's findings in a few lines: how many, then the first of each rule. */
function serverLines (server: readonly ServerFinding[]): string {
  const first = new Map<string, ServerFinding>()
  for (const f of server) if (!first.has(f.id)) first.set(f.id, f)
  const note = server.length === 0 ? '' : ' (they fail the run only with --strict-server)'
  const lines = [`orbtest: the app's replies: ${server.length} server finding(s)${note}`]
  for (const f of first.values()) {
    const n = server.filter((x) => x.id === f.id).length
    lines.push(`  ${f.id} (${f.level}${n > 1 ? `, ${n} times` : ''}): ${f.what}: ${f.message}`)
  }
  return `${lines.join('\n')}\n`
}

/** Resolves at the first SIGINT or SIGTERM. */
async function stopped (): Promise<void> {
  await new Promise<void>((resolve) => {
    const stop = (): void => {
      process.off('SIGINT', stop)
      process.off('SIGTERM', stop)
      resolve()
    }
    process.once('SIGINT', stop)
    process.once('SIGTERM', stop)
  })
}

/** Runs the adapter with the proxy's discovery file, until it exits or the proxy is told to stop (then stops it). */
async function runCommand (command: readonly string[], discovery: string, home: string | undefined): Promise<void> {
  const { ClientProcess } = await import('../../conformance/client/core/process.js')
  const env = { ...process.env, ORBTILE_DISCOVERY: discovery, ...(home === undefined ? {} : { HOME: home }) }
  const client = new ClientProcess(command, env, () => performance.now(), (stream, line) => {
    ;(stream === 'stdout' ? process.stdout : process.stderr).write(`${line}\n`)
  })
  const stop = stopped()
  const ended = await Promise.race([client.exited, stop.then(() => undefined)])
  if (ended === undefined) await client.stop(STOP_GRACE_MS)
  else if (ended.how === 'not-started') process.stderr.write(`orbtest: cannot run ${command[0]!}: ${ended.error ?? ''}\n`)
}
