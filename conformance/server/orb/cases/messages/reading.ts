import { CaseSkip, defineCase, type ConformanceCase } from '../../../core/case.js'
import { expectComponent, expectOk, expectOrbError, expectThat } from '../../expect.js'
import { BOT, channel, controlled } from '../../orb-case.js'
import type { OrbBotClient } from '../../transport.js'
import { MESSAGES, postOk, readAll, readPage } from './messages-support.js'

/*
 * Reading (ORB-035, ORB-037, ORB-038): encrypted messages, the Message fields, and the channels and scope that
 * gate a read.
 */

/** ORB-037: every field of a Message, present and of its type (the spec's schema alone requires none). */
function checkMessage (m: any, channelId: string, what: string): void {
  expectComponent(m, 'Message', what)
  const ok =
    Number.isInteger(m?.id) &&
    m.channel === channelId &&
    typeof m.author?.id === 'string' &&
    typeof m.author?.name === 'string' &&
    typeof m.author?.bot === 'boolean' &&
    Number.isInteger(m.created) &&
    (m.replyTo === null || Number.isInteger(m.replyTo)) &&
    typeof m.encrypted === 'boolean' &&
    (m.body === null || typeof m.body === 'string') &&
    Array.isArray(m.mentions) &&
    m.mentions.every((x: unknown) => typeof x === 'string')
  expectThat(
    ok,
    `${what}: a Message with every field (ORB-037)`,
    `{"id":int,"channel":"${channelId}","author":{"id","name","bot"},"created":int,"replyTo":int|null,"encrypted":bool,"body":string|null,"mentions":[string]}`,
    m
  )
}

