import { isDeepStrictEqual } from 'node:util'
import fc from 'fast-check'
import { CaseFailure, CaseSkip, defineCase } from '../../../core/case.js'
import { expectEqual, expectOk, expectOrbError, expectThat } from '../../expect.js'
import { channel, controlled, fail, type OrbContext } from '../../orb-case.js'
import type { OrbBotClient, OrbReply } from '../../transport.js'
import { keepInstall, memberOf, MUSIC, strict, withoutScope, type Case } from './features-support.js'
import {
  expectSeat,
  invalidVoiceBody,
  join,
  jwtClaims,
  jwtsIn,
  nowMs,
  roster,
  seated,
  voice,
  voiceSeats,
  voiceServer
} from './voice-support.js'

/*
 * Voice (ORB-073..080, ORB-A16) and ORB-A08's voice rows.
 */

export const voiceCases: Case[] = [
  defineCase<OrbBotClient>({
    id: 'ORB-073',
    title: 'POST /voice: a missing action, one outside join/roster/heartbeat/leave/grant, or a body of the wrong types is 400',
    level: 'required',
    async run (ctx) {
      const ch = channel(ctx, 'voice')
      // A valid body is accepted (the 200 has no shape in the spec: ORB-A16's roster is not held here).
      const valid = await voice(ctx, { action: 'roster', channel: ch })
      if (valid.status !== 200) fail(`roster of ${ch}`, 200, valid)
      await fc.assert(fc.asyncProperty(invalidVoiceBody(ch), async (body) => {
        expectOrbError(await voice(ctx, body), 400, `POST /voice with ${JSON.stringify(body)}`)
      }), ctx.fc())
    }
  }),
  defineCase<OrbBotClient>({
    id: 'ORB-074',
    title: 'join and roster without channel, heartbeat, leave and grant without call are 400',
    level: 'required',
    async run (ctx) {
      const ch = channel(ctx, 'voice')
      const bodies = [
        { action: 'join' },
        { action: 'join', call: 'call_1' },
        { action: 'roster' },
        { action: 'roster', call: 'call_1' },
        { action: 'heartbeat', speaking: false },
        { action: 'heartbeat', channel: ch },
        { action: 'leave' },
        { action: 'leave', channel: ch },
        { action: 'grant' },
        { action: 'grant', channel: ch }
      ]
      for (const body of bodies) {
        expectOrbError(await voice(ctx, body), 400, `POST /voice ${JSON.stringify(body)}`, { decided: true })
      }
    }
  }),
  defineCase<OrbBotClient>({
    id: 'ORB-075',
    title: 'a bot joining a voice channel whose seats are all taken is refused with 409; with a seat free it joins',
    level: 'required',
    writes: true,
    async run (ctx) {
      const { control } = controlled(ctx)
      const ch = channel(ctx, 'voice')
      const member = await memberOf(ctx)
      const { capacity, taken } = await voiceSeats(ctx, ch)
      if (taken === 0) throw new CaseSkip(`nobody sits in ${ch} to fill it (a capacity cannot be 0)`)
      ctx.cleanup(async () => {
        await control.setVoice({ capacity: { [ch]: capacity } })
      })
      await control.setVoice({ capacity: { [ch]: taken } })
      // ORB-075 names 409 after ORB-A16: a required run accepts another 4xx refusal.
      expectOrbError(
        await voice(ctx, { action: 'join', channel: ch }),
        409,
        `joining ${ch} with ${taken} of ${taken} seats taken`,
        { decided: true }
      )
      expectEqual((await voiceSeats(ctx, ch)).taken, taken, 'the refused join took no seat: the seats taken')
      await expectSeat(ctx, ch, member, false, 'the refused join took no seat')
      await control.setVoice({ capacity: { [ch]: capacity } })
      await join(ctx, ch)
      expectEqual((await voiceSeats(ctx, ch)).taken, taken + 1, 'with a seat free the app joins: the seats taken')
      await expectSeat(ctx, ch, member, true, 'with a seat free the app joins')
    }
  }),
  defineCase<OrbBotClient>({
    id: 'ORB-076',
    title: 'a heartbeat within 90 s keeps the seat; 90 s without one drops it and the call then answers 410',
    level: 'required',
    needs: ['slow'],
    writes: true,
    async run (ctx) {
      const ch = channel(ctx, 'voice')
      const member = await memberOf(ctx)
      const { call } = await join(ctx, ch)
      const heartbeat = (): Promise<OrbReply> => voice(ctx, { action: 'heartbeat', call, speaking: false })
      for (const n of [1, 2]) {
        await ctx.elapse(89_000)
        const kept = await heartbeat()
        if (kept.status !== 200) fail(`heartbeat ${n}, 89 s after the last sign of life`, 200, kept)
      }
      await ctx.elapse(await ctx.virtualTime() ? 91_000 : 100_000)
      expectOrbError(await heartbeat(), 410, 'a heartbeat after 91 s of silence', { decided: true })
      await expectSeat(ctx, ch, member, false, 'the dropped seat is gone')
      expectOrbError(await voice(ctx, { action: 'leave', call }), 410, 'leaving the dropped seat', { decided: true })
    }
  }),
  defineCase<OrbBotClient>({
    id: 'ORB-078',
    title: 'grant returns a token valid for 30 s where the Orb runs a voice server; without one it is refused (409)',
    level: 'required',
    writes: true,
    async run (ctx) {
      const ch = channel(ctx, 'voice')
      if (ctx.control !== undefined) await voiceServer(ctx, true)
      const { call } = await join(ctx, ch)
      const reply = await voice(ctx, { action: 'grant', call })
      if (ctx.control === undefined && reply.status === 409) {
        expectOrbError(reply, 409, 'grant on an Orb without a voice server', { decided: true })
        ctx.note('this Orb runs no voice server: grant answered 409')
        return
      }
      const body = expectOk(reply, 'grant')
      // Now, on the target's clock: the control API's, else the reply's Date (whole seconds).
      const date = Date.parse(String(reply.headers.date))
      const now = ctx.control !== undefined ? await nowMs(ctx) : Number.isNaN(date) ? Date.now() : date
      const slack = ctx.control !== undefined ? 1000 : 2000
      // The spec gives grant's 200 no shape, only a LiveKit token valid 30 s: LiveKit tokens are JWTs, so whichever
      // field holds one, its exp says how long it is valid (from its iat where it has one, else from now).
      const tokens = jwtsIn(body)
      for (const { claims } of tokens) {
        const from = claims.iat ?? claims.nbf
        if (from !== undefined) {
          expectThat(
            Math.abs(claims.exp! - from - 30) <= 1,
            'the granted token is valid for 30 s (exp - iat)',
            30,
            claims.exp! - from
          )
        }
        expectThat(
          Math.abs(claims.exp! * 1000 - now - 30_000) <= slack + 1000,
          'the granted token expires 30 s from now (its exp)',
          `about ${now + 30_000}`,
          claims.exp! * 1000
        )
      }
      // ORB-A16: {token, url, expiresAt (ms)}.
      if (strict(ctx.client)) {
        expectThat(
          typeof body.token === 'string' && body.token !== '' && typeof body.url === 'string',
          'grant answers {token, url, expiresAt} (ORB-A16)',
          'a token and a url',
          body
        )
        expectThat(
          Number.isInteger(body.expiresAt) && Math.abs(body.expiresAt - now - 30_000) <= slack,
          'expiresAt is 30 s from now (ORB-A16)',
          `about ${now + 30_000}`,
          body.expiresAt
        )
        const claims = jwtClaims(body.token)
        if (claims?.exp !== undefined) {
          expectThat(
            Math.abs(claims.exp * 1000 - body.expiresAt) <= 1000,
            "the LiveKit token's exp matches expiresAt (ORB-A16)",
            body.expiresAt,
            claims.exp * 1000
          )
        }
      } else if (tokens.length === 0) {
        ctx.note(
          "the grant reply holds no JWT with an exp: its 30 s validity shows only in ORB-A16's expiresAt, held where strict"
        )
      }
      if (ctx.control !== undefined) {
        await voiceServer(ctx, false)
        expectOrbError(await voice(ctx, { action: 'grant', call }), 409, 'grant with no voice server', {
          decided: true
        })
      }
    }
  }),
  defineCase<OrbBotClient>({
    id: 'ORB-079',
    title: 'every voice action without the voice scope is 403',
    level: 'required',
    async run (ctx) {
      const ch = channel(ctx, 'voice')
      const as = await withoutScope(ctx, 'voice')
      // A live call's id where the full app's roster names one (ORB-A16's `call`), so that only the scope is missing.
      const listed = await voice(ctx, { action: 'roster', channel: ch })
      const call = typeof listed.json?.call === 'string' ? (listed.json.call as string) : 'call_1'
      for (const body of [
        { action: 'join', channel: ch },
        { action: 'roster', channel: ch },
        { action: 'heartbeat', call, speaking: false },
        { action: 'leave', call },
        { action: 'grant', call }
      ]) {
        expectOrbError(await voice(ctx, body, as), 403, `${body.action} without the voice scope`)
      }
    }
  }),
  defineCase<OrbBotClient>({
    id: 'ORB-080',
    title: 'voice 410 (leaving twice, a heartbeat after leaving) and 409 (grant without a voice server) carry the Error body',
    level: 'required',
    writes: true,
    async run (ctx) {
      const ch = channel(ctx, 'voice')
      const { call } = await join(ctx, ch)
      if (ctx.control !== undefined) {
        await voiceServer(ctx, false)
        expectOrbError(await voice(ctx, { action: 'grant', call }), 409, 'grant with no voice server', {
          decided: true
        })
      } else {
        const grant = await voice(ctx, { action: 'grant', call })
        if (grant.status === 409) expectOrbError(grant, 409, 'grant with no voice server', { decided: true })
        else ctx.note('this Orb runs a voice server: no 409 to see without the control API')
      }
      if ((await voice(ctx, { action: 'leave', call })).status !== 200) {
        throw new CaseFailure('leaving the seat', 200, 'not 200')
      }
      expectOrbError(await voice(ctx, { action: 'leave', call }), 410, 'leaving twice', { decided: true })
      expectOrbError(
        await voice(ctx, { action: 'heartbeat', call, speaking: false }),
        410,
        'a heartbeat after leaving',
        { decided: true }
      )
    }
  }),
  defineCase<OrbBotClient>({
    id: 'ORB-A16',
    title:
      'voice replies: join, roster (without a seat), heartbeat, leave and grant shapes; a second join keeps the seat; 400 on a text channel',
    level: 'decision',
    writes: true,
    async run (ctx) {
      const ch = channel(ctx, 'voice')
      const member = await memberOf(ctx)
      await expectRosterWithoutSeat(ctx, ch, member)
      const call = await expectJoinAndHeartbeat(ctx, ch, member)
      await expectGrantAndLeave(ctx, call)
      expectOrbError(
        await voice(ctx, { action: 'join', channel: ctx.client.target.channels.text }),
        400,
        'join on a text channel'
      )
      expectOrbError(
        await voice(ctx, { action: 'join', channel: 'ch_orbtest_no_such_channel' }),
        404,
        'join on an unknown channel'
      )
    }
  }),
  defineCase<OrbBotClient>({
    id: 'ORB-A08.voice',
    title: 'voice and music rights: heartbeat speaking:true needs speak (403), join and music need connect (403)',
    level: 'decision',
    writes: true,
    async run (ctx) {
      const { control, target } = controlled(ctx)
      const ch = channel(ctx, 'voice')
      const install = await keepInstall(ctx)
      const withRights = (rights: string[]): Promise<any> =>
        control.install(target.community, target.full.id!, {
          role: install.role,
          channels: install.channels,
          hidden: install.hidden,
          channelRights: { ...install.channelRights, [ch]: rights }
        })
      await withRights(['send_messages', 'connect'])
      const { call } = await join(ctx, ch)
      expectOrbError(
        await voice(ctx, { action: 'heartbeat', call, speaking: true }),
        403,
        'heartbeat speaking:true without speak'
      )
      const quiet = await voice(ctx, { action: 'heartbeat', call, speaking: false })
      if (quiet.status !== 200) fail('heartbeat speaking:false without speak', 200, quiet)
      await voice(ctx, { action: 'leave', call })
      await withRights(['send_messages', 'speak'])
      expectOrbError(await voice(ctx, { action: 'join', channel: ch }), 403, 'join without connect')
      expectOrbError(await ctx.client.post(MUSIC, { channel: ch, action: 'state' }), 403, 'music without connect')
      expectOrbError(await ctx.client.get(MUSIC, { channel: ch }), 403, 'GET /music without connect')
    }
  })
]

