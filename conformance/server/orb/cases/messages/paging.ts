import fc from 'fast-check'
import { orbSpec } from '../../../../../src/spec/orb.js'
import { CaseSkip, defineCase, type ConformanceCase } from '../../../core/case.js'
import { arbitraryFor } from '../../../core/schema-arbitrary.js'
import { expectOk, expectOrbError, expectThat } from '../../expect.js'
import { channel, type OrbContext } from '../../orb-case.js'
import type { OrbBotClient } from '../../transport.js'
import {
  DeleteOwn,
  MemberPost,
  PostOwn,
  Read,
  Walk,
  expectAscending,
  type BeforeChoice,
  type PagingModel,
  type PagingReal
} from './paging-model.js'
import { MESSAGES, READ, clockRuns, postOk, readAll, readPage, remove } from './messages-support.js'

/*
 * Paging (ORB-033, ORB-034): GET /messages' query (channel, limit, before) generated from the spec, and paging
 * checked against a model (paging-model.ts).
 */

/** A message of the case's own, posted to `text`; with --read-only the newest one there stands for it. */
async function ownMessage (ctx: OrbContext, text: string): Promise<any> {
  if (!ctx.readOnly) return await postOk(ctx, text, `query ${ctx.uid('q')}`)
  const newest = (await readPage(ctx, text, { limit: 1 })).messages[0]
  if (newest === undefined) throw new CaseSkip(`${text} holds no message, and --read-only forbids posting one`)
  ctx.note(`--read-only: nothing was posted; message ${String(newest.id)}, the newest, stands for the case's own`)
  return newest
}

// A query parameter's schema, straight from the spec (ORB-033).
function readParameter (name: string): Record<string, any> {
  return ((orbSpec().paths['/api/bot/v1/messages']!.get as any).parameters as any[]).find((p) => p.name === name).schema
}

