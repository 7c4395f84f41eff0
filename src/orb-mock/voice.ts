import { createHmac, randomBytes } from 'node:crypto'
import type { TimerHandle } from '../shared/clock.js'
import { ORB_PROSE_LIMITS } from '../spec/orb.js'
import { orbErrors } from './errors.js'
import { canSee, rightsIn } from './gates.js'
import type { OrbStore } from './store.js'

/** ORB-076: a seat with no heartbeat (nor join) for this long is dropped, as a browser tab's is. */
const SEAT_SILENCE_MS = ORB_PROSE_LIMITS.seatSilenceMs
/** ORB-078: how long a grant's token is valid. */
const GRANT_MS = ORB_PROSE_LIMITS.grantMs

/** One participant of a call: a world member (a browser tab) or an app. */
export interface Seat {
  member: string
  bot: boolean
  speaking: boolean
  /** When the seat is dropped without a heartbeat (ORB-076); null for world-seated members (the fake has no tabs). */
  deadline: number | null
  timer: TimerHandle | null
}

/** A voice channel's call: it starts with its first participant and ends with its last (ORB-A16). */
export interface Call {
  id: string
  channel: string
  community: string
  /** Seats in the order they were taken. */
  seats: Map<string, Seat>
  /** Why each former participant no longer sits, for the 410's words. */
  gone: Map<string, 'left' | 'dropped' | 'revoked'>
  ended: boolean
}

/** A roster entry (ORB-A16). */
export interface RosterEntry { id: string, name: string, bot: boolean, speaking: boolean }

/** The claims of a grant's token: the app's member id, the call as the LiveKit room, seconds since the epoch. */
export interface GrantClaims { sub: string, room: string, iat: number, exp: number }

interface VoiceState {
  /** Every call since the world was loaded, ended ones too (their ids answer 410, never 404). */
  calls: Map<string, Call>
  /** The live call of each voice channel that has one: at most one (ORB-A16). */
  live: Map<string, Call>
  nextCall: number
}

/**
 * The calls of the fake's voice channels and the seats in them. Built from the world on first use after each load
 * (world `seated` members start the calls), and cleared, timers and all, when the store is reset or closed.
 */
export class Voice {
  readonly #store: OrbStore
  /** The key that signs grants (HS256), random per fake. */
  readonly grantKey: Buffer = randomBytes(32)
  #state: VoiceState | undefined

