import fc from 'fast-check'
import { defineCase, type ConformanceCase } from '../../../core/case.js'
import { expectEqual, expectOrbError } from '../../expect.js'
import { few } from '../../orb-case.js'
import type { OrbBotClient } from '../../transport.js'
import {
  clockNow,
  expectAnswer,
  fetched,
  holdNext,
  interaction,
  mention,
  nth,
  pingEvent,
  pingHook,
  pingStart,
  records,
  respond,
  respondOk,
  respondPath,
  sleep,
  testEvent,
  typePing,
  virtualOnly
} from './events-support.js'

// 2.7 Interactions: answering an application_command event through /respond (ORB-066..072), inline answers against
// /respond (ORB-A13) and the order of respond's errors and its deadline (ORB-A14).

/** ORB-066..072 (2.7): answering application_command events. */
export const interactionCases: Array<ConformanceCase<OrbBotClient>> = [
  defineCase<OrbBotClient>({
    id: 'ORB-066',
    title: 'answering a fresh application_command event within 6 s answers 200, and the answer goes to the member who typed it',
    level: 'required',
    writes: true,
    async run (ctx) {
      const { world, start } = await pingStart(ctx)
      const invoked = await typePing(ctx)
      const event = await fetched(ctx, start, invoked)
      expectEqual(event.type, 'application_command', 'the event of the typed command')
      await respondOk(ctx, event.id, 'pong', `POST /interactions/${String(event.id)}/respond`)
      const seen = await interaction(ctx, invoked)
      expectEqual(
        { member: seen.member, content: seen.answer?.content },
        { member: world.member, content: 'pong' },
        'the member who typed the command got the answer'
      )
    }
  }),
  defineCase<OrbBotClient>({
    id: 'ORB-067',
    title: 'a second answer to an interaction answers 409 with an Error body',
    level: 'required',
    writes: true,
    async run (ctx) {
      const id = await pingEvent(ctx)
      await respondOk(ctx, id, 'first', 'the first answer')
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
      const id = await pingEvent(ctx)
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
      const id = await pingEvent(ctx)
      const nonString = fc.oneof(
        fc.integer(),
        fc.double({ noNaN: true, noDefaultInfinity: true }),
        fc.boolean(),
        fc.constant(null),
        fc.array(fc.string({ maxLength: 5 }), { maxLength: 3 }),
        fc.dictionary(fc.string({ maxLength: 5 }), fc.string({ maxLength: 5 }), { maxKeys: 3 })
      )
      const body = fc.oneof(
        fc.constant({ what: 'no body', body: undefined }),
        fc
          .dictionary(
            fc.string({ maxLength: 8 }).filter((k) => k !== 'content'),
            fc.jsonValue({ maxDepth: 1 }),
            { maxKeys: 3 }
          )
          .map((b) => ({ what: 'no content', body: b as unknown })),
        nonString.map((content) => ({ what: 'a non-string content', body: { content } as unknown })),
        fc
          .integer({ min: 1801, max: 4000 })
          .chain((n) => fc.string({ unit: 'grapheme-ascii', minLength: n, maxLength: n }))
          .map((content) => ({ what: `content of ${content.length} characters`, body: { content } as unknown })),
        fc
          .oneof(
            fc.array(fc.string({ maxLength: 5 }), { maxLength: 2 }),
            fc.string({ maxLength: 10 }),
            fc.integer(),
            fc.boolean(),
            fc.constant(null)
          )
          .map((b) => ({ what: 'a body that is not an object', body: b as unknown }))
      )
      await fc.assert(
        fc.asyncProperty(body, async ({ what, body }) => {
          const reply =
            body === undefined
              ? await ctx.client.request({ method: 'POST', path: respondPath(id) })
              : await ctx.client.request({ method: 'POST', path: respondPath(id), body })
          expectOrbError(reply, 400, `respond with ${what}`)
        }),
        ctx.fc()
      )
      expectOrbError(await respond(ctx, id, { content: 'x'.repeat(1801) }), 400, 'respond with 1801 characters')
      expectOrbError(await respond(ctx, id, {}), 400, 'respond without content')
      // The refused bodies did not use the answer up.
      await respondOk(ctx, id, 'y'.repeat(1800), 'respond with exactly 1800 characters after the refused ones')
    }
  }),
  defineCase<OrbBotClient>({
    id: 'ORB-072',
    title: 'a webhook app answers inline with {notice}: the member gets it, and a later /respond answers 409',
    level: 'required',
    writes: true,
    async run (ctx) {
      const hook = await pingHook(ctx)
      hook.script({ status: 200, body: { notice: 'pong inline' } })
      const id = await typePing(ctx)
      const delivery = await nth(hook, 1, 'the typed command is delivered to the endpoint')
      expectEqual(delivery.json?.id, id, 'the delivered event')
      await records(ctx, id, 1)
      await expectAnswer(ctx, id, { content: 'pong inline', via: 'inline' }, 'the member sees the inline notice')
      expectOrbError(
        await respond(ctx, id, { content: 'by the route' }),
        409,
        '/respond after an inline answer (ORB-A13)'
      )
    }
  })
]

