import fc from 'fast-check'
import { CaseSkip, defineCase, type ConformanceCase } from '../../../core/case.js'
import { exactStatus } from '../../../core/strictness.js'
import { expectEqual, expectOk, expectThat } from '../../expect.js'
import { controlled, drain } from '../../orb-case.js'
import type { OrbBotClient } from '../../transport.js'
import {
  EVENTS,
  EVENTS_OP,
  appOf,
  capped,
  clockNow,
  fetched,
  heldPolls,
  hookMode,
  hookable,
  ids,
  nth,
  sleep,
  testEvent,
  untilHeld,
  virtualOnly,
  within
} from './events-support.js'

// 2.5 Events, the queue: how long events are kept, long polls, and no queue at all in webhook mode (ORB-049..051);
// switching modes empties it (ORB-A05).

const HOUR = 3_600_000

/** ORB-049..051: how long events are kept, long polls, and no queue in webhook mode. */
export const queueCases: Array<ConformanceCase<OrbBotClient>> = [
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
      const made = await control.testEvents(app, 500)
      const { events } = await drain(ctx, 0)
      expectThat(events.length === 500, 'at most 500 events are kept', 500, events.length)
      expectThat(
        !ids(events).includes(younger),
        'the 501st event drops the oldest',
        `no ${younger}`,
        ids(events).slice(0, 3)
      )
      expectEqual(ids(events), made, 'the 500 newest are kept, oldest first')
      // Leave no 500 test events behind for the later cases to page through: a switch of mode empties the queue
      // (ORB-A05).
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
          expectThat(
            took >= wait * 1000 - 250,
            `with no event the poll is held about ${wait} s`,
            `>= ${wait * 1000 - 250} ms`,
            `${took} ms`
          )
          expectThat(
            took < wait * 1000 + 5000,
            `the poll is held up to ${wait} s, then answers []`,
            `< ${wait * 1000 + 5000} ms`,
            `${took} ms`
          )
          ctx.note('without control or a virtual clock: checked the timeout half only, in real time')
          return
        }
        throw new CaseSkip('events kept arriving during every poll: the timeout could not be observed')
      }
      // A test event is a write: a --read-only run starts from the current end and leaves out the early answer.
      const start = (await drain(ctx)).next
      const newest = ctx.readOnly ? start : ((await fetched(ctx, start, await testEvent(ctx))).cursor as number)
      await fc.assert(
        fc.asyncProperty(fc.integer({ min: 1, max: 25 }), async (n) => {
          let answered = false
          const poll = ctx.client.get(EVENTS, { after: newest, wait: n }).then((r) => {
            answered = true
            return r
          })
          await untilHeld(ctx)
          if (n > 1) await ctx.elapse(n * 1000 - 1000)
          await sleep(5)
          expectThat(
            !answered && (await heldPolls(ctx)) === 1,
            `wait=${n}: still held ${n - 1} s in`,
            'held',
            answered ? 'answered' : 'not held'
          )
          await ctx.elapse(1000)
          const reply = await within(poll, 3000, `wait=${n}: answered once ${n} s have passed on the target's clock`)
          const body = expectOk(reply, `GET /events?after=${newest}&wait=${n}`, EVENTS_OP)
          expectEqual(body.events, [], `wait=${n} with no event: []`)
          // ORB-A09 (a decision): next = after.
          if (exactStatus(ctx.client)) expectEqual(body.next, newest, `wait=${n} with no event: next = after`)
        }),
        capped(ctx, 5)
      )
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
    title:
      'with an endpoint URL, GET /events answers events: [] with mode "webhook", and the event goes to the endpoint',
    level: 'required',
    writes: true,
    async run (ctx) {
      const hook = await hookMode(ctx)
      const first = expectOk(await ctx.client.get(EVENTS, { after: 0 }), 'GET /events in webhook mode', EVENTS_OP)
      expectEqual(
        { events: first.events, mode: first.mode },
        { events: [], mode: 'webhook' },
        'GET /events of an app with an endpoint URL'
      )
      const id = await testEvent(ctx)
      const delivery = await nth(hook, 1, 'the event goes to the endpoint URL')
      expectEqual(delivery.json?.id, id, 'the delivered event')
      const after = expectOk(
        await ctx.client.get(EVENTS, { after: 0 }),
        'GET /events in webhook mode after an event',
        EVENTS_OP
      )
      expectEqual(
        { events: after.events, mode: after.mode },
        { events: [], mode: 'webhook' },
        'the event is not listed by GET /events'
      )
    }
  })
]

/** ORB-A05: switching between webhook and events mode. */
export const queueDecisions: Array<ConformanceCase<OrbBotClient>> = [
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
  })
]
