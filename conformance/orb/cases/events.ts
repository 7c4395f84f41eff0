import { createHash, createHmac } from 'node:crypto'
import fc from 'fast-check'
import type { OrbFault } from '../../../src/orb-mock/faults.js'
import { orbSpec } from '../../../src/orb-mock/spec.js'
import { CaseFailure, CaseSkip, defineCase, type ConformanceCase } from '../../case.js'
import { exactStatus } from '../../strictness.js'
import { arbitraryFor } from '../../schema-arbitrary.js'
import { expectComponent, expectEqual, expectOk, expectOrbError, expectThat } from '../expect.js'
import { verifySignature, type Delivery, type Hook } from '../receiver.js'
import { BOT, controlled, drain, fail, few, globalCommands, invokeFull, keepCommands, mentionFull, post, syncCommands, webhookMode, type OrbContext } from '../support.js'
import type { OrbBotClient, OrbReply, Speaker } from '../transport.js'

// Events (ORB-043..054), interactions (ORB-066..072), webhooks (ORB-090..098) and the decisions around them (ORB-A05,
// A09..A11, A13, A14, A22). Events of the full app accumulate across the run: every case starts from the current end.

const EVENTS = `${BOT}/events`
const EVENTS_OP = { method: 'GET', path: '/api/bot/v1/events' }
const respondPath = (event: string): string => `${BOT}/interactions/${encodeURIComponent(event)}/respond`

/** The command the interaction cases register next to the app's own (the case ends with the app's commands restored). */
const PING = { name: 'orbtest_ping', description: 'orbtest conformance: answers pong', options: [{ name: 'text', description: 'anything', optional: true }] }

const HOUR = 3_600_000
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/** The spec's schema of one query parameter of GET /events (ORB-044). */
function eventsParameter (name: string): Record<string, unknown> {
  const op = orbSpec().paths['/api/bot/v1/events']!.get as { parameters: Array<{ name: string, schema: Record<string, unknown> }> }
  return op.parameters.find((p) => p.name === name)!.schema
}

/** Runs of a property that makes events or moves time: the run's runs, at most `cap`; no shrinking (each run is costly). */
function capped<T> (ctx: OrbContext, cap: number): fc.Parameters<T> {
  return ctx.fc<T>({ numRuns: Math.min(ctx.fc().numRuns ?? cap, cap), endOnFailure: true })
}

/** The full app's id (controlled runs know it). */
const appOf = (ctx: OrbContext): string => controlled(ctx).target.full.id!

/** The developer presses "send test event" for the full app: the event id. */
async function testEvent (ctx: OrbContext): Promise<string> {
  return (await controlled(ctx).control.testEvent(appOf(ctx))).event
}

/** A member mentions the full app: the id of the event it made for the full app. */
async function mention (ctx: OrbContext, text = 'ping'): Promise<{ event: string, message: any }> {
  const posted = await mentionFull(ctx, text)
  const event = (posted.events as Array<{ id: string, app: string }>).find((e) => e.app === appOf(ctx))?.id
  if (event === undefined) throw new CaseFailure('a member mentioning the full app gives it a message.mention event', 'an event for the full app', posted)
  return { event, message: posted }
}

/**
 * Registers PING for the full app next to the global commands it has (on a real Orb the app's own stay usable), and
 * the case ends with the app's commands as they were (keepCommands); the registered Command. Only a member can type
 * it, so a case without control skips here at the latest, before it syncs anything (cases call controlled() first).
 */
async function registerPing (ctx: OrbContext): Promise<any> {
  controlled(ctx)
  await keepCommands(ctx)
  const own = (await globalCommands(ctx)).filter((c) => c.name !== PING.name)
  const reply = await syncCommands(ctx, [...own, PING])
  const command = (reply.json?.commands as any[] | undefined)?.find((c) => c.name === PING.name)
  if (reply.status !== 200 || command === undefined) fail('syncing the test command /orbtest_ping', '200 {"commands":[…orbtest_ping…]}', reply)
  return command
}

/** The event the full app holds with this id, read through GET /events after `start`. */
async function fetched (ctx: OrbContext, start: number, id: string): Promise<any> {
  const { events } = await drain(ctx, start)
  const found = events.find((e) => e.id === id)
  if (found === undefined) throw new CaseFailure(`GET /events after ${start} holds the event just made`, `an event with id ${id}`, events.map((e) => `${String(e.cursor)}:${String(e.type)}:${String(e.id)}`))
  return found
}

const respond = (ctx: OrbContext, event: string, body: unknown, as: Speaker = 'full'): Promise<OrbReply> =>
  ctx.client.request({ method: 'POST', path: respondPath(event), body, as })

/** What the member saw of an interaction (the control state). */
async function interaction (ctx: OrbContext, event: string): Promise<any> {
  const state = await controlled(ctx).control.orbState()
  const found = (state.interactions as any[] | undefined)?.find((i) => i.event === event)
  if (found === undefined) throw new CaseFailure(`the control state knows the interaction ${event}`, 'an interaction', 'none')
  return found
}

/** The full app's held long polls (the control state). */
async function heldPolls (ctx: OrbContext): Promise<number> {
  const state = await controlled(ctx).control.orbState()
  return Number(state.events?.[appOf(ctx)]?.polls ?? 0)
}

/** Waits (real time) until the fake holds `count` polls of the full app. */
async function untilHeld (ctx: OrbContext, count = 1): Promise<void> {
  const deadline = Date.now() + 3000
  while (await heldPolls(ctx) < count) {
    if (Date.now() > deadline) throw new CaseFailure('GET /events?wait=… is held by the server', `${count} held poll(s)`, `${await heldPolls(ctx)}`)
    await sleep(2)
  }
}

/** Cases that hold the target to exact times need a virtual clock (with a real one they would race it). */
async function virtualOnly (ctx: OrbContext, why: string): Promise<void> {
  controlled(ctx)
  if (!await ctx.virtualTime()) throw new CaseSkip(`${why}: needs the target's virtual clock (orbtest's fake with --clock virtual)`)
}

/** The fake's clock now (ms). */
const clockNow = async (ctx: OrbContext): Promise<number> => Number((await controlled(ctx).control.must('GET', '/control/clock')).now)

/** A reply that must come within `ms` of real time (a poll the server should answer at once). */
async function within<T> (promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  try {
    return await Promise.race([promise, new Promise<never>((_resolve, reject) => { timer = setTimeout(() => reject(new CaseFailure(what, `an answer within ${ms} ms of real time`, 'no answer')), ms) })])
  } finally {
    clearTimeout(timer)
  }
}

/** The full app's delivery log records of one event (control), waiting (real time) until there are `count`. */
async function records (ctx: OrbContext, event: string, count: number, ms = 3000): Promise<any[]> {
  const { control } = controlled(ctx)
  const deadline = Date.now() + ms
  for (;;) {
    const found = (await control.deliveries(appOf(ctx))).deliveries.filter((d) => d.event === event)
    if (found.length >= count || Date.now() > deadline) return found
    await sleep(3)
  }
}

/** Waits for the `n`th delivery (1-based) of a hook; fails if it does not come within `ms` of real time. */
async function nth (hook: Hook, n: number, what: string, ms = 3000): Promise<Delivery> {
  const all = await hook.atLeast(n, ms)
  if (all.length < n) throw new CaseFailure(what, `delivery #${n} at the receiver`, `${all.length} deliveries`)
  return all[n - 1]!
}

/**
 * webhookMode, and when the case ends (after the endpoint is null again) any retry still scheduled is let fire, so
 * that it never reaches the hook of a later case (a case that failed half-way may leave one).
 */
async function hookMode (ctx: OrbContext, label?: string): Promise<Hook> {
  const { control } = controlled(ctx)
  ctx.cleanup(async () => {
    const state = await control.orbState()
    if (Number(state.webhooks?.retriesScheduled ?? 0) > 0 && await ctx.virtualTime()) await ctx.elapse(2000)
  })
  return webhookMode(ctx, label)
}

/** Control and the suite's webhook receiver, or a skip: cases that push to a hook check this before they write anything. */
function hookable (ctx: OrbContext): void {
  controlled(ctx)
  if (ctx.client.receiver === undefined) throw new CaseSkip('the run has no webhook receiver')
}

/** A receiver answer held until `release()` (a delivery made to time out). The case releases it when it ends. */
function held (ctx: OrbContext): { promise: Promise<void>, release: () => void } {
  let release!: () => void
  const promise = new Promise<void>((resolve) => { release = resolve })
  ctx.cleanup(() => release())
  return { promise, release }
}

