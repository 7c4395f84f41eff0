import { requireRight } from '../gates.js'
import type { AppState } from '../records.js'
import type { MusicAction } from '../music-actions.js'
import type { OrbRoute, RouteCall, RouteContext } from '../route.js'
import type { OrbStore } from '../store.js'
import { reachVoiceChannel } from './voice.js'

/** `POST` and `GET /api/bot/v1/music`: the room's shared player (ORB-081..084, ORB-A08, ORB-A17). */
export function musicRoutes ({ store, music }: RouteContext): OrbRoute[] {
  return [
    {
      method: 'POST',
      path: '/api/bot/v1/music',
      auth: 'bot',
      // ORB-084: both methods need the music scope.
      scope: 'music',
      handler: ({ app, body }: RouteCall<unknown, { channel: string, action: MusicAction, arg?: unknown }>) => {
        const channel = reachRoom(store, app, body.channel)
        // ORB-083: `state` changes nothing; every other action changes the one player the whole room hears.
        return music.act(channel, body.action, body.arg, app.memberId)
      }
    },
    {
      method: 'GET',
      path: '/api/bot/v1/music',
      auth: 'bot',
      scope: 'music',
      handler: ({ app, query }: RouteCall<{ channel: string }>) => music.view(reachRoom(store, app, query.channel))
    }
  ]
}

/**
 * ORB-A17, ORB-A08: the voice channel whose player the app drives: unknown or uninstalled 404, a text channel 400,
 * not visible 403, and `connect` needed there (403).
 */
function reachRoom (store: OrbStore, app: AppState, channelId: string): string {
  const reached = reachVoiceChannel(store, app, channelId)
  requireRight(reached, 'connect')
  return reached.channel.id
}
