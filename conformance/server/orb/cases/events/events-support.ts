import type fc from 'fast-check'
import { CaseFailure, CaseSkip } from '../../../core/case.js'
import { expectEqual } from '../../expect.js'
import type { Delivery, Hook } from '../../receiver.js'
import {
  BOT,
  controlled,
  drain,
  fail,
  globalCommands,
  invokeFull,
  keepCommands,
  mentionFull,
  syncCommands,
  webhookMode,
  type OrbContext
} from '../../orb-case.js'
import type { OrbReply, Speaker } from '../../transport.js'

// What the events cases share: the routes, the test command, and the ways a case makes events, waits for the fake
// and reads its control state. Events of the full app accumulate across the run: every case starts from the current
// end.

/**
 * GET /events (ORB-043), its operation in the spec (to check replies against), and an event's /respond route (ORB-066).
 */
export const EVENTS = `${BOT}/events`
export const EVENTS_OP = { method: 'GET', path: '/api/bot/v1/events' }
export const respondPath = (event: string): string => `${BOT}/interactions/${encodeURIComponent(event)}/respond`

/**
 * The command the interaction cases register next to the app's own (the case ends with the app's commands restored).
 */
export const PING = {
  name: 'orbtest_ping',
  description: 'orbtest conformance: answers pong',
  options: [{ name: 'text', description: 'anything', optional: true }]
}

/** Waits `ms` of real time. */
export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/** The ids of a list of events. */
export const ids = (events: any[]): string[] => events.map((e) => String(e.id))

/**
 * Runs of a property that makes events or moves time: the run's runs, at most `cap`; no shrinking (each run is costly).
 */
export function capped<T> (ctx: OrbContext, cap: number): fc.Parameters<T> {
  return ctx.fc<T>({ numRuns: Math.min(ctx.fc().numRuns ?? cap, cap), endOnFailure: true })
}

/** The full app's id (controlled runs know it). */
export const appOf = (ctx: OrbContext): string => controlled(ctx).target.full.id!

/** The developer presses "send test event" for the full app: the event id. */
export async function testEvent (ctx: OrbContext): Promise<string> {
  return (await controlled(ctx).control.testEvent(appOf(ctx))).event
}

/** The id of the event a member's post (control) made for the full app, if it made one. */
export const eventFor = (ctx: OrbContext, posted: any): string | undefined =>
  (posted.events as Array<{ id: string, app: string }>).find((e) => e.app === appOf(ctx))?.id

/** A member mentions the full app: the id of the event it made for the full app. */
export async function mention (ctx: OrbContext, text = 'ping'): Promise<{ event: string, message: any }> {
  const posted = await mentionFull(ctx, text)
  const event = eventFor(ctx, posted)
  if (event === undefined) throw new CaseFailure('a member mentioning the full app gives it a message.mention event', 'an event for the full app', posted)
  return { event, message: posted }
}

/**
 * Registers PING for the full app next to the global commands it has (on a real Orb the app's own stay usable), and
 * the case ends with the app's commands as they were (keepCommands); the registered Command. Only a member can type
 * it, so a case without control skips here at the latest, before it syncs anything (cases call controlled() first).
 */
export async function registerPing (ctx: OrbContext): Promise<any> {
  controlled(ctx)
  await keepCommands(ctx)
  const own = (await globalCommands(ctx)).filter((c) => c.name !== PING.name)
  const reply = await syncCommands(ctx, [...own, PING])
  const command = (reply.json?.commands as any[] | undefined)?.find((c) => c.name === PING.name)
  if (reply.status !== 200 || command === undefined) {
    fail('syncing the test command /orbtest_ping', '200 {"commands":[…orbtest_ping…]}', reply)
  }
  return command
}

/** A member types PING for the full app (with these options): the id of the event it made. */
export const typePing = (ctx: OrbContext, options?: Record<string, string>): Promise<string> =>
  invokeFull(ctx, PING.name, options)

/** PING registered (a target without control skips before the sync) and typed by a member: the event's id. */
export async function pingEvent (ctx: OrbContext): Promise<string> {
  await registerPing(ctx)
  return await typePing(ctx)
}

/**
 * PING registered and the full app pushed to the suite's receiver: its hook. A run without control or receiver skips
 * before the sync, having changed nothing.
 */
export async function pingHook (ctx: OrbContext): Promise<Hook> {
  hookable(ctx)
  await registerPing(ctx)
  return await hookMode(ctx)
}

/**
 * PING registered (a target without control skips before the sync), then the full app's events read to their end:
 * what `controlled` gives, and the cursor the case's new events come after.
 */
export async function pingStart (ctx: OrbContext): Promise<ReturnType<typeof controlled> & { start: number }> {
  await registerPing(ctx)
  return { ...controlled(ctx), start: (await drain(ctx)).next }
}

/** The event the full app holds with this id, read through GET /events after `start`. */
export async function fetched (ctx: OrbContext, start: number, id: string): Promise<any> {
  const { events } = await drain(ctx, start)
  const found = events.find((e) => e.id === id)
  if (found === undefined) {
    throw new CaseFailure(
      `GET /events after ${start} holds the event just made`,
      `an event with id ${id}`,
      events.map((e) => `${String(e.cursor)}:${String(e.type)}:${String(e.id)}`)
    )
  }
  return found
}

