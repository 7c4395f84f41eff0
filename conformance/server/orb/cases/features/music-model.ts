import { isDeepStrictEqual } from 'node:util'
import fc from 'fast-check'
import { expectEqual, expectOk, expectOrbError, expectThat } from '../../expect.js'
import type { OrbContext } from '../../orb-case.js'
import type { Strictness } from '../../../core/strictness.js'
import type { OrbReply, Speaker } from '../../transport.js'
import { act, checkPlayer, controlPlayer, LOOPS, player, TRACK_TEXTS } from './music-support.js'
import { MAX_VOLUME, strict } from './features-support.js'

// The room player as a state machine (ORB-083, ORB-A17). Every action's reply is checked against what the ledger
// fixes, GET must then show exactly the reply, and members (the control state) exactly the same player. Where the
// ledger leaves a choice open (which track `next`, `back` or `play` picks under shuffle, where a player goes after the
// last track), the model takes the server's answer once it passed the checks.

interface Track {
  id: string
  duration: number
}
interface PlayerModel {
  playing: boolean
  positionMs: number
  volume: number
  loop: string
  shuffle: boolean
  current: number | null
  queue: Track[]
}

export interface MusicReal {
  ctx: OrbContext
  channel: string
  virtual: boolean
  control: boolean
  /** Who may act: the full app, and (with control) a second app in the same room. */
  actors: Array<{ as: Speaker, member: string }>
  /** What the run did, for the report. */
  counts: Record<string, number>
}

export interface MusicModel { p: PlayerModel }

/** What an action leaves fixed; undefined fields are open (checked only by checkPlayer). */
interface Prediction {
  ok: boolean
  queue?: string[] | 'append'
  playing?: boolean
  positionMs?: number
  current?: number | null
  /** The current track changed: it starts at 0. */
  fromStart?: boolean
  volume?: number
  loop?: string
  shuffle?: boolean
}

export const toModel = (p: any): PlayerModel => ({
  playing: p.playing,
  positionMs: Math.round(p.position * 1000),
  volume: p.volume,
  loop: p.loop,
  shuffle: p.shuffle,
  current: p.current,
  queue: (p.queue as any[]).map((t) => ({ id: t.id, duration: t.duration }))
})

const isIndex = (arg: unknown, m: PlayerModel): arg is number =>
  Number.isInteger(arg) && (arg as number) >= 0 && (arg as number) < m.queue.length

/** What an action keeps unless it says otherwise: the queue and settings (`same`), and the play as well (`still`). */
interface Kept {
  same: { queue: string[], volume: number, loop: string, shuffle: boolean }
  still: Kept['same'] & { playing: boolean, positionMs: number, current: number | null }
}

/** ORB-A17: what one action with `arg` does to the player `m`. */
type Predictor = (m: PlayerModel, arg: unknown, kept: Kept) => Prediction

/** `next` and `back`: in queue order, next is the following track; any other pick is the server's, from its start. */
const skip = (action: 'next' | 'back'): Predictor => (m, _arg, { same, still }) => {
  if (m.queue.length === 0) return { ok: true, ...still }
  if (action === 'next' && !m.shuffle && m.current !== null && m.current + 1 < m.queue.length) {
    return { ok: true, ...same, current: m.current + 1, positionMs: 0 }
  }
  return { ok: true, ...same, fromStart: true }
}

/** `remove`: the current track's removal starts another; removing one before it moves the current index down. */
const remove: Predictor = (m, arg, { same, still }) => {
  if (!isIndex(arg, m)) return { ok: false }
  const queue = m.queue.filter((_, i) => i !== arg).map((t) => t.id)
  if (m.current === arg) return { ok: true, ...same, queue, fromStart: true }
  return {
    ok: true,
    ...still,
    queue,
    current: m.current === null ? null : m.current > arg ? m.current - 1 : m.current
  }
}

