// `orbtest proxy orbtile` and `orbtest proxy orb`: the proxy in front of a real server, the judge on its traffic, the
// server's replies read against the spec, and the client it runs.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { ServerFinding } from '../../conformance/client/core/journal.js'
import type { Judge } from '../../conformance/client/orbtile/judge.js'
import type { TapExchange, WireTap } from '../shared/tap.js'
import { resolveDiscoveryPath, SPEC_DISCOVERY_SUFFIX } from '../spec/orbtile.js'
import { EXIT_CODES, type CommandInput, type Outcome } from './command.js'
import { UsageError } from '../shared/usage-error.js'
import type { PROXY_ORB_FLAGS, PROXY_ORBTILE_FLAGS } from './command-flags.js'
import { writeReadyFile } from './serve.js'
import type { DeliveryListener } from '../proxy/orb.js'
import { Recorder } from '../proxy/recording.js'

/** What the judge's report says the traffic passed through. */
const VIA = { command: 'orbtest proxy orbtile', receiver: 'the proxy' }
const VIA_ORB = { command: 'orbtest proxy orb', receiver: 'the proxy' }

/** How long the adapter has to exit after SIGTERM before SIGKILL: what process managers commonly allow. */
const STOP_GRACE_MS = 10_000

/** Server findings kept for the report; past them each rule is only counted (a long run against a faulty app). */
const SERVER_KEPT = 1000

/** What the app answered that it may not: the first SERVER_KEPT findings, and how many of each rule in all. */
class ServerReading {
  readonly kept: ServerFinding[] = []
  readonly counts = new Map<string, number>()

  add (found: readonly ServerFinding[]): void {
    for (const f of found) {
      this.counts.set(f.id, (this.counts.get(f.id) ?? 0) + 1)
      if (this.kept.length < SERVER_KEPT) this.kept.push(f)
    }
  }

  get total (): number {
    return [...this.counts.values()].reduce((a, b) => a + b, 0)
  }
}

/** Runs the proxy until SIGINT or SIGTERM, or until the COMMAND it started exits; then writes the judge's report. */
export async function proxyOrbtile (input: CommandInput<typeof PROXY_ORBTILE_FLAGS>): Promise<Outcome> {
  const { flags, command } = input
  if (flags.discovery === undefined && command.length === 0) {
    throw new UsageError('give --discovery PATH (where the adapter will look), or a COMMAND after --')
  }
  const [{ startOrbtileProxy }, { serverFindings }] = await Promise.all([
    import('../proxy/orbtile.js'), import('../../conformance/server/orbtile/passive.js')
  ])
  const started: { token?: () => string } = {}
  const judge: Judge | undefined = flags.judge === undefined
    ? undefined
    : (await import('../../conformance/client/orbtile/judge.js'))
        .startJudge(flags.judge, () => started.token?.() ?? '', VIA)
  const server = new ServerReading()
  const recorded: { recorder?: Recorder } = {}
  const tap = readingServer(judge?.tap, (x) => {
    server.add(serverFindings(x))
    recorded.recorder?.exchange(x)
  })
  // Without --discovery, a COMMAND gets a private HOME with the file at the spec's path under it.
  const home = flags.discovery === undefined ? mkdtempSync(join(tmpdir(), 'orbtest-proxy-home-')) : undefined
  let ran: 'ran' | 'not-started' = 'ran'
  try {
    const discovery = flags.discovery ?? join(home!, SPEC_DISCOVERY_SUFFIX)
    const proxy = await startOrbtileProxy({
      upstream: flags.upstream ?? resolveDiscoveryPath(),
      discovery,
      tap,
      onUpstream: (change) => {
        if (change.kind !== 'away') recorded.recorder?.credential(change.file.token)
        judge?.app(change.kind === 'away' ? change : { kind: change.kind, token: change.file.token })
      }
    })
    started.token = proxy.token
    judge?.begin()
    if (flags.record !== undefined) recorded.recorder = new Recorder(flags.record, 'orbtile', proxy.token(), tap.now!())
    try {
      if (flags['ready-file'] !== undefined) {
        writeReadyFile(flags['ready-file'], { proxy: { socketPath: proxy.socketPath, discovery } })
      }
      process.stderr.write(`orbtest: proxy on ${proxy.socketPath}; the adapter's discovery file is ${discovery}\n`)
      ran = command.length === 0
        ? await stopped().then(() => 'ran' as const)
        : await runCommand(command, discovery, home)
    } finally {
      await proxy.close()
      recorded.recorder?.close()
      if (flags['ready-file'] !== undefined) rmSync(flags['ready-file'], { force: true })
    }
  } finally {
    if (home !== undefined) rmSync(home, { recursive: true, force: true })
  }
  return ran === 'not-started' ? 'refused' : verdicts(flags, judge, server)
}

