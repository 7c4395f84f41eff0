// The seeded fuzz campaign over the fake Orbtile, the fake Orb and the control server: a library (runCampaign) and
// a command line.
//
//   node --import tsx stress/fuzz.ts --requests N --seed S [--servers orbtile,orb,control] [--concurrency C]
//     [--json FILE] [--only I,J,…] [--time-limit SECONDS] [--root CHECKOUT]
//
// Exit 0 when every check held, 1 when one failed (the seed and the replay command are printed), 2 for bad usage.
import { writeFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'
import { runCampaign, type CampaignOptions } from './campaign.js'
import { formatReport } from './report.js'
import { SERVER_NAMES, type ServerName } from './targets.js'

export { runCampaign, type CampaignOptions, type CampaignReport } from './campaign.js'
export { formatReport } from './report.js'

const USAGE = `Usage: node --import tsx stress/fuzz.ts --requests N --seed S [flags]

  --requests N         requests to send (1 to 10000000)
  --seed S             the seed: the same seed sends the same requests
  --servers LIST       which servers, comma-separated (default orbtile,orb,control)
  --concurrency C      clients on kept-alive connections (default 16); the raw lane has twice as many
  --json FILE          also write the report as JSON
  --only I,J,…         send only these request indices (a replay of what a report printed)
  --time-limit S       stop taking new requests after S seconds (default 600)
  --silent-ms MS       no answer after this long is a silent drop (default 5000)
  --root DIR           run another checkout of orbtest (to see a check bite on an older version)
`

function integer (value: string | undefined, name: string, min: number, max: number): number {
  const n = Number(value)
  if (value === undefined || !Number.isInteger(n) || n < min || n > max) {
    throw new UsageError(`--${name} must be an integer from ${min} to ${max}, not ${JSON.stringify(value)}`)
  }
  return n
}

class UsageError extends Error {}

/** Reads the command line into campaign options and the JSON path. */
export function parseFuzzArgs (argv: string[]): { options: CampaignOptions, json: string | undefined } {
  const { values } = parseArgs({
    args: argv,
    options: {
      requests: { type: 'string' },
      seed: { type: 'string' },
      servers: { type: 'string' },
      concurrency: { type: 'string' },
      json: { type: 'string' },
      only: { type: 'string' },
      'time-limit': { type: 'string' },
      'silent-ms': { type: 'string' },
      root: { type: 'string' },
      help: { type: 'boolean', short: 'h' }
    },
    strict: true
  })
  if (values.help === true) throw new UsageError('')
  const servers = (values.servers ?? SERVER_NAMES.join(',')).split(',').map((s) => s.trim()) as ServerName[]
  for (const name of servers) {
    if (!SERVER_NAMES.includes(name)) throw new UsageError(`--servers names ${JSON.stringify(name)}; the servers are ${SERVER_NAMES.join(', ')}`)
  }
  const concurrency = values.concurrency === undefined ? 16 : integer(values.concurrency, 'concurrency', 1, 512)
  const options: CampaignOptions = {
    requests: integer(values.requests, 'requests', 1, 10_000_000),
    seed: integer(values.seed, 'seed', -(2 ** 31), 2 ** 32 - 1) | 0,
    servers: [...new Set(servers)],
    concurrency,
    rawConcurrency: concurrency * 2,
    timeLimitMs: 1000 * (values['time-limit'] === undefined
      ? 600
      : integer(values['time-limit'], 'time-limit', 1, 86_400)),
    log: (line) => process.stderr.write(`${line}\n`)
  }
  if (values['silent-ms'] !== undefined) options.silentMs = integer(values['silent-ms'], 'silent-ms', 100, 600_000)
  if (values.only !== undefined) options.only = values.only.split(',').map((i) => integer(i, 'only', 0, 10_000_000))
  if (values.root !== undefined) options.root = resolve(values.root)
  return { options, json: values.json }
}

async function main (argv: string[]): Promise<number> {
  let parsed: ReturnType<typeof parseFuzzArgs>
  try {
    parsed = parseFuzzArgs(argv)
  } catch (err) {
    const message = (err as Error).message
    process.stderr.write(message === '' ? USAGE : `fuzz: ${message}\n${USAGE}`)
    return message === '' ? 0 : 2
  }
  const report = await runCampaign(parsed.options)
  process.stdout.write(formatReport(report))
  if (parsed.json !== undefined) writeFileSync(parsed.json, `${JSON.stringify(report, null, 2)}\n`)
  return report.ok ? 0 : 1
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  // Ctrl-C exits through process.exit, whose 'exit' hook stops the server (startServer).
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => process.exit(130))
  main(process.argv.slice(2)).then((code) => { process.exitCode = code }, (err: unknown) => {
    process.stderr.write(`fuzz: ${(err as Error).stack ?? String(err)}\n`)
    process.exitCode = 2
  })
}
