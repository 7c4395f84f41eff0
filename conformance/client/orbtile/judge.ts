import { judgedRun, judgedSummaries, writeJudgedReport, type JudgedVia } from '../core/judged.js'
import type { CheckSummary, ServerFinding } from '../core/journal.js'
import type { OrbtileTap } from '../../../src/orbtile-mock/index.js'
import { CHECKS } from './checks/index.js'
import { stalls } from '../core/stall.js'
import { Observer } from './observer.js'

export type { JudgedVia }

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

const FAKE: JudgedVia = { command: 'orbtest up --judge', receiver: 'the fake' }

export function startJudge (file: string, token: () => string, via: JudgedVia = FAKE): Judge {
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
  const run = judgedRun('orbtile', 'Orbtile Adapter Protocol v1.2', via, JUDGED)
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
    // The live verdicts and the report's are one function of the same findings: they agree at every moment.
    state: () => ({ checks: judgedSummaries(run, obs().peek()), requests, since: run.since }),
    finish: (server) => {
      release()
      const o = obs()
      const judged = { findings: o.findings(o.now()), journal: o.journal.entries(), dropped: o.journal.dropped }
      return { passed: writeJudgedReport(file, run, judged, server), requests }
    }
  }
}