/** Runs the proxy in front of an Orb until SIGINT or SIGTERM, or until the COMMAND it started exits. */
export async function proxyOrb (input: CommandInput<typeof PROXY_ORB_FLAGS>): Promise<Outcome> {
  const { flags, command } = input
  const upstream = flags.upstream
  if (upstream === undefined) throw new UsageError('give --upstream URL: the Orb to stand in front of')
  const token = process.env.ORB_TOKEN ?? ''
  if ((flags.judge !== undefined || flags.record !== undefined) && token === '') {
    const which = flags.judge !== undefined ? '--judge' : '--record'
    throw new UsageError(`${which} needs the app's token in ORB_TOKEN (the bot's own): the judge holds the bot's calls to it, and a recording puts the fake's token in its place`)
  }
  const [{ startOrbProxy }, { orbServerFindings, orbDeliveryReader }] = await Promise.all([
    import('../proxy/orb.js'), import('../../conformance/server/orb/passive.js')
  ])
  const webhookTo = flags['webhook-to']
  const judge = flags.judge === undefined
    ? undefined
    : (await import('../../conformance/client/orb/judge.js'))
        .startOrbJudge(flags.judge, token, VIA_ORB, webhookTo !== undefined)
  const server = new ServerReading()
  const recorded: { recorder?: Recorder } = {}
  const tap = readingServer(judge?.tap, (x) => {
    server.add(orbServerFindings(x))
    recorded.recorder?.exchange(x)
  })
  const delivered = orbDeliveryReader(token)
  const deliveries: DeliveryListener = {
    sent: (d) => {
      server.add(delivered(d))
      judge?.deliveries.sent(d)
    },
    answered: (d, answer) => { judge?.deliveries.answered(d, answer) }
  }
  const proxy = await startOrbProxy({ upstream, ...flags.listen, tap, webhookTo, deliveries })
  let ran: 'ran' | 'not-started' = 'ran'
  try {
    if (flags.record !== undefined) recorded.recorder = new Recorder(flags.record, 'orb', token, tap.now!())
    if (flags['ready-file'] !== undefined) writeReadyFile(flags['ready-file'], { proxy: { url: proxy.url } })
    process.stderr.write(`orbtest: proxy on ${proxy.url} in front of ${upstream.href}; the bot's ORB_URL names it\n`)
    if (webhookTo !== undefined) {
      process.stderr.write(`orbtest: the Orb's deliveries to ${proxy.url}/<any path> go on to ${webhookTo.href}\n`)
    }
    ran = command.length === 0
      ? await stopped().then(() => 'ran' as const)
      : await runClient(command, { ORB_URL: proxy.url }, (event) => { judge?.bot(event) })
  } finally {
    await proxy.close()
    recorded.recorder?.close()
    if (flags['ready-file'] !== undefined) rmSync(flags['ready-file'], { force: true })
  }
  return ran === 'not-started' ? 'refused' : verdicts(flags, judge, server, 'the Orb')
}

/** The flags the outcome reads. */
interface OutcomeFlags { judge?: string, 'strict-server'?: boolean }

