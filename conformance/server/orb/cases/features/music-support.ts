import { isDeepStrictEqual } from 'node:util'
import fc from 'fast-check'
import { CaseFailure, CaseSkip } from '../../../core/case.js'
import { expectOk, expectThat } from '../../expect.js'
import { channel, controlled, fail, type OrbContext } from '../../orb-case.js'
import type { OrbReply, Speaker } from '../../transport.js'
import { MAX_VOLUME, MUSIC, MUSIC_ACTIONS, wrongType } from './features-support.js'

/*
 * The room player (ORB-081..084, ORB-A17): the requests the music cases make, the player as the case found it, what
 * any player looks like, and bad bodies and args.
 */

export const LOOPS = ['off', 'one', 'all']
export const PLAYER_KEYS = ['channel', 'current', 'loop', 'playing', 'position', 'queue', 'shuffle', 'volume']
export const TRACK_KEYS = ['addedBy', 'duration', 'id', 'title', 'url']
export const TRACK_TEXTS = [
  'lofi beats',
  'Bach cello suite no 1',
  'https://example.com/music/night-drive.mp3',
  'https://tracks.example.org/a/b/sunrise_theme.ogg'
]

export const act = (
  ctx: OrbContext,
  ch: string,
  action: string,
  arg?: unknown,
  as: Speaker = 'full'
): Promise<OrbReply> =>
  ctx.client.post(MUSIC, arg === undefined ? { channel: ch, action } : { channel: ch, action, arg }, as)

export async function player (ctx: OrbContext, ch: string, as: Speaker = 'full'): Promise<any> {
  const reply = await ctx.client.get(MUSIC, { channel: ch }, as)
  const body = expectOk(reply, `GET /music?channel=${ch}`)
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    fail('GET /music answers the player', 'a JSON object', reply)
  }
  return body
}

/**
 * The room's player as the case found it, put back when the case ends (read through ORB-A17's shape): its tracks
 * added again by URL, the current one at its position, playing or paused, volume, loop and shuffle as they were.
 * Tracks come back with new ids and the full app as their adder, so on a real Orb (no control API) a player that
 * holds anything is the room's in use: the case skips before touching it, as it does where the player's shape
 * cannot tell.
 */
export async function keepPlayer (ctx: OrbContext, ch: string): Promise<any> {
  const before = await player(ctx, ch)
  const queue = Array.isArray(before.queue) ? (before.queue as any[]) : undefined
  const idle =
    queue !== undefined &&
    queue.length === 0 &&
    before.playing !== true &&
    (before.current === null || before.current === undefined)
  if (!idle && (ctx.control === undefined || ctx.client.target.controlled === undefined)) {
    throw new CaseSkip(
      queue === undefined
        ? "the room's player names no queue (ORB-A17): the case cannot tell whether it is in use, so it leaves it alone"
        : "the room's player is in use (it holds tracks): the case would change what the room listens to"
    )
  }
  ctx.cleanup(async () => {
    await act(ctx, ch, 'clear')
    for (const track of queue ?? []) await addBack(ctx, ch, track)
    if (queue !== undefined && Number.isInteger(before.current) && before.current < queue.length) {
      await act(ctx, ch, 'jump', before.current)
      if (typeof before.position === 'number' && before.position > 0) await act(ctx, ch, 'seek', before.position)
    }
    await act(ctx, ch, before.playing === true ? 'play' : 'pause')
    if (Number.isInteger(before.volume)) await act(ctx, ch, 'volume', before.volume)
    if (LOOPS.includes(before.loop)) await act(ctx, ch, 'loop', before.loop)
    if (typeof before.shuffle === 'boolean') await act(ctx, ch, 'shuffle', before.shuffle)
  })
  return before
}

/**
 * Queues `track` again: by its URL, else (when the URL gives another title, as a search's URL may) by its title;
 * whichever comes back as it was, else the last try.
 */
async function addBack (ctx: OrbContext, ch: string, track: any): Promise<void> {
  const texts = [...new Set([track?.url, track?.title].filter((t): t is string => typeof t === 'string' && t !== ''))]
  for (const [i, text] of texts.entries()) {
    const queue = (await act(ctx, ch, 'add', text)).json?.queue
    const added = Array.isArray(queue) ? queue.at(-1) : undefined
    if (i === texts.length - 1 || (added?.title === track.title && added?.url === track.url)) return
    await act(ctx, ch, 'remove', queue.length - 1)
  }
}

/**
 * The voice channel a music case plays in, its player kept (put back when the case ends): the channel and the
 * player as the case found it.
 */
export async function musicRoom (ctx: OrbContext): Promise<{ ch: string, before: any }> {
  const ch = channel(ctx, 'voice')
  return { ch, before: await keepPlayer(ctx, ch) }
}

/** Fails the case (as `what`) unless `got` is the player `want` (on a real clock, but for the numbers). */
export function expectSamePlayer (got: unknown, want: unknown, virtual: boolean, what: string): void {
  expectThat(samePlayer(got, want, virtual), what, want, got)
}

