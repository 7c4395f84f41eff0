import type { OrbServices } from './services.js'

/**
 * `GET /control/orb/state`: everything a person at the developer console or a test may look at. Apps with their
 * tokens (this is the console), communities with channels and members, installs, the chain and the voice server;
 * then each service's part: voice calls, webhook deliveries in flight, interactions, event logs and room players.
 */
export function controlState (services: OrbServices): Record<string, unknown> {
  const { store, voice, webhooks, interactions, events, music } = services
  return {
    apps: [...store.apps.values()].map((app) => ({
      id: app.id,
      name: app.name,
      token: app.token,
      scopes: [...app.scopes],
      member: app.memberId,
      listed: app.source.listed ?? false,
      endpoint: app.endpoint,
      installs: store.installCount(app.id)
    })),
    servers: [...store.communities.values()].map((community) => ({
      id: community.id,
      name: community.name,
      channels: community.channels.map((id) => {
        const channel = store.channels.get(id)!
        const seats = channel.kind === 'voice' ? { capacity: channel.capacity } : {}
        return { id, name: channel.name, kind: channel.kind, readOnly: channel.readOnly, ...seats }
      }),
      members: [...community.members].map(([id, rights]) => ({
        id,
        name: store.members.get(id)!.name,
        rights: [...rights]
      }))
    })),
    members: [...store.members.values()].map((m) => ({
      id: m.id,
      name: m.name,
      ...(m.address === undefined ? {} : { address: m.address })
    })),
    installs: [...store.installs.values()].map((install) => ({
      server: install.community,
      app: install.app,
      role: { name: install.role.name, rights: [...install.role.rights] },
      channels: [...install.channels],
      hidden: [...install.hidden],
      channelRights: Object.fromEntries(install.channelRights)
    })),
    chain: { available: store.chainAvailable },
    // The voice server (`server`, `url`) and every voice channel's call.
    voice: voice.snapshot(),
    webhooks: webhooks.state(),
    interactions: interactions.list(),
    events: events.logs(),
    music: music.state()
  }
}
