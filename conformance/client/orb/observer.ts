import { CheckRun, citedSoFar } from '../core/check.js'
import type {
  Actor, CheckFinding, JournalAction, JournalEntry, JournalExchange, JournalMalformed, Millis
} from '../core/journal.js'
import { exchangeEntry, JournalRecorder, malformedEntry, reportedFindings, Secrets } from '../core/recorder.js'
import type { TapExchange } from '../../../src/orb-mock/index.js'
import type { TapPart } from '../../../src/shared/tap.js'
import type { RunQueueWatch } from '../core/run-queue.js'
import { stalls } from '../core/stall.js'
import { ORB_CLIENT_CHECKS } from './checks.js'
import { OrbModel, type ChannelInfo } from './model.js'

/** Entries a scenario's journal keeps besides those a violation cites. */
const KEEP = 5000
/** Output lines of the bot journalled per scenario. */
const OUTPUT_LINES = 2000

/**
 * Watches one fake Orb's wire for the bot checks: turns what the tap reports into journal entries (the app's tokens
 * redacted in every report), keeps the model up to date, and feeds every check.
 */
export class OrbObserver {
  readonly secrets = new Secrets()
  readonly journal = new JournalRecorder(this.secrets, KEEP)
  readonly model: OrbModel
  readonly checks: Array<CheckRun<OrbModel>>
  readonly #watches: RunQueueWatch[] = []
  #lines = 0

  constructor (token: string, channels: ReadonlyMap<string, ChannelInfo>, only?: readonly string[]) {
    const origin = this.journal.origin
    this.model = new OrbModel(token, channels, Date.now() - this.journal.now(),
      (from, to) => stalls.within(origin + from, origin + to), (from, to) => stalls.total(origin + from, origin + to))
    this.secrets.add(token, 'app token')
    const selected = only === undefined ? ORB_CLIENT_CHECKS : ORB_CLIENT_CHECKS.filter((c) => only.includes(c.id))
    this.checks = selected.map((c) => new CheckRun(c))
  }

  /** A process of the bot is watched for its waits for a CPU (OTC-25): the longest of any process counts. */
  watchClient (watch: RunQueueWatch): void {
    this.#watches.push(watch)
    const origin = this.journal.origin
    this.model.clientWait = (from, to) =>
      Math.max(0, ...this.#watches.map((w) => w.waited(origin + from, origin + to)))
    this.model.clientBusy = (from, to) =>
      Math.max(0, ...this.#watches.map((w) => w.busy(origin + from, origin + to)))
  }

  now (): Millis {
    return this.journal.now()
  }

  exchange (x: TapExchange): JournalExchange {
    return this.#feed(this.journal.add<JournalExchange>(exchangeEntry(x, x.sentAt ?? this.now())))
  }

  malformed (connection: number, reason: string, bytes: Buffer | undefined): void {
    this.#feed(this.journal.add<JournalMalformed>(malformedEntry(this.now(), connection, reason, bytes)))
  }

  /** Something inside the fake's wire tap failed (WireTap.failed): a fault its plan asked for may not have happened. */
  tapFailed (part: TapPart, message: string): void {
    this.journal.pin(this.action('harness', 'tap-failure', `the wire tap's ${part} failed: ${message}`).seq)
  }

  action (actor: Actor, name: string, text: string, data?: Record<string, unknown>, at = this.now()): JournalAction {
    if (typeof data?.token === 'string') this.secrets.add(data.token, 'app token')
    const entry = { kind: 'action' as const, at, actor, name, text, ...(data === undefined ? {} : { data }) }
    return this.#feed(this.journal.add<JournalAction>(entry))
  }

  output (stream: 'stdout' | 'stderr', line: string): void {
    if (++this.#lines <= OUTPUT_LINES) this.journal.add({ kind: 'output', at: this.now(), stream, line })
  }

  /** Each check's finding at `end`, with what is still open judged then. */
  findings (end: Millis): CheckFinding[] {
    for (const w of this.#watches) w.stop()
    return reportedFindings(this.peek(end), this.journal, this.secrets)
  }

  /** The findings at `end` without ending the run: the same function the report uses. */
  peek (end: Millis = this.now()): CheckFinding[] {
    return this.checks.map((c) => c.finding(this.model, end))
  }

  #feed<E extends JournalEntry> (entry: E): E {
    this.model.observe(entry)
    const before = citedSoFar()
    for (const c of this.checks) c.observe(entry, this.model)
    if (citedSoFar() > before) this.journal.pin(entry.seq)
    return entry
  }
}
