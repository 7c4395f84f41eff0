// The raw lane's model: its scenarios (one fresh connection each, bytes written as the scenario says: slowly, in
// pieces, cut off, pipelined, broken), the checks they make, and how fast-check draws one. raw-run.ts runs them.
import fc from 'fast-check'
import type { Draft } from './draft.js'
import type { RunState } from './request.js'
import type { ServerName, Target } from './targets.js'
import type { WireResponse } from './wire.js'

/** The raw scenarios. */
export const RAW_SCENARIOS = [
  'malformed-head', 'header-overflow', 'bad-chunk', 'bad-coding', 'left-mid-body', 'slow-head', 'over-limit',
  'pipelined', 'expect-continue', 'duplicate-host', 'absolute-form', 'long-poll-cut', 'idle', 'http10',
  'ignored-upgrade'
] as const

/** One raw scenario. */
export type RawScenario = typeof RAW_SCENARIOS[number]

/** How often each scenario is drawn: a 413 lost to a reset shows only now and then, so over-limit comes often. */
const WEIGHTS: Partial<Record<RawScenario, number>> = { 'over-limit': 4, pipelined: 2, idle: 1 }

/** What each raw check requires; a report prints these words. */
export const RAW_CHECKS: Readonly<Record<string, string>> = {
  'parse-error-answered': 'bytes that are not HTTP/1.1 get an answer',
  'framing-error-answered': 'a framing error in a body (bad chunk size, Transfer-Encoding gzip or identity) gets a 4xx',
  'head-error-without-body': 'the answer to a malformed HEAD carries no body',
  'left-mid-body-closed': 'a client that stops mid-body and half-closes has its connection closed by the server',
  'over-limit-413': 'a body over the limit gets 413 (after the earlier pipeline steps), and the client reads it',
  'expect-100-continue': 'Expect: 100-continue gets 100 Continue or a final answer within the continue timeout',
  'duplicate-host-400': 'two Host headers get 400 (RFC 9112 §3.2)',
  'absolute-form-refused': 'an absolute-form target naming another host is refused by the servers that check Host'
}

/** A raw scenario as fast-check draws it. */
export interface RawPlan {
  scenario: RawScenario
  server: ServerName
  variant: number
  pick: number
  /** Requests for the scenarios that send whole ones (pipelined, slow, continue, duplicate Host, …). */
  drafts: Draft[]
}

/** Any raw scenario against one of `servers`; `drafts` gives the requests a server gets, `bodied` those with a body. */
export function rawArbitrary (servers: readonly ServerName[], drafts: (server: ServerName) => fc.Arbitrary<Draft>,
  bodied: (server: ServerName) => fc.Arbitrary<Draft>): fc.Arbitrary<RawPlan> {
  const scenarios = fc.oneof(...RAW_SCENARIOS.map((name) => ({
    weight: WEIGHTS[name] ?? 2,
    arbitrary: fc.constant(name)
  })))
  return fc.tuple(fc.constantFrom(...servers), scenarios).chain(([server, scenario]) =>
    fc.record({
      scenario: fc.constant(scenario),
      server: fc.constant(server),
      variant: fc.nat({ max: 1_000_000 }),
      pick: fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true }),
      drafts: scenario === 'pipelined'
        ? fc.array(drafts(server), { minLength: 2, maxLength: 5 })
        : bodied(server).map((draft) => [draft])
    }))
}

/** What a raw scenario needs of the run. */
export interface RawContext {
  targets: Record<ServerName, Target>
  state: RunState
  silentMs: number
  continueMs: number
  /** How long, in real ms, a long poll may be held for `holdMs` of virtual time. */
  realHoldMs: (holdMs: number) => number
}

/** What a raw scenario saw. */
export interface RawOutcome {
  responses: WireResponse[]
  /** Raw checks that failed, with what was seen. */
  failures: Array<{ check: string, detail: string }>
  /** Well-formed requests that got no answer in time. */
  drops: string[]
  /** Why the bytes that came back were not responses, if they were not. */
  malformed: string | undefined
  /** The client left on purpose before any answer could come (a cut-off poll, an idle connection, …). */
  left: boolean
}
