import { applyAction, type MusicAction } from './music-actions.js'
import { settle, show, type Player, type PlayerView } from './player.js'
import type { OrbStore } from './store.js'

/** ORB-A17: a fresh player's volume. */
export const START_VOLUME = 50

/**
 * The room players of the fake (ORB-083): one per voice channel, made on first use, shared by every app and member
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
  }

  /** ORB-082, ORB-083: the room's player as it stands now. */
  view (channel: string): PlayerView {
    return show(this.#player(channel))
  }

  /** The control server's view: every room player made so far, as it stands now. */
  state (): { players: PlayerView[] } {
    return { players: [...this.#players.keys()].map((channel) => this.view(channel)) }
  }

  /** ORB-081, ORB-A17: applies one action by `member` and answers the player; a bad `arg` changes nothing (400). */
  act (channel: string, action: MusicAction, arg: unknown, member: string): PlayerView {
    const existed = this.#players.has(channel)
    const player = this.#player(channel)
    try {
      applyAction(player, action, arg, { member, trackId: () => `trk_${this.#nextTrack++}` })
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
      player = {
        channel,
        playing: false,
        offset: 0,
        at: now,
        volume: START_VOLUME,
        loop: 'off',
        shuffle: false,
        current: null,
        queue: []
      }
      this.#players.set(channel, player)
    }
    settle(player, now)
    return player
  }
}
