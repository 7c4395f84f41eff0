import fc from 'fast-check'
import { orbSpec } from '../../../../../src/spec/orb.js'
import { CaseFailure, CaseSkip, defineCase, type ConformanceCase } from '../../../core/case.js'
import { exactStatus } from '../../../core/strictness.js'
import { arbitraryFor } from '../../../core/schema-arbitrary.js'
import { expectEqual, expectOk, expectOrbError, expectThat } from '../../expect.js'
import { controlled, drain, type OrbContext } from '../../orb-case.js'
import type { OrbBotClient } from '../../transport.js'
import {
  EVENTS,
  EVENTS_OP,
  capped,
  clockNow,
  fetched,
  hookMode,
  hookable,
  ids,
  mention,
  nth,
  testEvent,
  within
} from './events-support.js'

// 2.5 Events, the reading side: GET /events, its parameters and the cursor (ORB-043..047), and the cursor mechanics
// the spec leaves open (ORB-A09).

/** The spec's schema of one query parameter of GET /events (ORB-044). */
function eventsParameter (name: string): Record<string, unknown> {
  const op = orbSpec().paths['/api/bot/v1/events']!.get as {
    parameters: Array<{ name: string; schema: Record<string, unknown> }>
  }
  return op.parameters.find((p) => p.name === name)!.schema
}

/** Whether the case may make a test event: it needs control, and it is a write (not in --read-only runs). */
const canMakeEvents = (ctx: OrbContext): boolean =>
  ctx.control !== undefined && ctx.client.target.controlled !== undefined && !ctx.readOnly

