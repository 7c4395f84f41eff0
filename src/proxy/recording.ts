// A recording of what a proxy passed on: the exchanges in the order their requests came, each secret replaced by a
// placeholder before a byte is written. `orbtest parity` replays one against a fake. The file is JSON Lines: a head,
// then one exchange a line, so that a run cut short still leaves every exchange recorded so far.
import { randomBytes } from 'node:crypto'
import { closeSync, openSync, readFileSync, writeSync } from 'node:fs'
import type { TapExchange } from '../shared/tap.js'
import { UsageError } from '../shared/usage-error.js'

export type RecordedApi = 'orbtile' | 'orb'

export const RECORDING_VERSION = 1

export interface RecordingHead {
  orbtest: 'recording'
  version: typeof RECORDING_VERSION
  api: RecordedApi
  /** What every placeholder of this recording starts with (`orbtest-secret-3f9a2c-`), a number after it. */
  placeholders: string
  /** The placeholder that stands for the app's own credential (Orbtile's discovery token, an Orb app's token). */
  credential: string
  /** When the recording started (ISO 8601), for the reader. */
  started: string
}

export interface RecordedExchange {
  /** The request's number through the proxy, from 1. */
  n: number
  connection: number
  /** When the request's head came and when its reply went, in ms from the recording's start. */
  at: number
  end: number
  method: string
  target: string
  headers: Record<string, string | string[]>
  /** The request body as text, or as base64 when it is not UTF-8. */
  body?: string
  bodyBase64?: string
  status: number
  replyHeaders: Record<string, string>
  reply: string
  /** The reply went whole; false when the connection was cut first. */
  finished: boolean
}

/** A line that names another placeholder as the app's credential, from the point in the recording it was written. */
interface CredentialLine {
  orbtest: 'credential'
  placeholder: string
}

export interface Recording {
  head: RecordingHead
  /** Every placeholder that stands for the app's credential: the head's, then each new one. */
  credentials: string[]
  exchanges: RecordedExchange[]
}

/** Secrets shorter than this are not sought in the text: a short value would replace words that are not secrets. */
const SHORTEST_SECRET = 8

/** JSON members whose string value is a secret, wherever they sit: tokens, proofs, signatures, keys. */
const SECRET_MEMBER = /token|secret|proof|signature|password|passphrase|^key$/i

/**
 * A member named for a secret with a string value, in a text that is not whole JSON (a reply cut short); the value
 * runs to the text's end when the cut came inside it.
 */
const SECRET_NAME = '[^"\\\\]*(?:token|secret|proof|signature|password|passphrase)[^"\\\\]*|key'
const SECRET_MEMBER_TEXT = new RegExp(`"(${SECRET_NAME})"\\s*:\\s*"((?:[^"\\\\]|\\\\.)*)"?`, 'gi')

/** Headers that carry a secret, in a request or a reply: what of their value is the secret. */
const SECRET_HEADERS: Record<string, (value: string) => string> = {
  authorization: (v) => v.replace(/^\s*(Bearer|Bot|Basic)\s+/i, ''),
  'x-orbtile-adapter-token': (v) => v,
  'x-orb-signature': (v) => v,
  cookie: (v) => v,
  'set-cookie': (v) => v.split(';', 1)[0]!.replace(/^[^=]*=/, '')
}

/**
 * The placeholders of a recording: its prefix (plain letters, digits and dashes, so that it fits a header, a path and
 * a JSON string; with a random part, so that no text a client sent reads as one), then a number.
 */
export function placeholderPattern (prefix: string): RegExp {
  return new RegExp(`${prefix.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\d+(?!\\d)`, 'g')
}

/**
 * Every secret seen so far, each with its placeholder (`orbtest-secret-1`, …), numbered in the order first seen, so
 * that one value always reads as one placeholder and a replay can tell which value to put back where.
 */
