import { createHash } from 'node:crypto'
import { orbErrors } from './errors.js'
import type { OrbStore } from './store.js'

/** ORB-081: what the room player can be told to do. */
export const MUSIC_ACTIONS = ['add', 'play', 'pause', 'next', 'back', 'jump', 'remove', 'seek', 'volume', 'loop', 'shuffle', 'clear', 'state'] as const
export type MusicAction = typeof MUSIC_ACTIONS[number]
export type Loop = 'off' | 'one' | 'all'

/** ORB-A17: a queued track. `duration` is in whole seconds. */
export interface Track { id: string, title: string, url: string, duration: number, addedBy: string }

/** ORB-A17: the player exactly as the API shows it. */
export interface PlayerView {
  channel: string
  playing: boolean
  /** Seconds into the current track, to the millisecond. */
  position: number
  volume: number
  loop: Loop
  shuffle: boolean
  current: number | null
  queue: Track[]
}

/** A room's player as held: the position is kept in milliseconds as of `at` and brought up to date on every use. */
interface Player {
  channel: string
  playing: boolean
  /** Milliseconds into the current track at `at`; always below its duration. */
  offset: number
  at: number
  volume: number
  loop: Loop
  shuffle: boolean
  current: number | null
  queue: Track[]
}

/** ORB-A17: a fresh player's volume. */
export const START_VOLUME = 50
/** Tracks found by search text live under this made-up catalogue. */
export const CATALOGUE = 'https://music.orb.test/search?q='
/** Durations the fake gives tracks, in seconds (inclusive). */
export const MIN_DURATION = 60
export const MAX_DURATION = 420

/** Who acts, and how the player names new tracks. */
interface Actor {
  member: string
  trackId: () => string
}

/**
 * The room players of one store (ORB-083): one per voice channel, made on first use, shared by every app and member
 * who reaches the room. No timers: time is read from the store's clock whenever a player is used.
 */
export class Music {
  readonly #store: OrbStore
  #players = new Map<string, Player>()
  #nextTrack = 1

