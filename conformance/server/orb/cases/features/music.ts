import { isDeepStrictEqual } from 'node:util'
import fc from 'fast-check'
import { defineCase } from '../../../core/case.js'
import { expectEqual, expectOk, expectOrbError, expectThat } from '../../expect.js'
import { channel } from '../../orb-case.js'
import type { OrbBotClient, Speaker } from '../../transport.js'
import { MusicAct, musicCommands, toModel, type MusicModel, type MusicReal } from './music-model.js'
import {
  act,
  badMusicArg,
  checkPlayer,
  controlPlayer,
  expectSamePlayer,
  invalidMusicBody,
  keepPlayer,
  musicRoom,
  player,
  PLAYER_KEYS,
  TRACK_KEYS,
  TRACK_TEXTS
} from './music-support.js'
import { helperApp, memberOf, MUSIC, strict, withoutScope, type Case } from './features-support.js'

/*
 * The room player (ORB-081..084, ORB-A17): one player per voice channel, shared by every app and member in it.
 */

export const musicCases: Case[] = [
  defineCase<OrbBotClient>({
    id: 'ORB-081',
    title: 'POST /music: a missing channel or action, an unknown action or wrong types are 400; a valid action answers 200 with the player',
    level: 'required',
    writes: true,
    async run (ctx) {
      const { ch } = await musicRoom(ctx)
      const ok = await act(ctx, ch, 'state')
      const body = expectOk(ok, 'action state')
      expectThat(
        typeof body === 'object' && body !== null && !Array.isArray(body),
        'the 200 is the player',
        'a JSON object',
        body
      )
      await fc.assert(
        fc.asyncProperty(invalidMusicBody(ch), async (b) => {
          expectOrbError(await ctx.client.post(MUSIC, b), 400, `POST /music with ${JSON.stringify(b)}`)
        }),
        ctx.fc()
      )
    }
  }),
  defineCase<OrbBotClient>({
    id: 'ORB-082',
    title: 'GET /music without channel is 400; with it, 200 with the player and what the room has queued',
    level: 'required',
    writes: true,
    async run (ctx) {
      const ch = channel(ctx, 'voice')
      expectOrbError(await ctx.client.get(MUSIC), 400, 'GET /music without channel')
      const before = await keepPlayer(ctx, ch)
      const virtual = await ctx.virtualTime()
      const added = expectOk(await act(ctx, ch, 'add', TRACK_TEXTS[2]), 'adding a track')
      const after = await player(ctx, ch)
      // The spec gives the player no shape: GET shows what the room has queued, so the add shows in it, as the add's
      // own reply (the player) has it.
      expectThat(
        !isDeepStrictEqual(after, before),
        'GET shows what the room has queued: the added track changed it',
        'a player other than before the add',
        after
      )
      expectSamePlayer(after, added, virtual, 'GET shows the player the add answered')
      // ORB-A17: the queue holds one more track, the one added.
      if (strict(ctx.client)) {
        expectThat(
          Array.isArray(after.queue) &&
            after.queue.length === (before.queue?.length ?? 0) + 1 &&
            isDeepStrictEqual(after.queue, added.queue),
          'the queue has the added track (ORB-A17)',
          added.queue,
          after.queue
        )
      }
    }
  }),
  defineCase<OrbBotClient>({
    id: 'ORB-083',
    title:
      "the player is the room's: another app's and members' view shows the app's change, GET reflects it, state changes nothing",
    level: 'required',
    writes: true,
    async run (ctx) {
      const { ch } = await musicRoom(ctx)
      const virtual = await ctx.virtualTime()
      const same = (got: unknown, want: unknown, what: string): void => expectSamePlayer(got, want, virtual, what)
      const added = expectOk(
        await act(ctx, ch, 'add', 'https://example.com/music/shared-room.mp3'),
        'the full app adds a track'
      )
      same(await player(ctx, ch), added, 'GET reflects the add')
      const stated = expectOk(await act(ctx, ch, 'state'), 'action state')
      same(stated, added, 'state answers the player as it was')
      same(await player(ctx, ch), added, 'state changed nothing')
      if (ctx.control === undefined || ctx.client.target.controlled === undefined) {
        ctx.note('no control API: what other apps and members see is not checked')
        return
      }
      const other = await helperApp(ctx, 'music2', ['music'], ['connect'], [ch])
      expectEqual(await player(ctx, ch, other.as), added, "another app in the room sees the full app's queue")
      const changed = expectOk(
        await act(ctx, ch, 'volume', added.volume === 37 ? 38 : 37, other.as),
        'the other app sets the volume'
      )
      expectEqual(await player(ctx, ch), changed, "the full app sees the other app's change")
      expectEqual(await controlPlayer(ctx, ch), changed, 'members see the same player')
    }
  }),
  defineCase<OrbBotClient>({
    id: 'ORB-A17.model',
    title: 'any sequence of player actions by two apps, with time passing, leaves the shared player as ORB-A17 says; GET and members agree',
    level: 'decision',
    writes: true,
    async run (ctx) {
      const { ch } = await musicRoom(ctx)
      const virtual = await ctx.virtualTime()
      const actors = [{ as: 'full' as Speaker, member: await memberOf(ctx) }]
      const control = ctx.control !== undefined && ctx.client.target.controlled !== undefined
      if (control) actors.push(await helperApp(ctx, 'music2', ['music'], ['connect'], [ch]))
      else ctx.note('no control API: one app drives the player')
      const counts: Record<string, number> = {}
      // Each sequence starts from a cleared player with a few tracks queued (some playing), so that the actions meet
      // a queue soon; the set-up goes through the model too.
      const start = fc.tuple(fc.subarray(TRACK_TEXTS), fc.boolean())
      await fc.assert(fc.asyncProperty(start, musicCommands(virtual), async ([texts, playing], cmds) => {
        const cleared = expectOk(await act(ctx, ch, 'clear'), 'clearing the player')
        checkPlayer(cleared, ch, 'the cleared player')
        const model: MusicModel = { p: toModel(cleared) }
        const real: MusicReal = { ctx, channel: ch, virtual, control, actors, counts }
        for (const [i, text] of texts.entries()) await new MusicAct('add', text, i).run(model, real)
        if (playing) await new MusicAct('play', undefined, 0).run(model, real)
        await fc.asyncModelRun(() => ({ model, real }), cmds)
      }), ctx.fc({ numRuns: 2 * (ctx.fc().numRuns ?? 20), interruptAfterTimeLimit: 40_000 }))
      ctx.note(`steps: ${Object.entries(counts).map(([k, n]) => `${k} ${n}`).join(', ')}`)
    }
  }),
  defineCase<OrbBotClient>({
    id: 'ORB-084',
    title: 'both music methods without the music scope are 403, and the refused add changes nothing',
    level: 'required',
    writes: true,
    async run (ctx) {
      const { ch, before } = await musicRoom(ctx)
      const as = await withoutScope(ctx, 'music')
      expectOrbError(await act(ctx, ch, 'state', undefined, as), 403, 'POST /music state without the music scope')
      expectOrbError(await act(ctx, ch, 'add', 'lofi beats', as), 403, 'POST /music add without the music scope')
      expectOrbError(await ctx.client.get(MUSIC, { channel: ch }, as), 403, 'GET /music without the music scope')
      const after = await player(ctx, ch)
      const virtual = await ctx.virtualTime()
      expectSamePlayer(after, before, virtual, 'the refused add changed nothing: GET shows the player as before')
      if (strict(ctx.client)) {
        expectEqual(after.queue, before.queue, 'the refused add queued nothing (ORB-A17\'s queue)')
      }
    }
  }),
  defineCase<OrbBotClient>({
    id: 'ORB-A17',
    title: 'the player: its shape, every bad arg 400 with nothing changed, shuffle toggles, a text channel 400, an unknown one 404',
    level: 'decision',
    writes: true,
    async run (ctx) {
      const { ch } = await musicRoom(ctx)
      const member = await memberOf(ctx)
      expectOk(await act(ctx, ch, 'clear'), 'clear')
      for (const text of TRACK_TEXTS.slice(1, 3)) expectOk(await act(ctx, ch, 'add', text), `adding ${text}`)
      expectOk(await act(ctx, ch, 'pause'), 'pause')
      const p = await player(ctx, ch)
      expectEqual(Object.keys(p).sort(), PLAYER_KEYS, "the player's fields")
      checkPlayer(p, ch, 'the player')
      expectEqual(
        p.queue.map((t: any) => Object.keys(t).sort()),
        [TRACK_KEYS, TRACK_KEYS],
        "each queued track's fields"
      )
      expectThat(
        p.queue.every(
          (t: any) =>
            t.addedBy === member &&
            typeof t.title === 'string' &&
            typeof t.url === 'string' &&
            Number.isInteger(t.duration)
        ),
        'tracks name a title, url, whole-second duration and the member who added them',
        member,
        p.queue
      )
      expectEqual(p.queue[1].url, TRACK_TEXTS[2], 'a track added by URL keeps it')
      await fc.assert(
        fc.asyncProperty(badMusicArg(p.queue.length), async ([action, arg]) => {
          expectOrbError(await act(ctx, ch, action, arg), 400, `${action} with arg ${JSON.stringify(arg)}`)
          expectEqual(await player(ctx, ch), p, `${action} with a bad arg changed nothing`)
        }),
        ctx.fc()
      )
      const toggled = expectOk(await act(ctx, ch, 'shuffle'), 'shuffle without arg')
      expectEqual(toggled.shuffle, !p.shuffle, 'shuffle without arg toggles')
      expectEqual(
        expectOk(await act(ctx, ch, 'shuffle'), 'shuffle without arg again').shuffle,
        p.shuffle,
        'and toggles back'
      )
      expectOrbError(await act(ctx, ctx.client.target.channels.text, 'state'), 400, 'music on a text channel')
      expectOrbError(await act(ctx, 'ch_orbtest_no_such_channel', 'state'), 404, 'music on an unknown channel')
    }
  })
]