export class Redactor {
  readonly #placeholders = new Map<string, string>()
  /** `orbtest-secret-3f9a2c-`: what each placeholder starts with. */
  readonly prefix = `orbtest-secret-${randomBytes(3).toString('hex')}-`

  /** The placeholder of a secret, made the first time the value is seen. */
  placeholder (secret: string): string {
    let p = this.#placeholders.get(secret)
    if (p === undefined) {
      p = `${this.prefix}${this.#placeholders.size + 1}`
      this.#placeholders.set(secret, p)
    }
    return p
  }

  /**
   * Learns the secrets an exchange carries: in the headers that hold one (the request's and the reply's), in JSON
   * members named for one (found in a text that is not whole JSON too: a reply cut short).
   */
  learn (x: TapExchange, requestText: string | undefined): void {
    for (const headers of [x.headers, x.replyHeaders]) {
      for (const [name, value] of Object.entries(headers)) {
        const secretOf = SECRET_HEADERS[name.toLowerCase()]
        if (secretOf === undefined || value === undefined) continue
        for (const v of Array.isArray(value) ? value : [value]) this.#learnValue(secretOf(v))
      }
    }
    for (const text of [requestText, x.reply]) this.#learnJson(text)
  }

  /** A text with every known secret replaced by its placeholder (the longest first, so none hides inside another). */
  text (s: string): string {
    let out = s
    for (const [secret, p] of this.#longestFirst()) if (out.includes(secret)) out = out.split(secret).join(p)
    return out
  }

  /** Bytes with every known secret replaced, for a body that is not text. */
  bytes (b: Buffer): Buffer {
    let out = b
    for (const [secret, p] of this.#longestFirst()) {
      const needle = Buffer.from(secret)
      let at = out.indexOf(needle)
      while (at !== -1) {
        out = Buffer.concat([out.subarray(0, at), Buffer.from(p), out.subarray(at + needle.length)])
        at = out.indexOf(needle, at + p.length)
      }
    }
    return out
  }

  #longestFirst (): Array<[string, string]> {
    return [...this.#placeholders].sort((a, b) => b[0].length - a[0].length)
  }

  #learnValue (value: string): void {
    if (value.length >= SHORTEST_SECRET) this.placeholder(value)
  }

  #learnJson (text: string | undefined): void {
    if (text === undefined || text === '') return
    let parsed: unknown
    try {
      parsed = JSON.parse(text)
    } catch {
      // Not whole JSON: its members named for a secret, as text.
      for (const m of text.matchAll(SECRET_MEMBER_TEXT)) this.#learnValue(jsonString(m[2]!))
      return
    }
    this.#walk(parsed)
  }

  #walk (value: unknown): void {
    if (Array.isArray(value)) {
      for (const v of value) this.#walk(v)
    } else if (value !== null && typeof value === 'object') {
      for (const [k, v] of Object.entries(value)) {
        if (typeof v === 'string' && SECRET_MEMBER.test(k)) this.#learnValue(v)
        else this.#walk(v)
      }
    }
  }
}

/** A JSON string's value from its text between the quotes (the text itself when it does not read). */
function jsonString (inner: string): string {
  try {
    return JSON.parse(`"${inner}"`) as string
  } catch {
    return inner
  }
}

/** Writes a recording as the proxy runs: the head at once, then each exchange as it ends, redacted. */
export class Recorder {
  readonly #fd: number
  readonly #redactor = new Redactor()
  readonly #t0: number

  /** `credential` is the app's own secret, known before any traffic; `t0` is the proxy's clock at the start. */
  constructor (path: string, api: RecordedApi, credential: string, t0: number) {
    this.#fd = openSync(path, 'w', 0o600)
    this.#t0 = t0
    const head: RecordingHead = {
      orbtest: 'recording',
      version: RECORDING_VERSION,
      api,
      placeholders: this.#redactor.prefix,
      credential: this.#redactor.placeholder(credential),
      started: new Date().toISOString()
    }
    this.#line(head)
  }

