import fc from 'fast-check'
import { ORB_LIMITS, orbSpec } from '../../../../../src/spec/orb.js'
import { defineCase, type ConformanceCase } from '../../../core/case.js'
import { arbitraryFor } from '../../../core/schema-arbitrary.js'
import { expectEqual, expectOk, expectOrbError, expectThat } from '../../expect.js'
import { BOT, channel, controlled, fullAppId, type OrbContext } from '../../orb-case.js'
import type { OrbBotClient } from '../../transport.js'
import { MESSAGES, POST, clockRuns, highestId, postBudget, postOk, readPage, remove, send } from './messages-support.js'

/*
 * Posting (ORB-023..025): the request body against the spec's schema, the PostedMessage a post answers, and
 * reply_to.
 */

/** JSON values of every type but `type` (wrong types for a field, ORB-023). */
function notOfType (type: 'string' | 'integer'): fc.Arbitrary<unknown> {
  const all = fc.oneof(
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }).filter((d) => !Number.isInteger(d)),
    fc.boolean(),
    fc.constant(null),
    fc.string({ maxLength: 8 }),
    fc.array(fc.integer(), { maxLength: 3 }),
    fc.dictionary(fc.string({ maxLength: 4 }), fc.integer(), { maxKeys: 2 })
  )
  return all.filter((v) => type === 'string' ? typeof v !== 'string' : !Number.isInteger(v))
}

// The request body's schema, straight from the spec (ORB-023).
function postBodySchema (): Record<string, any> {
  return (orbSpec().paths['/api/bot/v1/messages']!.post as any).requestBody.content['application/json'].schema
}

// Content a real Orb could take for a card or @everyone is kept out of generated valid content.
const PLAIN = (s: string): boolean =>
  !/^[\s\u200b-\u200d\u2060\ufeff]*$/u.test(s) && !/@everyone/i.test(s) && !/^\s*\//m.test(s)

/** The app's member id: GET /app's `member` (ORB-A06), else the control API's record of the app. */
async function appMember (ctx: OrbContext): Promise<string | undefined> {
  const reply = await ctx.client.get(`${BOT}/app`)
  if (reply.status === 200 && typeof reply.json?.member === 'string') return reply.json.member
  if (ctx.control !== undefined) {
    const id = await fullAppId(ctx)
    const app = ((await ctx.control.orbState()).apps as any[]).find((a) => a.id === id)
    if (typeof app?.member === 'string') return app.member
  }
  return undefined
}

/** One change of ORB-023's property to a valid body, or none. */
type Mutation =
  | { kind: 'valid' }
  | { kind: 'no body' }
  | { kind: 'not an object'; body: unknown }
  | { kind: 'drop'; fields: string[] }
  | { kind: 'too long'; content: string }
  | { kind: 'wrong type'; field: string; value: unknown }

/** ORB-023's changes to a valid body: none, no body, no object, a field missing, content too long, a wrong type. */
function postMutations (): fc.Arbitrary<Mutation> {
  const { messageLength } = ORB_LIMITS
  return fc.oneof(
    { weight: 2, arbitrary: fc.constant<Mutation>({ kind: 'valid' }) },
    { weight: 1, arbitrary: fc.constant<Mutation>({ kind: 'no body' }) },
    {
      weight: 1,
      arbitrary: fc
        .oneof(
          fc.constant(null),
          fc.array(fc.jsonValue({ maxDepth: 1 }), { maxLength: 3 }),
          fc.string({ maxLength: 10 }),
          fc.integer(),
          fc.boolean()
        )
        .map((body): Mutation => ({ kind: 'not an object', body }))
    },
    {
      weight: 2,
      arbitrary: fc
        .constantFrom('channel', 'content', 'both')
        .map((f): Mutation => ({ kind: 'drop', fields: f === 'both' ? ['channel', 'content'] : [f] }))
    },
    {
      weight: 2,
      arbitrary: fc
        .tuple(
          fc.integer({ min: messageLength + 1, max: messageLength + 100 }),
          fc.constantFrom('x', 'é', '字', '🙂', 'ab ')
        )
        .map(([n, unit]): Mutation => ({ kind: 'too long', content: [...unit.repeat(n)].slice(0, n).join('') }))
    },
    {
      weight: 3,
      arbitrary: fc.oneof(
        notOfType('string').map((value): Mutation => ({ kind: 'wrong type', field: 'channel', value })),
        notOfType('string').map((value): Mutation => ({ kind: 'wrong type', field: 'content', value })),
        notOfType('integer').map((value): Mutation => ({ kind: 'wrong type', field: 'reply_to', value }))
      )
    }
  )
}