/** ORB-A17's actions, by name; an action not named here changes nothing. */
const PREDICTORS: Record<string, Predictor> = {
  add: (m, arg, { same, still }) => {
    if (typeof arg !== 'string' || arg.trim() === '') return { ok: false }
    return m.current === null
      ? { ok: true, ...same, queue: 'append', fromStart: true }
      : { ok: true, ...still, queue: 'append' }
  },
  play: (m, _arg, { same, still }) => {
    if (m.current !== null) return { ok: true, ...still, playing: true }
    if (m.queue.length === 0) return { ok: true, ...still, playing: false }
    return { ok: true, ...same, playing: true, fromStart: true }
  },
  pause: (_m, _arg, { still }) => ({ ok: true, ...still, playing: false }),
  next: skip('next'),
  back: skip('back'),
  jump: (m, arg, { same }) => isIndex(arg, m) ? { ok: true, ...same, current: arg, positionMs: 0 } : { ok: false },
  remove,
  seek: (m, arg, { still }) => {
    if (typeof arg !== 'number' || arg < 0 || m.current === null) return { ok: false }
    return { ok: true, ...still, positionMs: Math.round(arg * 1000) }
  },
  volume: (_m, arg, { still }) =>
    Number.isInteger(arg) && (arg as number) >= 0 && (arg as number) <= MAX_VOLUME
      ? { ok: true, ...still, volume: arg as number }
      : { ok: false },
  loop: (_m, arg, { still }) =>
    typeof arg === 'string' && LOOPS.includes(arg) ? { ok: true, ...still, loop: arg } : { ok: false },
  shuffle: (m, arg, { still }) => {
    if (arg !== undefined && typeof arg !== 'boolean') return { ok: false }
    return { ok: true, ...still, shuffle: arg ?? !m.shuffle }
  },
  clear: (_m, _arg, { same }) => ({
    ok: true,
    queue: [],
    current: null,
    playing: false,
    volume: same.volume,
    loop: same.loop,
    shuffle: same.shuffle
  })
}

/** ORB-A17: what an action does to the player `m`. */
function predict (m: PlayerModel, action: string, arg: unknown): Prediction {
  const same = { queue: m.queue.map((t) => t.id), volume: m.volume, loop: m.loop, shuffle: m.shuffle }
  const still = { ...same, playing: m.playing, positionMs: m.positionMs, current: m.current }
  if (!Object.hasOwn(PREDICTORS, action)) return { ok: true, ...still }
  return PREDICTORS[action]!(m, arg, { same, still })
}

/** ORB-A17, clock: `ms` of play; a track that ends under loop one starts again; other endings are open. */
function predictElapse (m: PlayerModel, ms: number): Prediction {
  const same = { ok: true, queue: m.queue.map((t) => t.id), volume: m.volume, loop: m.loop, shuffle: m.shuffle }
  if (!m.playing || m.current === null) {
    return { ...same, playing: m.playing, positionMs: m.positionMs, current: m.current }
  }
  const length = m.queue[m.current]!.duration * 1000
  if (m.positionMs + ms < length) return { ...same, playing: true, current: m.current, positionMs: m.positionMs + ms }
  if (m.loop === 'one') return { ...same, playing: true, current: m.current, positionMs: (m.positionMs + ms) % length }
  return same
}

/**
 * Checks a player against a prediction made from `m`; `slackMs` is how far a playing position may drift (real clocks).
 */