/** ORB-A13, A14: inline answers against /respond, and the order of respond errors. */
export const interactionDecisions: Array<ConformanceCase<OrbBotClient>> = [
  defineCase<OrbBotClient>({
    id: 'ORB-A13',
    title: 'inline versus /respond: no notice or a late one shows nothing and /respond still works within 6 s; the first answer wins',
    level: 'decision',
    writes: true,
    async run (ctx) {
      await virtualOnly(ctx, 'answers held past 4 s but within 6 s')
      const hook = await pingHook(ctx)
      // No notice: nothing shown; a webhook app may still /respond within the window.
      hook.script({ status: 200, body: {} })
      const bare = await typePing(ctx)
      await nth(hook, 1, 'the command without notice')
      await records(ctx, bare, 1)
      expectEqual((await interaction(ctx, bare)).answer, null, 'a 2xx without notice shows the member nothing')
      await respondOk(ctx, bare, 'by the route', '/respond by a webhook app within 6 s')
      // /respond first, while the delivery is held: the later inline notice does not replace it.
      const hold = holdNext(ctx, hook, { notice: 'inline, second' })
      const race = await typePing(ctx)
      await nth(hook, 2, 'the held command')
      await respondOk(ctx, race, 'route, first', '/respond while the delivery is held')
      hold.release()
      await records(ctx, race, 1)
      await expectAnswer(ctx, race, { content: 'route, first', via: 'respond' }, 'the first answer wins')
      // A notice after 4 s is not shown; /respond still works before 6 s.
      const late = holdNext(ctx, hook, { notice: 'too late' })
      const slow = await typePing(ctx)
      await nth(hook, 3, 'the slow command')
      await ctx.elapse(4000)
      await records(ctx, slow, 1)
      late.release()
      await sleep(30)
      expectEqual((await interaction(ctx, slow)).answer, null, 'a notice after 4 s is not shown')
      await respondOk(ctx, slow, 'by the route at 4 s', '/respond 4 s after the command')
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
      const { start } = await pingStart(ctx)
      const [a, b, c] = [
        await typePing(ctx),
        await typePing(ctx),
        await typePing(ctx)
      ]
      const { event: mentioned } = await mention(ctx, 'precedence')
      const test = await testEvent(ctx)
      const invokedAt = (await fetched(ctx, start, c)).data.invoked_at as number
      expectEqual(await clockNow(ctx), invokedAt, 'invoked_at is now (nothing has moved the clock)')
      expectOrbError(
        await respond(ctx, `evt_${ctx.uid('unknown').replace(/-/g, '_')}`, { content: 'x' }),
        404,
        'an unknown event id'
      )
      expectOrbError(await respond(ctx, a, { content: 'x' }, 'few'), 404, "another app's command event")
      expectOrbError(
        await respond(ctx, mentioned, { content: 'x' }, 'few'),
        404,
        "another app's mention event (404 before 400)"
      )
      await respondOk(ctx, a, 'first', 'answering a fresh command')
      await ctx.elapse(5999)
      await respondOk(ctx, b, 'at 5999 ms', 'an answer 5999 ms after invoked_at')
      await ctx.elapse(1)
      expectOrbError(await respond(ctx, c, { content: 'at 6000 ms' }), 410, 'an answer exactly 6 s after invoked_at')
      expectOrbError(await respond(ctx, a, { content: 'again' }), 409, 'answered and expired (409 before 410)')
      expectOrbError(await respond(ctx, test, { content: 'x' }), 400, 'an expired non-command (400 before 410)')
      expectOrbError(await respond(ctx, mentioned, { content: 'x' }), 400, 'the app\'s own mention event')
    }
  })
]