/** The cases of reading, in the suite's order. */
export const readingCases: Array<ConformanceCase<OrbBotClient>> = [
  defineCase<OrbBotClient>({
    id: 'ORB-035',
    title: 'an end-to-end encrypted message reads back as encrypted: true, body: null, its text nowhere in the reply',
    level: 'required',
    // Not `writes`: it reads the encrypted messages the channel holds. With control, and not --read-only, a member
    // posts one first (members' messages cannot be deleted through the API).
    async run (ctx) {
      const text = channel(ctx, 'text')
      let secret: string | undefined
      let id: number | undefined
      if (ctx.readOnly && ctx.control !== undefined) ctx.note('--read-only: no member posted an encrypted message; only those already in the channel were checked')
      if (!ctx.readOnly && ctx.control !== undefined && ctx.client.target.controlled !== undefined) {
        const { control, world, target } = controlled(ctx)
        secret = `sealed ${ctx.uid('e2e')}`
        id = (
          await control.memberPost({
            server: target.community,
            channel: text,
            member: world.member,
            content: secret,
            encrypted: true
          })
        ).id
      }
      const all = await readAll(ctx, text, 4)
      const sealed = all.filter((m) => m.encrypted === true)
      if (id !== undefined) {
        expectThat(
          sealed.some((m) => m.id === id),
          `the encrypted message ${id} reads back with encrypted: true`,
          { id, encrypted: true },
          all.find((m) => m.id === id)
        )
      }
      if (sealed.length === 0) {
        throw new CaseSkip(
          `${text} holds no encrypted message, and ${ctx.readOnly ? '--read-only forbids a member posting one' : 'without the control API no member can post one'}`
        )
      }
      for (const m of sealed) expectThat(m.body === null, `encrypted message ${m.id} has body null`, null, m.body)
      const plain = all.filter((m) => m.encrypted === false)
      expectThat(
        plain.every((m) => typeof m.body === 'string'),
        'messages that are not encrypted carry their body',
        'string bodies',
        plain.find((m) => typeof m.body !== 'string')
      )
      if (secret !== undefined) {
        const reply = await ctx.client.get(MESSAGES, { channel: text, before: id! + 1, limit: 1 })
        expectThat(
          !reply.text.includes(secret),
          "the encrypted message's text is nowhere in the reply",
          'no plaintext',
          reply.text.slice(0, 300)
        )
      }
      ctx.note(`${sealed.length} encrypted messages checked`)
    }
  }),

  defineCase<OrbBotClient>({
    id: 'ORB-037',
    title: 'every message read has the spec\'s Message fields: id, channel, author {id, name, bot}, created, replyTo, encrypted, body, mentions',
    level: 'required',
    // Not `writes`: it checks the messages the channels hold. Unless --read-only, it first posts a message and a reply
    // to it, so that an app's message and a replyTo are among them.
    async run (ctx) {
      const text = channel(ctx, 'text')
      let parent: any
      if (!ctx.readOnly) {
        parent = await postOk(ctx, text, `shape ${ctx.uid('s')}`)
        await postOk(ctx, text, `shape reply ${ctx.uid('s')}`, { reply_to: parent.id })
      } else ctx.note('--read-only: nothing was posted; only the messages already in the channels were checked')
      const all = await readAll(ctx, text, 4)
      if (parent === undefined && all.length === 0) { throw new CaseSkip(`${text} holds no message, and --read-only forbids posting one`) }
      expectThat(
        all.length >= (parent === undefined ? 1 : 2),
        'the channel shows the messages just posted',
        'at least 2 messages',
        all.length
      )
      for (const m of all) checkMessage(m, text, `message ${String(m?.id)}`)
      if (parent !== undefined) {
        expectThat(
          all.some((m) => m.replyTo === parent.id),
          'the reply shows replyTo',
          parent.id,
          all.slice(-2)
        )
      }
      for (const kind of ['readOnly'] as const) {
        const id = ctx.client.target.channels[kind]
        if (id !== undefined) {
          for (const m of (await readPage(ctx, id)).messages) checkMessage(m, id, `message ${String(m?.id)} of ${id}`)
        }
      }
    }
  }),

  defineCase<OrbBotClient>({
    id: 'ORB-038',
    title:
      'reading a channel off the allow-list or hidden from the role is 403 (and, with control, reading without messages:read)',
    level: 'required',
    // Not `writes`: only the scope half creates an app (control), and --read-only leaves it out.
    async run (ctx) {
      const outside = channel(ctx, 'outsideAllowList')
      expectOrbError(
        await ctx.client.get(MESSAGES, { channel: outside }),
        403,
        `GET /messages of ${outside}, not on the allow-list`
      )
      const hidden = ctx.client.target.channels.hidden
      if (hidden !== undefined) {
        expectOrbError(
          await ctx.client.get(MESSAGES, { channel: hidden }),
          403,
          `GET /messages of ${hidden}, hidden from the role`
        )
      } else ctx.note('no hidden channel in the target: only the allow-list half ran')
      // The app's own channel is readable (the 403s are the gates, not a broken read).
      await readPage(ctx, channel(ctx, 'text'), { limit: 1 })
      if (ctx.control === undefined || ctx.client.target.controlled === undefined) {
        ctx.note('the scope half needs an app without messages:read: only the control API can make one')
        return
      }
      if (ctx.readOnly) {
        ctx.note('--read-only: the scope half (it creates and installs an app through the control API) did not run')
        return
      }
      // The scope half: an app of the case's own with messages:write but not messages:read, installed with the text
      // channel.
      const { control, target } = controlled(ctx)
      const created = await control.must('POST', '/control/orb/apps', {
        id: `app_${ctx.uid('noread').replace(/[^a-z0-9]/g, '_')}`,
        name: 'orbtest conformance (no messages:read)',
        scopes: ['messages:write'],
        rights: ['send_messages']
      })
      ctx.client.secret(created.token)
      ctx.cleanup(async () => {
        await control.call('DELETE', `/control/orb/apps/${encodeURIComponent(created.id)}?messages=delete`)
      })
      await control.install(target.community, created.id, {
        role: { name: 'orbtest no read', rights: ['send_messages'] },
        channels: [target.channels.text]
      })
      const as = { token: created.token as string }
      expectOk(await ctx.client.get(`${BOT}/app`, undefined, as), "GET /app with the new app's token")
      expectOrbError(
        await ctx.client.get(MESSAGES, { channel: target.channels.text }, as),
        403,
        `GET /messages of ${target.channels.text} by an app without messages:read`
      )
    }
  })
]
