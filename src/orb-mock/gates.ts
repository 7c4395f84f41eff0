import { orbErrors } from './errors.js'
import type { AppState, ChannelState, InstallState } from './records.js'
import type { OrbStore } from './store.js'
import type { Right } from './world.js'

// The community's gates (the pipeline's last step, inside each handler): the second gate of every call, after the
// scope (pipeline.ts): what the community's admin accepted, its allow-list and the role's rights.

/** A channel the app reached, with the install that lets it in. */
export interface Reached {
  channel: ChannelState
  install: InstallState
}

/**
 * ORB-009, ORB-102: a channel id the app may name. Unknown channels, and channels of communities that did not install
 * the app, are 404: the app cannot tell them apart.
 */
export function reachChannel (store: OrbStore, app: AppState, channelId: string): Reached {
  const channel = store.channels.get(channelId)
  const install = channel === undefined ? undefined : store.installOf(channel.community, app.id)
  if (channel === undefined || install === undefined) {
    throw orbErrors.notFound(`No such channel for this app: ${channelId}`)
  }
  return { channel, install }
}

/** ORB-009, ORB-021: the channel is on the community's allow-list and its role sees it. */
export function canSee (install: InstallState, channelId: string): boolean {
  return install.channels.has(channelId) && !install.hidden.has(channelId)
}

/** ORB-038, ORB-A02: the second gate, for a channel: visible to the role and on the allow-list, else 403. */
export function requireVisible (reached: Reached): void {
  const { channel, install } = reached
  if (!install.channels.has(channel.id)) throw orbErrors.forbidden(`${channel.id} is not on ${channel.community}'s allow-list for this app`)
  if (install.hidden.has(channel.id)) throw orbErrors.forbidden(`the app's role cannot see ${channel.id}`)
}

/** The rights the app's role holds in one channel: the channel's own override, else the role's. */
export function rightsIn (install: InstallState, channelId: string): readonly Right[] {
  return install.channelRights.get(channelId) ?? install.role.rights
}

/** ORB-A08: a right the role must hold in the channel, else 403. */
export function requireRight (reached: Reached, right: Right): void {
  if (!rightsIn(reached.install, reached.channel.id).includes(right)) {
    throw orbErrors.forbidden(`the app's role lacks ${right} in ${reached.channel.id}`)
  }
}

/** The community an app names by id: 404 unless it installed the app (ORB-A06, ORB-A08). */
export function reachCommunity (store: OrbStore, app: AppState, communityId: string): InstallState {
  const install = store.installOf(communityId, app.id)
  if (install === undefined) throw orbErrors.notFound(`No such community for this app: ${communityId}`)
  return install
}
