import { canSee, reachCommunity, rightsIn } from '../gates.js'
import type { OrbRoute, RouteCall, RouteContext } from '../route.js'

/** `GET /api/bot/v1/app` (ORB-020..022, ORB-A06, ORB-A07: a valid token is all it needs). */
export function appRoutes ({ store }: RouteContext): OrbRoute[] {
  return [{
    method: 'GET',
    path: '/api/bot/v1/app',
    auth: 'bot',
    handler: ({ app, query }: RouteCall<{ server?: string }>) => {
      if (query.server === undefined) {
        const servers = []
        for (const install of store.installs.values()) {
          if (install.app !== app.id) continue
          const community = store.communities.get(install.community)!
          const role = { name: install.role.name, rights: [...install.role.rights] }
          servers.push({ id: community.id, name: community.name, role })
        }
        return { app: { id: app.id, name: app.name, scopes: [...app.scopes] }, member: app.memberId, servers }
      }
      // ORB-021: the channels exactly as the role sees them; the rest are absent.
      const install = reachCommunity(store, app, query.server)
      const community = store.communities.get(install.community)!
      const channels = community.channels
        .filter((id) => canSee(install, id))
        .map((id) => {
          const channel = store.channels.get(id)!
          const rights = [...rightsIn(install, id)]
          return { id, name: channel.name, type: channel.kind, readOnly: channel.readOnly, rights }
        })
      return { server: community.id, channels }
    }
  }]
}