  constructor (store: OrbStore) {
    this.#store = store
    store.onReset(() => this.#clear())
    // ORB-A04, ORB-A08: access taken away takes the seat with it: an uninstall, or a channel the role no longer
    // reaches (off the allow-list, hidden, or without connect).
    store.onInstallChange((community, app) => this.#revoke(community, app))
  }

  /** The live call of a voice channel, if any. */
  liveCall (channelId: string): Call | undefined {
    return this.#current().live.get(channelId)
  }

  /** A call by id, live or ended. */
  call (id: string): Call | undefined {
    return this.#current().calls.get(id)
  }

  /**
   * ORB-075, ORB-A16: seats `member` in the channel's call (starting one when there is none). A seat it already holds
   * there is returned as it is (its 90 s start again); one in another call of the community, or a full channel, is 409.
   */
  join (member: string, channel: { id: string, community: string, capacity: number }): Call {
    const existing = this.liveCall(channel.id)
    const seat = existing?.seats.get(member)
    if (existing !== undefined && seat !== undefined) {
      this.#arm(existing, seat)
      return existing
    }
    const elsewhere = this.seatIn(member, channel.community)
    if (elsewhere !== undefined) throw orbErrors.conflict(`the app already has a seat in ${elsewhere.id} (${elsewhere.channel}); leave it first`)
    const seated = existing?.seats.size ?? 0
    if (seated >= channel.capacity) throw orbErrors.conflict(`${channel.id} is full: ${seated} of ${channel.capacity} seats taken`)
    const call = existing ?? this.#start(channel.id, channel.community)
    const fresh: Seat = { member, bot: true, speaking: false, deadline: null, timer: null }
    call.seats.set(member, fresh)
    call.gone.delete(member)
    this.#arm(call, fresh)
    return call
  }

  /** The live call in a community where `member` sits, if any. */
  seatIn (member: string, community: string): Call | undefined {
    for (const call of this.#current().live.values()) {
      if (call.community === community && call.seats.has(member)) return call
    }
    return undefined
  }

  /** ORB-076, ORB-A16: the seat `member` holds in a call, else 410 saying why it has none. */
  requireSeat (call: Call, member: string): Seat {
    const seat = call.ended ? undefined : call.seats.get(member)
    if (seat !== undefined) return seat
    if (call.ended) throw orbErrors.gone(`${call.id} has ended`)
    const why = call.gone.get(member)
    if (why === 'dropped') throw orbErrors.gone(`the app's seat in ${call.id} was dropped after ${SEAT_SILENCE_MS / 1000} s without a heartbeat`)
    if (why === 'left') throw orbErrors.gone(`the app left ${call.id}`)
    if (why === 'revoked') throw orbErrors.gone(`the app's seat in ${call.id} went when the community took its access to ${call.channel} away`)
    throw orbErrors.gone(`the app holds no seat in ${call.id}; join ${call.channel} first`)
  }

  /** ORB-076, ORB-077: the seat lives another 90 s from now, with the speaking flag given. */
  heartbeat (call: Call, seat: Seat, speaking: boolean): void {
    seat.speaking = speaking
    this.#arm(call, seat)
  }

  /** ORB-A16: the app gives up its seat; the call ends with its last participant. */
  leave (call: Call, member: string): void {
    this.#vacate(call, member, 'left')
  }

  /** ORB-A16: who sits in a call, in the order they sat down. */
  roster (call: Call | undefined): RosterEntry[] {
    if (call === undefined) return []
    return [...call.seats.values()].map((seat) => {
      const who = this.#store.authorOf(seat.member)
      return { id: who.id, name: who.name, bot: who.bot, speaking: seat.speaking }
    })
  }

  /** ORB-078: a 30-second HS256 JWT naming the member and the call, as LiveKit tokens are. */
  grant (call: Call, member: string): { token: string, expiresAt: number } {
    const now = this.#store.clock.now()
    const expiresAt = now + GRANT_MS
    const claims: GrantClaims = {
      sub: member,
      room: call.id,
      iat: Math.floor(now / 1000),
      exp: Math.floor(expiresAt / 1000)
    }
    return { token: signJwt(this.grantKey, claims), expiresAt }
  }

  /** The control server's view: every voice channel with its call, its participants and their deadlines. */
  snapshot (): Record<string, unknown> {
    const store = this.#store
    const channels = [...store.channels.values()].filter((c) => c.kind === 'voice').map((channel) => {
      const call = this.liveCall(channel.id)
      return {
        channel: channel.id,
        server: channel.community,
        capacity: channel.capacity,
        call: call?.id ?? null,
        participants: call === undefined
          ? []
          : [...call.seats.values()].map((seat) => ({
              id: seat.member,
              bot: seat.bot,
              speaking: seat.speaking,
              deadline: seat.deadline
            }))
      }
    })
    // The control state's `voice`: the voice server, and the calls.
    return { server: store.voiceServer !== null, url: store.voiceServer?.url ?? null, channels }
  }

  /** The state of the world now loaded, built on first use: world `seated` members open their channels' calls. */
  #current (): VoiceState {
    if (this.#state !== undefined) return this.#state
    const state: VoiceState = { calls: new Map(), live: new Map(), nextCall: 1 }
    this.#state = state
    for (const community of this.#store.world.communities) {
      for (const channel of community.channels) {
        if (channel.kind !== 'voice' || (channel.seated ?? []).length === 0) continue
        const call = this.#start(channel.id, community.id)
        for (const member of channel.seated!) {
          call.seats.set(member, { member, bot: false, speaking: false, deadline: null, timer: null })
        }
      }
    }
    return state
  }

  #start (channel: string, community: string): Call {
    const state = this.#current()
    const id = `call_${state.nextCall++}`
    const call: Call = { id, channel, community, seats: new Map(), gone: new Map(), ended: false }
    state.calls.set(call.id, call)
    state.live.set(channel, call)
    return call
  }

  /** ORB-076: (re)starts a seat's 90 s on the store's clock. */
  #arm (call: Call, seat: Seat): void {
    const clock = this.#store.clock
    if (seat.timer !== null) clock.clearTimer(seat.timer)
    seat.deadline = clock.now() + SEAT_SILENCE_MS
    seat.timer = clock.setTimer(SEAT_SILENCE_MS, () => {
      seat.timer = null
      if (this.#store.faults.has('seat-never-dropped')) return
      this.#vacate(call, seat.member, 'dropped')
    })
  }

  /** A seat is given up or dropped; the last one out ends the call (ORB-A16). */
  #vacate (call: Call, member: string, why: 'left' | 'dropped' | 'revoked'): void {
    const seat = call.seats.get(member)
    if (seat === undefined) return
    if (seat.timer !== null) this.#store.clock.clearTimer(seat.timer)
    call.seats.delete(member)
    call.gone.set(member, why)
    if (call.seats.size > 0) return
    call.ended = true
    this.#current().live.delete(call.channel)
  }

  /** Vacates the app's seats in the community's calls whose channel its install no longer lets it connect to. */
  #revoke (community: string, app: string): void {
    if (this.#state === undefined) return
    const store = this.#store
    const install = store.installOf(community, app)
    const member = store.apps.get(app)?.memberId ?? app
    for (const call of [...this.#state.live.values()]) {
      if (call.community !== community || !call.seats.has(member)) continue
      const reaches = install !== undefined && canSee(install, call.channel) &&
        rightsIn(install, call.channel).includes('connect')
      if (!reaches) this.#vacate(call, member, 'revoked')
    }
  }

  /** On reset and on close: every seat timer goes, and the next use rebuilds from the world. */
  #clear (): void {
    for (const call of this.#state?.live.values() ?? []) {
      for (const seat of call.seats.values()) if (seat.timer !== null) this.#store.clock.clearTimer(seat.timer)
    }
    this.#state = undefined
  }
}

/** A compact HS256 JSON Web Token (RFC 7519) over `claims`. */
export function signJwt (key: Buffer, claims: object): string {
  const head = Buffer.from(JSON.stringify({ alg: 'HS256', typ: 'JWT' })).toString('base64url')
  const body = Buffer.from(JSON.stringify(claims)).toString('base64url')
  const signature = createHmac('sha256', key).update(`${head}.${body}`).digest('base64url')
  return `${head}.${body}.${signature}`
}
