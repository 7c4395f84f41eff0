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

/** How a check's finding counts. */
export type ClientVerdict = 'pass' | 'fail' | 'non-strict' | 'not-exercised' | 'informational'

/** One place a rule was broken: where, and what was expected there. */
export interface Violation {
  /** The journal entry that shows it (its `seq`), when one does. */
  seq?: number
  at?: Millis
  message: string
  expected: string
  actual: string
}

/** A check's finding over one scenario (or one judged run). */
export interface CheckFinding {
  id: string
  title: string
  verdict: ClientVerdict
  /** How many times the rule applied (requests checked, events handled). */
  exercised: number
  /** The first violations (bounded), in order. */
  violations: Violation[]
  /** How many violations there were in all. */
  violationCount: number
  /** Why it was not exercised (and what would exercise it), or the informational text. */
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

/** How a check counts in the run's verdict. */
export type CheckLevel =
  /** A MUST of the spec ([client] or [both]): a violation fails the run. */
  | 'required'
  /** A SHOULD of the spec: a violation is a non-strict finding (it fails only with --strict). */
  | 'should'
  /** A decision of orbtest's where the spec is silent (OT-A…, OTC-…): informational unless --strict. */
  | 'decision'
  /** Reported for the reader; never fails. */
  | 'info'

/** One check over the whole run: the scenarios' findings folded into one verdict. */
export interface CheckSummary {
  id: string
  title: string
  level: CheckLevel
  verdict: ClientVerdict
  /** Requests or events the rule applied to, over every scenario. */
  exercised: number
  violationCount: number
  /** The first violation, and where it happened (a scenario's name and journal position). */
  reason?: string
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
}
