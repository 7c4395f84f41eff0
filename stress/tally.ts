// What a run counts: statuses per server, and every check with its failures (a few kept as evidence, each with the
// index that replays it).
import { RAW_CHECKS } from './raw.js'
import { responseFault, SERVER_NAMES, type ServerName, type Target } from './targets.js'
import type { WireResponse } from './wire.js'

/** The checks every run makes, and what each requires. */
export const CHECKS: Readonly<Record<string, string>> = {
  'no-5xx': 'no answer is a 5xx',
  'error-shape': "every 4xx is JSON in its API's error shape (a HEAD's answer has no body)",
  'no-silent-drop': 'every well-formed request gets an answer within the silent timeout (long polls: their hold)',
  'well-formed-responses': 'every answer is well-formed HTTP/1.1',
  ...RAW_CHECKS,
  'server-alive': 'the server process is alive at the end',
  'sockets-return-to-idle': 'once the clients have left, the server holds no more sockets than when idle'
}

/** One failure of a check. */
export interface Finding {
  /** The request index (replay it with --only); -1 for a check of the whole run. */
  index: number
  server: ServerName | 'all'
  label: string
  detail: string
}

/** A check's outcome. */
export interface CheckResult {
  description: string
  failures: number
  examples: Finding[]
}

/** Counts of one server. */
export interface ServerTally {
  requests: number
  statuses: Record<string, number>
  /** Requests per label (`valid GET /info`, `raw bad-chunk`, …). */
  labels: Record<string, number>
}

// Failures kept as evidence, per check and server.
const EXAMPLES = 3

/** The counts of one run. */
export class Tally {
  requests = 0
  readonly servers: Record<ServerName, ServerTally>
  readonly checks: Record<string, CheckResult>

  /** Counts the checks `checks` names (every check of CHECKS unless told). */
  constructor (checks: Readonly<Record<string, string>> = CHECKS) {
    this.servers = Object.fromEntries(SERVER_NAMES.map((name) => [name, { requests: 0, statuses: {}, labels: {} }])) as
      Record<ServerName, ServerTally>
    this.checks = Object.fromEntries(Object.entries(checks).map(([name, description]) => [
      name, { description, failures: 0, examples: [] }
    ]))
  }

  /** One request sent. */
  sent (server: ServerName, label: string): void {
    this.requests++
    const tally = this.servers[server]
    tally.requests++
    tally.labels[label] = (tally.labels[label] ?? 0) + 1
  }

  /** A check failed. */
  fail (check: string, finding: Finding): void {
    const result = this.checks[check] ?? (this.checks[check] = { description: check, failures: 0, examples: [] })
    result.failures++
    if (result.examples.filter((e) => e.server === finding.server).length < EXAMPLES) result.examples.push(finding)
  }

  /** A status (or `none`, `1xx-only`) seen from a server. */
  status (server: ServerName, status: number | string): void {
    const statuses = this.servers[server].statuses
    statuses[String(status)] = (statuses[String(status)] ?? 0) + 1
  }

  /** An answer: its status counted, and the checks every answer must pass. */
  response (target: Target, index: number, label: string, response: WireResponse): void {
    this.status(target.name, response.status)
    const where = { index, server: target.name, label }
    if (response.status >= 500) {
      this.fail('no-5xx', { ...where, detail: `${response.status}: ${response.body.subarray(0, 160).toString('utf8')}` })
    }
    const fault = responseFault(target, response)
    if (fault !== undefined) this.fail('error-shape', { ...where, detail: `${response.status}: ${fault}` })
  }

  /** Whether every check held. */
  ok (): boolean {
    return Object.values(this.checks).every((check) => check.failures === 0)
  }
}
