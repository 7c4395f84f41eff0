import fc from 'fast-check'
import { defineCase, type ConformanceCase } from '../../../core/case.js'
import { expectOk, expectOrbError, expectThat } from '../../expect.js'
import { BOT, channel, drain, globalCommands, post } from '../../orb-case.js'
import type { OrbBotClient, OrbRequest } from '../../transport.js'
import { SOME_ADDRESS, deleteIfPosted, expectErrorBody, readDirectory, short } from './access-support.js'

/**
 * Every bot route, as the spec lists them, with a request each that is harmless without a valid token (ORB-003).
 * `writes`: with a valid token it would change the target if it were accepted (ORB-001 leaves those out when
 * read-only).
 */
const BOT_ROUTES: Array<{
  method: string
  path: string
  query?: Record<string, string>
  body?: unknown
  writes?: true
}> = [
  { method: 'GET', path: `${BOT}/app` },
  { method: 'POST', path: `${BOT}/messages`, body: { channel: 'x', content: 'x' }, writes: true },
  { method: 'GET', path: `${BOT}/messages`, query: { channel: 'x' } },
  { method: 'DELETE', path: `${BOT}/messages/1`, writes: true },
  { method: 'GET', path: `${BOT}/events` },
  { method: 'GET', path: `${BOT}/commands` },
  { method: 'PUT', path: `${BOT}/commands`, body: { commands: [] }, writes: true },
  { method: 'DELETE', path: `${BOT}/commands`, query: { name: 'orbtest-never-registered' }, writes: true },
  { method: 'POST', path: `${BOT}/interactions/evt_x/respond`, body: { content: 'x' }, writes: true },
  { method: 'POST', path: `${BOT}/voice`, body: { action: 'roster', channel: 'x' } },
  { method: 'POST', path: `${BOT}/music`, body: { channel: 'x', action: 'state' } },
  { method: 'GET', path: `${BOT}/music`, query: { channel: 'x' } },
  { method: 'GET', path: `${BOT}/passport`, query: { server: 'x', address: SOME_ADDRESS, kind: 'human' } }
]

/** Authorization headers that carry no valid token: none, other schemes, malformed, and random tokens. */
const badAuthorization = fc.oneof(
  fc.constant(null),
  fc.constant(''),
  fc.constant('Bearer'),
  fc.constant('Bearer '),
  fc.constantFrom('Basic b3JiOm9yYg==', 'Token abc', 'bearer'),
  fc.string({ minLength: 1, maxLength: 64 }).filter((s) => /^[\x21-\x7e]+$/.test(s)).map((s) => `Bearer ${s}`),
  fc.stringMatching(/^orb_[A-Za-z0-9_-]{32}$/).map((s) => `Bearer ${s}`)
)

/** Where the routes are served (ORB-001) and that each wants a valid bearer token (ORB-003). */
export const routeCases: Array<ConformanceCase<OrbBotClient>> = [
  defineCase<OrbBotClient>({
    id: 'ORB-001',
    title: 'bot calls are served under /api/bot/v1 on the origin itself and the directory at /api/orb/directory',
    level: 'required',
    async run (ctx) {
      // ORB-001: the server URL is `/`, so the paths stand at the origin's root.
      expectOk(await ctx.client.get(`${BOT}/app`), 'GET /api/bot/v1/app', { method: 'GET', path: `${BOT}/app` })
      expectOk(await ctx.client.get(`${BOT}/commands`), 'GET /api/bot/v1/commands', {
        method: 'GET',
        path: `${BOT}/commands`
      })
      expectOk(await ctx.client.get(`${BOT}/events`, { after: (await drain(ctx)).next }), 'GET /api/bot/v1/events', {
        method: 'GET',
        path: `${BOT}/events`
      })
      expectOk(
        await ctx.client.get(`${BOT}/messages`, { channel: channel(ctx, 'text'), limit: 1 }),
        'GET /api/bot/v1/messages',
        { method: 'GET', path: `${BOT}/messages` }
      )
      await readDirectory(ctx)
      // Every route of the spec is there: an answer of the spec's (never "no such method" for its own methods).
      if (ctx.readOnly) { ctx.note('read-only: the routes that change the target (posting, deleting, syncing, responding) were not sent') }
      for (const route of BOT_ROUTES) {
        if (route.writes === true && ctx.readOnly) continue
        const request: OrbRequest = { method: route.method, path: route.path, query: route.query, body: route.body }
        // With the app's own token: the app's commands are synced to what they are, and only a message of the
        // case's own is deleted (message 1 may be the app's).
        if (route.method === 'PUT' && route.path === `${BOT}/commands`) {
          request.body = { commands: await globalCommands(ctx) }
        }
        if (route.method === 'DELETE' && route.path === `${BOT}/messages/1`) {
          request.path = `${BOT}/messages/${(await post(ctx, 'orbtest: a route probe')).id as number}`
        }
        const reply = await ctx.client.request(request)
        if (route.method === 'POST' && route.path === `${BOT}/messages`) deleteIfPosted(ctx, reply, 'full')
        expectThat(
          reply.status !== 405 && reply.status < 500,
          `${route.method} ${route.path} is served`,
          'an answer of the route',
          short(reply)
        )
        if (reply.status !== 200) expectErrorBody(reply, `${route.method} ${route.path}`)
      }
    }
  }),

  defineCase<OrbBotClient>({
    id: 'ORB-003',
    title: 'every /api/bot/v1 route answers a missing, malformed or unknown bearer token with 401 and an Error body',
    level: 'required',
    async run (ctx) {
      const valid = new Set(
        [ctx.client.target.full.token, ctx.client.target.few?.token]
          .filter((v) => v !== undefined)
          .map((v) => `Bearer ${v}`)
      )
      await fc.assert(
        fc.asyncProperty(fc.constantFrom(...BOT_ROUTES), badAuthorization, async (route, authorization) => {
          if (authorization !== null && valid.has(authorization)) return
          const reply = await ctx.client.request({
            method: route.method,
            path: route.path,
            query: route.query,
            body: route.body,
            as: null,
            headers: authorization === null ? {} : { authorization }
          })
          expectOrbError(
            reply,
            401,
            `${route.method} ${route.path} with ${authorization === null ? 'no Authorization' : `Authorization ${JSON.stringify(authorization.slice(0, 20))}`}`
          )
        }),
        ctx.fc()
      )
    }
  })
]
