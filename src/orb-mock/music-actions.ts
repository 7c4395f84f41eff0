import { orbErrors } from './errors.js'
import { after, before, hash32, lengthOf, moveTo, type Player, type Track } from './player.js'

/** ORB-081: what the room player can be told to do. */
export const MUSIC_ACTIONS = [
  'add', 'play', 'pause', 'next', 'back', 'jump', 'remove', 'seek', 'volume', 'loop', 'shuffle', 'clear', 'state'
] as const
/** One action of the room player. */
export type MusicAction = typeof MUSIC_ACTIONS[number]

/** Tracks found by search text live under this made-up catalogue. */
export const CATALOGUE = 'https://music.orb.test/search?q='
/** The shortest duration the fake gives a track, in seconds. */
export const MIN_DURATION = 60
/** The longest duration the fake gives a track, in seconds. */
export const MAX_DURATION = 420

/** Who acts, and how the player names new tracks. */
export interface Actor {
  member: string
  trackId: () => string
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
    if (typeof arg !== 'number' || !Number.isFinite(arg) || arg < 0) {
      throw orbErrors.bad('arg must be a number of seconds, at least 0, for seek')
    }
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
    if (arg !== 'off' && arg !== 'one' && arg !== 'all') {
      throw orbErrors.bad('arg must be "off", "one" or "all" for loop')
    }
    player.loop = arg
  },
  // A boolean sets it; none (absent or null) toggles. The current track stays current.
  shuffle: (player, arg) => {
    if (arg !== undefined && arg !== null && typeof arg !== 'boolean') {
      throw orbErrors.bad('arg must be a boolean, or absent to toggle, for shuffle')
    }
    player.shuffle = typeof arg === 'boolean' ? arg : !player.shuffle
  },
  clear: (player) => {
    player.queue = []
    moveTo(player, null)
  },
  state: () => {}
}

/** ORB-081, ORB-A17: applies one action to the player; a bad `arg` throws the 400 before anything changes. */
export function applyAction (player: Player, action: MusicAction, arg: unknown, actor: Actor): void {
  ACTIONS[action](player, arg, actor)
}

/** ORB-A17: a zero-based index into the queue, else 400. */
function indexArg (player: Player, arg: unknown, action: MusicAction): number {
  if (typeof arg !== 'number' || !Number.isInteger(arg)) {
    throw orbErrors.bad(`arg must be a zero-based queue index for ${action}`)
  }
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

/** The text as an http(s) URL, or null for search text. */
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
