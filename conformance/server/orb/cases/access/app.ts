import fc from 'fast-check'
import { defineCase, type ConformanceCase } from '../../../core/case.js'
import { expectEqual, expectOk, expectOrbError, expectThat } from '../../expect.js'
import { BOT, controlled, type OrbContext } from '../../orb-case.js'
import type { OrbBotClient } from '../../transport.js'
import { NOT_A_TOKEN, RIGHTS, expectNotIn, installOf, ownApp, readApp, type StateInstall } from './access-support.js'

/** GET /app: the app, its member, its communities, and the channels it sees in one (ORB-020 to ORB-022). */
export const appCases: Array<ConformanceCase<OrbBotClient>> = [
  defineCase<OrbBotClient>({
    id: 'ORB-020',
    title: 'GET /app without server is 200 with the app, its member id and the communities that installed it',
    level: 'required',
    async run (ctx) {
      const target = ctx.client.target
      const body = await readApp(ctx)
      expectThat(
        typeof body.app?.id === 'string' && typeof body.app?.name === 'string',
        'GET /app names the app',
        'app: {id, name, …}',
        body.app
      )
      if (target.full.id !== undefined) expectEqual(body.app.id, target.full.id, 'the app GET /app names is the caller')
      expectThat(
        typeof body.member === 'string' && body.member !== '',
        'GET /app names its member id',
        'member: "<id>"',
        body.member
      )
      expectThat(Array.isArray(body.servers), 'GET /app lists its communities', 'servers: [...]', body.servers)
      const ids = (body.servers as any[]).map((s) => s?.id)
      expectThat(
        ids.includes(target.community),
        'the community that installed the app is listed',
        target.community,
        ids
      )
      if (target.controlled !== undefined && target.full.id !== undefined) {
        const state = await controlled(ctx).control.orbState()
        const installed = (state.installs as StateInstall[])
          .filter((i) => i.app === target.full.id)
          .map((i) => i.server)
          .sort()
        expectEqual([...ids].sort(), installed, 'GET /app lists exactly the communities that installed the app')
      }
    }
  }),

  defineCase<OrbBotClient>({
    id: 'ORB-021',
    title: 'GET /app?server= lists exactly the channels the role sees on the allow-list; others are absent',
    level: 'required',
    async run (ctx) {
      const target = ctx.client.target
      const body = await readApp(ctx, 'full', target.community)
      expectThat(Array.isArray(body.channels), 'GET /app?server= lists channels', 'channels: [...]', body)
      const ids = (body.channels as any[]).map((c) => c?.id as string)
      expectThat(ids.includes(target.channels.text), 'the text channel is listed', target.channels.text, ids)
      for (const kind of ['outsideAllowList', 'hidden'] as const) {
        const id = target.channels[kind]
        if (id !== undefined) expectThat(!ids.includes(id), `the ${kind} channel is absent`, `no ${id}`, ids)
      }
      if (target.controlled === undefined) return
      if (ctx.readOnly) {
        ctx.note('read-only: no app of the case\'s own was installed; the configured channels alone were checked')
        return
      }
      // With control: any allow-list and any hidden set an admin picks, for an app of the case's own.
      const { control } = controlled(ctx)
      const state = await control.orbState()
      const community = (state.servers as any[]).find((s) => s.id === target.community)
      const all = (community.channels as any[]).map((c) => c.id as string)
      const kinds = new Map<string, any>((community.channels as any[]).map((c) => [c.id, c]))
      const app = await ownApp(ctx, 'sight', ['messages:read'])
      await fc.assert(
        fc.asyncProperty(fc.subarray(all), fc.subarray(all), async (allowed, hidden) => {
          await control.install(target.community, app.id, { channels: allowed, hidden })
          const seen = expectOk(
            await ctx.client.get(`${BOT}/app`, { server: target.community }, app.as),
            "GET /app?server= of an app of the case's own"
          )
          const want = all.filter((id) => allowed.includes(id) && !hidden.includes(id))
          expectEqual(
            (seen.channels as any[]).map((c) => c.id).sort(),
            [...want].sort(),
            `the channels of allow-list [${allowed.join(', ')}] with [${hidden.join(', ')}] hidden`
          )
          for (const c of seen.channels as any[]) {
            const known = kinds.get(c.id)
            expectEqual(
              { type: c.type, readOnly: c.readOnly },
              { type: known.kind, readOnly: known.readOnly },
              `channel ${String(c.id)}'s type and readOnly`
            )
          }
        }),
        ctx.fc()
      )
    }
  }),

  defineCase<OrbBotClient>({
    id: 'ORB-022',
    title: 'GET /app with a missing or invalid token is 401 with an Error body',
    level: 'required',
    async run (ctx) {
      expectOrbError(await ctx.client.request({ path: `${BOT}/app`, as: null }), 401, 'GET /app without Authorization')
      expectOrbError(
        await ctx.client.request({ path: `${BOT}/app`, as: null, headers: { authorization: 'Bearer' } }),
        401,
        'GET /app with "Bearer" and no token'
      )
      expectOrbError(
        await ctx.client.request({ path: `${BOT}/app`, as: NOT_A_TOKEN }),
        401,
        'GET /app with an unknown token'
      )
      // The valid token under another scheme (the exchange shows it masked, as $ORB_TOKEN).
      expectOrbError(
        await ctx.client.request({
          path: `${BOT}/app`,
          as: null,
          headers: { authorization: `Token ${ctx.client.target.full.token}` }
        }),
        401,
        'GET /app with the token under another scheme'
      )
      // And the valid token is what opens it.
      await readApp(ctx)
    }
  })
]

