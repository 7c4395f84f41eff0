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
  /**
   * Begins the journal now (its clock's 0), with the app's token as it stands; without it, the first exchange or
   * change of the app's file begins it. A proxy calls it once the upstream's file has been read.
   */
  begin(): void
  /** The verdicts so far (`GET /control/judge`). */
  state(): { checks: CheckSummary[], requests: number, since: string }
  /**
   * The app's discovery file changed under a proxy (`orbtest proxy orbtile`): it is gone, back, on another socket,
   * or holds a new token. The journal shows it when it was seen, and the checks read it as the scenarios' own.
   */
  app(change: AppChange): void
  /**
   * Ends the run: writes the report (its form by FILE's extension), with what the server answered that it may not
   * when a proxy read that too, and says whether every required client rule held.
   */
  finish(server?: readonly ServerFinding[]): { passed: boolean, requests: number }
}

/** A change of the app's discovery file, as a proxy sees it: `token` is the file's token after the change. */
export type AppChange = { kind: 'away' } | { kind: 'back' | 'moved' | 'token', token: string }

const FAKE: JudgedVia = { command: 'orbtest up --judge', receiver: 'the fake' }

export function startJudge (file: string, token: () => string, via: JudgedVia = FAKE): Judge {
  const release = stalls.hold()
  let observer: Observer | undefined
  let requests = 0
  const made = (): Observer => {
    observer ??= new Observer(token(), { keep: JUDGE_KEEP, first: JUDGE_FIRST, only: JUDGED.map((c) => c.id) })
    return observer
  }
  const obs = (): Observer => {
    const o = made()
    const current = token()
    // A new discovery token (regenerated, or the app restarted through the control API) ends every lease. While a
    // proxy's upstream file is gone there is no token ('') to compare.
    if (current !== '' && o.model.discoveryToken !== current) {
      const ends = { token: current, leasesEnd: true }
      o.action('app', 'regenerate', 'the discovery token changed: every lease ended', ends)
    }
    return o
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
    begin: () => { made() },
    app: (change) => { appChanged(made(), change) },
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

/**
 * Journals a change of the app's file seen by a proxy, under the names the scenarios give the same events, each
 * entry kept in the report's timeline however long the run. A new token ends every lease (OT-023: a regeneration or
 * a restart), and so does a move to another socket, which only a restart makes; the app was away then, for a moment
 * at least, which excuses the adapter's silence. The proxy's own socket stays where it was, so the adapter has no new
 * socket to reach (OT-002's clause for a move is not exercised). A file that comes back with its old token may be
 * the Adapter API turned on again (OT-A03), which ends no lease; if it was a restart, the app's replies tell (a
 * registration given a new token, OT-A06).
 */
function appChanged (o: Observer, change: AppChange): void {
  const say = (name: string, text: string, data: Record<string, unknown>): void => {
    o.journal.pin(o.action('app', name, text, data).seq)
  }
  if (change.kind === 'away') {
    say('away', "the app's discovery file is gone: the app quit, or its Adapter API is off", { away: true })
    return
  }
  const renewed = change.token !== o.model.discoveryToken
  const token = renewed ? { token: change.token } : {}
  if (change.kind === 'token') {
    if (renewed) say('regenerate', 'the discovery token changed: every lease ended', { ...token, leasesEnd: true })
  } else if (change.kind === 'moved') {
    say('away', 'the app restarts', { away: true })
    say('move', 'the app is back on another socket: every lease ended', { ...token, leasesEnd: true, away: false })
  } else if (renewed) {
    say('restart', "the app's discovery file is back with a new token: every lease ended", {
      ...token, leasesEnd: true, away: false
    })
  } else {
    say('api-on', "the app's discovery file is back", { away: false })
  }
}