function checkPrediction (
  of: Strictness,
  p: any,
  m: PlayerModel,
  want: Prediction,
  what: string,
  slackMs: number,
  addedBy?: string
): void {
  const ids = (p.queue as any[]).map((t) => t.id)
  if (want.queue === 'append') {
    const old = m.queue.map((t) => t.id)
    expectThat(
      ids.length === old.length + 1 && isDeepStrictEqual(ids.slice(0, -1), old) && !old.includes(ids.at(-1)),
      `${what}: add appends one new track`,
      [...old, '<new>'],
      ids
    )
    const added = p.queue.at(-1)
    if (strict(of) && addedBy !== undefined) { expectEqual(added.addedBy, addedBy, `${what}: the new track's addedBy is the member who added it (ORB-A17)`) }
    if (want.current === undefined && m.current === null) {
      expectThat(
        p.current === null || p.current === ids.length - 1,
        `${what}: with nothing current, add makes the new track current or nothing`,
        `null or ${ids.length - 1}`,
        p.current
      )
    }
  } else if (want.queue !== undefined) {
    expectEqual(ids, want.queue, `${what}: the queue`)
  }
  for (const field of ['volume', 'loop', 'shuffle', 'playing', 'current'] as const) {
    if (want[field] !== undefined) expectEqual(p[field], want[field], `${what}: ${field}`)
  }
  const position = Math.round(p.position * 1000)
  if (want.positionMs !== undefined) {
    const slack = p.playing === true ? slackMs : 1
    expectThat(
      Math.abs(position - want.positionMs) <= slack,
      `${what}: the position follows the clock`,
      want.positionMs / 1000,
      p.position
    )
  }
  if (want.fromStart === true && p.current !== null && want.positionMs === undefined) {
    expectThat(
      position <= (p.playing === true ? slackMs : 1),
      `${what}: a newly current track starts at 0`,
      0,
      p.position
    )
  }
}

/** After an action or a clock move: GET shows exactly the player, members see the same one; the model takes it. */
async function observe (
  model: MusicModel,
  real: MusicReal,
  reply: OrbReply | undefined,
  want: Prediction,
  what: string,
  addedBy?: string
): Promise<void> {
  const { ctx, channel: ch } = real
  const slack = real.virtual ? 1 : 2000
  if (reply !== undefined && !want.ok) {
    real.counts.refused = (real.counts.refused ?? 0) + 1
    expectOrbError(reply, 400, `${what}: a bad arg (ORB-A17)`, { decided: true })
    const now = await player(ctx, ch)
    checkPrediction(ctx.client, now, model.p, predictElapse(model.p, 0), `${what}, refused: nothing changed`, slack)
    model.p = toModel(now)
    return
  }
  real.counts[what.split('(')[0]!] = (real.counts[what.split('(')[0]!] ?? 0) + 1
  let shown: any
  if (reply !== undefined) {
    shown = expectOk(reply, what)
    checkPlayer(shown, ch, what)
    checkPrediction(ctx.client, shown, model.p, want, what, slack, addedBy)
  }
  const got = await player(ctx, ch)
  checkPlayer(got, ch, `GET after ${what}`)
  if (shown === undefined) checkPrediction(ctx.client, got, model.p, want, what, slack)
  else {
    // A real clock moves between the two: the position may differ a little.
    const same = real.virtual
      ? isDeepStrictEqual(got, shown)
      : isDeepStrictEqual({ ...got, position: 0 }, { ...shown, position: 0 }) &&
        Math.abs(got.position - shown.position) <= slack / 1000
    expectThat(same, `GET after ${what} shows the player the action answered (ORB-083)`, shown, got)
  }
  if (real.control && real.virtual) {
    const members = await controlPlayer(ctx, ch)
    expectThat(
      isDeepStrictEqual(members, got),
      `members see the player GET shows (ORB-083), after ${what}`,
      got,
      members
    )
  }
  model.p = toModel(got)
}

export class MusicAct implements fc.AsyncCommand<MusicModel, MusicReal> {
  constructor (
    readonly action: string,
    readonly arg: unknown,
    readonly who: number,
    readonly fraction = 0
  ) {}

  check (m: Readonly<MusicModel>): boolean {
    // Queues stay short; a seek is sent only with something current, at a fraction of its length.
    return (
      !(this.action === 'add' && m.p.queue.length >= 6) &&
      !(this.action === 'seek' && this.arg === undefined && m.p.current === null)
    )
  }

