import fc from 'fast-check'
import { defineCase, type ConformanceCase } from '../../../core/case.js'
import { expectEqual, expectOk, expectOrbError, expectThat } from '../../expect.js'
import {
  BOT,
  DIRECTORY,
  channel,
  controlled,
  drain,
  fullAppId,
  post,
  syncCommands,
  type OrbContext
} from '../../orb-case.js'
import type { OrbBotClient } from '../../transport.js'
import { postProbe, readApp, readDirectory } from './access-support.js'

/** orbtest's decisions on HTTP conventions (ORB-A23) and on the exact spelling of field names (ORB-A24). */
export const conventionCases: Array<ConformanceCase<OrbBotClient>> = [
  defineCase<OrbBotClient>({
    id: 'ORB-A23',
    title:
      'HTTP conventions: wrong method 405, non-JSON content type 415, broken JSON 400, unknown route 404, unknown parameters and fields ignored, success 200',
    level: 'decision',
    writes: true,
    async run (ctx) {
      // Without a text channel the case skips before it sends anything.
      const text = channel(ctx, 'text')
      await expectWrongMethods(ctx)
      await expectWrongContentTypes(ctx)
      await expectBrokenJson(ctx)
      await expectUnknownRoutes(ctx)
      await expectUnknownPartsIgnored(ctx)
      await expectSuccessIs200(ctx, text)
    }
  }),

  defineCase<OrbBotClient>({
    id: 'ORB-A24',
    title:
      'field names are exactly as written: hasOlder, replyTo, reply_to, sent_at, chainId, feeBps, feeRecipient, readOnly',
    level: 'decision',
    writes: true,
    async run (ctx) {
      const text = channel(ctx, 'text')
      const has = (value: any, name: string, not: string, what: string): void => {
        expectThat(
          value !== null && typeof value === 'object' && name in value && !(not in value),
          `${what}: ${name} (not ${not})`,
          name,
          Object.keys(value ?? {})
        )
      }
      const registry = (await readDirectory(ctx)).registry
      has(registry, 'chainId', 'chain_id', 'the registry')
      has(registry, 'feeBps', 'fee_bps', 'the registry')
      has(registry, 'feeRecipient', 'fee_recipient', 'the registry')
      for (const c of (await readApp(ctx, 'full', ctx.client.target.community)).channels as any[]) { has(c, 'readOnly', 'read_only', `channel ${String(c.id)}`) }
      // reply_to in, replyTo out.
      const first = await post(ctx, 'orbtest: field names')
      const reply = await postProbe(ctx, { channel: text, content: 'orbtest: a reply', reply_to: first.id })
      expectOk(reply, 'POST /messages with reply_to')
      const page = expectOk(await ctx.client.get(`${BOT}/messages`, { channel: text, limit: 5 }), 'GET /messages')
      has(page, 'hasOlder', 'has_older', 'GET /messages')
      const back = (page.messages as any[]).find((m) => m.id === reply.json.id)
      has(back, 'replyTo', 'reply_to', 'a message')
      expectEqual(back.replyTo, first.id, 'replyTo of the reply')
      if (ctx.client.target.controlled === undefined) return
      // sent_at on an event (a test event the developer sends).
      const { control, target } = controlled(ctx)
      const from = (await drain(ctx)).next
      await control.testEvent(await fullAppId(ctx))
      const events = (await drain(ctx, from)).events
      expectThat(events.length > 0, 'the test event is fetched', 'an app.test event', events)
      has(events.at(-1), 'sent_at', 'sentAt', `event of ${target.full.id ?? 'the app'}`)
    }
  })
]

/** ORB-A23: a route asked with a method it does not take answers 405. */
async function expectWrongMethods (ctx: OrbContext): Promise<void> {
  for (const [method, path] of [
    ['PATCH', `${BOT}/app`],
    ['POST', `${BOT}/app`],
    ['PUT', `${BOT}/messages`],
    ['DELETE', `${BOT}/events`],
    ['POST', `${BOT}/commands`],
    ['GET', `${BOT}/voice`],
    ['DELETE', `${BOT}/music`],
    ['POST', `${BOT}/passport`],
    ['POST', DIRECTORY],
    ['GET', `${BOT}/messages/1`],
    ['GET', `${BOT}/interactions/evt_x/respond`]
  ] as const) {
    expectOrbError(await ctx.client.request({ method, path }), 405, `${method} ${path}`)
  }
}