/** ORB-A16: one member of a roster: `{id, name, bot, speaking}`. */
function isRosterEntry (m: any): boolean {
  return typeof m?.id === 'string' &&
    typeof m.name === 'string' &&
    typeof m.bot === 'boolean' &&
    typeof m.speaking === 'boolean'
}

/** ORB-A16: the roster of `ch` before the app sits: `{channel, call, members}`, without the app. */
async function expectRosterWithoutSeat (ctx: OrbContext, ch: string, member: string): Promise<void> {
  const before = await roster(ctx, ch)
  expectThat(
    before.channel === ch &&
      (before.call === null || typeof before.call === 'string') &&
      (before.members as any[]).every(isRosterEntry) &&
      !seated(before, member),
    'roster without a seat: {channel, call, members:[{id,name,bot,speaking}]}',
    'that shape, the app not in it',
    before
  )
}

/**
 * ORB-A16: a join's reply, a second join that keeps the seat, a heartbeat's reply and the roster that shows the app
 * speaking. Returns the call joined.
 */
async function expectJoinAndHeartbeat (ctx: OrbContext, ch: string, member: string): Promise<string> {
  const joined = (await join(ctx, ch)).body
  expectThat(
    typeof joined?.call === 'string' &&
      joined.channel === ch &&
      Array.isArray(joined.members) &&
      joined.members.some((m: any) => m.id === member && m.bot === true),
    'join answers {call, channel, members} with the app as a bot',
    'that shape',
    joined
  )
  const again = await voice(ctx, { action: 'join', channel: ch })
  expectThat(
    again.status === 200 && again.json?.call === joined.call,
    'a second join returns the same seat',
    joined.call,
    `${again.status} ${again.text}`
  )
  const beat = await voice(ctx, { action: 'heartbeat', call: joined.call, speaking: true })
  expectThat(
    beat.status === 200 && isDeepStrictEqual(beat.json, { ok: true, call: joined.call }),
    'heartbeat answers {"ok":true,"call"}',
    { ok: true, call: joined.call },
    `${beat.status} ${beat.text}`
  )
  const during = await roster(ctx, ch)
  expectThat(
    during.call === joined.call && during.members.some((m: any) => m.id === member && m.speaking === true),
    'the roster shows the app seated and speaking',
    'the app, speaking',
    during
  )
  return joined.call
}

/** ORB-A16: a grant's reply (or 409 without a voice server), a leave's reply, and 410 for a heartbeat after it. */
async function expectGrantAndLeave (ctx: OrbContext, call: string): Promise<void> {
  if (ctx.control !== undefined) await voiceServer(ctx, true)
  const grant = await voice(ctx, { action: 'grant', call })
  if (grant.status === 200) {
    expectThat(
      typeof grant.json?.token === 'string' &&
        typeof grant.json?.url === 'string' &&
        Number.isInteger(grant.json?.expiresAt),
      'grant answers {token, url, expiresAt}',
      'that shape',
      grant.json
    )
  } else expectOrbError(grant, 409, 'grant without a voice server')
  const left = await voice(ctx, { action: 'leave', call })
  expectThat(
    left.status === 200 && isDeepStrictEqual(left.json, { ok: true }),
    'leave answers {"ok":true}',
    { ok: true },
    `${left.status} ${left.text}`
  )
  expectOrbError(
    await voice(ctx, { action: 'heartbeat', call, speaking: false }),
    410,
    'a heartbeat after leaving'
  )
}