const header = (d: Delivery, name: string): string => String(d.headers[name] ?? '')

/** ORB-091: the ledger's test vector, computed with node:crypto alone (a sanity check of the receiver's checker). */
function checkTestVector (): void {
  const key = createHash('sha256').update('orb_example_token', 'utf8').digest('hex')
  expectEqual(key, '4265a59929f84c5dc34dd27ea4b48af187709ac6c2210ce8d86fd1a603ce8f06', 'ORB-091 test vector: key = sha256(token) as lowercase hex')
  const body = '{"id":"evt_1","type":"app.test"}'
  const v1 = createHmac('sha256', key).update(`1700000000000.${body}`, 'utf8').digest('hex')
  expectEqual(v1, 'debe46c55152e066937fadf824466cc01e34b2456dbde615c85a6e6cd235a8fb', 'ORB-091 test vector: v1 = HMAC-SHA256(key, "<t>.<raw body>")')
  const verdict = verifySignature(`t=1700000000000,v1=${v1}`, Buffer.from(body, 'utf8'), 'orb_example_token')
  expectThat(verdict.ok, 'the receiver\'s checker accepts the ledger\'s test vector', 'ok', verdict)
  expectThat(!verifySignature(`t=1700000000000,v1=${v1}`, Buffer.from(body, 'utf8'), 'orb_other_token').ok, 'the receiver\'s checker refuses the vector under another token', 'not ok', 'ok')
  expectThat(!verifySignature(`t=1700000000001,v1=${v1}`, Buffer.from(body, 'utf8'), 'orb_example_token').ok, 'the receiver\'s checker refuses the vector with another t', 'not ok', 'ok')
}

const ids = (events: any[]): string[] => events.map((e) => String(e.id))

