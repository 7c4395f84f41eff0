import type { TapHead, WirePlan } from '../../../src/orbtile-mock/index.js'
import { EXTRA_FIELDS_NOTE, PROOF_NOTE } from './checks/life.js'
import { isObject, routeOf } from './model.js'
import type { Scenario, Step } from './scenario.js'

type WireStep = Extract<Step, { actor: 'wire' }>

/** Whether a request is pending on the adapter, as its accepted writes left it. */
export type PendingTest = (adapterId: string, requestId: string) => boolean

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
  /** Question events whose picks were tampered with, by sequence, and the picks they were given. */
  readonly #tampered = new Map<number, unknown[]>()
  /** The decision held back until the adapter withdraws its request: armed, then the event's sequence. */
  #hold: 'armed' | { sequence: number, adapterId: string, requestId: string } | 'done' | undefined
  readonly #pending: PendingTest

  constructor (world: Pick<Scenario, 'extraFields' | 'olderApp' | 'impostor'>, pending: PendingTest) {
    this.#world = world
    this.#pending = pending
  }

  arm (step: WireStep): void {
    switch (step.name) {
      case '429': this.#refuse = { count: step.count, retryAfter: step.retryAfter }; break
      case 'slow': this.#slow = { count: step.count, ms: step.ms }; break
      case 'reset-poll': this.#resetPoll = true; break
      case 'poll-at-deadline': this.#atDeadline = step.count; break
      case 'late-decision': this.#late = true; break
      case 'bad-picks': this.#badPicks = true; break
      case 'hold-decision': this.#hold ??= 'armed'; break
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
    const arrived = now()
    const deadline = (body: unknown): number => {
      const wait = isObject(body) && typeof body.waitSeconds === 'number' ? body.waitSeconds : 0
      return Math.max(0, arrived + wait * 1000 - now())
    }
    if (route === 'events' && this.#atDeadline > 0) {
      this.#atDeadline--
      plan.holdMs = deadline
      notes.push('answered only at its deadline')
    }
    const adapterId = routeOf(head.method, head.target).adapterId ?? ''
    let emptied = false
    plan.rewrite = (reply) => {
      const out = this.#rewrite(reply, route, adapterId, notes)
      emptied = isObject(reply) && Array.isArray(reply.events) && reply.events.length > 0 &&
        isObject(out) && Array.isArray(out.events) && out.events.length === 0
      return out
    }
    // A poll left with nothing once a held decision is taken out waits out its deadline, as it would have without it.
    if (route === 'events' && plan.holdMs === undefined) plan.holdMs = (body) => emptied ? deadline(body) : 0
    return plan
  }

  #rewrite (reply: unknown, route: string, adapterId: string, notes: string[]): unknown {
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
    if (route === 'events' && Array.isArray(out.events)) {
      out = { ...out, events: this.#events(this.#held(out.events, adapterId, notes), adapterId, notes) }
      // The reply says no more than the events it carries: a held event is not yet the last sequence.
      const hold = this.#hold
      if (typeof hold === 'object' && typeof out.lastSequence === 'number') {
        out.lastSequence = Math.min(out.lastSequence, hold.sequence - 1)
      }
    }
    // OTC-08: every reply, from the first, carries fields no version of the spec defines; the twin's carry none.
    if (this.#world.extraFields) {
      out = withExtras(out)
      notes.push(EXTRA_FIELDS_NOTE)
    }
    return out
  }

  /**
   * The first decision event once `hold-decision` is armed is held back, with every event after it, for as long as
   * its request is still pending on the adapter: it reaches the adapter only once the adapter has withdrawn the
   * request itself (OT-147's and OT-148's "no longer pending").
   */
  #held (events: unknown[], adapterId: string, notes: string[]): unknown[] {
    const hold = this.#hold
    if (hold === undefined || hold === 'done') return events
    if (hold === 'armed') {
      const first = events.find((e) => isObject(e) && (e.type === 'approval' || e.type === 'question') &&
        typeof e.requestId === 'string' && this.#pending(adapterId, e.requestId))
      if (!isObject(first)) return events
      this.#hold = { sequence: Number(first.sequence), adapterId, requestId: String(first.requestId) }
      return this.#held(events, adapterId, notes)
    }
    if (!this.#pending(hold.adapterId, hold.requestId)) {
      this.#hold = 'done'
      notes.push(`event ${hold.sequence} released: ${hold.requestId} is no longer pending`)
      return events
    }
    const kept = events.filter((e) => !isObject(e) || typeof e.sequence !== 'number' || e.sequence < hold.sequence)
    if (kept.length < events.length) notes.push(`event ${hold.sequence} held until ${hold.requestId} is withdrawn`)
    return kept
  }

  #events (events: unknown[], adapterId: string, notes: string[]): unknown[] {
    return events.map((event) => {
      if (!isObject(event)) return event
      const decision = event.type === 'approval' || event.type === 'question'
      const sequence = typeof event.sequence === 'number' ? event.sequence : -1
      const pending = typeof event.requestId === 'string' && this.#pending(adapterId, event.requestId)
      // Bad picks go to the first question once armed, and a late delivery to the first approval: each has the
      // decision its rule is about (OT-148, OT-147), so that under load, when a tour sees few decisions, a question
      // taken late cannot leave OT-147 unexercised. A tampered or late event is so again when it is delivered again.
      // Only to a request still pending, so that the situation the rule is about arises (not a withdrawn one).
      const tampered = this.#tampered.get(sequence)
      const tamper = tampered !== undefined || (this.#badPicks && pending && event.type === 'question' &&
        Array.isArray(event.picks) && !this.#lateEvents.has(sequence))
      const late = this.#late && pending && event.type === 'approval'
      if (decision && !tamper && (late || this.#lateEvents.has(sequence))) {
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
