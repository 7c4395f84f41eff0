import { ORB_A14_MEMBER_WAIT_MS, ORB_PROSE_LIMITS } from '../spec/orb.js'
import { orbErrors } from './errors.js'
import type { OrbStore } from './store.js'

/** ORB-052: the kinds of event. */
export type EventType = 'message.mention' | 'application_command' | 'app.test'

/** ORB-066..072: a typed command and what became of it, as the member saw it. */
export interface Interaction {
  event: string
  app: string
  server: string
  channel: string
  member: string
  command: { id: string, name: string, options: Record<string, string> }
  invokedAt: number
  /** ORB-A14: invoked_at + 6 s; an answer at or after it is too late (410). */
  deadline: number
  answer: { content: string, via: 'respond' | 'inline', at: number } | null
}

/**
 * The interactions typed commands open (ORB-066..072, ORB-A13, ORB-A14), and every event's app and type, so that
 * `/respond` tells an unknown event (404) from one that is no command (400). Both are kept as long as events are
 * retained (a day, ORB-049); a reset clears them.
 */
export class Interactions {
  readonly #store: OrbStore
  /** Every event made within the retention, by id, with its app and type; in creation order. */
  #known = new Map<string, { app: string, type: EventType, at: number }>()
  /** The interactions by event id, in creation order. */
  #open = new Map<string, Interaction>()

  constructor (store: OrbStore) {
    this.#store = store
    store.onReset(() => {
      this.#known = new Map()
      this.#open = new Map()
    })
  }

  /** Notes an event just made (Events.publish), first forgetting those past the retention. */
  noteEvent (id: string, app: string, type: EventType, at: number): void {
    this.#forget()
    this.#known.set(id, { app, type, at })
  }

  /**
   * ORB-066, ORB-A14: a member typed one of `app`'s commands now; its answer is due within 6 s. Opened before the
   * event goes out, so that an inline answer to the first delivery finds it.
   */
  open (
    event: string,
    app: string,
    where: { server: string, channel: string },
    member: string,
    command: Interaction['command']
  ): Interaction {
    const invokedAt = this.#store.clock.now()
    const interaction: Interaction = {
      event,
      app,
      ...where,
      member,
      command,
      invokedAt,
      deadline: invokedAt + ORB_A14_MEMBER_WAIT_MS,
      answer: null
    }
    this.#open.set(event, interaction)
    return interaction
  }

  /**
   * ORB-066..069, ORB-A13, ORB-A14: answers an interaction. Precedence: 404 (unknown, or another app's), 400 (not a
   * command), 409 (answered already, inline or by route), 410 (the member stopped waiting).
   */
  respond (app: string, eventId: string, content: string, via: 'respond' | 'inline'): Interaction {
    const known = this.#known.get(eventId)
    if (known === undefined || known.app !== app) throw orbErrors.notFound(`No event ${eventId} for this app`)
    if (known.type !== 'application_command') {
      throw orbErrors.bad(`${eventId} is a ${known.type} event; only application_command events can be answered`)
    }
    const interaction = this.#open.get(eventId)!
    if (interaction.answer !== null) {
      const how = interaction.answer.via === 'inline' ? 'inline, by the webhook reply' : 'by /respond'
      throw orbErrors.conflict(`${eventId} was answered already (${how})`)
    }
    const now = this.#store.clock.now()
    if (now >= interaction.deadline && !this.#store.faults.has('late-respond-accepted')) {
      const at = new Date(interaction.deadline).toISOString()
      throw orbErrors.gone(`The member stopped waiting for ${eventId} at ${at}; post a normal message instead`)
    }
    interaction.answer = { content, via, at: now }
    return interaction
  }

  /** Whether the member who typed `eventId` still waits for an answer (webhooks stop retrying once not, ORB-A11). */
  waiting (eventId: string): boolean {
    const interaction = this.#open.get(eventId)
    return interaction !== undefined && interaction.answer === null && this.#store.clock.now() < interaction.deadline
  }

  /** What the member saw of one interaction (the control server's view), if it is still kept. */
  view (eventId: string): Record<string, unknown> | undefined {
    const found = this.#open.get(eventId)
    return found === undefined ? undefined : this.#view(found)
  }

  /** Every interaction kept, oldest first, as the control server shows them. */
  list (): Array<Record<string, unknown>> {
    return [...this.#open.values()].map((i) => this.#view(i))
  }

  #view (i: Interaction): Record<string, unknown> {
    const expired = i.answer === null && this.#store.clock.now() >= i.deadline
    const command = { ...i.command, options: { ...i.command.options } }
    return { ...i, command, answer: i.answer === null ? null : { ...i.answer }, expired }
  }

  // ORB-049: both maps are in creation order, so the old entries are at the front.
  #forget (): void {
    const horizon = this.#store.clock.now() - ORB_PROSE_LIMITS.eventRetentionMs
    for (const [id, known] of this.#known) {
      if (known.at >= horizon) break
      this.#known.delete(id)
      this.#open.delete(id)
    }
  }
}