/**
 * Two players' replies show the same player: equal, except that on a real clock numbers may move between the two
 * (a playing position), so only the rest must match there.
 */
export function samePlayer (a: unknown, b: unknown, virtual: boolean): boolean {
  if (virtual) return isDeepStrictEqual(a, b)
  const blur = (v: unknown): unknown =>
    typeof v === 'number'
      ? 0
      : Array.isArray(v)
        ? v.map(blur)
        : typeof v === 'object' && v !== null
          ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, blur(x)]))
          : v
  return isDeepStrictEqual(blur(a), blur(b))
}

/** The player the control API shows members (ORB-083: the room's one player). */
export async function controlPlayer (ctx: OrbContext, ch: string): Promise<any> {
  const state = await controlled(ctx).control.orbState()
  return (state.music?.players as any[] | undefined)?.find((p) => p.channel === ch)
}

/** ORB-A17: the player's settings, of their types and in range. */
function isPlayerSettings (p: any): boolean {
  return typeof p.playing === 'boolean' &&
    typeof p.position === 'number' &&
    p.position >= 0 &&
    Number.isInteger(p.volume) &&
    p.volume >= 0 &&
    p.volume <= MAX_VOLUME &&
    LOOPS.includes(p.loop) &&
    typeof p.shuffle === 'boolean'
}

/** ORB-A17: the player of `ch`: its settings, a queue of tracks, and a current index inside it or null. */
function isPlayerShape (p: any, ch: string): boolean {
  return typeof p === 'object' &&
    p !== null &&
    p.channel === ch &&
    isPlayerSettings(p) &&
    Array.isArray(p.queue) &&
    p.queue.every((t: any) => typeof t?.id === 'string' && typeof t.duration === 'number' && t.duration > 0) &&
    (p.current === null || (Number.isInteger(p.current) && p.current >= 0 && p.current < p.queue.length))
}

/**
 * ORB-A17: the player's shape; and what any sane player holds (a current track inside the queue, nothing playing
 * without one).
 */
export function checkPlayer (p: any, ch: string, what: string): void {
  if (!isPlayerShape(p, ch)) {
    throw new CaseFailure(
      `${what}: not a player as ORB-A17 gives it`,
      '{channel, playing, position, volume 0..100, loop, shuffle, current (an index or null), queue}',
      p
    )
  }
  if (p.current === null && p.playing) {
    throw new CaseFailure(`${what}: playing with nothing current`, 'playing false when current is null', p)
  }
  if (p.current !== null && p.position >= p.queue[p.current].duration) {
    throw new CaseFailure(
      `${what}: the position is past the current track's end`,
      `below ${String(p.queue[p.current].duration)}`,
      p.position
    )
  }
}

export const invalidMusicBody = (ch: string): fc.Arbitrary<unknown> =>
  fc.oneof(
    fc.constantFrom(...MUSIC_ACTIONS).map((action) => ({ action })),
    fc.constant({ channel: ch }),
    fc
      .string({ maxLength: 12 })
      .filter((a) => !MUSIC_ACTIONS.includes(a))
      .map((action) => ({ channel: ch, action })),
    fc.constantFrom('PLAY', 'skip', 'stop', ' play', 'queue').map((action) => ({ channel: ch, action })),
    fc.tuple(wrongType, fc.constantFrom(...MUSIC_ACTIONS)).map(([channel, action]) => ({ channel, action })),
    wrongType.map((action) => ({ channel: ch, action })),
    fc.oneof(
      fc.integer(),
      fc.string({ maxLength: 8 }),
      fc.constant(null),
      fc.array(fc.string({ maxLength: 3 }), { maxLength: 2 })
    )
  )

/** ORB-A17's bad args; `n` is the queue's length. */
export const badMusicArg = (n: number): fc.Arbitrary<[string, unknown]> =>
  fc.oneof(
    fc
      .oneof(
        fc.integer({ min: MAX_VOLUME + 1, max: 1e6 }),
        fc.integer({ min: -1e6, max: -1 }),
        fc.constantFrom(50.5, '50', null, true)
      )
      .map((v): [string, unknown] => ['volume', v]),
    fc
      .oneof(fc.integer({ min: -1e6, max: -1 }), fc.constantFrom(-0.5, 'x', null, true))
      .map((v): [string, unknown] => ['seek', v]),
    fc
      .oneof(
        fc.string({ maxLength: 8 }).filter((l) => !LOOPS.includes(l)),
        fc.constantFrom(1, null, true)
      )
      .map((v): [string, unknown] => ['loop', v]),
    fc.constantFrom('yes', 1, 0, 'true', [] as unknown).map((v): [string, unknown] => ['shuffle', v]),
    fc
      .tuple(
        fc.constantFrom('jump', 'remove'),
        fc.oneof(
          fc.integer({ min: n, max: n + 100 }),
          fc.integer({ min: -100, max: -1 }),
          fc.constantFrom(0.5, '0', null)
        )
      )
      .map(([a, v]): [string, unknown] => [a, v]),
    fc.constantFrom(undefined, '', 42, null).map((v): [string, unknown] => ['add', v])
  )