/** orbtest's decision on GET /app's exact shape (ORB-A06). */
export const appDecisions: Array<ConformanceCase<OrbBotClient>> = [
  defineCase<OrbBotClient>({
    id: 'ORB-A06',
    title:
      'GET /app is {app{id,name,scopes}, member, servers[{id,name,role{name,rights}}]}; ?server= is {server, channels[…]}; another community 404',
    level: 'decision',
    async run (ctx) {
      const target = ctx.client.target
      const body = await readApp(ctx)
      expectThat(
        typeof body.app?.id === 'string' && typeof body.app?.name === 'string' && Array.isArray(body.app?.scopes),
        'app: {id, name, scopes}',
        '{"app":{"id","name","scopes":[…]}}',
        body.app
      )
      expectThat(typeof body.member === 'string', 'member: a string', '"<member id>"', body.member)
      for (const s of body.servers as any[]) {
        expectThat(
          isAppServer(s),
          'servers[]: {id, name, role: {name, rights}}',
          '{"id","name","role":{"name","rights":[…]}}',
          s
        )
      }
      const scoped = await readApp(ctx, 'full', target.community)
      expectEqual(scoped.server, target.community, 'GET /app?server= names the community')
      for (const c of scoped.channels as any[]) {
        expectThat(
          isAppChannel(c),
          'channels[]: {id, name, type, readOnly, rights}',
          '{"id","name","type":"text"|"voice","readOnly":bool,"rights":[…]}',
          c
        )
      }
      if (target.otherCommunity !== undefined) {
        await expectNotIn(ctx, target.otherCommunity, 'GET /app?server= of a community without the app')
      }
      await expectNotIn(ctx, 'srv_orbtest_no_such_community', 'GET /app?server= of no community at all')
      if (target.controlled !== undefined && target.full.id !== undefined) {
        await expectRightsAsInstalled(ctx, target.full.id, body.servers, scoped.channels)
      }
    }
  })
]

/** ORB-A06: one of GET /app's servers: `{id, name, role: {name, rights}}`, each right one of the vocabulary. */
function isAppServer (s: any): boolean {
  return typeof s?.id === 'string' &&
    typeof s?.name === 'string' &&
    typeof s?.role?.name === 'string' &&
    Array.isArray(s?.role?.rights) &&
    s.role.rights.every((r: unknown) => (RIGHTS as readonly unknown[]).includes(r))
}

/** ORB-A06: one of GET /app?server='s channels: `{id, name, type, readOnly, rights}`. */
function isAppChannel (c: any): boolean {
  return typeof c?.id === 'string' &&
    typeof c?.name === 'string' &&
    ['text', 'voice'].includes(c?.type) &&
    typeof c?.readOnly === 'boolean' &&
    Array.isArray(c?.rights)
}

/** ORB-A06: the role and each channel's rights GET /app reports are what the admin gave the app `id`. */
async function expectRightsAsInstalled (ctx: OrbContext, id: string, servers: any[], channels: any[]): Promise<void> {
  const community = ctx.client.target.community
  const install = await installOf(ctx, community, id)
  const server = servers.find((s) => s.id === community)
  expectEqual([...server.role.rights].sort(), [...install!.role.rights].sort(), "the role's rights")
  for (const c of channels) {
    expectEqual(
      [...c.rights].sort(),
      [...(install!.channelRights[c.id] ?? install!.role.rights)].sort(),
      `channel ${String(c.id)}'s rights`
    )
  }
}
