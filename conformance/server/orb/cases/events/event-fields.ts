import fc from 'fast-check'
import { defineCase, type ConformanceCase } from '../../../core/case.js'
import { expectComponent, expectEqual, expectThat } from '../../expect.js'
import { controlled, drain, few, post } from '../../orb-case.js'
import type { OrbBotClient } from '../../transport.js'
import {
  PING,
  capped,
  clockNow,
  eventFor,
  ids,
  mention,
  pingStart,
  registerPing,
  testEvent,
  typePing
} from './events-support.js'

// 2.5 Events, what an event holds: the Event shape, the data of each type and whose events an app sees
// (ORB-052..054), and the fields the spec leaves open (ORB-A10).

/** ORB-052..054: the Event shape, the data of each type, and whose events an app sees. */
export const eventFieldCases: Array<ConformanceCase<OrbBotClient>> = [
  defineCase<OrbBotClient>({
    id: 'ORB-052',
    title: 'every event (app.test, message.mention, application_command) matches the spec\'s Event, with api "orb-bots-v1" and the app',
    level: 'required',
    writes: true,
    async run (ctx) {
      const { target, start } = await pingStart(ctx)
      const made = [
        await testEvent(ctx),
        (await mention(ctx, 'shape')).event,
        await typePing(ctx, { text: 'shape' })
      ]
      const events = (await drain(ctx, start)).events
      expectEqual(ids(events), made, 'the three events, in order')
      for (const e of events) {
        expectComponent(e, 'Event', `the ${String(e.type)} event`)
        expectThat(typeof e.id === 'string' && e.id !== '', 'id is a non-empty string', 'a string', e.id)
        expectEqual(e.api, 'orb-bots-v1', `${String(e.type)}: api`)
        expectThat(Number.isInteger(e.sent_at), `${String(e.type)}: sent_at is an integer`, 'an integer', e.sent_at)
        expectThat(
          e.app?.id === target.full.id && typeof e.app?.name === 'string',
          `${String(e.type)}: app is {id, name} of the app`,
          { id: target.full.id, name: '…' },
          e.app
        )
        expectThat(
          typeof e.data === 'object' && e.data !== null && !Array.isArray(e.data),
          `${String(e.type)}: data is an object`,
          'an object',
          e.data
        )
        for (const key of ['server', 'channel']) {
          expectThat(
            e[key] === null || typeof e[key] === 'string',
            `${String(e.type)}: ${key} is a string or null`,
            'string | null',
            e[key]
          )
        }
      }
      expectEqual(
        events.map((e) => e.type),
        ['app.test', 'message.mention', 'application_command'],
        'the types'
      )
    }
  }),
  defineCase<OrbBotClient>({
    id: 'ORB-053',
    title:
      'data by type: message.mention {message:{id, channel, author, body}, reason}; application_command {command:{id, name, options}, member:{id, name}, invoked_at}',
    level: 'required',
    writes: true,
    async run (ctx) {
      const { world, target } = controlled(ctx)
      const command = await registerPing(ctx)
      const text = fc
        .string({ minLength: 1, maxLength: 40, unit: 'grapheme' })
        .filter((s) => !s.includes('<@') && s.trim() !== '')
      await fc.assert(
        fc.asyncProperty(text, text, async (said, typed) => {
          const start = (await drain(ctx)).next
          const { event: mentionId, message } = await mention(ctx, said)
          const commandId = await typePing(ctx, { text: typed })
          const events = (await drain(ctx, start)).events
          const m = events.find((e) => e.id === mentionId)
          const c = events.find((e) => e.id === commandId)
          expectThat(m !== undefined && c !== undefined, 'both events are fetched', [mentionId, commandId], ids(events))
          expectEqual(m.type, 'message.mention', "the mention's type")
          const data = m.data
          expectThat(
            typeof data?.message === 'object' && data.message !== null,
            'message.mention data.message is an object',
            '{id, channel, author, body}',
            data
          )
          expectEqual(
            {
              id: data.message.id,
              channel: data.message.channel,
              body: data.message.body,
              author: data.message.author?.id
            },
            {
              id: message.id,
              channel: target.channels.text,
              body: message.body ?? `<@${target.full.id!}> ${said}`,
              author: world.member
            },
            'message.mention data.message'
          )
          expectThat(
            typeof data.reason === 'string',
            'message.mention data.reason is a string',
            'a string',
            data.reason
          )
          expectEqual(c.type, 'application_command', "the command's type")
          const cd = c.data
          expectEqual(
            { id: cd?.command?.id, name: cd?.command?.name, options: cd?.command?.options },
            { id: command.id, name: PING.name, options: { text: typed } },
            'application_command data.command'
          )
          expectEqual(cd?.member?.id, world.member, 'application_command data.member.id: who typed it')
          expectThat(typeof cd?.member?.name === 'string', 'data.member.name is a string', 'a string', cd?.member)
          expectThat(Number.isInteger(cd?.invoked_at), 'data.invoked_at is an integer', 'an integer', cd?.invoked_at)
        }),
        capped(ctx, 6)
      )
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
        const member = (state.servers as any[])
          .find((s) => s.id === target.otherCommunity)
          ?.members.find((m: any) => m.rights.includes('send_messages'))?.id
        if (member !== undefined) {
          const posted = await control.memberPost({
            server: target.otherCommunity,
            channel: target.otherChannel,
            member,
            content: `<@${target.full.id!}> are you here?`
          })
          elsewhere = posted.id
          expectThat(
            !(posted.events as any[]).some((e) => e.app === target.full.id),
            'a mention in a community that did not install the app makes it no event',
            'no event',
            posted.events
          )
        }
      }
      const fewSeen = (await drain(ctx, fewStart, 'few')).events
      expectThat(
        !fewSeen.some((e) => theirs.includes(e.id) || e.app?.id !== target.few?.id),
        "the few-scope app sees none of the full app's events",
        'only its own events',
        fewSeen.map((e) => [e.id, e.app?.id])
      )
      const fullSeen = (await drain(ctx, start)).events
      expectEqual(ids(fullSeen), theirs, 'the full app sees exactly its own new events')
      for (const e of fullSeen) expectEqual(e.app?.id, target.full.id, 'each event names the app')
      if (elsewhere === undefined) ctx.note('no other community with a member to post: only the other-app half ran')
      else {
        expectThat(
          !fullSeen.some((e) => e.data?.message?.id === elsewhere),
          'no event for the mention in the other community',
          'none',
          fullSeen
        )
      }
    }
  })
]