/** The run's outcome from the client's verdicts and the server's findings; the report written, the counts said. */
function verdicts (
  flags: OutcomeFlags,
  judge: Pick<Judge, 'finish'> | undefined,
  server: ServerReading,
  upstream = 'the app'
): Outcome {
  process.stderr.write(serverLines(server, upstream))
  const serverFailed = flags['strict-server'] === true && server.total > 0
  if (judge === undefined) return serverFailed ? 'failed' : 'ok'
  const { passed, requests } = judge.finish(server.kept)
  const verdict = requests === 0 ? 'had no request to judge' : passed ? 'held' : 'were broken'
  process.stderr.write(`orbtest: the client rules ${verdict} (${requests} requests); the report is in ${flags.judge!}\n`)
  return passed && !serverFailed ? 'ok' : 'failed'
}

/** Resolves at the first SIGINT or SIGTERM; a second one runs `hurry` and exits at once (130), as `up` does. */
async function stopped (hurry: () => void = () => undefined): Promise<void> {
  await new Promise<void>((resolve) => {
    let first = true
    const stop = (): void => {
      if (!first) {
        hurry()
        process.exit(EXIT_CODES.interrupted)
      }
      first = false
      resolve()
    }
    // `on`, not `once`: a second signal must reach `stop` rather than kill the proxy with the adapter left running.
    process.on('SIGINT', stop)
    process.on('SIGTERM', stop)
  })
}

/** Runs the adapter with the proxy's discovery file, until it exits or the proxy is told to stop (then stops it). */
async function runCommand (
  command: readonly string[],
  discovery: string,
  home: string | undefined
): Promise<'ran' | 'not-started'> {
  return await runClient(command, { ORBTILE_DISCOVERY: discovery, ...(home === undefined ? {} : { HOME: home }) })
}

/**
 * Runs the client with `env` added to the proxy's own, until it exits or the proxy is told to stop (then stops it);
 * `told` hears when it starts and when the proxy stops it.
 */
async function runClient (
  command: readonly string[],
  env: NodeJS.ProcessEnv,
  told: (event: 'start' | 'stop') => void = () => undefined
): Promise<'ran' | 'not-started'> {
  const { ClientProcess } = await import('../../conformance/client/core/process.js')
  const client = new ClientProcess(command, { ...process.env, ...env }, () => performance.now(), (stream, line) => {
    ;(stream === 'stdout' ? process.stdout : process.stderr).write(`${line}\n`)
  })
  told('start')
  const stop = stopped(() => { killGroup(client.pid) })
  const ended = await Promise.race([client.exited, stop.then(() => undefined)])
  if (ended === undefined) {
    told('stop')
    await client.stop(STOP_GRACE_MS)
  }
  if (ended?.how !== 'not-started') return 'ran'
  process.stderr.write(`orbtest: cannot run ${command[0]!}: ${ended.error ?? ''}\n`)
  return 'not-started'
}

/** SIGKILL to the adapter's process group, on a second Ctrl-C; a group already gone (ESRCH) is what was wanted. */
function killGroup (pid: number | undefined): void {
  if (pid === undefined) return
  try {
    process.kill(-pid, 'SIGKILL')
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err
  }
}

/** The judge's tap (when there is a judge), with each exchange also read for what the server answered. */
function readingServer (tap: WireTap | undefined, read: (x: TapExchange) => void): WireTap {
  return {
    request: () => undefined,
    malformed: () => undefined,
    now: () => performance.now(),
    ...tap,
    exchange: (x) => {
      tap?.exchange(x)
      read(x)
    }
  }
}

/** The server's findings in a few lines: how many, then the first of each rule. */
function serverLines (server: ServerReading, upstream: string): string {
  const note = server.total === 0 ? '' : ' (they fail the run only with --strict-server)'
  const lines = [`orbtest: ${upstream}'s replies: ${server.total} server finding(s)${note}`]
  for (const [id, n] of server.counts) {
    const f = server.kept.find((x) => x.id === id)!
    lines.push(`  ${id} (${f.level}${n > 1 ? `, ${n} times` : ''}): ${f.what}: ${f.message}`)
  }
  return `${lines.join('\n')}\n`
}
