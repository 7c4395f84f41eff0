import { randomBytes } from 'node:crypto'
import { ControlError } from '../shared/control-error.js'
import { controlState } from './control-state.js'
import { canSee } from './gates.js'
import type { AppState, ChannelState, CommunityState, StoredMessage } from './records.js'
import { rendered } from './routes/messages.js'
import type { OrbServices } from './services.js'
import type { OrbStore } from './store.js'
import type { CommandInvocation, InstallSpec, MemberPost, NewApp, VoiceChange } from './control-inputs.js'
import { endpointAllowed, type Right, type Scope, type World, type WorldApp } from './world.js'

export type { CommandInvocation, InstallSpec, MemberPost, NewApp, VoiceChange } from './control-inputs.js'

/** What `setEndpoint` answers: the app, its endpoint URL and the mode it is in now (ORB-A05). */
export interface EndpointSet { app: string, endpoint: string | null, mode: 'events' | 'webhook' }

/** Hears every message a member posts through the control server. */
export type MessageListener = (message: StoredMessage) => void

/**
 * What the people around a bot can do to the fake Orb (ORB-A04): members post, admins install and uninstall, the
 * developer rotates the token, the chain goes away, the voice server comes and goes. The control server's
 * `/control/orb/...` routes call these; in-process tests can call them directly. What cannot be done throws the
 * shared ControlError (`not_found`, `bad_request` or `conflict`), which the control server answers as it is.
 */
export class OrbControl {
  readonly #services: OrbServices
  readonly #store: OrbStore
  readonly #world: World
  readonly #messageListeners: MessageListener[] = []

  constructor (services: OrbServices, world: World) {
    this.#services = services
    this.#store = services.store
    this.#world = world
  }

  /** Subscribes to every message a member posts through the control server. */
  onMemberMessage (listener: MessageListener): void {
    this.#messageListeners.push(listener)
  }