/** POST /interactions/{event}/respond as the full app (or `as`). */
export const respond = (ctx: OrbContext, event: string, body: unknown, as: Speaker = 'full'): Promise<OrbReply> =>
  ctx.client.request({ method: 'POST', path: respondPath(event), body, as })

/** Answers an interaction as the full app with `content`; fails the case (as `what`) unless that answers 200. */
export async function respondOk (ctx: OrbContext, event: string, content: string, what: string): Promise<void> {
  const reply = await respond(ctx, event, { content })
  if (reply.status !== 200) fail(what, 200, reply)
}

/** What the member saw of an interaction (the control state). */
export async function interaction (ctx: OrbContext, event: string): Promise<any> {
  const state = await controlled(ctx).control.orbState()
  const found = (state.interactions as any[] | undefined)?.find((i) => i.event === event)
  if (found === undefined) {
    throw new CaseFailure(`the control state knows the interaction ${event}`, 'an interaction', 'none')
  }
  return found
}

/** Fails the case (as `what`) unless the member saw this answer to the interaction: its content and its way. */
export async function expectAnswer (
  ctx: OrbContext,
  event: string,
  answer: { content: string, via: 'inline' | 'respond' },
  what: string
): Promise<void> {
  const seen = await interaction(ctx, event)
  expectEqual({ content: seen.answer?.content, via: seen.answer?.via }, answer, what)
}

/** The full app's held long polls (the control state). */
export async function heldPolls (ctx: OrbContext): Promise<number> {
  const state = await controlled(ctx).control.orbState()
  return Number(state.events?.[appOf(ctx)]?.polls ?? 0)
}

/** Waits (real time) until the fake holds `count` polls of the full app. */
export async function untilHeld (ctx: OrbContext, count = 1): Promise<void> {
  const deadline = Date.now() + 3000
  while ((await heldPolls(ctx)) < count) {
    if (Date.now() > deadline) {
      throw new CaseFailure(
        'GET /events?wait=… is held by the server',
        `${count} held poll(s)`,
        `${await heldPolls(ctx)}`
      )
    }
    await sleep(2)
  }
}

/** Cases that hold the target to exact times need a virtual clock (with a real one they would race it). */
export async function virtualOnly (ctx: OrbContext, why: string): Promise<void> {
  controlled(ctx)
  if (!await ctx.virtualTime()) throw new CaseSkip(`${why}: needs the target's virtual clock (orbtest's fake with --clock virtual)`)
}

/** The fake's clock now (ms). */
export const clockNow = async (ctx: OrbContext): Promise<number> =>
  Number((await controlled(ctx).control.must('GET', '/control/clock')).now)

/** A reply that must come within `ms` of real time (a poll the server should answer at once). */
export async function within<T> (promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_resolve, reject) => {
        timer = setTimeout(
          () => reject(new CaseFailure(what, `an answer within ${ms} ms of real time`, 'no answer')),
          ms
        )
      })
    ])
  } finally {
    clearTimeout(timer)
  }
}

/** The full app's delivery log records of one event (control), waiting (real time) until there are `count`. */
export async function records (ctx: OrbContext, event: string, count: number, ms = 3000): Promise<any[]> {
  const { control } = controlled(ctx)
  const deadline = Date.now() + ms
  for (;;) {
    const found = (await control.deliveries(appOf(ctx))).deliveries.filter((d) => d.event === event)
    if (found.length >= count || Date.now() > deadline) return found
    await sleep(3)
  }
}

/** Waits for the `n`th delivery (1-based) of a hook; fails if it does not come within `ms` of real time. */
export async function nth (hook: Hook, n: number, what: string, ms = 3000): Promise<Delivery> {
  const all = await hook.atLeast(n, ms)
  if (all.length < n) throw new CaseFailure(what, `delivery #${n} at the receiver`, `${all.length} deliveries`)
  return all[n - 1]!
}

/**
 * webhookMode, and when the case ends (after the endpoint is null again) any retry still scheduled is let fire, so
 * that it never reaches the hook of a later case (a case that failed half-way may leave one).
 */
export async function hookMode (ctx: OrbContext, label?: string): Promise<Hook> {
  const { control } = controlled(ctx)
  ctx.cleanup(async () => {
    const state = await control.orbState()
    if (Number(state.webhooks?.retriesScheduled ?? 0) > 0 && await ctx.virtualTime()) await ctx.elapse(2000)
  })
  return webhookMode(ctx, label)
}

/**
 * Control and the suite's webhook receiver, or a skip: cases that push to a hook check this before they write anything.
 */
export function hookable (ctx: OrbContext): void {
  controlled(ctx)
  if (ctx.client.receiver === undefined) throw new CaseSkip('the run has no webhook receiver')
}

/** A receiver answer held until `release()` (a delivery made to time out). The case releases it when it ends. */
export function held (ctx: OrbContext): { promise: Promise<void>, release: () => void } {
  let release!: () => void
  const promise = new Promise<void>((resolve) => { release = resolve })
  ctx.cleanup(() => release())
  return { promise, release }
}

/** The hook's next answer (200 with `body`), held until `release()`: a delivery made to time out. */
export function holdNext (ctx: OrbContext, hook: Hook, body: unknown): { release: () => void } {
  const hold = held(ctx)
  hook.script({ status: 200, body, until: hold.promise })
  return hold
}