/** The body `change` makes of a valid `body` (a copy; `no body` is sent without one). */
function mutated (body: Record<string, unknown>, change: Mutation): unknown {
  if (change.kind === 'not an object') return change.body
  const sent: Record<string, unknown> = { ...body }
  if (change.kind === 'drop') for (const f of change.fields) delete sent[f]
  if (change.kind === 'too long') sent.content = change.content
  if (change.kind === 'wrong type') sent[change.field] = change.value
  return sent
}

/** The cases of posting, in the suite's order. */
export const postingCases: Array<ConformanceCase<OrbBotClient>> = [
  defineCase<OrbBotClient>({
    id: 'ORB-023',
    title: 'POST /messages: bodies generated from the spec\'s schema are accepted; no body, a missing field, 2001 characters or a wrong type is 400',
    level: 'required',
    writes: true,
    async run (ctx) {
      const text = channel(ctx, 'text')
      const target = await postOk(ctx, text, `reply target ${ctx.uid('t')}`)
      const schema = postBodySchema()
      // Valid: the spec's schema, with the one text channel, a reply to a message of it, and plain content.
      const valid = arbitraryFor(schema, schema, {
        channel: fc.constant(text),
        content: arbitraryFor(schema.properties.content, schema).filter((s) => PLAIN(s as string)),
        reply_to: fc.constant(target.id)
      }) as fc.Arbitrary<Record<string, unknown>>
      const mutation = postMutations()
      // Refused bodies cost no window slot (ORB-A03); on a real clock the accepted ones are few (ORB-031's 12 a
      // minute).
      const virtual = await ctx.virtualTime()
      const budget = postBudget(virtual, 3)
      let accepted = 0
      await fc.assert(fc.asyncProperty(valid, mutation, async (body, change) => {
        if (change.kind === 'valid') {
          fc.pre(accepted < budget)
          const reply = await send(ctx, body)
          expectOk(reply, `POST /messages ${JSON.stringify(body).slice(0, 120)} (valid by the spec's schema)`, POST)
          accepted++
          await remove(ctx, reply.json.id)
          return
        }
        const sent = mutated(body, change)
        const reply = change.kind === 'no body'
          ? await ctx.client.request({ method: 'POST', path: MESSAGES })
          : await send(ctx, sent)
        expectOrbError(reply, 400, `POST /messages with ${change.kind === 'no body' ? 'no body' : JSON.stringify(sent).slice(0, 120)} (${change.kind}${change.kind === 'wrong type' ? ` ${change.field}` : ''})`)
      }), virtual ? ctx.fc() : ctx.fc({ endOnFailure: true }))
      // The bound itself: the spec's longest content is allowed, one character more is not.
      const most = ORB_LIMITS.messageLength
      const at = await send(ctx, { channel: text, content: 'x'.repeat(most) })
      expectOk(at, `POST /messages with ${most} characters of content`, POST)
      expectOrbError(
        await send(ctx, { channel: text, content: 'x'.repeat(most + 1) }),
        400,
        `POST /messages with ${most + 1} characters of content`
      )
      ctx.note(`${accepted} generated valid bodies accepted${virtual ? '' : ` (real clock: at most ${budget})`}`)
    }
  }),

  defineCase<OrbBotClient>({
    id: 'ORB-024',
    title: 'a post answers 200 PostedMessage (id, channel, server, created, author) whose author is the app\'s member with bot: true',
    level: 'required',
    writes: true,
    async run (ctx) {
      const text = channel(ctx, 'text')
      const member = await appMember(ctx)
      const first = await send(ctx, { channel: text, content: `who posts ${ctx.uid('p')}` })
      const body = expectOk(first, 'POST /messages', POST)
      const shape =
        Number.isInteger(body.id) &&
        body.channel === text &&
        body.server === ctx.client.target.community &&
        Number.isInteger(body.created) &&
        typeof body.author?.id === 'string' &&
        typeof body.author?.name === 'string' &&
        body.author?.bot === true
      expectThat(
        shape,
        'the PostedMessage has every field, the channel and community posted to, and author.bot true',
        `{"id":int,"channel":"${text}","server":"${ctx.client.target.community}","created":int,"author":{"id","name","bot":true}}`,
        body
      )
      if (member !== undefined) { expectEqual(body.author.id, member, "author.id is the app's member id (GET /app member)") } else { ctx.note("the app's member id is not known (no GET /app member, no control): author compared across posts only") }
      const second = expectOk(
        await send(ctx, { channel: text, content: `again ${ctx.uid('p')}` }),
        'a second POST /messages',
        POST
      )
      expectEqual(second.author, body.author, 'every post of the app has the same author: its member')
      expectThat(second.id > body.id, 'a later post has a higher id', `> ${body.id}`, second.id)
      // Read back, the message carries the same author.
      const page = await readPage(ctx, text, { before: second.id + 1, limit: 2 })
      expectEqual(
        page.messages.map((m) => [m.id, m.author]),
        [
          [body.id, body.author],
          [second.id, body.author]
        ],
        "GET /messages shows the posts with the app's member as author"
      )
    }
  }),

  defineCase<OrbBotClient>({
    id: 'ORB-025',
    title: 'reply_to must name a message of the same channel: one of it is accepted (replyTo read back); another channel\'s or an unknown id is 400',
    level: 'required',
    writes: true,
    async run (ctx) {
      const text = channel(ctx, 'text')
      const parent = await postOk(ctx, text, `parent ${ctx.uid('r')}`)
      const child = await postOk(ctx, text, `child ${ctx.uid('r')}`, { reply_to: parent.id })
      const page = await readPage(ctx, text, { before: child.id + 1, limit: 1 })
      expectEqual(page.messages[0]?.replyTo, parent.id, 'the reply reads back with replyTo = the message replied to')
      // Unknown ids: far above every id the channel shows.
      const top = await highestId(ctx, text, child.id)
      await fc.assert(
        fc.asyncProperty(fc.integer({ min: 1_000_000, max: 1_000_000_000 }), async (gap) => {
          expectOrbError(
            await send(ctx, { channel: text, content: 'a reply to nothing', reply_to: top + gap }),
            400,
            `reply_to ${top + gap}, an unknown id`
          )
        }),
        clockRuns(ctx, await ctx.virtualTime(), 5, 5)
      )
      // Another channel's message: one read from the read-only channel, else one a member posts in another channel.
      let foreign: { id: number; channel: string } | undefined
      const readOnly = ctx.client.target.channels.readOnly
      if (readOnly !== undefined) {
        const m = (await readPage(ctx, readOnly, { limit: 1 })).messages[0]
        if (m !== undefined) foreign = { id: m.id, channel: readOnly }
      }
      if (foreign === undefined && ctx.control !== undefined && ctx.client.target.controlled !== undefined) {
        const { control, world, target } = controlled(ctx)
        const elsewhere = target.channels.readOnly ?? target.channels.hidden ?? target.channels.outsideAllowList
        if (elsewhere !== undefined) {
          const m = await control.memberPost({
            server: target.community,
            channel: elsewhere,
            member: world.member,
            content: `elsewhere ${ctx.uid('r')}`
          })
          foreign = { id: m.id, channel: elsewhere }
        }
      }
      if (foreign === undefined) {
        ctx.note('no message of another channel is known (no read-only channel with messages, no control): the cross-channel half was not run')
        return
      }
      expectOrbError(await send(ctx, { channel: text, content: 'a reply across channels', reply_to: foreign.id }), 400, `reply_to ${foreign.id}, a message of ${foreign.channel}, posted in ${text}`)
    }
  })
]
