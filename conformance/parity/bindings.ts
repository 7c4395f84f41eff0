// The values a recorded server made (its tokens, ids, cursors) and the ones the server replayed against made in
// their place, learnt reply by reply, and put back into each later request where it carried a recorded one.
import { placeholderPattern } from '../../src/proxy/recording.js'

/** Strings shorter than this are not bound: a short value (a count, a flag) would be put back where it is no id. */
const SHORTEST_BOUND = 4

/**
 * Members whose value a server makes and a client sends back: ids, tokens, cursors. Only those are bound (and a
 * placeholder, wherever it is): a value of any other member (an activity's name, a version) may differ between two
 * servers without being one the client carries back.
 */
const MADE_BY_SERVER = /(^|_)id$|[a-z]Id$|^uid$|token|cursor|^next$/i

/**
 * Where a client carries a number a server made back to it: the Orb's message ids and event cursors are integers
 * (`reply_to`, `before`, `after`, `/messages/{id}`). Only there is a bound number put back, so that a limit or a
 * wait that happens to equal an id is left as it was.
 */
const REFERS = String.raw`reply_to|before|after|[a-z_]*_id|id|[a-z]+Id`
/** A number as the value of a referring member of a JSON body: the member's text, then the number. */
const BODY_NUMBER = new RegExp(String.raw`("(?:${REFERS})"\s*:\s*)(-?\d+)(?=\s*[,}\]])`, 'g')
/** A number as a whole path segment, or as the value of a referring query parameter. */
const TARGET_NUMBER = new RegExp(String.raw`(/|[?&](?:${REFERS})=)(\d+)(?=$|[/?&#])`, 'g')

function escapeRegExp (s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}

/** One alternation of the values, the longest first, so that none is taken for a part of another. */
function alternation (values: Iterable<string>): string {
  return [...values].sort((a, b) => b.length - a.length).map(escapeRegExp).join('|')
}

/**
 * The recorded values and their counterparts here. Each text is rewritten in one pass, so that a value put back is
 * never rewritten again by another binding.
 */
export class Bindings {
  readonly #values = new Map<string, string>()
  readonly #missed = new Set<string>()
  /** Integers the recorded server made (ids, cursors) and their counterparts; those the replay did not make. */
  readonly #numbers = new Map<number, number>()
  readonly #missedNumbers = new Set<number>()
  readonly #placeholder: RegExp

  /** The credential's placeholders are bound to this server's credential from the start. */
  constructor (prefix: string, credentials: readonly string[], credential: string) {
    this.#placeholder = placeholderPattern(prefix)
    for (const c of credentials) this.#values.set(c, credential)
  }

  /** Walks the recorded reply and this server's side by side: each value the server made is bound to this one's. */
  learn (recorded: unknown, replayed: unknown, member = ''): void {
    if (typeof recorded === 'number') {
      this.#learnNumber(recorded, replayed, member)
      return
    }
    if (typeof recorded === 'string') {
      if (recorded === replayed || !this.#bindable(recorded, member)) return
      if (typeof replayed === 'string') this.#values.set(recorded, replayed)
      else this.#missed.add(recorded)
      return
    }
    if (Array.isArray(recorded)) {
      recorded.forEach((v, i) => { this.learn(v, Array.isArray(replayed) ? replayed[i] : undefined, member) })
    } else if (recorded !== null && typeof recorded === 'object') {
      const other = replayed !== null && typeof replayed === 'object' ? replayed as Record<string, unknown> : {}
      for (const [k, v] of Object.entries(recorded)) this.learn(v, other[k], k)
    }
  }

  #learnNumber (recorded: number, replayed: unknown, member: string): void {
    if (!Number.isInteger(recorded) || recorded === replayed || !MADE_BY_SERVER.test(member)) return
    if (typeof replayed === 'number') this.#numbers.set(recorded, replayed)
    else this.#missedNumbers.add(recorded)
  }

  #bindable (value: string, member: string): boolean {
    this.#placeholder.lastIndex = 0
    if (this.#placeholder.test(value)) return true
    return value.length >= SHORTEST_BOUND && MADE_BY_SERVER.test(member)
  }

  /**
   * The recorded values a request carries that have no counterpart here, each where it would have been put back:
   * a placeholder never learnt, or a whole value the replay's reply did not make.
   */
  unbound (target: string, headers: readonly string[], body: string): string[] {
    const found = new Set<string>()
    for (const text of [target, ...headers, body]) {
      for (const m of text.matchAll(this.#placeholder)) if (!this.#values.has(m[0])) found.add(m[0])
    }
    for (const v of this.#missed) {
      const whole = new RegExp(`(?<=^|[/?=&])${escapeRegExp(v)}(?=$|[/?&#])`)
      if (whole.test(target) || headers.includes(v) || body.includes(JSON.stringify(v))) found.add(v)
    }
    for (const m of [...target.matchAll(TARGET_NUMBER), ...body.matchAll(BODY_NUMBER)]) {
      if (this.#missedNumbers.has(Number(m[2]))) found.add(m[2]!)
    }
    return [...found]
  }

  /** A request target: placeholders put back, and each bound value that is a whole path segment or query value. */
  target (t: string): string {
    const plain = [...this.#values.keys()].filter((v) => !this.#isPlaceholder(v))
    const encoded = new Map(plain.map((v) => [encodeURIComponent(v), encodeURIComponent(this.#values.get(v)!)]))
    const ids = plain.length === 0 ? '' : `|(?<=^|[/?=&])(?:${alternation(new Set([...plain, ...encoded.keys()]))})(?=$|[/?&#])`
    const strings = t.replace(new RegExp(`${this.#placeholder.source}${ids}`, 'g'), (m) =>
      this.#values.get(m) ?? encoded.get(m) ?? m)
    return this.#putNumbers(strings, TARGET_NUMBER)
  }

  /** Each bound number where `pattern` finds one (its first group the text before it, its second the number). */
  #putNumbers (text: string, pattern: RegExp): string {
    if (this.#numbers.size === 0) return text
    return text.replace(pattern, (m, before: string, n: string) => {
      const put = this.#numbers.get(Number(n))
      return put === undefined ? m : `${before}${put}`
    })
  }

  /** A header's value: placeholders put back, or a value that is wholly a bound one replaced. */
  header (v: string): string {
    const whole = this.#values.get(v)
    return whole ?? v.replace(this.#placeholder, (p) => this.#values.get(p) ?? p)
  }

  /** A body: placeholders put back, bound values where they are whole JSON strings, bound numbers where they refer. */
  body (text: string): string {
    const plain = [...this.#values.keys()].filter((v) => !this.#isPlaceholder(v))
    const quoted = new Map(plain.map((v) => [JSON.stringify(v), JSON.stringify(this.#values.get(v)!)]))
    const ids = plain.length === 0 ? '' : `|${alternation(quoted.keys())}`
    const strings = text.replace(new RegExp(`${this.#placeholder.source}${ids}`, 'g'), (m) => {
      const put = this.#values.get(m)
      if (put !== undefined) return JSON.stringify(put).slice(1, -1)
      return quoted.get(m) ?? m
    })
    return this.#putNumbers(strings, BODY_NUMBER)
  }

  #isPlaceholder (v: string): boolean {
    this.#placeholder.lastIndex = 0
    return this.#placeholder.test(v) && v.replace(this.#placeholder, '') === ''
  }
}
