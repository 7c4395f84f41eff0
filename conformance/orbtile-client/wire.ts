import type { TapHead, WirePlan } from '../../src/orbtile-mock/index.js'
import { EXTRA_FIELDS_NOTE, PROOF_NOTE, RECURRING } from './checks/life.js'
import { isObject, routeOf, type RouteKind } from './model.js'
import type { Scenario, Step } from './scenario.js'

type WireStep = Extract<Step, { actor: 'wire' }>

/** When, in a world with unknown fields, the replies start carrying them (OTC-08). */
export const EXTRA_FIELDS_FROM_MS = 1500

/**
 * The wire between the adapter and the fake, as a scenario plays it: faults armed by steps, each spent on the next
 * request it fits, and the world's standing rewrites (unknown fields, an older app, an impostor's proof). Every
 * change it makes is noted on the exchange, so the timeline shows it.
 */
export class Wire {
  readonly #world: Pick<Scenario, 'extraFields' | 'olderApp' | 'impostor'>
  #refuse = { count: 0, retryAfter: 1 }
  #slow = { count: 0, ms: 0 }
  #resetPoll = false
  #atDeadline = 0
  #late = false
  /** Events delivered late once are late every time they come again (a poll that did not acknowledge them). */
  readonly #lateEvents = new Map<number, number>()
  #badPicks = false
  /** Replies sent so far of each kind an adapter makes again and again (OTC-24). */
  readonly #replies = new Map<string, number>()
  #rhythm = false
  /** Question events whose picks were tampered with, by sequence, and the picks they were given. */
  readonly #tampered = new Map<number, unknown[]>()

  constructor (world: Pick<Scenario, 'extraFields' | 'olderApp' | 'impostor'>) {
    this.#world = world
  }

  arm (step: WireStep): void {
    switch (step.name) {
      case '429': this.#refuse = { count: step.count, retryAfter: step.retryAfter }; break
      case 'slow': this.#slow = { count: step.count, ms: step.ms }; break
      case 'reset-poll': this.#resetPoll = true; break
      case 'poll-at-deadline': this.#atDeadline = step.count; break
      case 'late-decision': this.#late = true; break
      case 'bad-picks': this.#badPicks = true; break
    }
  }

  /** What the wire does to this request. */
  plan (head: TapHead, now: () => number): WirePlan | undefined {
    const notes: string[] = []
    const plan: WirePlan = { notes }
    const route = routeOf(head.method, head.target).route
    if (this.#refuse.count > 0) {
      this.#refuse.count--
      notes.push(`429 injected, Retry-After ${this.#refuse.retryAfter}`)
      return { ...plan, refuse429: this.#refuse.retryAfter }
    }
    if (this.#slow.count > 0) {
      this.#slow.count--
      plan.holdMs = this.#slow.ms
      notes.push(`reply held ${this.#slow.ms} ms`)
    }
    if (route === 'events' && this.#resetPoll) {
      this.#resetPoll = false
      plan.resetAfterMs = 300
      notes.push('connection reset 300 ms into the poll')
    }
    if (route === 'events' && this.#atDeadline > 0) {
      this.#atDeadline--
      const arrived = now()
      plan.holdMs = (body) => {
        const wait = isObject(body) && typeof body.waitSeconds === 'number' ? body.waitSeconds : 0
        return Math.max(0, arrived + wait * 1000 - now())
      }
      notes.push('answered only at its deadline')
    }
    plan.rewrite = (reply) => this.#rewrite(reply, route, notes, now())
    return plan
  }

  #rewrite (reply: unknown, route: string, notes: string[], now: number): unknown {
    // OTC-24: unknown fields wait for a rhythm, a second reply of one recurring kind, so that OT-008 has what the
    // adapter did before to compare what it does after with.
    const rhythm = this.#rhythm
    if (RECURRING.includes(route as RouteKind)) {
      const n = (this.#replies.get(route) ?? 0) + 1
      this.#replies.set(route, n)
      if (n >= 2) this.#rhythm = true
    }
    if (!isObject(reply)) return reply
    let out: Record<string, unknown> = reply
    if (route === 'info' && this.#world.olderApp && typeof out.apiMinor === 'number') {
      out = { ...out, apiMinor: 1 }
      notes.push('apiMinor 1 (an older app)')
    }
    if (route === 'info' && this.#world.impostor && typeof out.proof === 'string') {
      out = { ...out, proof: out.proof.replace(/^./, (c) => (c === '0' ? '1' : '0')) }
      notes.push(PROOF_NOTE)
    }
    if (route === 'events' && Array.isArray(out.events)) out = { ...out, events: this.#events(out.events, notes) }
    // From the second second on, once a kind has come twice: the adapter's requests before the first such reply are
    // what OT-008 compares with.
    if (this.#world.extraFields && now >= EXTRA_FIELDS_FROM_MS && rhythm) {
      out = withExtras(out)
      notes.push(EXTRA_FIELDS_NOTE)
    }
    return out
  }

  #events (events: unknown[], notes: string[]): unknown[] {
    return events.map((event) => {
      if (!isObject(event)) return event
      const decision = event.type === 'approval' || event.type === 'question'
      const sequence = typeof event.sequence === 'number' ? event.sequence : -1
      // Bad picks go to the first question once armed, and a late delivery to the first approval: each has the
      // decision its rule is about (OT-148, OT-147), so that under load, when a tour sees few decisions, a question
      // taken late cannot leave OT-147 unexercised. A tampered or late event is so again when it is delivered again.
      const tampered = this.#tampered.get(sequence)
      const tamper = tampered !== undefined || (this.#badPicks && event.type === 'question' &&
        Array.isArray(event.picks) && !this.#lateEvents.has(sequence))
      if (decision && !tamper && ((this.#late && event.type === 'approval') || this.#lateEvents.has(sequence))) {
        this.#late = false
        const past = this.#lateEvents.get(sequence) ?? Math.floor(Date.now() / 1000) - 1
        this.#lateEvents.set(sequence, past)
        notes.push(`event ${String(event.sequence)} delivered late: expiresAt now ${past}, in the past`)
        return { ...event, expiresAt: past }
      }
      if (tamper) {
        this.#badPicks = false
        // An index no question has (OT-146 allows 0..3, each below the option count).
        const picks = tampered ?? (event.picks as unknown[]).map((p, i) => (i === 0 ? [7] : p))
        this.#tampered.set(sequence, picks)
        notes.push(`event ${String(event.sequence)} picks tampered: ${JSON.stringify(picks)}`)
        return { ...event, picks }
      }
      return event
    })
  }
}

/** Fields no version of the spec defines, at the top and in each nested object of a reply (OT-008). */
function withExtras (reply: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...reply, orbtestExtra: { note: 'a field from a future version' } }
  for (const key of ['session', 'adapter', 'limits', 'error']) {
    const inner = out[key]
    if (isObject(inner)) out[key] = { ...inner, extra: 1 }
  }
  if (Array.isArray(out.events)) out.events = out.events.map((e) => (isObject(e) ? { ...e, extra: true } : e))
  return out
}
