// The wire between the fake Orb and the bot under test: the faults a bot-suite scenario plays on the fake's tap.
import type { TapHead, WirePlan } from '../../../src/orb-mock/index.js'
import { isObject } from './model.js'

/** The wire's faults, armed by steps and played on the tap. */
export class OrbWire {
  /** The bot's next `left` writes are answered 429 with this Retry-After. */
  throttle: { retryAfter: number, left: number } | undefined
  late: number | undefined
  cut = false
  repeat = false
  /** Replies to the bot's next writes are held this long (the first three of them). */
  slow: { ms: number, left: number } | undefined
  /** The last typed command, and the last event, the replies of GET /events carried: `repeat` gives the first. */
  #lastCommand: unknown
  #lastEvent: unknown

  plan (head: TapHead): WirePlan {
    const path = head.target.split('?', 1)[0]!
    if (this.throttle !== undefined && head.method !== 'GET' && path.startsWith('/api/bot/v1/')) {
      const { retryAfter } = this.throttle
      if (--this.throttle.left <= 0) this.throttle = undefined
      return { refuse429: retryAfter, notes: [`429 injected, Retry-After ${retryAfter}`] }
    }
    if (this.slow !== undefined && head.method !== 'GET' && path.startsWith('/api/bot/v1/')) {
      const { ms } = this.slow
      if (--this.slow.left <= 0) this.slow = undefined
      return { holdMs: ms, notes: [`reply held ${ms} ms (a slow Orb)`] }
    }
    if (path !== '/api/bot/v1/events' || head.method !== 'GET') return {}
    const plan: WirePlan = { notes: [] }
    if (this.cut && /[?&]wait=[1-9]/.test(head.target)) {
      this.cut = false
      plan.resetAfterMs = 300
      plan.notes!.push('connection reset 300 ms into the poll')
    }
    // Decided when the reply goes (a poll is held long before the command comes): held only if it carries a typed
    // command, so that the command reaches the bot after its member stopped waiting.
    plan.holdMs = (_body, reply) => {
      const late = this.late
      if (late === undefined || !reply.includes('"application_command"')) return 0
      this.late = undefined
      plan.notes!.push(`reply held ${late} ms (a typed command delivered late)`)
      return late
    }
    plan.rewrite = (reply) => {
      if (!isObject(reply) || !Array.isArray(reply.events)) return reply
      let events = reply.events
      // A typed command is what a second answer shows on: it is the one repeated, once there has been one.
      const again = this.#lastCommand ?? this.#lastEvent
      if (this.repeat && again !== undefined) {
        this.repeat = false
        events = [again, ...events]
        plan.notes!.push('an event delivered before, delivered again')
      }
      const commands = reply.events.filter((e) => isObject(e) && e.type === 'application_command')
      if (commands.length > 0) this.#lastCommand = commands.at(-1)
      if (reply.events.length > 0) this.#lastEvent = reply.events.at(-1)
      return { ...reply, events }
    }
    return plan
  }
}
