// Journals written by hand, at the times given, for the client checks' own unit tests: each entry as the observer
// would journal it, fed to a check with the suite's model, and the check's finding read at a given end.
import { CheckRun, type CheckDef } from '../../conformance/client/core/check.js'
import type {
  Actor, CheckFinding, JournalAction, JournalEntry, JournalExchange, Millis
} from '../../conformance/client/core/journal.js'

/** What an exchange of a hand-written journal says; the rest has plain defaults. */
export interface Said {
  method?: string
  /** The target. */
  path: string
  headers?: Record<string, string>
  body?: unknown
  status?: number
  reply?: unknown
  replyHeaders?: Record<string, string>
  connection?: number
  wire?: string[]
  /** When the head arrived and when the reply went (`at + 1` by default). */
  at: Millis
  end?: Millis
}

/** Numbers entries as the recorder does, and makes each kind. */
export class Journal {
  readonly entries: JournalEntry[] = []
  readonly #headers: Record<string, string>

  /** `headers` go on every exchange (an Orbtile client's Host, Content-Type and bearer, say). */
  constructor (headers: Record<string, string> = {}) {
    this.#headers = headers
  }

  exchange (x: Said): JournalExchange {
    const body = x.body === undefined ? undefined : typeof x.body === 'string' ? x.body : JSON.stringify(x.body)
    const reply = x.reply === undefined ? '' : typeof x.reply === 'string' ? x.reply : JSON.stringify(x.reply)
    const e: JournalExchange = {
      kind: 'exchange',
      seq: this.entries.length,
      at: x.at,
      end: x.end ?? x.at + 1,
      connection: x.connection ?? 1,
      method: x.method ?? 'POST',
      target: x.path,
      httpVersion: '1.1',
      headers: { ...this.#headers, ...x.headers },
      ...(body === undefined ? {} : { body }),
      bodyBytes: body === undefined ? 0 : Buffer.byteLength(body),
      status: x.status ?? 200,
      replyHeaders: x.replyHeaders ?? {},
      reply,
      ...(x.wire === undefined ? {} : { wire: x.wire })
    }
    this.entries.push(e)
    return e
  }

  action (at: Millis, actor: Actor, name: string, data?: Record<string, unknown>): JournalAction {
    const e: JournalAction = {
      kind: 'action',
      seq: this.entries.length,
      at,
      actor,
      name,
      text: name,
      ...(data === undefined ? {} : { data })
    }
    this.entries.push(e)
    return e
  }
}

/** A model a check reads: the suite's, updated by each entry before the check sees it. */
export interface Model { observe(entry: JournalEntry): void }

/**
 * Feeds the entries to a check (the model first, as the observers do) and reads its finding at `end`. `at`, when
 * given, reads it there too, part way: the finding must be the same whether the check is asked once or twice.
 */
export function judge<M extends Model> (
  def: CheckDef<M>, model: M, entries: readonly JournalEntry[], end: Millis
): CheckFinding {
  const run = new CheckRun(def)
  for (const e of entries) {
    model.observe(e)
    run.observe(e, model)
  }
  return run.finding(model, end)
}

/** The counts of one clause of a finding: exercised, violations, inconclusive. */
export function clause (f: CheckFinding, key: string): [number, number, number] {
  const c = f.clauses[key]
  return c === undefined ? [0, 0, 0] : [c.exercised, c.violations, c.inconclusive]
}
