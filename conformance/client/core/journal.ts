/**
 * The journal of one client run: every exchange the fake had with the client, and every action of the world around
 * it (the user, the app, the wire, the harness), in the order they happened. Client checks read it; the reports
 * (TAP, JUnit, JSON, the HTML timeline) show it. It knows no protocol: a client suite fills it.
 */

/** Milliseconds since the scenario (or the judged run) began, on the harness's clock. */
export type Millis = number

/** One request the fake received, with its reply. Secrets are replaced before an entry is kept (see redact). */
export interface JournalExchange {
  kind: 'exchange'
  /** Position in the journal, from 0; violations point at it. */
  seq: number
  /** When the request's head arrived, and when the reply was finished. */
  at: Millis
  end: Millis
  /** The client's connection, numbered from 1 in order of arrival. */
  connection: number
  method: string
  target: string
  /** The HTTP version the request line named (`1.1`). */
  httpVersion: string
  /** Header names in lower case; a repeated header's values joined with `, `. */
  headers: Record<string, string>
  /** The request body as text (cut to a bound; `bodyBytes` is the whole length), absent when there was none. */
  body?: string
  bodyBytes: number
  status: number
  replyHeaders: Record<string, string>
  /** The reply body as text, cut to a bound. */
  reply: string
  /** What the wire did to this exchange (`429 injected`, `reply held 600 ms`, `extra fields`), if anything. */
  wire?: string[]
}

/** Bytes the fake could not read as an HTTP request. */
export interface JournalMalformed {
  kind: 'malformed'
  seq: number
  at: Millis
  connection: number
  /** Node's parser's reason (`HPE_INVALID_METHOD`), and the first bytes, escaped. */
  reason: string
  bytes: string
}

/** Who acted. */
export type Actor = 'user' | 'app' | 'wire' | 'harness' | 'client'

/** Something that happened around the client: a user's tap, an app restart, a wire fault armed, the client's exit. */
export interface JournalAction {
  kind: 'action'
  seq: number
  at: Millis
  actor: Actor
  /** A short name (`approve`, `restart`, `reset-long-poll`, `exit`), and a line a person reads. */
  name: string
  text: string
  /** Structured detail for checks (the request id approved, the new socket path). */
  data?: Record<string, unknown>
}

/** A line the client wrote on stdout or stderr (tokens replaced), for the timeline. */
export interface JournalOutput {
  kind: 'output'
  seq: number
  at: Millis
  stream: 'stdout' | 'stderr'
  line: string
}

export type JournalEntry = JournalExchange | JournalMalformed | JournalAction | JournalOutput

/**
 * How a check's finding counts: `fail` (a MUST the journal proves broken), `non-strict` (a SHOULD, or a finding
 * that rests on a decision of orbtest's: it fails only with --strict), `inconclusive` (the situation arose and the
 * judge cannot tell; it never fails), `pass`, `not-exercised`, or `informational` (a note for the reader).
 */
export type ClientVerdict = 'pass' | 'fail' | 'non-strict' | 'inconclusive' | 'not-exercised' | 'informational'

/** One place a rule was broken: where, and what was expected there. */
export interface Violation {
  /** The clause of the rule it is about (`withdrawn` of OT-147); set by the tally. */
  clause?: string
  /** The journal entry that shows it (its `seq`), when one does. */
  seq?: number
  at?: Millis
  message: string
  expected: string
  actual: string
}

/** How often one clause's situation arose, and what the judge made of it. */
export interface ClauseCount {
  /**
   * Cases a check recorded as held (some checks record a case that arose before judging it, so a broken one can be
   * counted here as well); `violations` and `inconclusive` count the broken and the unsettled cases.
   */
  exercised: number
  violations: number
  inconclusive: number
}

/** A check's finding over one scenario (or one judged run). */
export interface CheckFinding {
  id: string
  title: string
  verdict: ClientVerdict
  /** How many times the rule's situation arose (requests checked, events handled), violations included. */
  exercised: number
  /** The first violations (bounded), the ones that decide the verdict first. */
  violations: Violation[]
  /** How many violations there were in all. */
  violationCount: number
  /** The first cases the judge could not settle, each with why. */
  inconclusive: Violation[]
  inconclusiveCount: number
  /** By clause key. */
  clauses: Record<string, ClauseCount>
  /** Why it was not exercised (and what would exercise it), what was not judged, or the informational text. */
  note?: string
}

/** One scenario of a client run, as the reports show it. */
export interface ScenarioReport {
  /** `tour:restart`, `generated:3`. */
  name: string
  /** What the scenario does, in a line or two (its schedule). */
  summary: string
  /** fast-check's seed and path for a generated scenario. */
  replay?: { seed: number, path: string }
  ms: number
  /** How the client ended: `stopped by SIGTERM`, `exited with code 1 at 1.2 s`, `killed after the grace`. */
  exit: string
  findings: CheckFinding[]
  /** The journal, whole for a client run; a judged run keeps its last entries and every entry a violation cites. */
  journal: JournalEntry[]
  /** Entries left out of `journal` to bound memory. */
  dropped: number
}

/**
 * How a rule, or one clause of it, binds a client:
 * - `MUST`: the spec requires it; a violation the journal proves fails a default run.
 * - `SHOULD`: the spec advises it; a violation is non-strict (it fails only with --strict).
 * - `decision`: it rests on a decision of orbtest's where the spec is silent (OT-A…, ORB-A…, OTC-…, OBC-…), on a
 *   window orbtest chose, or on a stand-in for what the wire cannot show; a violation is non-strict.
 * - `info`: reported for the reader; it never fails.
 */
export type Level = 'MUST' | 'SHOULD' | 'decision' | 'info'

/** One check over the whole run: the scenarios' findings folded into one verdict. */
export interface CheckSummary {
  id: string
  title: string
  level: Level
  verdict: ClientVerdict
  /** Requests or events the rule applied to, over every scenario. */
  exercised: number
  violationCount: number
  inconclusiveCount: number
  /** Each clause's counts over every scenario, by key. */
  clauses: Record<string, ClauseCount>
  /** The first violation (or, for an inconclusive verdict, the first case not settled), and where it happened. */
  reason?: string
  /** The clause the reason is about, and for a non-strict one what it rests on. */
  clause?: string
  expected?: string
  actual?: string
  where?: { scenario: string, seq?: number }
  /** The failing generated scenario `where` names, to replay with --seed and --path. */
  replay?: { seed: number, path: string }
  /** The smallest failing scenario fast-check shrank it to. */
  shrunk?: { seed: number, path: string }
  /** Why not exercised, or the informational text. */
  note?: string
  /** From --expect-failures. */
  expectedFailure?: string
}

/** A whole client run, as the reports (TAP, JUnit, JSON, HTML) show it. */
/**
 * What the server a client talked to answered that the spec does not allow (a MUST), or that breaks one of orbtest's
 * decisions: read off the traffic by `orbtest proxy`, beside the client's verdicts.
 */
export interface ServerFinding {
  id: string
  level: 'MUST' | 'decision'
  /** The request's number in the run, and what it was. */
  request: number
  what: string
  message: string
}

export interface ClientRunReport {
  /** `orbtile`. */
  suite: string
  title: string
  /** The client's command line, as given after `--`. */
  command: string[]
  seed: number
  strict: boolean
  checks: CheckSummary[]
  scenarios: ScenarioReport[]
  ms: number
  /** What the server answered that it may not (`orbtest proxy` only). */
  server?: readonly ServerFinding[]
}
