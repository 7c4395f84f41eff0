import { orbErrors } from '../errors.js'
import { reachChannel, requireRight, requireVisible, rightsIn, type Reached } from '../gates.js'
import type { AppState, InstallState } from '../records.js'
import type { OrbRoute, RouteCall, RouteContext } from '../route.js'
import type { OrbStore } from '../store.js'
import type { Call, Voice } from '../voice.js'

/** ORB-073: the body of `POST /api/bot/v1/voice` once the spec's schema has passed it. */
interface VoiceBody {
  action: 'join' | 'roster' | 'heartbeat' | 'leave' | 'grant'
  channel?: string
  call?: string
  speaking?: boolean
}

/** `POST /api/bot/v1/voice` (ORB-073..080, ORB-A08, ORB-A16). */
export function voiceRoutes ({ store, voice }: RouteContext): OrbRoute[] {
  return [{
    method: 'POST',
    path: '/api/bot/v1/voice',
    auth: 'bot',
    // ORB-079: every voice action needs the voice scope.
    scope: 'voice',
    handler: ({ app, body }: RouteCall<unknown, VoiceBody>) => {
      switch (body.action) {
        case 'join': return join(store, voice, app, needs(body, 'channel'))
        case 'roster': return roster(store, voice, app, needs(body, 'channel'))
        case 'heartbeat': return heartbeat(store, voice, app, needs(body, 'call'), body.speaking ?? false)
        case 'leave': return leave(store, voice, app, needs(body, 'call'))
        case 'grant': return grant(store, voice, app, needs(body, 'call'))
      }
    }
  }]
}

/** ORB-074: `join` and `roster` take `channel`, the others `call`; a missing one is 400. */
function needs (body: VoiceBody, field: 'channel' | 'call'): string {
  const value = body[field]
  if (value === undefined) throw orbErrors.bad(`body.${field} is required for ${body.action}`)
  return value
}

/**
 * ORB-A16, ORB-A17: a voice channel the app may name: unknown or uninstalled is 404, a text channel 400, one off the
 * allow-list or hidden from the role 403.
 */
export function reachVoiceChannel (store: OrbStore, app: AppState, channelId: string): Reached {
  const reached = reachChannel(store, app, channelId)
  if (reached.channel.kind !== 'voice') throw orbErrors.bad(`${channelId} is a text channel; channel must be a voice channel`)
  requireVisible(reached)
  return reached
}

/** A call the app named, with the install that lets it in. */
interface CallReached { call: Call, install: InstallState }

/** ORB-102: a call id the app may name: unknown calls, and calls of communities without the app, are 404. */
function reachCall (store: OrbStore, voice: Voice, app: AppState, callId: string): CallReached {
  const call = voice.call(callId)
  const install = call === undefined ? undefined : store.installOf(call.community, app.id)
  if (call === undefined || install === undefined) throw orbErrors.notFound(`No such call for this app: ${callId}`)
  return { call, install }
}

/** ORB-075, ORB-A08, ORB-A16: an ordinary seat; `connect` is needed; a second join returns the seat held. */
function join (store: OrbStore, voice: Voice, app: AppState, channelId: string): Record<string, unknown> {
  const reached = reachVoiceChannel(store, app, channelId)
  requireRight(reached, 'connect')
  const call = voice.join(app.memberId, reached.channel)
  return { call: call.id, channel: call.channel, members: voice.roster(call) }
}

/** ORB-A16: who is in the channel's call; seeing the channel is enough, no seat is needed. */
function roster (store: OrbStore, voice: Voice, app: AppState, channelId: string): Record<string, unknown> {
  const { channel } = reachVoiceChannel(store, app, channelId)
  const call = voice.liveCall(channel.id)
  return { channel: channel.id, call: call?.id ?? null, members: voice.roster(call) }
}

/** ORB-076, ORB-077, ORB-A08: keeps the seat 90 s more; `speaking: true` (absent is false) needs `speak` there. */
function heartbeat (
  store: OrbStore,
  voice: Voice,
  app: AppState,
  callId: string,
  speaking: boolean
): Record<string, unknown> {
  const { call, install } = reachCall(store, voice, app, callId)
  const seat = voice.requireSeat(call, app.memberId)
  if (speaking && !rightsIn(install, call.channel).includes('speak')) {
    throw orbErrors.forbidden(`the app's role lacks speak in ${call.channel}`)
  }
  voice.heartbeat(call, seat, speaking)
  return { ok: true, call: call.id }
}

/** ORB-A16: gives the seat up; leaving twice is 410. */
function leave (store: OrbStore, voice: Voice, app: AppState, callId: string): Record<string, unknown> {
  const { call } = reachCall(store, voice, app, callId)
  voice.requireSeat(call, app.memberId)
  voice.leave(call, app.memberId)
  return { ok: true }
}

/** ORB-078, ORB-A16: a 30 s LiveKit token for a seated app, only while this Orb runs a voice server (else 409). */
function grant (store: OrbStore, voice: Voice, app: AppState, callId: string): Record<string, unknown> {
  const { call } = reachCall(store, voice, app, callId)
  voice.requireSeat(call, app.memberId)
  if (store.voiceServer === null) throw orbErrors.conflict('this Orb runs no voice server')
  const { token, expiresAt } = voice.grant(call, app.memberId)
  return { token, url: store.voiceServer.url, expiresAt }
}