  async run (model: MusicModel, real: MusicReal): Promise<void> {
    const actor = real.actors[this.who % real.actors.length]!
    const arg =
      this.action === 'seek' && this.arg === undefined
        ? Math.floor(this.fraction * model.p.queue[model.p.current!]!.duration * 1000) / 1000
        : this.arg
    const want = predict(model.p, this.action, arg)
    const reply = await act(real.ctx, real.channel, this.action, arg, actor.as)
    await observe(
      model,
      real,
      reply,
      want,
      `${this.toString()}${this.action === 'seek' ? ` (${String(arg)})` : ''}`,
      actor.member
    )
  }

  toString (): string {
    return `${this.action}(${this.arg === undefined ? '' : JSON.stringify(this.arg)})#${this.who}`
  }
}

class MusicElapse implements fc.AsyncCommand<MusicModel, MusicReal> {
  constructor (readonly ms: number) {}
  check (): boolean { return true }
  async run (model: MusicModel, real: MusicReal): Promise<void> {
    await real.ctx.elapse(this.ms)
    await observe(model, real, undefined, predictElapse(model.p, this.ms), this.toString())
  }

  toString (): string { return `elapse(${this.ms} ms)` }
}

const who = fc.nat({ max: 1 })
const sometimes = <T>(valid: fc.Arbitrary<T>, invalid: fc.Arbitrary<T>): fc.Arbitrary<T> =>
  fc.oneof({ weight: 6, arbitrary: valid }, { weight: 1, arbitrary: invalid })
export const musicCommands = (virtual: boolean): fc.Arbitrary<Iterable<fc.AsyncCommand<MusicModel, MusicReal>>> => {
  const add = fc
    .tuple(sometimes(fc.constantFrom<unknown>(...TRACK_TEXTS), fc.constantFrom(undefined, 7)), who)
    .map(([arg, w]) => new MusicAct('add', arg, w))
  const plain = fc
    .tuple(fc.constantFrom('play', 'pause', 'next', 'back', 'next', 'play', 'clear', 'state', 'state'), who)
    .map(([action, w]) => new MusicAct(action, undefined, w))
  const index = fc
    .tuple(
      fc.constantFrom('jump', 'remove'),
      sometimes(fc.integer({ min: 0, max: 3 }), fc.constantFrom(-1, 6, 0.5)),
      who
    )
    .map(([action, i, w]) => new MusicAct(action, i, w))
  const seek = fc.oneof(
    {
      weight: 4,
      arbitrary: fc
        .tuple(fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), who)
        .map(([f, w]) => new MusicAct('seek', undefined, w, f))
    },
    { weight: 1, arbitrary: fc.tuple(fc.constantFrom(-1, 'x'), who).map(([arg, w]) => new MusicAct('seek', arg, w)) }
  )
  const volume = fc
    .tuple(
      sometimes(
        fc.oneof(fc.integer({ min: 0, max: MAX_VOLUME }), fc.constantFrom(0, MAX_VOLUME)),
        fc.constantFrom(-1, MAX_VOLUME + 1, 50.5, '50', null)
      ),
      who
    )
    .map(([v, w]) => new MusicAct('volume', v, w))
  const loop = fc
    .tuple(sometimes(fc.constantFrom<unknown>('off', 'one', 'all'), fc.constantFrom('ONE', 1)), who)
    .map(([l, w]) => new MusicAct('loop', l, w))
  const shuffle = fc
    .tuple(sometimes(fc.constantFrom<unknown>(true, false, undefined, undefined), fc.constant('yes')), who)
    .map(([s, w]) => new MusicAct('shuffle', s, w))
  const elapse = fc.integer({ min: 1, max: 240 }).map((halfSeconds) => new MusicElapse(halfSeconds * 500))
  return fc.commands(
    [add, add, plain, plain, plain, index, index, seek, volume, loop, shuffle, ...(virtual ? [elapse, elapse] : [])],
    { maxCommands: 30, size: 'max' }
  )
}