  /** `GET /control/orb/state`: apps with their tokens (this is the developer's console), communities, installs. */
  state (): Record<string, unknown> {
    return controlState(this.#services)
  }

  /** `POST /control/orb/messages`: a member says something in a text channel. */
  memberPost (post: MemberPost): Record<string, unknown> {
    const store = this.#store
    const { channel, rights } = this.#memberIn(post, '')
    if (!rights.has('send_messages')) {
      throw new ControlError('conflict', `${post.member} lacks send_messages in ${post.server}`)
    }
    let replyTo: number | null = null
    if (post.replyTo !== undefined) {
      const target = store.messages.get(post.replyTo)
      if (target === undefined || target.deleted || target.channel !== channel.id) {
        throw new ControlError('bad_request', `message ${post.replyTo} is not in ${post.channel}`)
      }
      replyTo = target.id
    }
    const encrypted = post.encrypted ?? false
    const message = store.addMessage(channel, store.authorOf(post.member), post.content, { encrypted, replyTo })
    for (const listener of this.#messageListeners) listener(message)
    // ORB-053, ORB-A10: a mention of an app, or a reply to one, is an event for it.
    const events = this.#services.events.memberMessage(message)
    return { ...rendered(message), server: message.community, events: events.map((e) => ({ id: e.id, app: e.app.id })) }
  }

  /**
   * `POST /control/orb/commands/invoke`: a member types an app's command in a text channel (ORB-061, ORB-063). Only
   * an app the community installed, whose role sees the channel, and only when the member holds the command's right,
   * gets an `application_command` event; otherwise nothing happens and the reason is the answer.
   */
  invoke (invocation: CommandInvocation): Record<string, unknown> {
    const store = this.#store
    const { community, channel, rights } = this.#memberIn(invocation, '; commands are typed in text channels')
    // ORB-061: registering is not reaching; only apps installed here offer their commands.
    const offers = [...store.apps.values()].flatMap((app) => {
      if (invocation.app !== undefined && app.id !== invocation.app) return []
      const install = store.installOf(community.id, app.id)
      // ORB-061: only apps installed here, and whose role sees this channel, offer their commands in it.
      if (install === undefined || !canSee(install, channel.id)) return []
      const command = app.commands.find((c) =>
        c.name === invocation.name && (c.community === null || c.community === community.id))
      return command === undefined ? [] : [{ app, command }]
    })
    if (offers.length === 0) throw new ControlError('not_found', `no app installed in ${invocation.server} that sees ${channel.id} has a command /${invocation.name}`)
    if (offers.length > 1) throw new ControlError('conflict', `several apps offer /${invocation.name} here (${offers.map((o) => o.app.id).join(', ')}); say which with "app"`)
    const { app, command } = offers[0]!
    // ORB-063: a member without the command's right cannot run it.
    if (!rights.has(command.right)) throw new ControlError('conflict', `${invocation.member} lacks ${command.right}, which /${command.name} needs`)
    const options = invocation.options ?? {}
    const declared = command.args.map((arg) => ({ name: String(arg.name), optional: arg.optional === true }))
    for (const name of Object.keys(options)) {
      if (!declared.some((d) => d.name === name)) {
        throw new ControlError('bad_request', `/${command.name} has no option ${name}`)
      }
    }
    for (const d of declared) {
      if (!d.optional && options[d.name] === undefined) {
        throw new ControlError('bad_request', `/${command.name} needs its option ${d.name}`)
      }
    }
    const member = store.members.get(invocation.member)!
    const where = { server: community.id, channel: channel.id }
    const typed = { id: command.id, name: command.name, options: { ...options } }
    const event = this.#services.events.command(app, where, { id: member.id, name: member.name }, typed)
    return { event: event.id, app: app.id, interaction: this.#services.interactions.view(event.id) }
  }

  // Where a member acts: the community, one of its text channels (a voice one is refused, with `voiceNote` after
  // the reason), and the member's rights there.
  #memberIn (where: { server: string, channel: string, member: string }, voiceNote: string): {
    community: CommunityState
    channel: ChannelState
    rights: ReadonlySet<Right>
  } {
    const community = this.#store.communities.get(where.server)
    if (community === undefined) throw new ControlError('not_found', `no community ${where.server}`)
    const channel = this.#store.channels.get(where.channel)
    if (channel === undefined || channel.community !== community.id) {
      throw new ControlError('not_found', `no channel ${where.channel} in ${where.server}`)
    }
    if (channel.kind !== 'text') {
      throw new ControlError('bad_request', `${where.channel} is a voice channel${voiceNote}`)
    }
    const rights = community.members.get(where.member)
    if (rights === undefined) throw new ControlError('not_found', `${where.member} is not a member of ${where.server}`)
    return { community, channel, rights }
  }

  /** `GET /control/orb/apps/{app}/deliveries`: every webhook attempt for the app, oldest first (ORB-093, ORB-A11). */
  deliveries (appId: string): { deliveries: unknown[] } {
    if (!this.#store.apps.has(appId)) throw new ControlError('not_found', `no app ${appId}`)
    return { deliveries: this.#services.webhooks.deliveries(appId) }
  }

  /**
   * `POST /control/orb/apps/{app}/test-event`: the developer presses "send test event" (ORB-A10), `count` times (a
   * suite that fills the queue makes its 500 in one call). `event` is the last made, `events` all, oldest first.
   */
  testEvent (appId: string, count = 1): { event: string, events: string[] } {
    const app = this.#store.apps.get(appId)
    if (app === undefined) throw new ControlError('not_found', `no app ${appId}`)
    const events: string[] = []
    for (let i = 0; i < count; i++) events.push(this.#services.events.testEvent(app).id)
    return { event: events[events.length - 1]!, events }
  }

  /**
   * `PUT /control/orb/apps/{app}/endpoint`: the developer sets the endpoint URL (ORB-A05): `https`, or `http` to
   * this machine; null returns the app to events mode. A switch of mode empties the queue; the cursor keeps counting.
   */
  setEndpoint (appId: string, url: string | null): EndpointSet {
    const app = this.#store.apps.get(appId)
    if (app === undefined) throw new ControlError('not_found', `no app ${appId}`)
    if (url !== null) checkEndpoint(url)
    const switched = (app.endpoint === null) !== (url === null)
    app.endpoint = url
    // ORB-A05: the queue starts empty only on a switch of mode; a new URL in webhook mode, or null again, changes
    // nothing.
    if (switched) this.#services.events.modeChanged(app)
    if (switched && url === null) this.#services.webhooks.leftWebhookMode(app.id)
    return { app: appId, endpoint: url, mode: url === null ? 'events' : 'webhook' }
  }

  /** `PUT /control/orb/servers/{server}/apps/{app}`: an admin installs the app, or changes its role and allow-list. */
  install (server: string, appId: string, spec: InstallSpec): Record<string, unknown> {
    const store = this.#store
    const community = store.communities.get(server)
    if (community === undefined) throw new ControlError('not_found', `no community ${server}`)
    const app = store.apps.get(appId)
    if (app === undefined) throw new ControlError('not_found', `no app ${appId}`)
    for (const id of [...(spec.channels ?? []), ...(spec.hidden ?? []), ...Object.keys(spec.channelRights ?? {})]) {
      if (!community.channels.includes(id)) throw new ControlError('bad_request', `no channel ${id} in ${server}`)
    }
    const install = store.install(server, appId, {
      role: { name: spec.role?.name ?? app.name, rights: spec.role?.rights ?? app.source.rights ?? ['send_messages'] },
      channels: spec.channels ?? community.channels,
      hidden: spec.hidden,
      channelRights: spec.channelRights
    })
    return {
      server,
      app: appId,
      role: install.role,
      channels: [...install.channels],
      hidden: [...install.hidden],
      channelRights: Object.fromEntries(install.channelRights)
    }
  }

  /** `DELETE /control/orb/servers/{server}/apps/{app}`. */
  uninstall (server: string, appId: string): { uninstalled: true } {
    if (!this.#store.uninstall(server, appId)) {
      throw new ControlError('not_found', `${appId} is not installed in ${server}`)
    }
    return { uninstalled: true }
  }

  /**
   * `POST /control/orb/apps`: a developer creates an app in the console (unlisted, installed nowhere). The token is
   * shown once, here. The conformance suite creates its own apps this way, so that its posts, syncs, endpoints and
   * rotations never touch the apps a person is using.
   */
  createApp (spec: NewApp): { id: string, name: string, token: string, scopes: Scope[], member: string } {
    const store = this.#store
    const id = spec.id ?? `app_${randomBytes(6).toString('hex')}`
    if (store.apps.has(id) || store.members.has(id)) throw new ControlError('conflict', `${id} is taken`)
    if (store.deletedApps.has(id)) throw new ControlError('conflict', `${id} belonged to a deleted app; ids are not given out again`)
    const source: WorldApp = { id, name: spec.name, token: '', scopes: [...spec.scopes], listed: false, rights: [...(spec.rights ?? ['send_messages'])] }
    const app: AppState = {
      id,
      name: spec.name,
      token: '',
      scopes: new Set(spec.scopes),
      memberId: id,
      source,
      endpoint: null,
      commands: [],
      commandIds: new Map()
    }
    store.apps.set(id, app)
    const token = store.rotateToken(app)
    return { id, name: app.name, token, scopes: [...app.scopes], member: app.memberId }
  }

  /**
   * `DELETE /control/orb/apps/{app}`: the developer deletes an app: uninstalled everywhere, its token dead (401).
   * With `messages`, what it posted is removed too (its old messages stay otherwise, as after an uninstall).
   */
  deleteApp (appId: string, options: { messages?: boolean } = {}): { deleted: true, messages: number } {
    const store = this.#store
    const app = store.apps.get(appId)
    if (app === undefined) throw new ControlError('not_found', `no app ${appId}`)
    let removed = 0
    if (options.messages === true) {
      for (const message of store.messages.values()) {
        if (message.deleted || message.author.id !== app.memberId) continue
        message.deleted = true
        removed++
      }
    }
    for (const install of [...store.installs.values()]) {
      if (install.app === appId) store.uninstall(install.community, appId)
    }
    this.#services.events.forget(app)
    store.tokens.delete(app.token)
    store.apps.delete(appId)
    store.deletedApps.add(appId)
    return { deleted: true, messages: removed }
  }

  /** `DELETE /control/orb/messages/{id}`: a moderator removes a message, whoever wrote it. */
  deleteMessage (id: number): { ok: true, id: number } {
    const message = this.#store.messages.get(id)
    if (message === undefined || message.deleted) throw new ControlError('not_found', `no message ${id}`)
    message.deleted = true
    return { ok: true, id }
  }

  /** `POST /control/orb/apps/{app}/rotate-token`: the new token, shown once as the console would (ORB-004, ORB-A22). */
  rotateToken (appId: string): { app: string, token: string } {
    const app = this.#store.apps.get(appId)
    if (app === undefined) throw new ControlError('not_found', `no app ${appId}`)
    const token = this.#store.rotateToken(app)
    // ORB-A22: a poll held with the old token is answered now, with 401.
    this.#services.events.wake(app)
    return { app: appId, token }
  }

  /** `PUT /control/orb/chain`: whether the registry can be consulted (passport answers null while not, ORB-086). */
  setChain (change: { available: boolean }): { available: boolean } {
    this.#store.chainAvailable = change.available
    return { available: this.#store.chainAvailable }
  }

  /** `PUT /control/orb/voice`: the voice server, and seats per voice channel. */
  setVoice (change: VoiceChange): Record<string, unknown> {
    const store = this.#store
    for (const [id, seats] of Object.entries(change.capacity ?? {})) {
      const channel = store.channels.get(id)
      if (channel === undefined || channel.kind !== 'voice') {
        throw new ControlError('bad_request', `${id} is not a voice channel`)
      }
      if (!Number.isInteger(seats) || seats < 1) {
        throw new ControlError('bad_request', `capacity of ${id} must be a positive integer`)
      }
    }
    for (const [id, seats] of Object.entries(change.capacity ?? {})) store.channels.get(id)!.capacity = seats
    if (change.server === true) store.voiceServer ??= { url: this.#world.voiceServer?.url ?? DEFAULT_VOICE_URL }
    if (change.server === false) store.voiceServer = null
    return { server: store.voiceServer !== null, url: store.voiceServer?.url ?? null }
  }

  /** `POST /control/reset`: the world as it was at start-up. */
  reset (): void {
    this.#store.load(structuredClone(this.#world))
  }
}

/** ORB-A05: an endpoint is `https`, except that the fake also allows `http` to this machine. */
export function checkEndpoint (url: string): void {
  if (!endpointAllowed(url)) throw new ControlError('bad_request', `${JSON.stringify(url)}: the endpoint URL must be https, or http to localhost`)
}

/** The voice server URL when a world has none and the control server switches one on. */
export const DEFAULT_VOICE_URL = 'wss://voice.orb.test'