  /**
   * The app's credential changed (a new token in its discovery file): the new one gets a placeholder of its own, and
   * a line says it is a credential too, so that a replay puts the fake's own token in its place as well.
   */
  credential (value: string): void {
    const line: CredentialLine = { orbtest: 'credential', placeholder: this.#redactor.placeholder(value) }
    this.#line(line)
  }

  exchange (x: TapExchange): void {
    const body = x.body ?? Buffer.alloc(0)
    const bodyText = body.toString('utf8')
    const isText = Buffer.from(bodyText, 'utf8').equals(body)
    this.#redactor.learn(x, isText ? bodyText : undefined)
    const r = this.#redactor
    const recorded: RecordedExchange = {
      n: x.request,
      connection: x.connection,
      at: this.#ms(x.startedAt),
      end: this.#ms(x.sentAt ?? x.startedAt),
      method: x.method,
      target: r.text(x.target),
      headers: redactHeaders(x.headers, r),
      ...bodyOf(body, isText ? bodyText : undefined, r),
      status: x.status,
      replyHeaders: Object.fromEntries(Object.entries(x.replyHeaders).map(([k, v]) => [k, r.text(v)])),
      reply: r.text(x.reply),
      finished: x.finished
    }
    this.#line(recorded)
  }

  close (): void {
    closeSync(this.#fd)
  }

  #ms (t: number | undefined): number {
    return t === undefined ? 0 : Math.round((t - this.#t0) * 10) / 10
  }

  #line (value: unknown): void {
    writeSync(this.#fd, `${JSON.stringify(value)}\n`)
  }
}

/** A request body as the recording keeps it: none, its text, or its bytes in base64; redacted either way. */
function bodyOf (body: Buffer, text: string | undefined, r: Redactor): Pick<RecordedExchange, 'body' | 'bodyBase64'> {
  if (body.length === 0) return {}
  return text !== undefined ? { body: r.text(text) } : { bodyBase64: r.bytes(body).toString('base64') }
}

function redactHeaders (headers: TapExchange['headers'], r: Redactor): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {}
  for (const [k, v] of Object.entries(headers)) {
    if (v !== undefined) out[k] = Array.isArray(v) ? v.map((x) => r.text(x)) : r.text(v)
  }
  return out
}

/** Reads a recording; a file that is not one is a usage mistake, told in one line. */
export function readRecording (path: string): Recording {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (err) {
    throw new UsageError(`cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`)
  }
  const lines = text.split('\n').filter((l) => l.trim() !== '')
  const parsed = lines.map((l, i) => {
    try {
      return JSON.parse(l) as unknown
    } catch {
      throw new UsageError(`${path}:${i + 1}: not a line of an orbtest recording (not JSON)`)
    }
  })
  const head = parsed[0] as Partial<RecordingHead> | undefined
  if (head?.orbtest !== 'recording' || (head.api !== 'orbtile' && head.api !== 'orb')) {
    throw new UsageError(`${path} is not an orbtest recording (orbtest proxy … --record FILE writes one)`)
  }
  if (head.version !== RECORDING_VERSION || typeof head.placeholders !== 'string') {
    throw new UsageError(`${path} is a recording of version ${String(head.version)}; this orbtest reads version ${RECORDING_VERSION}`)
  }
  const rest = parsed.slice(1) as Array<RecordedExchange | CredentialLine>
  const credentials = [head.credential!, ...rest.filter(isCredential).map((c) => c.placeholder)]
  const exchanges = rest.filter((x): x is RecordedExchange => !isCredential(x)).sort((a, b) => a.n - b.n)
  return { head: head as RecordingHead, credentials, exchanges }
}

function isCredential (x: RecordedExchange | CredentialLine): x is CredentialLine {
  return (x as Partial<CredentialLine>).orbtest === 'credential'
}
