import { reachCommunity } from '../gates.js'
import type { OrbRoute, RouteCall, RouteContext } from '../route.js'

/** `GET /api/bot/v1/passport` (ORB-085..089, ORB-A08, ORB-A18; the `passport` scope, ORB-089). */
export function passportRoutes ({ store }: RouteContext): OrbRoute[] {
  return [{
    method: 'GET',
    path: '/api/bot/v1/passport',
    auth: 'bot',
    scope: 'passport',
    handler: ({ app, query }: RouteCall<{ server: string, address: string, kind: string, minimum: number }>) => {
      // ORB-A08: no channel right, but the community must have installed the app (404 otherwise).
      reachCommunity(store, app, query.server)
      // ORB-086, ORB-A18: read back from the registry; null when it cannot be consulted. Addresses ignore case.
      const count = store.evidence(query.address, query.kind)
      // ORB-087: holds exactly when the count reaches the minimum; ORB-086: unknown stays unknown.
      const ignoresMinimum = store.faults.has('holds-ignores-minimum')
      const holds = count === null ? null : ignoresMinimum ? count > 0 : count >= query.minimum
      return { server: query.server, address: query.address, kind: query.kind, minimum: query.minimum, count, holds }
    }
  }]
}