/** ORB-043..047: reading GET /events, its parameters and its cursor. */
export const cursorCases: Array<ConformanceCase<OrbBotClient>> = [
  defineCase<OrbBotClient>({
    id: 'ORB-043',
    title: 'GET /events for an app without an endpoint URL answers 200 {events, next, mode: "events"}',
    level: 'required',
    async run (ctx) {
      // A test event (a write: not in --read-only runs) makes sure there is an event to list.
      const made = canMakeEvents(ctx)
      if (made) await testEvent(ctx)
      else if (ctx.readOnly && ctx.control !== undefined) ctx.note('--read-only: no test event made, the events listed are whatever the app holds')
      const body = expectOk(await ctx.client.get(EVENTS), 'GET /events', EVENTS_OP)
      if (ctx.control === undefined && body.mode === 'webhook') throw new CaseSkip('the target\'s full app has an endpoint URL (mode "webhook"); ORB-043 is about apps without one')
      expectThat(Array.isArray(body.events), 'events is an array', 'an array', body.events)
      expectThat(Number.isInteger(body.next), 'next is an integer', 'an integer', body.next)
      expectEqual(body.mode, 'events', 'mode of an app without an endpoint URL')
      if (made) {
        expectThat(
          body.events.length > 0,
          'the test event just made is there',
          'at least one event',
          body.events.length
        )
      }
    }
  }),
  defineCase<OrbBotClient>({
    id: 'ORB-044',
    title: 'after, wait and limit: any valid values answer 200, and wait > 25, limit 0 or > 100, and non-integers answer 400',
    level: 'required',
    async run (ctx) {
      // With control a fresh event lies after every `after` generated, so a valid `wait` never holds the request. The
      // test event is a write: a --read-only run (or one without control) asks with wait=0 only.
      const withEvent = canMakeEvents(ctx)
      let newest = 0
      const end = (await drain(ctx)).next
      if (withEvent) {
        const id = await testEvent(ctx)
        newest = (await fetched(ctx, end, id)).cursor
      } else if (ctx.readOnly && ctx.control !== undefined) {
        ctx.note('--read-only: no test event made, valid polls use wait=0')
      }
      // An `after` past the newest cursor answering 200 is ORB-A09's (the spec does not say): only when exact.
      const afterMax = withEvent ? Math.max(0, newest - 1) : exactStatus(ctx.client) ? 1_000_000 : Math.max(0, end)
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
        fc.record({
          name: fc.constant('wait'),
          value: fc.oneof(fc.integer({ min: 26, max: 1_000_000 }), fc.integer({ min: -1_000_000, max: -1 })).map(String)
        }),
        fc.record({
          name: fc.constant('limit'),
          value: fc
            .oneof(fc.constant(0), fc.integer({ min: 101, max: 1_000_000 }), fc.integer({ min: -1_000_000, max: -1 }))
            .map(String)
        }),
        fc.record({ name: fc.constantFrom('after', 'wait', 'limit'), value: nonInteger })
      )
      await fc.assert(
        fc.asyncProperty(
          fc.oneof(
            valid.map((v) => ({ ok: true as const, v })),
            invalid.map((v) => ({ ok: false as const, v }))
          ),
          async (c) => {
            if (c.ok) {
              const reply = await ctx.client.get(EVENTS, c.v)
              const body = expectOk(
                reply,
                `GET /events?${new URLSearchParams(
                  Object.entries(c.v)
                    .filter(([, v]) => v !== undefined)
                    .map(([k, v]): [string, string] => [k, String(v)])
                ).toString()}`,
                EVENTS_OP
              )
              expectThat(
                body.events.length <= (c.v.limit ?? 50),
                'at most limit events (default 50)',
                `<= ${c.v.limit ?? 50}`,
                body.events.length
              )
            } else {
              const query = `${c.v.name}=${encodeURIComponent(c.v.value)}`
              expectOrbError(await ctx.client.request({ path: EVENTS, query }), 400, `GET /events?${query}`)
            }
          }
        ),
        ctx.fc()
      )
      // The ledger's named examples, once each.
      for (const query of ['wait=26', 'limit=0', 'limit=101', 'after=abc', 'wait=1.5', 'limit=2.5']) {
        expectOrbError(await ctx.client.request({ path: EVENTS, query }), 400, `GET /events?${query}`)
      }
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
      for (let i = 0; i < 6; i++) {
        made.push(i % 3 === 1 ? (await mention(ctx, `cursor ${i}`)).event : await testEvent(ctx))
      }
      const all = (await drain(ctx, start)).events
      expectEqual(
        ids(all),
        [anchorId, ...made],
        `GET /events after ${start}: the events made, in the order they were made`
      )
      const anchor = all[0].cursor as number
      const mine = all.slice(1).map((e) => ({ cursor: e.cursor as number, id: String(e.id) }))
      const newest = mine.at(-1)!.cursor
      // An `after` past the newest cursor answering 200 [] is ORB-A09's: only when exact.
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: anchor, max: exactStatus(ctx.client) ? newest + 3 : newest }),
          fc.option(fc.integer({ min: 1, max: 8 }), { nil: undefined }),
          async (after, limit) => {
            const body = expectOk(
              await ctx.client.get(EVENTS, { after, limit }),
              `GET /events?after=${after}&limit=${limit ?? ''}`,
              EVENTS_OP
            )
            const got = (body.events as any[]).map((e) => ({ cursor: e.cursor, id: String(e.id) }))
            for (const e of got) {
              expectThat(
                Number.isInteger(e.cursor) && e.cursor > after,
                `every event returned for after=${after} has cursor > after`,
                `cursor > ${after}`,
                got
              )
            }
            for (let i = 1; i < got.length; i++) {
              expectThat(
                got[i]!.cursor > got[i - 1]!.cursor,
                'oldest first (ascending cursor)',
                'ascending cursors',
                got
              )
            }
            expectEqual(
              got,
              mine.filter((e) => e.cursor > after).slice(0, limit ?? 50),
              `GET /events?after=${after}&limit=${limit ?? ''}: the retained events past after, first limit of them`
            )
          }
        ),
        ctx.fc()
      )
    }
  }),
  defineCase<OrbBotClient>({
    id: 'ORB-045.follow',
    title:
      'property: following next with random limits from a cursor sees every new event exactly once, in order; re-reading any cursor repeats',
    level: 'required',
    writes: true,
    async run (ctx) {
      controlled(ctx)
      let cursor = (await drain(ctx)).next
      const kinds = fc.array(
        fc.oneof(
          { weight: 3, arbitrary: fc.constant('test' as const) },
          { weight: 1, arbitrary: fc.constant('mention' as const) }
        ),
        { minLength: 1, maxLength: 7 }
      )
      const limits = fc.array(fc.integer({ min: 1, max: 4 }), { minLength: 1, maxLength: 8 })
      await fc.assert(
        fc.asyncProperty(kinds, limits, fc.nat(), async (make, pageSizes, pick) => {
          const made: string[] = []
          for (const kind of make) {
            made.push(kind === 'test' ? await testEvent(ctx) : (await mention(ctx, 'follow')).event)
          }
          const seen: string[] = []
          const pages: Array<{ after: number; limit: number; text: string }> = []
          let after = cursor
          for (let i = 0; ; i++) {
            const limit = pageSizes[i % pageSizes.length]!
            const reply = await ctx.client.get(EVENTS, { after, limit })
            const body = expectOk(reply, `GET /events?after=${after}&limit=${limit}`, EVENTS_OP)
            pages.push({ after, limit, text: JSON.stringify(body) })
            if (body.events.length === 0) {
              // ORB-A09 (a decision, not the spec): an empty page's next is the after it was asked with.
              if (exactStatus(ctx.client)) { expectEqual(body.next, after, `an empty page's next is the after it was asked with (after=${after})`) }
              break
            }
            expectThat(body.events.length <= limit, 'at most limit events', `<= ${limit}`, body.events.length)
            seen.push(...ids(body.events))
            expectThat(
              Number.isInteger(body.next) && body.next > after,
              'next moves past after',
              `> ${after}`,
              body.next
            )
            after = body.next
            if (i > 100) throw new CaseFailure('following next ends', 'an empty page', 'more than 100 pages')
          }
          expectEqual(
            seen,
            made,
            'following next from the cursor before the new events: each seen exactly once, in the order made'
          )
          // ORB-047: any cursor visited gives the same page again.
          const page = pages[pick % pages.length]!
          const again = await ctx.client.get(EVENTS, { after: page.after, limit: page.limit })
          expectEqual(
            again.json,
            JSON.parse(page.text),
            `GET /events?after=${page.after}&limit=${page.limit} read again repeats the same reply`
          )
          cursor = after
        }),
        capped(ctx, 20)
      )
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
      for (const e of events) {
        expectThat(Number.isInteger(e.cursor), `event ${String(e.id)} has an integer cursor`, 'an integer', e.cursor)
      }
      const hook = await hookMode(ctx)
      const id = await testEvent(ctx)
      const delivery = await nth(hook, 1, 'the test event is delivered to the endpoint')
      expectEqual(delivery.json?.id, id, 'the delivery is the test event')
      expectThat(
        !Object.hasOwn(delivery.json ?? {}, 'cursor'),
        'a webhook delivery has no cursor',
        'no "cursor" key',
        Object.keys(delivery.json ?? {})
      )
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
  })
]

