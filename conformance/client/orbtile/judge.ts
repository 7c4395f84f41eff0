import { writeFileSync } from 'node:fs'
import { extname } from 'node:path'
import { renderHtml } from '../core/html.js'
import type { CheckFinding, CheckSummary, ClientRunReport, ServerFinding } from '../core/journal.js'
import { clientJson, clientJunit, clientTapLine, clientTapSummary } from '../core/report.js'
import { clientRunPassed, summarize } from '../core/verdict.js'
import type { OrbtileTap } from '../../../src/orbtile-mock/index.js'
import { CHECKS } from './checks/index.js'
import { stalls } from '../core/stall.js'
import { Observer } from './observer.js'

/**
 * Checks that need what only a scenario knows (the client's process, its files, the user's decisions) and so are
 * left out when judging traffic alone (OTC-09).
 */
export const SCENARIO_ONLY = ['OT-008', 'OT-022', 'OT-058', 'OTC-03', 'OTC-05']

/** The checks a judged run applies. */
const JUDGED = CHECKS.filter((c) => !SCENARIO_ONLY.includes(c.id))

/**
 * Entries a judged run keeps besides those a violation cites: the first JUDGE_FIRST (how the run began) and the
 * last JUDGE_KEEP. The tail is short on purpose: every exchange it holds outlives the fake's own young garbage, and
 * a tail of 500 cost a busy fake a fifth of its throughput in collections.
 */
export const JUDGE_KEEP = 50
export const JUDGE_FIRST = 200

/** `orbtest up --judge FILE`: the client rules judged live on whatever talks to the fake. */
export interface Judge {
  /** The tap to start the fake Orbtile with. */
  tap: OrbtileTap
  /** The verdicts so far (`GET /control/judge`). */
  state(): { checks: CheckSummary[], requests: number, since: string }
  /**
   * Ends the run: writes the report (its form by FILE's extension), with what the server answered that it may not
   * when a proxy read that too, and says whether every required client rule held.
   */
  finish(server?: readonly ServerFinding[]): { passed: boolean, requests: number }
}

/** What the judged traffic passed through, as the report names it. */
export interface JudgedVia {
  /** The command, in the report's title. */
  command: string
  /** What received the requests, in its summary and its end. */
  receiver: string
}

const FAKE: JudgedVia = { command: 'orbtest up --judge', receiver: 'the fake' }

export function startJudge (file: string, token: () => string, via: JudgedVia = FAKE): Judge {
  const since = new Date().toISOString()
  const release = stalls.hold()
  let observer: Observer | undefined
  let requests = 0
  const obs = (): Observer => {
    const current = token()
    observer ??= new Observer(current, {
      keep: JUDGE_KEEP,
      first: JUDGE_FIRST,
      only: JUDGED.map((c) => c.id)
    })
    // A new discovery token (regenerated, or the app restarted through the control API) ends every lease.
    if (observer.model.discoveryToken !== current) {
      observer.secrets.add(current, 'discovery token')
      observer.action('app', 'regenerate', 'the discovery token changed: every lease ended', {
        token: current,
        leasesEnd: true
      })
    }
    return observer
  }
  // The live verdicts and the report's are one function of the same findings: they agree at every moment.
  const summaries = (findings: CheckFinding[]): CheckSummary[] =>
    summarize(JUDGED, [{ name: 'judged', findings }], { strict: false })
  const started = performance.now()
  return {
    tap: {
      // The tap stamps each exchange by the journal's clock (a head's arrival, its reply's going). An exchange is
      // judged as soon as it is over, after its reply went: judging them later in batches cost more, since every
      // exchange waiting outlived the fake's young garbage.
      now: () => (observer ?? obs()).now(),
      request: () => {
        requests++
        return undefined
      },
      exchange: (x) => { obs().exchange(x) },
      malformed: (connection, reason, bytes) => { obs().malformed(connection, reason, bytes) },
      failed: (part, message) => { obs().tapFailed(part, message) },
      connection: (_id, open) => { obs().connection(open) }
    },
    state: () => {
      return { checks: summaries(obs().peek()), requests, since }
    },
    finish: (server) => {
      release()
      const o = obs()
      const end = o.now()
      const findings = o.findings(end)
      const checks = summaries(findings)
      const report: ClientRunReport = {
        suite: 'orbtile',
        title: `Orbtile Adapter Protocol v1.2: client rules judged on live traffic (${via.command})`,
        command: [],
        seed: 0,
        strict: false,
        checks,
        scenarios: [{
          name: 'judged',
          summary: `every request ${via.receiver} received from ${since}`,
          ms: Math.round(performance.now() - started),
          exit: `${via.receiver} stopped`,
          findings,
          journal: o.journal.entries(),
          dropped: o.journal.dropped
        }],
        ms: Math.round(performance.now() - started),
        ...(server === undefined ? {} : { server })
      }
      const ext = extname(file).toLowerCase()
      const text = ext === '.html' || ext === '.htm'
        ? renderHtml(report)
        : ext === '.xml'
          ? clientJunit(report, checks)
          : ext === '.json'
            ? clientJson(report, checks, JUDGED)
            : `TAP version 14\n# ${report.title}\n1..${checks.length}\n${checks.map((c, i) => clientTapLine(c, i + 1)).join('')}${clientTapSummary(report, checks)}${serverTap(server)}`
      writeFileSync(file, text)
      return { passed: clientRunPassed(report), requests }
    }
  }
}

/** The server's findings as TAP comments, after the client's verdicts. */
function serverTap (server: readonly ServerFinding[] | undefined): string {
  if (server === undefined) return ''
  const lines = server.map((f) => `#   ${f.id} (${f.level}) ${f.what}: ${f.message}`)
  return [`# the server: ${server.length} finding(s)`, ...lines].map((line) => `${line}\n`).join('')
}
