import { violationsSoFar, type ClientCheck } from '../client/check.js'
import type { Actor, CheckFinding, JournalAction, JournalEntry, JournalExchange, Millis } from '../client/journal.js'
import { JournalRecorder, reportedFindings, Secrets } from '../client/recorder.js'
import type { TapExchange } from '../../src/orb-mock/index.js'
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
  readonly checks: Array<ClientCheck<OrbModel>>
  #lines = 0

  constructor (token: string, channels: ReadonlyMap<string, ChannelInfo>, only?: readonly string[]) {
    this.model = new OrbModel(token, channels, Date.now() - this.journal.now())
    this.secrets.add(token, 'app token')
    const selected = only === undefined ? ORB_CLIENT_CHECKS : ORB_CLIENT_CHECKS.filter((c) => only.includes(c.id))
    this.checks = selected.map((c) => c.create())
  }

  now (): Millis {
    return this.journal.now()
  }

  exchange (x: TapExchange): JournalExchange {
    const end = x.sentAt ?? this.now()
    return this.#feed(this.journal.add<JournalExchange>({
      kind: 'exchange',
      at: Math.min(x.startedAt ?? end, end),
      end,
      connection: x.connection,
      method: x.method,
      target: x.target,
      httpVersion: x.httpVersion,
      headers: Object.fromEntries(
        Object.entries(x.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : String(v)])
      ),
      body: x.body === undefined ? undefined : x.bodyText ?? x.body.toString('utf8'),
      bodyBytes: x.body?.length ?? x.contentLength,
      status: x.status,
      replyHeaders: x.replyHeaders,
      reply: x.reply,
      wire: x.notes.length === 0 ? undefined : x.notes
    }))
  }

  malformed (connection: number, reason: string, bytes: Buffer | undefined): void {
    const shown = bytes === undefined ? '' : JSON.stringify(bytes.subarray(0, 120).toString('latin1')).slice(1, -1)
    this.#feed(this.journal.add({ kind: 'malformed', at: this.now(), connection, reason, bytes: shown }))
  }

  action (actor: Actor, name: string, text: string, data?: Record<string, unknown>, at = this.now()): JournalAction {
    if (typeof data?.token === 'string') this.secrets.add(data.token, 'app token')
    const entry = { kind: 'action' as const, at, actor, name, text, ...(data === undefined ? {} : { data }) }
    return this.#feed(this.journal.add<JournalAction>(entry))
  }

  output (stream: 'stdout' | 'stderr', line: string): void {
    if (++this.#lines <= OUTPUT_LINES) this.journal.add({ kind: 'output', at: this.now(), stream, line })
  }

  findings (end: Millis): CheckFinding[] {
    for (const c of this.checks) c.finish(this.model, end)
    return reportedFindings(this.checks.map((c) => c.finding()), this.journal, this.secrets)
  }

  #feed<E extends JournalEntry> (entry: E): E {
    this.model.observe(entry)
    const before = violationsSoFar()
    for (const c of this.checks) c.observe(entry, this.model)
    if (violationsSoFar() > before) this.journal.pin(entry.seq)
    return entry
  }
}