/** ORB-A09: the cursor mechanics the spec leaves open. */
export const cursorDecisions: Array<ConformanceCase<OrbBotClient>> = [
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
      expectThat(
        cursors.every((c, i) => Number.isInteger(c) && c >= 1 && (i === 0 || c > cursors[i - 1]!)),
        'cursors are integers from 1, strictly increasing',
        'ascending integers >= 1',
        cursors
      )
      const page = expectOk(await ctx.client.get(EVENTS, { after: start, limit: 2 }), 'a page of 2', EVENTS_OP)
      expectEqual(page.next, cursors[1], 'next is the cursor of the last event returned')
      const newest = cursors[2]!
      for (const after of [newest, newest + 1, newest + 1000]) {
        const body = expectOk(await ctx.client.get(EVENTS, { after }), `GET /events?after=${after}`, EVENTS_OP)
        expectEqual(
          { events: body.events, next: body.next },
          { events: [], next: after },
          `no events after ${after}: next = after`
        )
      }
      expectOrbError(await ctx.client.get(EVENTS, { after: -1 }), 400, 'GET /events?after=-1')
      const oldest = expectOk(
        await ctx.client.get(EVENTS, { after: 0, limit: 1 }),
        'the oldest retained event',
        EVENTS_OP
      ).events[0]
      const below = expectOk(
        await ctx.client.get(EVENTS, { after: Math.floor((oldest.cursor - 1) / 2), limit: 1 }),
        'after below the oldest retained cursor',
        EVENTS_OP
      )
      expectEqual(
        ids(below.events),
        [oldest.id],
        'an after below the oldest retained cursor starts from the oldest retained event'
      )
      const together = await Promise.all([1, 2, 3].map(async () => await ctx.client.get(EVENTS, { after: start })))
      expectThat(
        together.every((r) => r.status === 200 && r.text === together[0]!.text),
        'concurrent GET /events see the same events',
        'three equal replies',
        together.map((r) => r.text.slice(0, 120))
      )
      // Webhook mode: `wait` is ignored (the call returns at once, the clock unmoved), and next = after.
      await hookMode(ctx)
      const virtual = await ctx.virtualTime()
      const before = virtual ? await clockNow(ctx) : 0
      const quick = await within(
        ctx.client.get(EVENTS, { after: newest, wait: 25 }),
        3000,
        'GET /events?wait=25 in webhook mode returns at once'
      )
      const body = expectOk(quick, 'GET /events?wait=25 in webhook mode', EVENTS_OP)
      expectEqual(
        { events: body.events, next: body.next, mode: body.mode },
        { events: [], next: newest, mode: 'webhook' },
        'webhook mode: [] and next = after'
      )
      if (virtual) expectEqual(await clockNow(ctx), before, "no time passed on the target's clock")
    }
  })
]
