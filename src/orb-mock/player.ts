import { createHash } from 'node:crypto'

// The room player as a model (ORB-A17): what it holds, how time plays it forward, and the order tracks play in.

/** ORB-A17: `loop` off, one track again and again, or the whole queue. */
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
export interface Player {
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

/** ORB-A17: the player as the API shows it, with the position in seconds. */
export function show (player: Player): PlayerView {
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
export function settle (player: Player, now: number): void {
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
export const lengthOf = (track: Track): number => track.duration * 1000

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

/**
 * The track after `index` in play order (null: before the first); past the last, the first with `loop: all`, else
 * null.
 */
export function after (player: Player, index: number | null): number | null {
  const order = playOrder(player.queue, player.shuffle)
  if (order.length === 0) return null
  if (index === null) return order[0]!
  const at = order.indexOf(index)
  if (at + 1 < order.length) return order[at + 1]!
  return player.loop === 'all' ? order[0]! : null
}

/**
 * The track before `index` in play order (null: after the last); before the first, the last with `loop: all`, else
 * the first again.
 */
export function before (player: Player, index: number | null): number | null {
  const order = playOrder(player.queue, player.shuffle)
  if (order.length === 0) return null
  if (index === null) return order[order.length - 1]!
  const at = order.indexOf(index)
  if (at > 0) return order[at - 1]!
  return player.loop === 'all' ? order[order.length - 1]! : order[0]!
}

/** A new current track from its start; none stops the player. */
export function moveTo (player: Player, index: number | null): void {
  player.current = index
  player.offset = 0
  if (index === null) player.playing = false
}

/** The first four bytes of the text's SHA-256, as an unsigned integer. */
export function hash32 (text: string): number {
  return createHash('sha256').update(text).digest().readUInt32BE(0)
}
