import type { TapExchange } from '../../../src/shared/tap.js'
import type { CheckFinding, JournalEntry, JournalExchange, JournalMalformed, Millis } from './journal.js'

/** Bodies and replies kept in a report are cut to this many characters (the checks see them whole). */
export const BODY_LIMIT = 4096

type Unnumbered<E> = E extends JournalEntry ? Omit<E, 'seq'> : never

/**
 * The secrets of a run (the discovery token, each adapter token) and the label each is shown as: nothing a report
 * keeps (journal, violations, output lines) holds a token, only `<adapter token 1>`.
 */
export class Secrets {
  readonly #labels = new Map<string, string>()

  /** Learns a secret; the first time, under `<what N>`. Returns its label. */
  add (value: string, what: string): string {
    let label = this.#labels.get(value)
    if (label === undefined && value.length >= 8) {
      const n = [...this.#labels.values()].filter((l) => l.startsWith(`<${what} `)).length + 1
      label = `<${what} ${n}>`
      this.#labels.set(value, label)
    }
    return label ?? value
  }

  redact (text: string): string {
    let out = text
    for (const [value, label] of this.#labels) if (out.includes(value)) out = out.split(value).join(label)
    return out
  }
}

/**
 * The journal as it is written: numbers entries and, when bounded (a long `--judge` run), keeps only the first
 * `first` entries (how the run began), the last `keep`, and those pinned as evidence. What it gives out for
 * reports has every secret replaced and bodies cut.
 */
export class JournalRecorder {
  readonly #start: number
  readonly #keep: number
  readonly #first: number
  readonly #secrets: Secrets
  readonly #opening: JournalEntry[] = []
  #entries: JournalEntry[] = []
  readonly #pinned = new Map<number, JournalEntry>()
  #next = 0

  constructor (secrets: Secrets, keep = Infinity, first = 0) {
    this.#secrets = secrets
    this.#keep = keep
    this.#first = first
    this.#start = performance.now()
  }

  /** The journal's 0, in `performance.now()` milliseconds. */
  get origin (): number {
    return this.#start
  }

  /** Milliseconds since the journal began. */
  now (): Millis {
    return Math.round((performance.now() - this.#start) * 10) / 10
  }

  /**
   * Numbers an entry and keeps a redacted, cut copy. Returns the whole entry with its number: what the checks
   * see, and it must not be kept by them beyond what a violation needs.
   */
  add<E extends JournalEntry> (entry: Unnumbered<E>): E {
    // The entry is the caller's own, made for the journal: numbered in place rather than copied.
    const numbered = entry as unknown as E
    numbered.seq = this.#next++
    // Kept as they came; secrets are replaced (and bodies cut) only when entries are read for a report.
    if (this.#opening.length < this.#first) this.#opening.push(numbered)
    this.#entries.push(numbered)
    if (this.#entries.length > this.#keep * 2) {
      const cut = this.#entries.length - this.#keep
      this.#entries = this.#entries.slice(cut)
    }
    return numbered
  }

  /** Keeps an entry for good: a violation cites it, or it is one of the rare events a timeline must show. */
  pin (seq: number): void {
    if (this.#pinned.has(seq) || seq < this.#opening.length) return
    const entry = this.#entries.find((e) => e.seq === seq)
    if (entry !== undefined) this.#pinned.set(seq, entry)
  }

  /** The entries kept, in order (the pinned ones and the last ones), secrets replaced, bodies cut. */
  entries (): JournalEntry[] {
    return this.#kept().map((e) => this.#redacted(e))
  }

  #kept (): JournalEntry[] {
    const tail = this.#entries.length > this.#keep ? this.#entries.slice(-this.#keep) : this.#entries
    const first = tail[0]?.seq ?? Infinity
    const earlier = new Map<number, JournalEntry>()
    for (const e of [...this.#opening, ...this.#pinned.values()]) if (e.seq < first) earlier.set(e.seq, e)
    return [...[...earlier.values()].sort((a, b) => a.seq - b.seq), ...tail]
  }

  /** Entries left out to bound memory. */
  get dropped (): number {
    return Math.max(0, this.#next - this.#kept().length)
  }

  #redacted (entry: JournalEntry): JournalEntry {
    const r = (text: string): string => this.#secrets.redact(text)
    const cut = (text: string): string => text.length > BODY_LIMIT
      ? `${text.slice(0, BODY_LIMIT)}… (${text.length - BODY_LIMIT} more characters)`
      : text
    switch (entry.kind) {
      case 'exchange': {
        const headers: Record<string, string> = {}
        for (const [k, v] of Object.entries(entry.headers)) headers[k] = r(v)
        return {
          ...entry,
          target: r(entry.target),
          headers,
          ...(entry.body === undefined ? {} : { body: cut(r(entry.body)) }),
          reply: cut(r(entry.reply))
        }
      }
      case 'output':
        return { ...entry, line: cut(r(entry.line)) }
      case 'malformed':
        return { ...entry, bytes: r(entry.bytes) }
      case 'action':
        return {
          ...entry,
          text: r(entry.text),
          ...(entry.data === undefined ? {} : { data: redactData(entry.data, r) })
        }
    }
  }
}

/** An action's data with every secret replaced (a new token travels in it). */
function redactData (data: Record<string, unknown>, redact: (text: string) => string): Record<string, unknown> {
  return JSON.parse(redact(JSON.stringify(data))) as Record<string, unknown>
}

/** A scenario's findings for its report: the entries they cite kept in the journal, every secret in them replaced. */
export function reportedFindings (
  findings: readonly CheckFinding[],
  journal: JournalRecorder,
  secrets: Secrets
): CheckFinding[] {
  for (const f of findings) for (const v of f.violations) if (v.seq !== undefined) journal.pin(v.seq)
  return findings.map((f) => ({
    ...f,
    violations: f.violations.map((v) => ({
      ...v,
      message: secrets.redact(v.message),
      actual: secrets.redact(v.actual),
      expected: secrets.redact(v.expected)
    }))
  }))
}

/**
 * A finished exchange as a journal entry, for either client suite's observer. `end` is when its reply was handed to
 * the socket (OTC-17); `at`, the head's arrival, never after it.
 */
export function exchangeEntry (x: TapExchange, end: Millis): Omit<JournalExchange, 'seq'> {
  // Node joins every repeated header but Set-Cookie, which no client here sends: the parser's own object will do.
  let headers = x.headers as Record<string, string>
  if (x.headers['set-cookie'] !== undefined) {
    headers = {}
    for (const [name, value] of Object.entries(x.headers)) {
      if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value
    }
  }
  return {
    kind: 'exchange',
    at: Math.min(x.startedAt ?? end, end),
    end,
    connection: x.connection,
    method: x.method,
    target: x.target,
    httpVersion: x.httpVersion,
    headers,
    body: x.body === undefined ? undefined : x.bodyText ?? x.body.toString('utf8'),
    bodyBytes: x.body?.length ?? x.contentLength,
    status: x.status,
    replyHeaders: x.replyHeaders,
    reply: x.reply,
    wire: x.notes.length === 0 ? undefined : x.notes
  }
}

/** Bytes that were not HTTP as a journal entry: the first 120 of them, shown as a JSON string's inside. */
export function malformedEntry (at: Millis, connection: number, reason: string, bytes: Buffer | undefined):
Omit<JournalMalformed, 'seq'> {
  const shown = bytes === undefined ? '' : JSON.stringify(bytes.subarray(0, 120).toString('latin1')).slice(1, -1)
  return { kind: 'malformed', at, connection, reason, bytes: shown }
}