/** ORB-A23: a body sent as another content type than JSON answers 415. */
async function expectWrongContentTypes (ctx: OrbContext): Promise<void> {
  for (const [path, type, raw] of [
    [`${BOT}/messages`, 'text/plain', 'hello'],
    [`${BOT}/music`, 'text/plain', '{"channel":"x","action":"state"}'],
    [`${BOT}/voice`, 'application/x-www-form-urlencoded', 'action=roster']
  ] as const) {
    expectOrbError(
      await ctx.client.request({ method: 'POST', path, body: Buffer.from(raw), headers: { 'content-type': type } }),
      415,
      `POST ${path} as ${type}`
    )
  }
}

/** ORB-A23: a body that is not JSON answers 400. */
async function expectBrokenJson (ctx: OrbContext): Promise<void> {
  for (const [path, raw] of [
    [`${BOT}/messages`, '{"channel":'],
    [`${BOT}/voice`, 'nope'],
    [`${BOT}/music`, "{'a':1}"]
  ] as const) {
    expectOrbError(
      await ctx.client.request({ method: 'POST', path, body: Buffer.from(raw) }),
      400,
      `POST ${path} with a body that is not JSON`
    )
  }
}

/** ORB-A23: a route the API does not have answers 404. */
async function expectUnknownRoutes (ctx: OrbContext): Promise<void> {
  for (const path of [`${BOT}/nope`, `${BOT}/app/extra`, '/api/bot/v2/app', '/api/orb/nope']) {
    expectOrbError(await ctx.client.request({ path }), 404, `GET ${path}`)
  }
}

/** ORB-A23: unknown query parameters and body fields are ignored: the same answer as without them. */
async function expectUnknownPartsIgnored (ctx: OrbContext): Promise<void> {
  const baseline = await readApp(ctx)
  const names = fc.stringMatching(/^[a-z][a-z0-9_]{0,11}$/)
  const unknownQuery = fc.dictionary(
    names.filter((n) => n !== 'server'),
    fc.string({ maxLength: 12 }),
    { minKeys: 1, maxKeys: 4 }
  )
  const unknownFields = fc.dictionary(
    names.filter((n) => !['channel', 'action', 'arg', 'call', 'speaking', 'content', 'reply_to'].includes(n)),
    fc.jsonValue({ maxDepth: 2 }),
    { minKeys: 1, maxKeys: 4 }
  )
  const voice = ctx.client.target.channels.voice
  const player =
    voice === undefined
      ? undefined
      : expectOk(await ctx.client.post(`${BOT}/music`, { channel: voice, action: 'state' }), 'POST /music state')
  await fc.assert(
    fc.asyncProperty(unknownQuery, unknownFields, async (query, fields) => {
      expectEqual(
        expectOk(await ctx.client.get(`${BOT}/app`, query), `GET /app?${new URLSearchParams(query).toString()}`),
        baseline,
        'GET /app with unknown query parameters'
      )
      expectThat(
        Array.isArray(
          expectOk(await ctx.client.get(DIRECTORY, query, null), 'the directory with unknown query parameters').apps
        ),
        'the directory with unknown parameters',
        'apps: […]',
        'no apps'
      )
      if (voice !== undefined) await expectVoiceFieldsIgnored(ctx, voice, fields, player)
    }),
    ctx.fc({ numRuns: Math.min(10, ctx.fc().numRuns ?? 10) })
  )
}

/** The player and the roster of `voice`, asked with unknown body fields, answer as without them. */
async function expectVoiceFieldsIgnored (
  ctx: OrbContext,
  voice: string,
  fields: Record<string, unknown>,
  player: unknown
): Promise<void> {
  expectEqual(
    expectOk(
      await ctx.client.post(`${BOT}/music`, { ...fields, channel: voice, action: 'state' }),
      'POST /music state with unknown fields'
    ),
    player,
    'the player asked with unknown body fields'
  )
  expectOk(
    await ctx.client.post(`${BOT}/voice`, { ...fields, action: 'roster', channel: voice }),
    'POST /voice roster with unknown fields'
  )
}

/** ORB-A23: success is 200, never 201 or 204: a post with an unknown field, its deletion, and a sync of nothing. */
async function expectSuccessIs200 (ctx: OrbContext, text: string): Promise<void> {
  const posted = await postProbe(ctx, {
    channel: text,
    content: 'orbtest: an extra field',
    orbtest_extra: { a: [1] }
  })
  expectEqual(posted.status, 200, 'POST /messages with an unknown body field answers 200')
  const deleted = await ctx.client.request({
    method: 'DELETE',
    path: `${BOT}/messages/${posted.json.id as number}`
  })
  expectEqual(deleted.status, 200, 'DELETE /messages/{id} answers 200 (not 204)')
  expectEqual(
    expectOk(await syncCommands(ctx, []), 'PUT /commands []').commands,
    [],
    'PUT /commands [] answers 200 with no commands'
  )
}
