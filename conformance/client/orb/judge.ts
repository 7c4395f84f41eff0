// `orbtest proxy orb --judge FILE`: the bot rules judged live on whatever the bot sends through the proxy, with no
// scenario: no member talks, no delivery is forged, nothing restarts the bot.
import { judgedSummaries, writeJudgedReport, type JudgedRun, type JudgedVia } from '../core/judged.js'
import type { CheckSummary, ServerFinding } from '../core/journal.js'
import { stalls } from '../core/stall.js'
import type { WireTap } from '../../../src/shared/tap.js'
import { ORB_CLIENT_CHECKS } from './checks.js'
import { OrbObserver } from './observer.js'

/**
 * Checks that need what only a scenario knows, left out when judging traffic alone: the bot's process (whether an
 * encrypted message crashed it, ORB-036; which process acted on an event, across a restart, ORB-048; how it stops,
 * OBC-06) and the deliveries the suite makes and forges (ORB-095, ORB-096, ORB-097).
 */
export const ORB_SCENARIO_ONLY = ['ORB-036', 'ORB-048', 'OBC-06', 'ORB-095', 'ORB-096', 'ORB-097']

const JUDGED = ORB_CLIENT_CHECKS.filter((c) => !ORB_SCENARIO_ONLY.includes(c.id))

/** The bot rules judged live: the tap to read the traffic with, the verdicts so far, and the report at the end. */
export interface OrbJudge {
  tap: WireTap
  state(): { checks: CheckSummary[], requests: number, since: string }
  /** Ends the run: writes the report (its form by FILE's extension); whether every required bot rule held. */
  finish(server?: readonly ServerFinding[]): { passed: boolean, requests: number }
}

/**
 * Starts judging. `token` is the app's token (the bot's ORB_TOKEN): what ORB-002 holds the bot's Authorization to,
 * and what the report never shows. The channels are not known (the bot API lists none): a post's channel clause of
 * ORB-032 is judged only on what Orb answered.
 */
export function startOrbJudge (file: string, token: string, via: JudgedVia): OrbJudge {
  const release = stalls.hold()
  const observer = new OrbObserver(token, new Map(), JUDGED.map((c) => c.id))
  let requests = 0
  const run: JudgedRun = {
    suite: 'orb',
    api: 'Orb bot API',
    via,
    defs: JUDGED,
    since: new Date().toISOString(),
    started: performance.now()
  }
  return {
    tap: {
      now: () => observer.now(),
      request: () => {
        requests++
        return undefined
      },
      exchange: (x) => { observer.exchange(x) },
      malformed: (connection, reason, bytes) => { observer.malformed(connection, reason, bytes) },
      failed: (part, message) => { observer.tapFailed(part, message) }
    },
    state: () => ({ checks: judgedSummaries(run, observer.peek()), requests, since: run.since }),
    finish: (server) => {
      release()
      const end = observer.now()
      const judged = {
        findings: observer.findings(end),
        journal: observer.journal.entries(),
        dropped: observer.journal.dropped
      }
      return { passed: writeJudgedReport(file, run, judged, server), requests }
    }
  }
}