/** ORB-A10: the fields the spec leaves open. */
export const eventFieldDecisions: Array<ConformanceCase<OrbBotClient>> = [
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
      const replied = await control.memberPost({
        server: target.community,
        channel: target.channels.text,
        member: world.member,
        content: 'a reply without a mention',
        replyTo: own.id
      })
      const secret = await control.memberPost({
        server: target.community,
        channel: target.channels.text,
        member: world.member,
        content: `<@${target.full.id!}> sealed`,
        encrypted: true
      })
      const typed = await typePing(ctx, { text: 'opt' })
      const events = (await drain(ctx, start)).events
      const byId = (id: string | undefined): any => events.find((e) => e.id === id)
      const replyId = eventFor(ctx, replied)
      const secretId = eventFor(ctx, secret)
      expectThat(
        [test, mentioned, replyId, secretId, typed].every((id) => byId(id) !== undefined),
        'all five events are fetched',
        5,
        ids(events)
      )
      const t = byId(test)
      expectEqual(
        { data: t.data, server: t.server, channel: t.channel },
        { data: {}, server: null, channel: null },
        'app.test'
      )
      expectEqual(byId(mentioned).data.reason, 'mention', "an @-mention's reason")
      expectEqual(byId(replyId).data.reason, 'reply', "a reply to the app's message: reason")
      expectEqual(byId(secretId).data.message.body, null, "an encrypted message's body")
      const c = byId(typed)
      expectEqual(c.data.command.options, { text: 'opt' }, 'command.options maps option names to the typed strings')
      expectEqual(new Set(ids(events)).size, events.length, 'event ids are unique')
      for (const e of events) {
        expectThat(typeof e.id === 'string' && e.id.length > 0, 'id is an opaque string', 'a string', e.id)
        // With a virtual clock nothing moves it during the case; with a real one, allow for the case's own time.
        expectThat(
          virtual ? e.sent_at === now : Math.abs(e.sent_at - now) < 60_000,
          `${String(e.type)}: sent_at is the target's clock in ms since the epoch`,
          now,
          e.sent_at
        )
      }
      expectThat(
        virtual ? c.data.invoked_at === now : Math.abs(c.data.invoked_at - now) < 60_000,
        "invoked_at is the target's clock in ms",
        now,
        c.data.invoked_at
      )
    }
  })
]