/** The cases of paging, in the suite's order. */
export const pagingCases: Array<ConformanceCase<OrbBotClient>> = [
  defineCase<OrbBotClient>({
    id: 'ORB-033',
    title: 'GET /messages: channel is required, limit is an integer 1..50, before an integer (generated); valid queries give pages that honour limit and before',
    level: 'required',
    // Not `writes`: it reads. Unless --read-only it posts one message first, to know the newest id; read-only it takes
    // the newest message the channel holds.
    async run (ctx) {
      const text = channel(ctx, 'text')
      const mine = await ownMessage(ctx, text)
      const newest = await readPage(ctx, text, { limit: 3 })
      const ids = newest.messages.map((m) => m.id as number)
      expectThat(ids.includes(mine.id), 'the newest page holds the message just posted', mine.id, ids)
      // before = an id: that message itself is not returned, only older ones.
      const older = await readPage(ctx, text, { before: mine.id, limit: 50 })
      expectThat(
        !older.messages.some((m) => m.id === mine.id),
        `GET before=${mine.id} returns message ${mine.id} itself`,
        `ids below ${mine.id}`,
        older.messages.map((m) => m.id)
      )
      const known = (await readAll(ctx, text, 2)).map((m) => m.id as number)
      const nonInteger = fc.oneof(
        fc.stringMatching(/^[a-z]{1,8}$/),
        fc.tuple(fc.integer({ min: -100, max: 100 }), fc.integer({ min: 1, max: 9 })).map(([i, f]) => `${i}.${f}`)
      )
      type Query = { valid: boolean; query: Record<string, string | number | undefined> }
      const limitSchema = readParameter('limit')
      const beforeSchema = readParameter('before')
      const validQuery: fc.Arbitrary<Query> = fc
        .record({
          limit: fc.option(arbitraryFor(limitSchema, limitSchema) as fc.Arbitrary<number>, { nil: undefined }),
          before: fc.option(
            fc.oneof(arbitraryFor(beforeSchema, beforeSchema) as fc.Arbitrary<number>, fc.constantFrom(...known)),
            { nil: undefined }
          )
        })
        .map((q) => ({ valid: true, query: { channel: text, ...q } }))
      const invalidQuery: fc.Arbitrary<Query> = fc.oneof(
        fc
          .record({ limit: fc.option(fc.integer({ min: 1, max: 50 }), { nil: undefined }) })
          .map((q) => ({ valid: false, query: { ...q } })),
        fc
          .oneof(fc.integer({ min: -1_000_000, max: 0 }), fc.integer({ min: 51, max: 1_000_000 }), nonInteger)
          .map((limit) => ({ valid: false, query: { channel: text, limit } })),
        nonInteger.map((before) => ({ valid: false, query: { channel: text, before } }))
      )
      await fc.assert(
        fc.asyncProperty(fc.oneof(validQuery, invalidQuery), async ({ valid, query }) => {
          const what = `GET /messages?${new URLSearchParams(
            Object.entries(query)
              .filter(([, v]) => v !== undefined)
              .map(([k, v]): [string, string] => [k, String(v)])
          ).toString()}`
          const reply = await ctx.client.get(MESSAGES, query)
          if (!valid) {
            expectOrbError(reply, 400, what)
            return
          }
          const body = expectOk(reply, what, READ)
          expectThat(Array.isArray(body.messages), `${what}: messages is an array`, '[…]', body)
          const page = (body.messages as any[]).map((m) => m.id as number)
          const limit = (query.limit as number | undefined) ?? 50
          expectThat(page.length <= limit, `${what}: more messages than limit`, `at most ${limit}`, page.length)
          const before = query.before as number | undefined
          if (before !== undefined) {
            expectThat(
              page.every((id) => id < before),
              `${what}: only ids below before`,
              `ids below ${before}`,
              page
            )
          }
          expectAscending(page, what)
        }),
        ctx.fc()
      )
    }
  }),

  defineCase<OrbBotClient>({
    id: 'ORB-034.model',
    title: 'paging as a state machine: random posts, deletes (and members\' posts) and reads with random before/limit match a model; walking back with before visits each message once',
    level: 'required',
    writes: true,
    async run (ctx) {
      const text = channel(ctx, 'text')
      const members = ctx.control !== undefined && ctx.client.target.controlled !== undefined
      if (!members) ctx.note('without the control API only the app\'s own posts are modelled')
      // A real clock admits 12 posts a minute in the channel (ORB-031): 2 runs of at most 8 posts each (the anchor, 5
      // drawn posts, the 2 of the closing walk) fit a couple of windows. A virtual clock takes the full run.
      const virtual = await ctx.virtualTime()
      const budget = virtual ? Number.POSITIVE_INFINITY : 5
      if (!virtual) ctx.note('real clock: 2 runs of at most 8 commands and 5 drawn posts each (throttle windows)')
      const before: fc.Arbitrary<BeforeChoice> = fc.oneof(
        { weight: 2, arbitrary: fc.constant<BeforeChoice>({ kind: 'none' }) },
        { weight: 4, arbitrary: fc.nat().map((n): BeforeChoice => ({ kind: 'made', n })) },
        { weight: 1, arbitrary: fc.constant<BeforeChoice>({ kind: 'anchor' }) },
        { weight: 1, arbitrary: fc.integer({ min: 1, max: 3 }).map((k): BeforeChoice => ({ kind: 'above', k })) }
      )
      const limit = fc.oneof(
        { weight: 5, arbitrary: fc.integer({ min: 1, max: 6 }) },
        { weight: 1, arbitrary: fc.constantFrom<number | undefined>(undefined, 50) }
      )
      const commands = fc.commands<PagingModel, PagingReal, false>(
        [
          fc.constant(new PostOwn()),
          ...(members ? [fc.constant(new MemberPost())] : []),
          fc.nat().map((n) => new DeleteOwn(n)),
          fc.tuple(before, limit).map(([b, l]) => new Read(b, l)),
          fc.integer({ min: 1, max: 4 }).map((l) => new Walk(l))
        ],
        { maxCommands: virtual ? 14 : 8 }
      )
      await fc.assert(
        fc.asyncProperty(commands, async (cmds) => {
          const uid = ctx.uid('page')
          const anchor = await postOk(ctx, text, `anchor ${uid}`)
          const model: PagingModel = { anchor: anchor.id, budget, live: [], own: [], made: [] }
          try {
            const real: PagingReal = { ctx, channel: text, uid }
            await fc.asyncModelRun(() => ({ model, real }), cmds)
            // Every run ends with a walk one message a page over two fresh posts, whatever the commands drew.
            for (const cmd of [new PostOwn(), new PostOwn(), new Walk(1)]) await cmd.run(model, real)
          } finally {
            for (const id of [...model.own, anchor.id]) await remove(ctx, id)
          }
        }),
        clockRuns(ctx, virtual, 15, 2)
      )
    }
  })
]
