import { defineCase, type ConformanceCase } from '../../../core/case.js'
import { expectEqual, expectOk, expectOrbError, expectThat } from '../../expect.js'
import { BOT, channel, controlled, post } from '../../orb-case.js'
import type { OrbBotClient, OrbReply } from '../../transport.js'
import { expectNotIn, ownApp, passportQuery, postProbe, readApp } from './access-support.js'

/** Who an app is (ORB-008) and where it reaches (ORB-009). */
export const reachCases: Array<ConformanceCase<OrbBotClient>> = [
  defineCase<OrbBotClient>({
    id: 'ORB-008',
    title:
      "an app is a member of its own: what it posts shows the app's member id as author, with bot true, in every community",
    level: 'required',
    writes: true,
    async run (ctx) {
      const me = await readApp(ctx)
      expectThat(
        typeof me.member === 'string' && me.member !== '',
        "GET /app names the app's member",
        'member: "<id>"',
        me.member
      )
      const posted = await post(ctx, 'orbtest: who am I')
      expectEqual(posted.author?.id, me.member, "the author of the app's post is the app's member")
      expectEqual(posted.author?.bot, true, "the author of the app's post is a bot")
      // Read back, the message keeps that author.
      const page = expectOk(
        await ctx.client.get(`${BOT}/messages`, { channel: channel(ctx, 'text'), limit: 50 }),
        'GET /messages'
      )
      const found = (page.messages as any[]).find((m) => m.id === posted.id)
      expectThat(
        found !== undefined,
        'the post is read back',
        `message ${posted.id as number}`,
        page.messages?.map((m: any) => m.id)
      )
      expectEqual(
        { id: found.author?.id, bot: found.author?.bot },
        { id: me.member, bot: true },
        'the author of the post as read back'
      )
      if (ctx.client.target.controlled === undefined) return
      // With control: an app installed in two communities posts in both as the same member (a row in each).
      const { control, target } = controlled(ctx)
      const state = await control.orbState()
      const other = (state.servers as any[]).find((s) => s.id === target.otherCommunity)
      const otherText = other?.channels?.find((c: any) => c.kind === 'text' && c.readOnly !== true)?.id as
        string | undefined
      if (otherText === undefined) {
        ctx.note('no writable text channel in a second community: one community checked')
        return
      }
      const app = await ownApp(ctx, 'member', ['messages:read', 'messages:write'])
      await control.install(target.community, app.id, {
        role: { name: 'orbtest member', rights: ['send_messages'] },
        channels: [target.channels.text]
      })
      await control.install(other.id, app.id, {
        role: { name: 'orbtest member', rights: ['send_messages'] },
        channels: [otherText]
      })
      const mine = await readApp(ctx, app.as)
      expectEqual(
        (mine.servers as any[]).map((s) => s.id).sort(),
        [target.community, other.id].sort(),
        'GET /app lists both communities'
      )
      for (const ch of [target.channels.text, otherText]) {
        const reply = await post(ctx, 'orbtest: the same member everywhere', { channel: ch, as: app.as })
        expectEqual(
          { id: reply.author?.id, bot: reply.author?.bot },
          { id: mine.member, bot: true },
          `the author of the app's post in ${ch}`
        )
        await ctx.client.request({ method: 'DELETE', path: `${BOT}/messages/${reply.id as number}`, as: app.as })
      }
    }
  }),

  defineCase<OrbBotClient>({
    id: 'ORB-009',
    title: 'an app reaches only communities that installed it, and there only channels its role sees on the allow-list',
    level: 'required',
    async run (ctx) {
      const target = ctx.client.target
      let checked = 0
      // Posting probes (refused, but a post all the same) and apps of the case's own are left out of a read-only run.
      if (ctx.readOnly) { ctx.note("read-only: reach checked by reading only; no posting probes, no app of the case's own") }
      // Another community's things count as not found (ORB-102).
      if (target.otherChannel !== undefined) {
        expectOrbError(
          await ctx.client.get(`${BOT}/messages`, { channel: target.otherChannel, limit: 1 }),
          404,
          'GET /messages of a channel in a community without the app'
        )
        if (!ctx.readOnly) {
          const reply = await postProbe(ctx, { channel: target.otherChannel, content: 'orbtest: a reach probe' })
          expectOrbError(reply, 404, 'POST /messages to a channel in a community without the app')
        }
        checked++
      }
      if (target.otherCommunity !== undefined) {
        await expectNotIn(ctx, target.otherCommunity, 'GET /app?server= of a community without the app')
        expectOrbError(
          await ctx.client.get(`${BOT}/passport`, passportQuery(ctx, target.otherCommunity)),
          404,
          'GET /passport of a community without the app'
        )
        const servers = (await readApp(ctx)).servers as any[]
        expectThat(
          Array.isArray(servers) && !servers.some((s) => s?.id === target.otherCommunity),
          'GET /app does not list a community without the app',
          `no ${target.otherCommunity}`,
          servers
        )
        checked++
      }
      // Inside the community: the allow-list and the role's sight.
      for (const kind of ['outsideAllowList', 'hidden'] as const) {
        const id = target.channels[kind]
        if (id === undefined) continue
        expectOrbError(
          await ctx.client.get(`${BOT}/messages`, { channel: id, limit: 1 }),
          403,
          `GET /messages of the ${kind} channel`
        )
        if (!ctx.readOnly) {
          const reply = await postProbe(ctx, { channel: id, content: 'orbtest: a reach probe' })
          expectOrbError(reply, 403, `POST /messages to the ${kind} channel`)
        }
        checked++
      }
      expectOk(
        await ctx.client.get(`${BOT}/messages`, { channel: channel(ctx, 'text'), limit: 1 }),
        'GET /messages of the text channel'
      )
      if (
        !ctx.readOnly &&
        target.controlled !== undefined &&
        target.otherCommunity !== undefined &&
        target.otherChannel !== undefined
      ) {
        // Reach follows the install: a community that installs the app opens, one that uninstalls it closes again.
        const { control } = controlled(ctx)
        const app = await ownApp(ctx, 'reach', ['messages:read'])
        const read = (): Promise<OrbReply> =>
          ctx.client.get(`${BOT}/messages`, { channel: target.otherChannel!, limit: 1 }, app.as)
        expectOrbError(await read(), 404, 'GET /messages before the community installed the app')
        await control.install(target.otherCommunity, app.id, { channels: [target.otherChannel] })
        expectOk(await read(), 'GET /messages once the community installed the app')
        await control.uninstall(target.otherCommunity, app.id)
        expectOrbError(await read(), 404, 'GET /messages after the community uninstalled the app')
        checked++
      }
      expectThat(checked > 0, 'the target names a channel or community the app cannot reach', 'otherCommunity, otherChannel, outsideAllowList or hidden', 'none')
    }
  })
]