  constructor (store: OrbStore) {
    this.#store = store
    store.onReset(() => {
      this.#players = new Map()
      this.#nextTrack = 1
    })
    // The control server's view: every room player made so far, as it stands now.
    store.stateParts.set('music', () => ({ players: [...this.#players.keys()].map((channel) => this.view(channel)) }))
  }

  /** ORB-082, ORB-083: the room's player as it stands now. */
  view (channel: string): PlayerView {
    return show(this.#player(channel))
  }

  /** ORB-081, ORB-A17: applies one action by `member` and answers the player; a bad `arg` changes nothing (400). */
  act (channel: string, action: MusicAction, arg: unknown, member: string): PlayerView {
    const existed = this.#players.has(channel)
    const player = this.#player(channel)
    try {
      ACTIONS[action](player, arg, { member, trackId: () => `trk_${this.#nextTrack++}` })
    } catch (err) {
      // A refused action leaves no trace, not even a player the room never used.
      if (!existed) this.#players.delete(channel)
      throw err
    }
    return show(player)
  }

  /** The channel's player, made on first use and brought up to the clock's now. */
  #player (channel: string): Player {
    const now = this.#store.clock.now()
    let player = this.#players.get(channel)
    if (player === undefined) {
      player = { channel, playing: false, offset: 0, at: now, volume: START_VOLUME, loop: 'off', shuffle: false, current: null, queue: [] }
      this.#players.set(channel, player)
    }
    settle(player, now)
    return player
  }
}

const players = new WeakMap<OrbStore, Music>()

/** The store's room players, one set per store whoever asks. */
export function musicOf (store: OrbStore): Music {
  let music = players.get(store)
  if (music === undefined) {
    music = new Music(store)
    players.set(store, music)
  }
  return music
}

function show (player: Player): PlayerView {
  return {
    channel: player.channel,
    playing: player.playing,
    position: player.offset / 1000,
    volume: player.volume,
    loop: player.loop,
    shuffle: player.shuffle,
    current: player.current,
    queue: player.queue.map((track) => ({ ...track }))
  }
}

/**
 * Plays the player forward to `now`: the position runs while playing; at a track's end `loop: one` starts it again,
 * otherwise the next track in play order starts at 0; past the last one `loop: all` wraps to the first and `off`
 * stops (current null, position 0). Whole cycles are skipped arithmetically, so a long idle read stays cheap.
 */
function settle (player: Player, now: number): void {
  let elapsed = now - player.at
  player.at = now
  if (!player.playing || player.current === null || elapsed <= 0) return
  if (player.loop === 'one') {
    player.offset = (player.offset + elapsed) % lengthOf(player.queue[player.current]!)
    return
  }
  if (player.loop === 'all') {
    const cycle = player.queue.reduce((sum, track) => sum + lengthOf(track), 0)
    elapsed %= cycle
  }
  while (player.current !== null) {
    const left = lengthOf(player.queue[player.current]!) - player.offset
    if (elapsed < left) {
      player.offset += elapsed
      return
    }
    elapsed -= left
    moveTo(player, after(player, player.current))
  }
}

/** A track's length in milliseconds. */
const lengthOf = (track: Track): number => track.duration * 1000

/**
 * ORB-A17: the order tracks play in: queue order, or with shuffle on the queue sorted by a hash of each track's id
 * (ties by index), the same for everyone and stable while the queue is.
 */
export function playOrder (queue: readonly Track[], shuffle: boolean): number[] {
  const order = queue.map((_, i) => i)
  if (!shuffle) return order
  const keys = queue.map((track) => hash32(track.id))
  return order.sort((a, b) => keys[a]! - keys[b]! || a - b)
}

/** The track after `index` in play order (null: before the first); past the last, the first with `loop: all`, else null. */
function after (player: Player, index: number | null): number | null {
  const order = playOrder(player.queue, player.shuffle)
  if (order.length === 0) return null
  if (index === null) return order[0]!
  const at = order.indexOf(index)
  if (at + 1 < order.length) return order[at + 1]!
  return player.loop === 'all' ? order[0]! : null
}

/** The track before `index` in play order (null: after the last); before the first, the last with `loop: all`, else the first again. */
function before (player: Player, index: number | null): number | null {
  const order = playOrder(player.queue, player.shuffle)
  if (order.length === 0) return null
  if (index === null) return order[order.length - 1]!
  const at = order.indexOf(index)
  if (at > 0) return order[at - 1]!
  return player.loop === 'all' ? order[order.length - 1]! : order[0]!
}

/** A new current track from its start; none stops the player. */
function moveTo (player: Player, index: number | null): void {
  player.current = index
  player.offset = 0
  if (index === null) player.playing = false
}

type Apply = (player: Player, arg: unknown, actor: Actor) => void

/** ORB-A17: each action's effect; anything the table does not allow for `arg` is 400 before a change is made. */
const ACTIONS: Record<MusicAction, Apply> = {
  // A URL or search text; the first track of a player with nothing current becomes current, paused at 0.
  add: (player, arg, actor) => {
    if (typeof arg !== 'string' || arg.trim() === '') throw orbErrors.bad('arg must be a URL or search text for add')
    player.queue.push(trackFor(arg, actor.trackId(), actor.member))
    if (player.current === null) moveTo(player, player.queue.length - 1)
  },
  // Nothing current: the first track in play order starts. An empty queue stays stopped.
  play: (player) => {
    if (player.current === null) moveTo(player, after(player, null))
    player.playing = player.current !== null
  },
  pause: (player) => {
    player.playing = false
  },
  // Skips even under `loop: one`; past the last track, wraps with `loop: all`, else stops.
  next: (player) => {
    if (player.queue.length > 0) moveTo(player, after(player, player.current))
  },
  // Before the first track, wraps with `loop: all`, else starts the first again.
  back: (player) => {
    if (player.queue.length > 0) moveTo(player, before(player, player.current))
  },
  jump: (player, arg) => {
    moveTo(player, indexArg(player, arg, 'jump'))
  },
  remove: (player, arg) => {
    removeTrack(player, indexArg(player, arg, 'remove'))
  },
  // Inside the current track: 0 <= arg < duration, in seconds (kept to the millisecond).
  seek: (player, arg) => {
    if (typeof arg !== 'number' || !Number.isFinite(arg) || arg < 0) throw orbErrors.bad('arg must be a number of seconds, at least 0, for seek')
    if (player.current === null) throw orbErrors.bad('nothing is current to seek in')
    const offset = Math.round(arg * 1000)
    const track = player.queue[player.current]!
    if (offset >= lengthOf(track)) throw orbErrors.bad(`arg ${arg} is past the end of ${track.id} (${track.duration} s)`)
    player.offset = offset
  },
  volume: (player, arg) => {
    if (typeof arg !== 'number' || !Number.isInteger(arg) || arg < 0 || arg > 100) throw orbErrors.bad('arg must be an integer from 0 to 100 for volume')
    player.volume = arg
  },
  loop: (player, arg) => {
    if (arg !== 'off' && arg !== 'one' && arg !== 'all') throw orbErrors.bad('arg must be "off", "one" or "all" for loop')
    player.loop = arg
  },
  // A boolean sets it; none (absent or null) toggles. The current track stays current.
  shuffle: (player, arg) => {
    if (arg !== undefined && arg !== null && typeof arg !== 'boolean') throw orbErrors.bad('arg must be a boolean, or absent to toggle, for shuffle')
    player.shuffle = typeof arg === 'boolean' ? arg : !player.shuffle
  },
  clear: (player) => {
    player.queue = []
    moveTo(player, null)
  },
  state: () => {}
}

/** ORB-A17: a zero-based index into the queue, else 400. */
function indexArg (player: Player, arg: unknown, action: MusicAction): number {
  if (typeof arg !== 'number' || !Number.isInteger(arg)) throw orbErrors.bad(`arg must be a zero-based queue index for ${action}`)
  if (arg < 0 || arg >= player.queue.length) throw orbErrors.bad(`arg ${arg} is out of range: the queue holds ${player.queue.length} tracks`)
  return arg
}

/**
 * Removes a track. One before the current shifts it down; removing the current one starts what would have played
 * next (as at its natural end, `loop: one` aside), or stops the player when nothing would.
 */
function removeTrack (player: Player, index: number): void {
  if (player.current !== index) {
    player.queue.splice(index, 1)
    if (player.current !== null && index < player.current) player.current--
    return
  }
  const successor = after(player, index)
  player.queue.splice(index, 1)
  const shifted = successor === null || successor === index ? null : successor > index ? successor - 1 : successor
  moveTo(player, shifted)
}

/**
 * ORB-A17: a track from a URL or search text, the same every time for the same text. A URL keeps its own address and
 * is titled by its last path segment (hyphens, underscores and an extension dropped), else its host; search text is
 * its own title (spaces collapsed) at a catalogue address. Duration: 60..420 s from a SHA-256 of the URL or title.
 */
export function trackFor (text: string, id: string, addedBy: string): Track {
  const url = asUrl(text.trim())
  if (url !== null) {
    return { id, title: titleOf(url), url: url.href, duration: durationOf(url.href), addedBy }
  }
  const title = text.trim().replace(/\s+/g, ' ')
  return { id, title, url: `${CATALOGUE}${encodeURIComponent(title)}`, duration: durationOf(title), addedBy }
}

function asUrl (text: string): URL | null {
  if (!/^https?:\/\/\S+$/i.test(text)) return null
  try {
    return new URL(text)
  } catch {
    return null
  }
}

function titleOf (url: URL): string {
  const last = url.pathname.split('/').filter((part) => part !== '').pop() ?? ''
  let segment = last
  try {
    segment = decodeURIComponent(last)
  } catch {
    // A malformed escape: the segment as written.
  }
  const title = segment.replace(/\.[A-Za-z0-9]{1,5}$/, '').replace(/[-_+]+/g, ' ').trim()
  return title === '' ? url.hostname : title
}

function durationOf (key: string): number {
  return MIN_DURATION + (hash32(key) % (MAX_DURATION - MIN_DURATION + 1))
}

/** The first four bytes of the text's SHA-256, as an unsigned integer. */
export function hash32 (text: string): number {
  return createHash('sha256').update(text).digest().readUInt32BE(0)
}