export const eventsCases: Array<ConformanceCase<OrbBotClient>> = [
  // ---------------------------------------------------------------------------------------------------- 2.5 Events
  defineCase<OrbBotClient>({
    id: 'ORB-043',
    title: 'GET /events for an app without an endpoint URL answers 200 {events, next, mode: "events"}',
    level: 'required',
    async run (ctx) {
      // A test event (a write: not in --read-only runs) makes sure there is an event to list.
      const made = ctx.control !== undefined && ctx.client.target.controlled !== undefined && !ctx.readOnly
      if (made) await testEvent(ctx)
      else if (ctx.readOnly && ctx.control !== undefined) ctx.note('--read-only: no test event made, the events listed are whatever the app holds')
      const body = expectOk(await ctx.client.get(EVENTS), 'GET /events', EVENTS_OP)
      if (ctx.control === undefined && body.mode === 'webhook') throw new CaseSkip('the target\'s full app has an endpoint URL (mode "webhook"); ORB-043 is about apps without one')
      expectThat(Array.isArray(body.events), 'events is an array', 'an array', body.events)
      expectThat(Number.isInteger(body.next), 'next is an integer', 'an integer', body.next)
      expectEqual(body.mode, 'events', 'mode of an app without an endpoint URL')
      if (made) expectThat(body.events.length > 0, 'the test event just made is there', 'at least one event', body.events.length)
    }
  }),
  defineCase<OrbBotClient>({
    id: 'ORB-044',
    title: 'after, wait and limit: any valid values answer 200, and wait > 25, limit 0 or > 100, and non-integers answer 400',
    level: 'required',
    async run (ctx) {
      // With control a fresh event lies after every `after` generated, so a valid `wait` never holds the request. The
      // test event is a write: a --read-only run (or one without control) asks with wait=0 only.
      const withEvent = ctx.control !== undefined && ctx.client.target.controlled !== undefined && !ctx.readOnly
      let newest = 0
      const end = (await drain(ctx)).next
      if (withEvent) {
        const id = await testEvent(ctx)
        newest = (await fetched(ctx, end, id)).cursor
      } else if (ctx.readOnly && ctx.control !== undefined) ctx.note('--read-only: no test event made, valid polls use wait=0')
      // An `after` past the newest cursor answering 200 is ORB-A09's (the spec does not say): only when exact.
      const afterMax = withEvent ? Math.max(0, newest - 1) : exactStatus() ? 1_000_000 : Math.max(0, end)
      const opt = <T>(a: fc.Arbitrary<T>): fc.Arbitrary<T | undefined> => fc.option(a, { nil: undefined })
      const valid = fc.record({
        after: opt(fc.nat({ max: afterMax })),
        wait: opt(withEvent ? arbitraryFor(eventsParameter('wait'), {}) as fc.Arbitrary<number> : fc.constant(0)),
        limit: opt(arbitraryFor(eventsParameter('limit'), {}) as fc.Arbitrary<number>)
      })
      const nonInteger = fc.oneof(
        fc.tuple(fc.integer({ min: -50, max: 50 }), fc.integer({ min: 1, max: 9 })).map(([n, d]) => `${n}.${d}`),
        fc.stringMatching(/^[a-z]{1,8}$/),
        fc.constantFrom('true', 'null', '[]', '1,2', '--1', '0.5', 'NaN', 'Infinity', '1a', 'x1')
      )
      const invalid = fc.oneof(
        fc.record({ name: fc.constant('wait'), value: fc.oneof(fc.integer({ min: 26, max: 1_000_000 }), fc.integer({ min: -1_000_000, max: -1 })).map(String) }),
        fc.record({ name: fc.constant('limit'), value: fc.oneof(fc.constant(0), fc.integer({ min: 101, max: 1_000_000 }), fc.integer({ min: -1_000_000, max: -1 })).map(String) }),
        fc.record({ name: fc.constantFrom('after', 'wait', 'limit'), value: nonInteger })
      )
      await fc.assert(fc.asyncProperty(fc.oneof(valid.map((v) => ({ ok: true as const, v })), invalid.map((v) => ({ ok: false as const, v }))), async (c) => {
        if (c.ok) {
          const reply = await ctx.client.get(EVENTS, c.v)
          const body = expectOk(reply, `GET /events?${new URLSearchParams(Object.entries(c.v).filter(([, v]) => v !== undefined).map(([k, v]): [string, string] => [k, String(v)])).toString()}`, EVENTS_OP)
          expectThat(body.events.length <= (c.v.limit ?? 50), 'at most limit events (default 50)', `<= ${c.v.limit ?? 50}`, body.events.length)
        } else {
          const query = `${c.v.name}=${encodeURIComponent(c.v.value)}`
          expectOrbError(await ctx.client.request({ path: EVENTS, query }), 400, `GET /events?${query}`)
        }
      }), ctx.fc())
      // The ledger's named examples, once each.
      for (const query of ['wait=26', 'limit=0', 'limit=101', 'after=abc', 'wait=1.5', 'limit=2.5']) expectOrbError(await ctx.client.request({ path: EVENTS, query }), 400, `GET /events?${query}`)
    }
  }),
  defineCase<OrbBotClient>({
    id: 'ORB-045',
    title: 'GET /events returns only events with cursor > after, oldest first, at most limit (property over after and limit)',
    level: 'required',
    writes: true,
    async run (ctx) {
      const start = (await drain(ctx)).next
      // An anchor event, then a few more: `after` ranges from the anchor's cursor to past the newest.
      const anchorId = await testEvent(ctx)
      const made: string[] = []
      for (let i = 0; i < 6; i++) made.push(i % 3 === 1 ? (await mention(ctx, `cursor ${i}`)).event : await testEvent(ctx))
      const all = (await drain(ctx, start)).events
      expectEqual(ids(all), [anchorId, ...made], `GET /events after ${start}: the events made, in the order they were made`)
      const anchor = all[0].cursor as number
      const mine = all.slice(1).map((e) => ({ cursor: e.cursor as number, id: String(e.id) }))
      const newest = mine.at(-1)!.cursor
      // An `after` past the newest cursor answering 200 [] is ORB-A09's: only when exact.
      await fc.assert(fc.asyncProperty(fc.integer({ min: anchor, max: exactStatus() ? newest + 3 : newest }), fc.option(fc.integer({ min: 1, max: 8 }), { nil: undefined }), async (after, limit) => {
        const body = expectOk(await ctx.client.get(EVENTS, { after, limit }), `GET /events?after=${after}&limit=${limit ?? ''}`, EVENTS_OP)
        const got = (body.events as any[]).map((e) => ({ cursor: e.cursor, id: String(e.id) }))
        for (const e of got) expectThat(Number.isInteger(e.cursor) && e.cursor > after, `every event returned for after=${after} has cursor > after`, `cursor > ${after}`, got)
        for (let i = 1; i < got.length; i++) expectThat(got[i]!.cursor > got[i - 1]!.cursor, 'oldest first (ascending cursor)', 'ascending cursors', got)
        expectEqual(got, mine.filter((e) => e.cursor > after).slice(0, limit ?? 50), `GET /events?after=${after}&limit=${limit ?? ''}: the retained events past after, first limit of them`)
      }), ctx.fc())
    }
  }),
  defineCase<OrbBotClient>({
    id: 'ORB-045.follow',
    title: 'property: following next with random limits from a cursor sees every new event exactly once, in order; re-reading any cursor repeats',
    level: 'required',
    writes: true,
    async run (ctx) {
      controlled(ctx)
      let cursor = (await drain(ctx)).next
      const kinds = fc.array(fc.oneof({ weight: 3, arbitrary: fc.constant('test' as const) }, { weight: 1, arbitrary: fc.constant('mention' as const) }), { minLength: 1, maxLength: 7 })
      const limits = fc.array(fc.integer({ min: 1, max: 4 }), { minLength: 1, maxLength: 8 })
      await fc.assert(fc.asyncProperty(kinds, limits, fc.nat(), async (make, pageSizes, pick) => {
        const made: string[] = []
        for (const kind of make) made.push(kind === 'test' ? await testEvent(ctx) : (await mention(ctx, 'follow')).event)
        const seen: string[] = []
        const pages: Array<{ after: number, limit: number, text: string }> = []
        let after = cursor
        for (let i = 0; ; i++) {
          const limit = pageSizes[i % pageSizes.length]!
          const reply = await ctx.client.get(EVENTS, { after, limit })
          const body = expectOk(reply, `GET /events?after=${after}&limit=${limit}`, EVENTS_OP)
          pages.push({ after, limit, text: JSON.stringify(body) })
          if (body.events.length === 0) {
            // ORB-A09 (a decision, not the spec): an empty page's next is the after it was asked with.
            if (exactStatus()) expectEqual(body.next, after, `an empty page's next is the after it was asked with (after=${after})`)
            break
          }
          expectThat(body.events.length <= limit, 'at most limit events', `<= ${limit}`, body.events.length)
          seen.push(...ids(body.events))
          expectThat(Number.isInteger(body.next) && body.next > after, 'next moves past after', `> ${after}`, body.next)
          after = body.next
          if (i > 100) throw new CaseFailure('following next ends', 'an empty page', 'more than 100 pages')
        }
        expectEqual(seen, made, 'following next from the cursor before the new events: each seen exactly once, in the order made')
        // ORB-047: any cursor visited gives the same page again.
        const page = pages[pick % pages.length]!
        const again = await ctx.client.get(EVENTS, { after: page.after, limit: page.limit })
        expectEqual(again.json, JSON.parse(page.text), `GET /events?after=${page.after}&limit=${page.limit} read again repeats the same reply`)
        cursor = after
      }), capped(ctx, 20))
    }
  }),
  defineCase<OrbBotClient>({
    id: 'ORB-046',
    title: 'every event from GET /events carries an integer cursor; events delivered by webhook carry none',
    level: 'required',
    writes: true,
    async run (ctx) {
      hookable(ctx)
      const start = (await drain(ctx)).next
      await testEvent(ctx)
      await mention(ctx, 'cursor field')
      const { events } = await drain(ctx, Math.max(0, start - 20))
      expectThat(events.length >= 2, 'GET /events holds the events just made', '>= 2 events', events.length)
      for (const e of events) expectThat(Number.isInteger(e.cursor), `event ${String(e.id)} has an integer cursor`, 'an integer', e.cursor)
      const hook = await hookMode(ctx)
      const id = await testEvent(ctx)
      const delivery = await nth(hook, 1, 'the test event is delivered to the endpoint')
      expectEqual(delivery.json?.id, id, 'the delivery is the test event')
      expectThat(!Object.hasOwn(delivery.json ?? {}, 'cursor'), 'a webhook delivery has no cursor', 'no "cursor" key', Object.keys(delivery.json ?? {}))
    }
  }),
  defineCase<OrbBotClient>({
    id: 'ORB-047',
    title: 'fetching consumes nothing: the same cursor repeats the same events, in the same order',
    level: 'required',
    writes: true,
    async run (ctx) {
      const start = (await drain(ctx)).next
      for (let i = 0; i < 4; i++) await testEvent(ctx)
      const first = await ctx.client.get(EVENTS, { after: start })
      const firstBody = expectOk(first, `GET /events?after=${start}`, EVENTS_OP)
      expectThat(firstBody.events.length === 4, 'the 4 events made are returned', 4, firstBody.events.length)
      await ctx.client.get(EVENTS, { after: firstBody.next })
      for (let i = 0; i < 3; i++) {
        const again = await ctx.client.get(EVENTS, { after: start })
        expectEqual(again.json, firstBody, `GET /events?after=${start} asked again (#${i + 2})`)
      }
    }
  }),
  defineCase<OrbBotClient>({
    id: 'ORB-049',
    title: 'events are kept a day (older than 24 h on the target\'s clock are gone) and at most 500 (the 501st drops the oldest)',
    level: 'required',
    writes: true,
    async run (ctx) {
      await virtualOnly(ctx, 'a day of the target\'s time')
      const { control } = controlled(ctx)
      const app = appOf(ctx)
      const start = (await drain(ctx)).next
      const old = await testEvent(ctx)
      await ctx.elapse(12 * HOUR)
      const younger = await testEvent(ctx)
      await ctx.elapse(12 * HOUR + 1)
      const left = ids((await drain(ctx, start)).events)
      expectThat(!left.includes(old), 'an event 24 h + 1 ms old is gone', `no ${old}`, left)
      expectThat(left.includes(younger), 'an event 12 h old is kept', `${younger} kept`, left)
      // Now only `younger` is retained; 500 more make 501, and the oldest (younger) is dropped.
      const made: string[] = []
      for (let i = 0; i < 500; i++) made.push((await control.testEvent(app)).event)
      const { events } = await drain(ctx, 0)
      expectThat(events.length === 500, 'at most 500 events are kept', 500, events.length)
      expectThat(!ids(events).includes(younger), 'the 501st event drops the oldest', `no ${younger}`, ids(events).slice(0, 3))
      expectEqual(ids(events), made, 'the 500 newest are kept, oldest first')
      // Leave no 500 test events behind for the later cases to page through: a switch of mode empties the queue (ORB-A05).
      await hookMode(ctx, 'clear')
    }
  }),
  defineCase<OrbBotClient>({
    id: 'ORB-050',
    title: 'wait=N with no event answers [] after N s on the target\'s clock, and a held poll answers as soon as an event arrives',
    level: 'required',
    async run (ctx) {
      if (ctx.control === undefined || ctx.client.target.controlled === undefined || !await ctx.virtualTime()) {
        // Without control or a virtual clock (a real Orb): only the timeout half, in real time, from the current end
        // (the spec only: an `after` past the newest cursor is ORB-A09's). Someone may make an event meanwhile (the
        // poll then answers early, which is allowed): try again from there, a few times.
        const probe = expectOk(await ctx.client.get(EVENTS, { limit: 1 }), 'GET /events', EVENTS_OP)
        if (probe.mode === 'webhook') throw new CaseSkip('the target\'s full app has an endpoint URL (mode "webhook"); ORB-050 is about apps that fetch their events')
        const wait = 2
        let after = (await drain(ctx)).next
        for (let attempt = 0; attempt < 3; attempt++) {
          const began = Date.now()
          const reply = await ctx.client.get(EVENTS, { after, wait })
          const took = Date.now() - began
          const body = expectOk(reply, `GET /events?after=${after}&wait=${wait} from the current end`, EVENTS_OP)
          if (body.events.length > 0) {
            after = Number.isInteger(body.next) ? body.next : (await drain(ctx, after)).next
            continue
          }
          expectThat(took >= wait * 1000 - 250, `with no event the poll is held about ${wait} s`, `>= ${wait * 1000 - 250} ms`, `${took} ms`)
          expectThat(took < wait * 1000 + 5000, `the poll is held up to ${wait} s, then answers []`, `< ${wait * 1000 + 5000} ms`, `${took} ms`)
          ctx.note('without control or a virtual clock: checked the timeout half only, in real time')
          return
        }
        throw new CaseSkip('events kept arriving during every poll: the timeout could not be observed')
      }
      // A test event is a write: a --read-only run starts from the current end and leaves out the early answer.
      const start = (await drain(ctx)).next
      const newest = ctx.readOnly ? start : (await fetched(ctx, start, await testEvent(ctx))).cursor as number
      await fc.assert(fc.asyncProperty(fc.integer({ min: 1, max: 25 }), async (n) => {
        let answered = false
        const poll = ctx.client.get(EVENTS, { after: newest, wait: n }).then((r) => { answered = true; return r })
        await untilHeld(ctx)
        if (n > 1) await ctx.elapse(n * 1000 - 1000)
        await sleep(5)
        expectThat(!answered && await heldPolls(ctx) === 1, `wait=${n}: still held ${n - 1} s in`, 'held', answered ? 'answered' : 'not held')
        await ctx.elapse(1000)
        const reply = await within(poll, 3000, `wait=${n}: answered once ${n} s have passed on the target's clock`)
        const body = expectOk(reply, `GET /events?after=${newest}&wait=${n}`, EVENTS_OP)
        expectEqual(body.events, [], `wait=${n} with no event: []`)
        // ORB-A09 (a decision): next = after.
        if (exactStatus()) expectEqual(body.next, newest, `wait=${n} with no event: next = after`)
      }), capped(ctx, 5))
      if (ctx.readOnly) {
        ctx.note('--read-only: the early answer to an event was left out (it needs a test event)')
        return
      }
      // A held poll is answered early by an event, without the clock moving.
      const before = await clockNow(ctx)
      const poll = ctx.client.get(EVENTS, { after: newest, wait: 25 })
      await untilHeld(ctx)
      const id = await testEvent(ctx)
      const reply = await within(poll, 3000, 'a poll held with wait=25 answers when an event arrives')
      const body = expectOk(reply, `GET /events?after=${newest}&wait=25`, EVENTS_OP)
      expectEqual(ids(body.events), [id], 'the held poll answers with the new event')
      expectEqual(await clockNow(ctx), before, 'the target\'s clock did not move: the answer came early')
    }
  }),
  defineCase<OrbBotClient>({
    id: 'ORB-051',
    title: 'with an endpoint URL, GET /events answers events: [] with mode "webhook", and the event goes to the endpoint',
    level: 'required',
    writes: true,
    async run (ctx) {
      const hook = await hookMode(ctx)
      const first = expectOk(await ctx.client.get(EVENTS, { after: 0 }), 'GET /events in webhook mode', EVENTS_OP)
      expectEqual({ events: first.events, mode: first.mode }, { events: [], mode: 'webhook' }, 'GET /events of an app with an endpoint URL')
      const id = await testEvent(ctx)
      const delivery = await nth(hook, 1, 'the event goes to the endpoint URL')
      expectEqual(delivery.json?.id, id, 'the delivered event')
      const after = expectOk(await ctx.client.get(EVENTS, { after: 0 }), 'GET /events in webhook mode after an event', EVENTS_OP)
      expectEqual({ events: after.events, mode: after.mode }, { events: [], mode: 'webhook' }, 'the event is not listed by GET /events')
    }
  }),
  defineCase<OrbBotClient>({
    id: 'ORB-052',
    title: 'every event (app.test, message.mention, application_command) matches the spec\'s Event, with api "orb-bots-v1" and the app',
    level: 'required',
    writes: true,
    async run (ctx) {
      const { target } = controlled(ctx)
      await registerPing(ctx)
      const start = (await drain(ctx)).next
      const made = [await testEvent(ctx), (await mention(ctx, 'shape')).event, await invokeFull(ctx, PING.name, { text: 'shape' })]
      const events = (await drain(ctx, start)).events
      expectEqual(ids(events), made, 'the three events, in order')
      for (const e of events) {
        expectComponent(e, 'Event', `the ${String(e.type)} event`)
        expectThat(typeof e.id === 'string' && e.id !== '', 'id is a non-empty string', 'a string', e.id)
        expectEqual(e.api, 'orb-bots-v1', `${String(e.type)}: api`)
        expectThat(Number.isInteger(e.sent_at), `${String(e.type)}: sent_at is an integer`, 'an integer', e.sent_at)
        expectThat(e.app?.id === target.full.id && typeof e.app?.name === 'string', `${String(e.type)}: app is {id, name} of the app`, { id: target.full.id, name: '…' }, e.app)
        expectThat(typeof e.data === 'object' && e.data !== null && !Array.isArray(e.data), `${String(e.type)}: data is an object`, 'an object', e.data)
        for (const key of ['server', 'channel']) expectThat(e[key] === null || typeof e[key] === 'string', `${String(e.type)}: ${key} is a string or null`, 'string | null', e[key])
      }
      expectEqual(events.map((e) => e.type), ['app.test', 'message.mention', 'application_command'], 'the types')
    }
  }),
  defineCase<OrbBotClient>({
    id: 'ORB-053',
    title: 'data by type: message.mention {message:{id, channel, author, body}, reason}; application_command {command:{id, name, options}, member:{id, name}, invoked_at}',
    level: 'required',
    writes: true,
    async run (ctx) {
      const { world, target } = controlled(ctx)
      const command = await registerPing(ctx)
      const text = fc.string({ minLength: 1, maxLength: 40, unit: 'grapheme' }).filter((s) => !s.includes('<@') && s.trim() !== '')
      await fc.assert(fc.asyncProperty(text, text, async (said, typed) => {
        const start = (await drain(ctx)).next
        const { event: mentionId, message } = await mention(ctx, said)
        const commandId = await invokeFull(ctx, PING.name, { text: typed })
        const events = (await drain(ctx, start)).events
        const m = events.find((e) => e.id === mentionId)
        const c = events.find((e) => e.id === commandId)
        expectThat(m !== undefined && c !== undefined, 'both events are fetched', [mentionId, commandId], ids(events))
        expectEqual(m.type, 'message.mention', 'the mention\'s type')
        const data = m.data
        expectThat(typeof data?.message === 'object' && data.message !== null, 'message.mention data.message is an object', '{id, channel, author, body}', data)
        expectEqual({ id: data.message.id, channel: data.message.channel, body: data.message.body, author: data.message.author?.id }, { id: message.id, channel: target.channels.text, body: message.body ?? `<@${target.full.id!}> ${said}`, author: world.member }, 'message.mention data.message')
        expectThat(typeof data.reason === 'string', 'message.mention data.reason is a string', 'a string', data.reason)
        expectEqual(c.type, 'application_command', 'the command\'s type')
        const cd = c.data
        expectEqual({ id: cd?.command?.id, name: cd?.command?.name, options: cd?.command?.options }, { id: command.id, name: PING.name, options: { text: typed } }, 'application_command data.command')
        expectEqual(cd?.member?.id, world.member, 'application_command data.member.id: who typed it')
        expectThat(typeof cd?.member?.name === 'string', 'data.member.name is a string', 'a string', cd?.member)
        expectThat(Number.isInteger(cd?.invoked_at), 'data.invoked_at is an integer', 'an integer', cd?.invoked_at)
      }), capped(ctx, 6))
    }
  }),
  defineCase<OrbBotClient>({
    id: 'ORB-054',
    title: 'an app sees only its own events: the few-scope app never sees the full app\'s, and a community that did not install the app gives it none',
    level: 'required',
    writes: true,
    async run (ctx) {
      const { control, target } = controlled(ctx)
      few(ctx)
      const fewStart = (await drain(ctx, 0, 'few')).next
      const start = (await drain(ctx)).next
      const theirs = [await testEvent(ctx), (await mention(ctx, 'only mine')).event]
      let elsewhere: number | undefined
      if (target.otherCommunity !== undefined && target.otherChannel !== undefined) {
        const state = await control.orbState()
        const member = (state.servers as any[]).find((s) => s.id === target.otherCommunity)?.members.find((m: any) => m.rights.includes('send_messages'))?.id
        if (member !== undefined) {
          const posted = await control.memberPost({ server: target.otherCommunity, channel: target.otherChannel, member, content: `<@${target.full.id!}> are you here?` })
          elsewhere = posted.id
          expectThat(!(posted.events as any[]).some((e) => e.app === target.full.id), 'a mention in a community that did not install the app makes it no event', 'no event', posted.events)
        }
      }
      const fewSeen = (await drain(ctx, fewStart, 'few')).events
      expectThat(!fewSeen.some((e) => theirs.includes(e.id) || e.app?.id !== target.few?.id), 'the few-scope app sees none of the full app\'s events', 'only its own events', fewSeen.map((e) => [e.id, e.app?.id]))
      const fullSeen = (await drain(ctx, start)).events
      expectEqual(ids(fullSeen), theirs, 'the full app sees exactly its own new events')
      for (const e of fullSeen) expectEqual(e.app?.id, target.full.id, 'each event names the app')
      if (elsewhere === undefined) ctx.note('no other community with a member to post: only the other-app half ran')
      else expectThat(!fullSeen.some((e) => e.data?.message?.id === elsewhere), 'no event for the mention in the other community', 'none', fullSeen)
    }
  }),

  // ---------------------------------------------------------------------------------------------- 2.7 Interactions
  defineCase<OrbBotClient>({
    id: 'ORB-066',
    title: 'answering a fresh application_command event within 6 s answers 200, and the answer goes to the member who typed it',
    level: 'required',
    writes: true,
    async run (ctx) {
      const { world } = controlled(ctx)
      await registerPing(ctx)
      const start = (await drain(ctx)).next
      const invoked = await invokeFull(ctx, PING.name)
      const event = await fetched(ctx, start, invoked)
      expectEqual(event.type, 'application_command', 'the event of the typed command')
      const reply = await respond(ctx, event.id, { content: 'pong' })
      if (reply.status !== 200) fail(`POST /interactions/${String(event.id)}/respond`, 200, reply)
      const seen = await interaction(ctx, invoked)
      expectEqual({ member: seen.member, content: seen.answer?.content }, { member: world.member, content: 'pong' }, 'the member who typed the command got the answer')
    }
  }),
  defineCase<OrbBotClient>({
    id: 'ORB-067',
    title: 'a second answer to an interaction answers 409 with an Error body',
    level: 'required',
    writes: true,
    async run (ctx) {
      controlled(ctx) // before the command sync: a real Orb skips here, having changed nothing
      await registerPing(ctx)
      const id = await invokeFull(ctx, PING.name)
      const first = await respond(ctx, id, { content: 'first' })
      if (first.status !== 200) fail('the first answer', 200, first)
      expectOrbError(await respond(ctx, id, { content: 'second' }), 409, 'the second answer')
      expectEqual((await interaction(ctx, id)).answer?.content, 'first', 'the first answer stands')
    }
  }),
  defineCase<OrbBotClient>({
    id: 'ORB-068',
    title: 'answering after the member stopped waiting (8 s after invoking, on the target\'s clock) answers 410 with an Error body',
    level: 'required',
    writes: true,
    async run (ctx) {
      controlled(ctx) // before the command sync: a real Orb skips here, having changed nothing
      await registerPing(ctx)
      const id = await invokeFull(ctx, PING.name)
      await ctx.elapse(8000)
      expectOrbError(await respond(ctx, id, { content: 'too late' }), 410, 'an answer 8 s after the command')
      expectEqual((await interaction(ctx, id)).answer, null, 'the member saw no answer')
    }
  }),
  defineCase<OrbBotClient>({
    id: 'ORB-069',
    title: 'answering a message.mention or app.test event answers 400',
    level: 'required',
    writes: true,
    async run (ctx) {
      const { event } = await mention(ctx, 'not a command')
      expectOrbError(await respond(ctx, event, { content: 'x' }), 400, 'answering a message.mention event')
      expectOrbError(await respond(ctx, await testEvent(ctx), { content: 'x' }), 400, 'answering an app.test event')
    }
  }),
  defineCase<OrbBotClient>({
    id: 'ORB-070',
    title: 'respond with a missing content, content over 1800 characters, a non-string content or a body that is not an object answers 400',
    level: 'required',
    writes: true,
    async run (ctx) {
      controlled(ctx) // before the command sync: a real Orb skips here, having changed nothing
      await registerPing(ctx)
      const id = await invokeFull(ctx, PING.name)
      const nonString = fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean(), fc.constant(null), fc.array(fc.string({ maxLength: 5 }), { maxLength: 3 }), fc.dictionary(fc.string({ maxLength: 5 }), fc.string({ maxLength: 5 }), { maxKeys: 3 }))
      const body = fc.oneof(
        fc.constant({ what: 'no body', body: undefined }),
        fc.dictionary(fc.string({ maxLength: 8 }).filter((k) => k !== 'content'), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 3 }).map((b) => ({ what: 'no content', body: b as unknown })),
        nonString.map((content) => ({ what: 'a non-string content', body: { content } as unknown })),
        fc.integer({ min: 1801, max: 4000 }).chain((n) => fc.string({ unit: 'grapheme-ascii', minLength: n, maxLength: n })).map((content) => ({ what: `content of ${content.length} characters`, body: { content } as unknown })),
        fc.oneof(fc.array(fc.string({ maxLength: 5 }), { maxLength: 2 }), fc.string({ maxLength: 10 }), fc.integer(), fc.boolean(), fc.constant(null)).map((b) => ({ what: 'a body that is not an object', body: b as unknown }))
      )
      await fc.assert(fc.asyncProperty(body, async ({ what, body }) => {
        const reply = body === undefined
          ? await ctx.client.request({ method: 'POST', path: respondPath(id) })
          : await ctx.client.request({ method: 'POST', path: respondPath(id), body })
        expectOrbError(reply, 400, `respond with ${what}`)
      }), ctx.fc())
      expectOrbError(await respond(ctx, id, { content: 'x'.repeat(1801) }), 400, 'respond with 1801 characters')
      expectOrbError(await respond(ctx, id, {}), 400, 'respond without content')
      // The refused bodies did not use the answer up.
      const ok = await respond(ctx, id, { content: 'y'.repeat(1800) })
      if (ok.status !== 200) fail('respond with exactly 1800 characters after the refused ones', 200, ok)
    }
  }),
  defineCase<OrbBotClient>({
    id: 'ORB-072',
    title: 'a webhook app answers inline with {notice}: the member gets it, and a later /respond answers 409',
    level: 'required',
    writes: true,
    async run (ctx) {
      hookable(ctx) // before the command sync: a target without control or receiver skips here, having changed nothing
      await registerPing(ctx)
      const hook = await hookMode(ctx)
      hook.script({ status: 200, body: { notice: 'pong inline' } })
      const id = await invokeFull(ctx, PING.name)
      const delivery = await nth(hook, 1, 'the typed command is delivered to the endpoint')
      expectEqual(delivery.json?.id, id, 'the delivered event')
      await records(ctx, id, 1)
      const seen = await interaction(ctx, id)
      expectEqual({ content: seen.answer?.content, via: seen.answer?.via }, { content: 'pong inline', via: 'inline' }, 'the member sees the inline notice')
      expectOrbError(await respond(ctx, id, { content: 'by the route' }), 409, '/respond after an inline answer (ORB-A13)')
    }
  }),

  // --------------------------------------------------------------------------------------------- 2.11 Webhooks
  defineCase<OrbBotClient>({
    id: 'ORB-090',
    title: 'each event is POSTed as JSON to the endpoint URL: an Event without cursor',
    level: 'required',
    writes: true,
    async run (ctx) {
      hookable(ctx) // before the command sync: a target without control or receiver skips here, having changed nothing
      await registerPing(ctx)
      const hook = await hookMode(ctx)
      const made = [await testEvent(ctx), (await mention(ctx, 'pushed')).event, await invokeFull(ctx, PING.name)]
      const deliveries = await hook.atLeast(3)
      expectThat(deliveries.length === 3, 'one delivery per event', 3, deliveries.map((d) => d.json?.id))
      expectEqual(deliveries.map((d) => d.json?.id).sort(), [...made].sort(), 'the events delivered')
      for (const d of deliveries) {
        expectEqual(d.method, 'POST', 'the delivery\'s method')
        expectThat(/^application\/json\b/i.test(header(d, 'content-type')), 'the delivery is JSON', 'Content-Type: application/json', header(d, 'content-type'))
        expectThat(d.json !== undefined, 'the body parses as JSON', 'JSON', d.raw.toString('utf8').slice(0, 200))
        expectComponent(d.json, 'Event', `the delivered ${String(d.json?.type)} event`)
        expectThat(!Object.hasOwn(d.json, 'cursor'), 'no cursor in a webhook event', 'no "cursor"', Object.keys(d.json))
      }
    }
  }),
  defineCase<OrbBotClient>({
    id: 'ORB-091',
    title: 'every delivery is signed t=<ms>,v1=HMAC-SHA256(sha256(token) hex, "<t>.<raw body>"), checked by the suite\'s own receiver',
    level: 'required',
    writes: true,
    async run (ctx) {
      checkTestVector()
      const hook = await hookMode(ctx)
      const text = fc.string({ minLength: 1, maxLength: 60, unit: 'grapheme' }).filter((s) => !s.includes('<@'))
      let count = 0
      await fc.assert(fc.asyncProperty(fc.boolean(), text, async (isTest, said) => {
        const id = isTest ? await testEvent(ctx) : (await mention(ctx, said)).event
        const d = await nth(hook, ++count, 'the event is delivered')
        expectEqual(d.json?.id, id, 'the delivered event')
        const sig = header(d, 'x-orb-signature')
        expectThat(/^t=\d+,v1=[0-9a-f]{64}$/.test(sig), 'X-Orb-Signature is t=<ms>,v1=<64 lowercase hex>', 't=<ms>,v1=<hex>', sig)
        expectThat(d.signature.ok, `the signature verifies over the raw body (${d.signature.why ?? ''})`, 'a valid signature', sig)
        expectThat(Math.abs((d.signature.t ?? 0) - Number(d.json?.sent_at)) < 10 * 60_000, 't is milliseconds since the epoch (near sent_at)', d.json?.sent_at, d.signature.t)
        expectThat(!verifySignature(d.headers['x-orb-signature'], d.raw, `${hook.token}x`).ok, 'the signature does not verify under another token', 'not valid', 'valid')
      }), capped(ctx, 8))
    }
  }),
  defineCase<OrbBotClient>({
    id: 'ORB-092',
    title: 'both attempts of one event carry X-Orb-Event = the event id, and different X-Orb-Delivery values',
    level: 'required',
    writes: true,
    async run (ctx) {
      const hook = await hookMode(ctx)
      hook.script({ status: 500, body: { error: 'once' } })
      const id = await testEvent(ctx)
      await nth(hook, 1, 'the first attempt')
      await records(ctx, id, 1)
      await ctx.elapse(2000)
      const [first, second] = [await nth(hook, 1, 'the first attempt'), await nth(hook, 2, 'the second attempt, 2 s after a 500')]
      expectEqual([header(first, 'x-orb-event'), header(second, 'x-orb-event')], [id, id], 'X-Orb-Event of both attempts')
      expectThat(header(first, 'x-orb-delivery') !== '' && header(first, 'x-orb-delivery') !== header(second, 'x-orb-delivery'), 'X-Orb-Delivery differs between the attempts', 'two different values', [header(first, 'x-orb-delivery'), header(second, 'x-orb-delivery')])
    }
  }),
  defineCase<OrbBotClient>({
    id: 'ORB-093',
    title: 'a failed delivery is tried a second time (2 s later on the target\'s clock), never a third, and the delivery log records both',
    level: 'required',
    writes: true,
    async run (ctx) {
      const hook = await hookMode(ctx)
      hook.script({ status: 500, body: { error: 'first' } }, { status: 503, body: { error: 'second' } })
      const id = await testEvent(ctx)
      await nth(hook, 1, 'the first attempt')
      await records(ctx, id, 1)
      await ctx.elapse(2000)
      const second = await nth(hook, 2, 'a second attempt after the endpoint answered 500', 1500)
      expectEqual(second.json?.id, id, 'the second attempt is the same event')
      await records(ctx, id, 2)
      await ctx.elapse(5000)
      expectThat(await hook.quiet(2, 150), 'no third attempt', '2 deliveries', hook.deliveries.length)
      const log = await records(ctx, id, 2)
      expectEqual(log.map((r) => ({ attempt: r.attempt, status: r.status, delivered: r.outcome === 'delivered' })), [{ attempt: 1, status: 500, delivered: false }, { attempt: 2, status: 503, delivered: false }], 'the delivery log records both attempts')
    }
  }),
  defineCase<OrbBotClient>({
    id: 'ORB-094',
    title: 'any 2xx (200, 201, 202, 204) counts as delivered: no retry',
    level: 'required',
    writes: true,
    async run (ctx) {
      const hook = await hookMode(ctx)
      const statuses = [200, 201, 202, 204]
      const made: string[] = []
      for (const [i, status] of statuses.entries()) {
        hook.script(status === 204 ? { status } : { status, body: {} })
        made.push(await testEvent(ctx))
        await nth(hook, i + 1, `the delivery answered ${status}`)
      }
      for (const id of made) await records(ctx, id, 1)
      await ctx.elapse(5000)
      expectThat(await hook.quiet(statuses.length, 150), 'no event is sent again after a 2xx', statuses.length, hook.deliveries.map((d) => [d.json?.id, d.answered.status]))
      const log = (await controlled(ctx).control.deliveries(appOf(ctx))).deliveries.filter((r) => made.includes(r.event))
      expectEqual(log.map((r) => [r.status, r.outcome]), statuses.map((s) => [s, 'delivered']), 'the delivery log: each delivered at the first attempt')
    }
  }),
  defineCase<OrbBotClient>({
    id: 'ORB-098',
    title: 'a notice returned within 4 s for an application_command is shown to the member; a notice on app.test is ignored',
    level: 'required',
    writes: true,
    async run (ctx) {
      hookable(ctx) // before the command sync: a target without control or receiver skips here, having changed nothing
      await registerPing(ctx)
      const hook = await hookMode(ctx)
      const hold = held(ctx)
      hook.script({ status: 200, body: { notice: 'after 3 s' }, until: hold.promise }, { status: 200, body: { notice: 'on a test event' } })
      const id = await invokeFull(ctx, PING.name)
      await nth(hook, 1, 'the typed command is delivered')
      await ctx.elapse(3000)
      hold.release()
      await records(ctx, id, 1)
      const seen = await interaction(ctx, id)
      expectEqual({ content: seen.answer?.content, via: seen.answer?.via }, { content: 'after 3 s', via: 'inline' }, 'a notice 3 s after the command is shown to the member')
      const test = await testEvent(ctx)
      await nth(hook, 2, 'the test event is delivered')
      const [record] = await records(ctx, test, 1)
      expectEqual(record?.notice?.result, 'ignored', 'a notice in the answer to app.test is ignored')
      expectOrbError(await respond(ctx, test, { content: 'x' }), 400, 'app.test is still no interaction')
    }
  }),

  // --------------------------------------------------------------------------------------------------- Decisions
  defineCase<OrbBotClient>({
    id: 'ORB-A05',
    title: 'switching between webhook and events mode empties the queue and keeps the cursor counting; http to localhost is allowed, other http not',
    level: 'decision',
    writes: true,
    async run (ctx) {
      hookable(ctx)
      const { control } = controlled(ctx)
      const app = appOf(ctx)
      const start = (await drain(ctx)).next
      const e1 = await testEvent(ctx)
      const c1 = (await fetched(ctx, start, e1)).cursor as number
      const hook = await hookMode(ctx)
      expectThat(/^http:\/\/(127\.0\.0\.1|localhost|\[::1\])[:/]/.test(hook.url), 'the receiver is an http URL on this machine, and it was accepted', 'http://127.0.0.1:…', hook.url)
      const e2 = await testEvent(ctx)
      await nth(hook, 1, 'the event made in webhook mode is delivered')
      await control.setEndpoint(app, null)
      const back = expectOk(await ctx.client.get(EVENTS, { after: 0 }), 'GET /events back in events mode', EVENTS_OP)
      expectEqual({ events: ids(back.events), mode: back.mode }, { events: [], mode: 'events' }, 'back in events mode the queue starts empty (neither the event queued before nor the one pushed)')
      const e3 = await testEvent(ctx)
      const third = (await drain(ctx, 0)).events
      expectEqual(ids(third), [e3], 'only the new event is queued')
      expectThat(third[0].cursor > c1, 'the cursor keeps counting across the switches', `> ${c1}`, third[0].cursor)
      ctx.note(`cursor ${c1} before webhook mode (${e2} pushed), ${String(third[0].cursor)} after`)
      const refused = await control.call('PUT', `/control/orb/apps/${encodeURIComponent(app)}/endpoint`, { url: 'http://orb-endpoint.example/hook' })
      if (refused.status === 200) ctx.cleanup(async () => { await control.setEndpoint(app, null) })
      expectThat(refused.status === 400, 'an http endpoint that is not this machine is refused', 400, refused)
    }
  }),
  defineCase<OrbBotClient>({
    id: 'ORB-A09',
    title: 'cursor mechanics: from 1 and increasing, next = last cursor returned (or after), after past the newest is [] with next = after, negative after is 400, webhook mode ignores wait',
    level: 'decision',
    writes: true,
    async run (ctx) {
      hookable(ctx)
      const start = (await drain(ctx)).next
      const made = [await testEvent(ctx), await testEvent(ctx), await testEvent(ctx)]
      const events = (await drain(ctx, start)).events
      expectEqual(ids(events), made, 'the three events')
      const cursors = events.map((e) => e.cursor as number)
      expectThat(cursors.every((c, i) => Number.isInteger(c) && c >= 1 && (i === 0 || c > cursors[i - 1]!)), 'cursors are integers from 1, strictly increasing', 'ascending integers >= 1', cursors)
      const page = expectOk(await ctx.client.get(EVENTS, { after: start, limit: 2 }), 'a page of 2', EVENTS_OP)
      expectEqual(page.next, cursors[1], 'next is the cursor of the last event returned')
      const newest = cursors[2]!
      for (const after of [newest, newest + 1, newest + 1000]) {
        const body = expectOk(await ctx.client.get(EVENTS, { after }), `GET /events?after=${after}`, EVENTS_OP)
        expectEqual({ events: body.events, next: body.next }, { events: [], next: after }, `no events after ${after}: next = after`)
      }
      expectOrbError(await ctx.client.get(EVENTS, { after: -1 }), 400, 'GET /events?after=-1')
      const oldest = expectOk(await ctx.client.get(EVENTS, { after: 0, limit: 1 }), 'the oldest retained event', EVENTS_OP).events[0]
      const below = expectOk(await ctx.client.get(EVENTS, { after: Math.floor((oldest.cursor - 1) / 2), limit: 1 }), 'after below the oldest retained cursor', EVENTS_OP)
      expectEqual(ids(below.events), [oldest.id], 'an after below the oldest retained cursor starts from the oldest retained event')
      const together = await Promise.all([1, 2, 3].map(async () => await ctx.client.get(EVENTS, { after: start })))
      expectThat(together.every((r) => r.status === 200 && r.text === together[0]!.text), 'concurrent GET /events see the same events', 'three equal replies', together.map((r) => r.text.slice(0, 120)))
      // Webhook mode: `wait` is ignored (the call returns at once, the clock unmoved), and next = after.
      await hookMode(ctx)
      const virtual = await ctx.virtualTime()
      const before = virtual ? await clockNow(ctx) : 0
      const quick = await within(ctx.client.get(EVENTS, { after: newest, wait: 25 }), 3000, 'GET /events?wait=25 in webhook mode returns at once')
      const body = expectOk(quick, 'GET /events?wait=25 in webhook mode', EVENTS_OP)
      expectEqual({ events: body.events, next: body.next, mode: body.mode }, { events: [], next: newest, mode: 'webhook' }, 'webhook mode: [] and next = after')
      if (virtual) expectEqual(await clockNow(ctx), before, 'no time passed on the target\'s clock')
    }
  }),
  defineCase<OrbBotClient>({
    id: 'ORB-A10',
    title: 'event fields: app.test has data {} and null server and channel; mention reason "mention" or "reply"; encrypted body null; ms timestamps; options map names to strings',
    level: 'decision',
    writes: true,
    async run (ctx) {
      const { control, world, target } = controlled(ctx)
      const virtual = await ctx.virtualTime()
      await registerPing(ctx)
      const own = await post(ctx, 'orbtest: a message to reply to')
      const start = (await drain(ctx)).next
      const now = await clockNow(ctx)
      const test = await testEvent(ctx)
      const mentioned = (await mention(ctx, 'plain')).event
      const replied = await control.memberPost({ server: target.community, channel: target.channels.text, member: world.member, content: 'a reply without a mention', replyTo: own.id })
      const secret = await control.memberPost({ server: target.community, channel: target.channels.text, member: world.member, content: `<@${target.full.id!}> sealed`, encrypted: true })
      const typed = await invokeFull(ctx, PING.name, { text: 'opt' })
      const events = (await drain(ctx, start)).events
      const byId = (id: string | undefined): any => events.find((e) => e.id === id)
      const replyId = (replied.events as any[]).find((e) => e.app === target.full.id)?.id
      const secretId = (secret.events as any[]).find((e) => e.app === target.full.id)?.id
      expectThat([test, mentioned, replyId, secretId, typed].every((id) => byId(id) !== undefined), 'all five events are fetched', 5, ids(events))
      const t = byId(test)
      expectEqual({ data: t.data, server: t.server, channel: t.channel }, { data: {}, server: null, channel: null }, 'app.test')
      expectEqual(byId(mentioned).data.reason, 'mention', 'an @-mention\'s reason')
      expectEqual(byId(replyId).data.reason, 'reply', 'a reply to the app\'s message: reason')
      expectEqual(byId(secretId).data.message.body, null, 'an encrypted message\'s body')
      const c = byId(typed)
      expectEqual(c.data.command.options, { text: 'opt' }, 'command.options maps option names to the typed strings')
      expectEqual(new Set(ids(events)).size, events.length, 'event ids are unique')
      for (const e of events) {
        expectThat(typeof e.id === 'string' && e.id.length > 0, 'id is an opaque string', 'a string', e.id)
        // With a virtual clock nothing moves it during the case; with a real one, allow for the case's own time.
        expectThat(virtual ? e.sent_at === now : Math.abs(e.sent_at - now) < 60_000, `${String(e.type)}: sent_at is the target's clock in ms since the epoch`, now, e.sent_at)
      }
      expectThat(virtual ? c.data.invoked_at === now : Math.abs(c.data.invoked_at - now) < 60_000, 'invoked_at is the target\'s clock in ms', now, c.data.invoked_at)
    }
  }),
  defineCase<OrbBotClient>({
    id: 'ORB-A11',
    title: 'deliveries: JSON, time out after 10 s (4 s for a command), retry about 2 s after a failure with the same body and event id, a new delivery id, t and signature',
    level: 'decision',
    writes: true,
    async run (ctx) {
      await virtualOnly(ctx, 'delivery timeouts to the millisecond')
      hookable(ctx)
      await registerPing(ctx)
      const hook = await hookMode(ctx)
      // A 500 is retried 2 s later, not before.
      hook.script({ status: 500 })
      const failed = await testEvent(ctx)
      await nth(hook, 1, 'the first attempt')
      await records(ctx, failed, 1)
      await ctx.elapse(1999)
      expectThat(await hook.quiet(1, 100), 'no retry before 2 s', 1, hook.deliveries.length)
      await ctx.elapse(1)
      await nth(hook, 2, 'the retry 2 s after the failure')
      await records(ctx, failed, 2)
      // app.test held: a timeout at 10 s (a failure), then the retry 2 s later.
      const hold = held(ctx)
      hook.script({ status: 200, body: {}, until: hold.promise })
      const slow = await testEvent(ctx)
      const first = await nth(hook, 3, 'the held test event')
      await ctx.elapse(9999)
      await sleep(30)
      expectEqual((await records(ctx, slow, 1, 0)).length, 0, 'still in flight at 9999 ms')
      await ctx.elapse(1)
      const [timedOut] = await records(ctx, slow, 1)
      expectThat(timedOut !== undefined && timedOut.outcome !== 'delivered', 'an app.test delivery unanswered for 10 s fails', 'a failed attempt', timedOut)
      hold.release()
      await ctx.elapse(2000)
      const second = await nth(hook, 4, 'the retry of the timed-out delivery')
      for (const d of [first, second]) expectThat(/^application\/json\b/i.test(header(d, 'content-type')), 'Content-Type: application/json', 'application/json', header(d, 'content-type'))
      expectThat(first.raw.equals(second.raw), 'the retry sends the same body bytes', first.raw.toString('utf8').slice(0, 200), second.raw.toString('utf8').slice(0, 200))
      expectEqual(header(second, 'x-orb-event'), slow, 'the retry\'s X-Orb-Event')
      expectThat(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(header(second, 'x-orb-delivery')) && header(second, 'x-orb-delivery') !== header(first, 'x-orb-delivery'), 'the retry has a new X-Orb-Delivery (a UUID)', 'a new UUID', [header(first, 'x-orb-delivery'), header(second, 'x-orb-delivery')])
      expectThat(second.signature.ok && first.signature.t !== undefined && second.signature.t === first.signature.t + 12_000, 'the retry has a new t (12 s later) and a valid new signature', `t=${(first.signature.t ?? 0) + 12_000}, valid`, second.signature)
      // A command held: a timeout at 4 s; the member stops waiting at 6 s, so there is no retry.
      const holdCommand = held(ctx)
      hook.script({ status: 200, body: { notice: 'too slow' }, until: holdCommand.promise })
      const typed = await invokeFull(ctx, PING.name)
      await nth(hook, 5, 'the held command')
      await ctx.elapse(3999)
      await sleep(30)
      expectEqual((await records(ctx, typed, 1, 0)).length, 0, 'the command is still in flight at 3999 ms')
      await ctx.elapse(1)
      const [commandTimeout] = await records(ctx, typed, 1)
      expectThat(commandTimeout !== undefined && commandTimeout.outcome !== 'delivered', 'a command delivery unanswered for 4 s fails', 'a failed attempt', commandTimeout)
      holdCommand.release()
      await ctx.elapse(5000)
      expectThat(await hook.quiet(5, 100), 'no retry of a command once its member stopped waiting', 5, hook.deliveries.length)
    }
  }),
  defineCase<OrbBotClient>({
    id: 'ORB-A13',
    title: 'inline versus /respond: no notice or a late one shows nothing and /respond still works within 6 s; the first answer wins',
    level: 'decision',
    writes: true,
    async run (ctx) {
      await virtualOnly(ctx, 'answers held past 4 s but within 6 s')
      hookable(ctx)
      await registerPing(ctx)
      const hook = await hookMode(ctx)
      // No notice: nothing shown; a webhook app may still /respond within the window.
      hook.script({ status: 200, body: {} })
      const bare = await invokeFull(ctx, PING.name)
      await nth(hook, 1, 'the command without notice')
      await records(ctx, bare, 1)
      expectEqual((await interaction(ctx, bare)).answer, null, 'a 2xx without notice shows the member nothing')
      const routed = await respond(ctx, bare, { content: 'by the route' })
      if (routed.status !== 200) fail('/respond by a webhook app within 6 s', 200, routed)
      // /respond first, while the delivery is held: the later inline notice does not replace it.
      const hold = held(ctx)
      hook.script({ status: 200, body: { notice: 'inline, second' }, until: hold.promise })
      const race = await invokeFull(ctx, PING.name)
      await nth(hook, 2, 'the held command')
      const firstAnswer = await respond(ctx, race, { content: 'route, first' })
      if (firstAnswer.status !== 200) fail('/respond while the delivery is held', 200, firstAnswer)
      hold.release()
      await records(ctx, race, 1)
      const raced = await interaction(ctx, race)
      expectEqual({ content: raced.answer?.content, via: raced.answer?.via }, { content: 'route, first', via: 'respond' }, 'the first answer wins')
      // A notice after 4 s is not shown; /respond still works before 6 s.
      const late = held(ctx)
      hook.script({ status: 200, body: { notice: 'too late' }, until: late.promise })
      const slow = await invokeFull(ctx, PING.name)
      await nth(hook, 3, 'the slow command')
      await ctx.elapse(4000)
      await records(ctx, slow, 1)
      late.release()
      await sleep(30)
      expectEqual((await interaction(ctx, slow)).answer, null, 'a notice after 4 s is not shown')
      const inTime = await respond(ctx, slow, { content: 'by the route at 4 s' })
      if (inTime.status !== 200) fail('/respond 4 s after the command', 200, inTime)
    }
  }),
  defineCase<OrbBotClient>({
    id: 'ORB-A14',
    title: 'respond precedence 404 > 400 > 409 > 410 (unknown or another app\'s event is 404), and the deadline is exactly 6 s after invoked_at',
    level: 'decision',
    writes: true,
    async run (ctx) {
      await virtualOnly(ctx, 'the 6 s deadline to the millisecond')
      few(ctx)
      await registerPing(ctx)
      const start = (await drain(ctx)).next
      const [a, b, c] = [await invokeFull(ctx, PING.name), await invokeFull(ctx, PING.name), await invokeFull(ctx, PING.name)]
      const { event: mentioned } = await mention(ctx, 'precedence')
      const test = await testEvent(ctx)
      const invokedAt = (await fetched(ctx, start, c)).data.invoked_at as number
      expectEqual(await clockNow(ctx), invokedAt, 'invoked_at is now (nothing has moved the clock)')
      expectOrbError(await respond(ctx, `evt_${ctx.uid('unknown').replace(/-/g, '_')}`, { content: 'x' }), 404, 'an unknown event id')
      expectOrbError(await respond(ctx, a, { content: 'x' }, 'few'), 404, 'another app\'s command event')
      expectOrbError(await respond(ctx, mentioned, { content: 'x' }, 'few'), 404, 'another app\'s mention event (404 before 400)')
      const first = await respond(ctx, a, { content: 'first' })
      if (first.status !== 200) fail('answering a fresh command', 200, first)
      await ctx.elapse(5999)
      const edge = await respond(ctx, b, { content: 'at 5999 ms' })
      if (edge.status !== 200) fail('an answer 5999 ms after invoked_at', 200, edge)
      await ctx.elapse(1)
      expectOrbError(await respond(ctx, c, { content: 'at 6000 ms' }), 410, 'an answer exactly 6 s after invoked_at')
      expectOrbError(await respond(ctx, a, { content: 'again' }), 409, 'answered and expired (409 before 410)')
      expectOrbError(await respond(ctx, test, { content: 'x' }), 400, 'an expired non-command (400 before 410)')
      expectOrbError(await respond(ctx, mentioned, { content: 'x' }), 400, 'the app\'s own mention event')
    }
  }),
  defineCase<OrbBotClient>({
    id: 'ORB-A22',
    title: 'rotating the token: the old one answers 401 at once (a held poll too), queued events, cursor and commands are kept, webhooks are keyed by the new one',
    level: 'decision',
    writes: true,
    async run (ctx) {
      hookable(ctx)
      const { control, target } = controlled(ctx)
      const app = appOf(ctx)
      await registerPing(ctx)
      const start = (await drain(ctx)).next
      const queued = await testEvent(ctx)
      const c1 = (await fetched(ctx, start, queued)).cursor as number
      const old = target.full.token
      const poll = ctx.client.get(EVENTS, { after: c1, wait: 25 }, { token: old })
      await untilHeld(ctx)
      const { token: fresh } = await control.rotateToken(app)
      // The whole run speaks as the full app: the shared target takes the new token at once, and reports mask it.
      target.full.token = fresh
      ctx.client.secret(fresh, '$ORB_TOKEN')
      ctx.note('the full app\'s token was rotated; the run goes on with the new one')
      expectOrbError(await within(poll, 3000, 'a poll held with the old token is answered at once'), 401, 'the poll held with the old token')
      expectOrbError(await ctx.client.get(`${BOT}/app`, undefined, { token: old }), 401, 'GET /app with the old token')
      expectOrbError(await ctx.client.get(EVENTS, undefined, { token: old }), 401, 'GET /events with the old token')
      expectOk(await ctx.client.get(`${BOT}/app`), 'GET /app with the new token')
      expectEqual(ids((await drain(ctx, start)).events), [queued], 'the queued event is kept')
      const commands = expectOk(await ctx.client.get(`${BOT}/commands`), 'GET /commands with the new token')
      expectThat((commands.commands as any[]).some((cmd) => cmd.name === PING.name), 'commands are kept', PING.name, commands.commands)
      const after = await testEvent(ctx)
      expectThat((await fetched(ctx, start, after)).cursor > c1, 'the cursor keeps counting', `> ${c1}`, 'not')
      const hook = await hookMode(ctx)
      hook.token = fresh
      const pushed = await testEvent(ctx)
      const d = await nth(hook, 1, 'a delivery after the rotation')
      expectEqual(d.json?.id, pushed, 'the delivered event')
      expectThat(d.signature.ok, 'the delivery is signed with sha256(new token)', 'valid under the new token', d.signature)
      expectThat(!verifySignature(d.headers['x-orb-signature'], d.raw, old).ok, 'the delivery is not signed with the old token', 'invalid under the old token', 'valid')
    }
  })
]

/** Which cases each fault of the fake Orb must make fail. */
export const eventsFaults: Partial<Record<OrbFault, string[]>> = {
  'cursor-off-by-one': ['ORB-045', 'ORB-045.follow'],
  'signature-parsed-body': ['ORB-091'],
  'no-webhook-retry': ['ORB-093'],
  'late-respond-accepted': ['ORB-068']
}
