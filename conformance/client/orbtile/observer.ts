import { CheckRun, citedSoFar } from '../core/check.js'
import type {
  Actor, CheckFinding, JournalAction, JournalEntry, JournalExchange, JournalMalformed, Millis
} from '../core/journal.js'
import { exchangeEntry, JournalRecorder, malformedEntry, reportedFindings, Secrets } from '../core/recorder.js'
import type { TapExchange } from '../../../src/orbtile-mock/index.js'
import type { TapPart } from '../../../src/shared/tap.js'
import type { RunQueueWatch } from '../core/run-queue.js'
import { stalls } from '../core/stall.js'
import { windowMs } from '../core/windows.js'
import { CHECKS } from './checks/index.js'
import { isObject, OrbtileModel, primeView } from './model.js'

/** Entries a scenario's journal keeps besides those a violation cites: a flooding client is still reported. */
export const SCENARIO_KEEP = 5000

/** Output lines of the client journalled per run; the secret scan still reads all of its output. */
export const OUTPUT_LINES = 2000

/** What failed inside the tap, in the words of its journal note. */
const TAP_FAILURES: Record<TapPart, string> = {
  request: 'the wire\'s plan for a request failed, and the request was served with no fault',
  rewrite: 'the wire\'s rewrite of a reply failed, and the reply went as the fake made it',
  malformed: 'bytes that are not HTTP could not be journaled'
}

/**
 * Watches one fake Orbtile's wire for the checks: turns what the tap reports into journal entries (tokens learnt and
 * redacted on the way), keeps the model up to date, and feeds every check. A scenario makes one; so does
 * `orbtest up --judge`, bounded.
 */
export class Observer {
  readonly secrets = new Secrets()
  readonly journal: JournalRecorder
  readonly model: OrbtileModel
  readonly checks: Array<CheckRun<OrbtileModel>>
  #lines = 0
  #tapFailures = 0

  constructor (discoveryToken: string, options: { keep?: number, first?: number, only?: readonly string[] } = {}) {
    this.journal = new JournalRecorder(this.secrets, options.keep ?? SCENARIO_KEEP, options.first ?? 0)
    const origin = this.journal.origin
    this.model = new OrbtileModel(discoveryToken, Date.now() - this.journal.now(),
      (from, to) => stalls.within(origin + from, origin + to), (from, to) => stalls.total(origin + from, origin + to))
    this.secrets.add(discoveryToken, 'discovery token')
    const selected = options.only === undefined ? CHECKS : CHECKS.filter((c) => options.only!.includes(c.id))
    this.checks = selected.map((c) => new CheckRun(c))
  }

  now (): Millis {
    return this.journal.now()
  }

  /** The client's run-queue waits (OTC-25), once it has been started, for the excuses of requests on their way. */
  watchClient (watch: RunQueueWatch): void {
    const origin = this.journal.origin
    this.model.clientWait = (from, to) => watch.waited(origin + from, origin + to)
    this.model.clientBusy = (from, to) => watch.busy(origin + from, origin + to)
  }

  /**
   * An exchange is over; `closed` when the tap saw it end, if it is judged later. Its times are the tap's stamps by
   * this observer's clock (`now` given to the tap): the head's arrival, and the reply handed to the socket, which is
   * the exchange's `end` (OTC-17); a reply never sent ends when the tap saw the exchange close.
   */
  exchange (x: TapExchange, closed?: Millis): JournalExchange {
    if (x.method === 'PUT' && x.reply.includes('"adapterToken"')) this.#learnAdapterToken(x.reply)
    const entry = this.journal.add<JournalExchange>(exchangeEntry(x, x.sentAt ?? closed ?? this.now()))
    primeView(entry, x.parsedBody)
    return this.#feed(entry)
  }

  malformed (connection: number, reason: string, bytes: Buffer | undefined): void {
    this.#feed(this.journal.add<JournalMalformed>(malformedEntry(this.now(), connection, reason, bytes)))
  }

  /**
   * Something inside the fake's wire tap failed (WireTap.failed): the fault a wire plan asked for may not have
   * happened. Noted in the journal for good (a bounded journal keeps it) and counted in the run's last notes.
   */
  tapFailed (part: TapPart, message: string): void {
    this.#tapFailures++
    this.journal.pin(this.action('harness', 'tap-failure', `${TAP_FAILURES[part]}: ${message}`).seq)
  }

  connection (open: boolean): void {
    const c = this.model.connections
    c.open += open ? 1 : -1
    if (c.open <= c.peak) return
    c.peak = c.open
    // The journal notes the peak only where it matters (OTC-04), not every connection of a busy adapter.
    if (c.peak === windowMs('max-connections') + 1) {
      this.model.connectionsCited = this.action('harness', 'connections', `${c.peak} connections open at once`).seq
    }
  }

  action (actor: Actor, name: string, text: string, data?: Record<string, unknown>): JournalAction {
    // A new discovery token (the app regenerated it, or restarted) is a secret from here on, in every report.
    if (typeof data?.token === 'string') this.secrets.add(data.token, 'discovery token')
    return this.#feed(
      this.journal.add<JournalAction>({
        kind: 'action',
        at: this.now(),
        actor,
        name,
        text,
        ...(data === undefined ? {} : { data })
      })
    )
  }

  /** A line the client wrote; past OUTPUT_LINES of them only counted (a chatty client must not fill memory). */
  output (stream: 'stdout' | 'stderr', line: string): void {
    if (++this.#lines <= OUTPUT_LINES) this.journal.add({ kind: 'output', at: this.now(), stream, line })
  }

  /** The run is over at `end`: each check's finding, with what is still open judged then. */
  findings (end: Millis): CheckFinding[] {
    if (this.#lines > OUTPUT_LINES) {
      this.action('harness', 'output-cut', `${this.#lines - OUTPUT_LINES} more output lines were not journalled`)
    }
    if (this.#tapFailures > 0) {
      const failures = `${this.#tapFailures} failure(s) inside the wire tap: see the tap-failure notes`
      this.journal.pin(this.action('harness', 'tap-failures', failures).seq)
    }
    this.action('harness', 'connections', `at most ${this.model.connections.peak} connection(s) were open at once`)
    return reportedFindings(this.peek(end), this.journal, this.secrets)
  }

  /** The findings at `end` without ending the run: the same function the report uses (`GET /control/judge`). */
  peek (end: Millis = this.now()): CheckFinding[] {
    return this.checks.map((c) => c.finding(this.model, end))
  }

  /** Only a registration's reply carries an adapter token: a secret in every report from here on. */
  #learnAdapterToken (text: string): void {
    let reply: unknown
    try {
      reply = JSON.parse(text)
    } catch (err) {
      this.action('harness', 'token-unread', `a registration reply that is not JSON: its adapter token is not known to the redaction (${(err as Error).message})`)
      return
    }
    if (isObject(reply) && typeof reply.adapterToken === 'string') this.secrets.add(reply.adapterToken, 'adapter token')
  }

  #feed<E extends JournalEntry> (entry: E): E {
    this.model.observe(entry)
    const before = citedSoFar()
    for (const c of this.checks) c.observe(entry, this.model)
    // An entry cited by a check stays in the journal as evidence.
    if (citedSoFar() > before) this.journal.pin(entry.seq)
    return entry
  }
}
