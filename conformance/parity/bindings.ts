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
 * The Orb's message ids and event cursors are integers. A server makes an id in a member `id` or `…_id`, a cursor in
 * `next` or `cursor`; the two are bound apart (a cursor and an id may be the same number and stand for different
 * things), and others (a chain's id, a count) not at all.
 */
const NUMBER_KINDS = { id: /^id$|_id$/i, cursor: /^(next|cursor)$/i } as const
type NumberKind = keyof typeof NUMBER_KINDS

/**
 * Where a client carries such a number back: an id as a whole path segment (`/messages/{id}`), in `before` or a
 * member named for an id (`reply_to`, `…_id`); a cursor in `after`. Only there is a bound number put back, so that a
 * limit or a wait that happens to equal one is left as it was. Each pattern's first group is the text before the
 * number, its second the number.
 */
const REFERS: Record<NumberKind, { target: RegExp, body: RegExp }> = {
  id: {
    target: /(\/|[?&](?:before|[a-z_]*_id|id)=)(\d+)(?=$|[/?&#])/g,
    body: /("(?:reply_to|before|[a-z_]*_id|id)"\s*:\s*)(-?\d+)(?=\s*[,}\]])/g
  },
  cursor: {
    target: /([?&]after=)(\d+)(?=$|[&#])/g,
    body: /("after"\s*:\s*)(\d+)(?=\s*[,}\]])/g
  }
}

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
  /** Integers the recorded server made (ids, cursors), by kind, and their counterparts; those the replay lacked. */
  readonly #numbers: Record<NumberKind, Map<number, number>> = { id: new Map(), cursor: new Map() }
  readonly #missedNumbers: Record<NumberKind, Set<number>> = { id: new Set(), cursor: new Set() }
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
    const kind = (Object.keys(NUMBER_KINDS) as NumberKind[]).find((k) => NUMBER_KINDS[k].test(member))
    if (kind === undefined || !Number.isInteger(recorded) || recorded === replayed) return
    if (typeof replayed === 'number') this.#numbers[kind].set(recorded, replayed)
    else this.#missedNumbers[kind].add(recorded)
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
    for (const kind of Object.keys(REFERS) as NumberKind[]) {
      for (const m of [...target.matchAll(REFERS[kind].target), ...body.matchAll(REFERS[kind].body)]) {
        if (this.#missedNumbers[kind].has(Number(m[2]))) found.add(m[2]!)
      }
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
    return this.#putNumbers(strings, 'target')
  }

  /** Each bound number where a client refers to one of its kind, in a target or a body. */
  #putNumbers (text: string, where: 'target' | 'body'): string {
    let out = text
    for (const kind of Object.keys(REFERS) as NumberKind[]) {
      const bound = this.#numbers[kind]
      if (bound.size === 0) continue
      out = out.replace(REFERS[kind][where], (m, before: string, n: string) => {
        const put = bound.get(Number(n))
        return put === undefined ? m : `${before}${put}`
      })
    }
    return out
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
    return this.#putNumbers(strings, 'body')
  }

  #isPlaceholder (v: string): boolean {
    this.#placeholder.lastIndex = 0
    return this.#placeholder.test(v) && v.replace(this.#placeholder, '') === ''
  }
}
