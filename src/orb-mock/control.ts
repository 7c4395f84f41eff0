import { OrbControlError } from './control-error.js'
import { eventsOf } from './events.js'
import { webhooksOf } from './webhooks.js'
import { canSee } from './gates.js'
import { randomBytes } from 'node:crypto'
import type { AppState, OrbStore, StoredMessage } from './store.js'
import { rendered } from './routes/messages.js'
import { endpointAllowed, type Right, type Scope, type World, type WorldApp } from './world.js'

export { OrbControlError }

export interface MemberPost {
  server: string
  channel: string
  member: string
  content: string
  encrypted?: boolean
  /** The id of a message in the same channel. */
  replyTo?: number
}

export interface CommandInvocation {
  server: string
  channel: string
  member: string
  /** The command's name, as the member types it after the slash. */
  name: string
  /** Option name → the text typed. */
  options?: Record<string, string>
  /** Which app's command, when several installed apps registered the name. */
  app?: string
}

export interface InstallSpec {
  role?: { name?: string, rights: Right[] }
  /** The allow-list; default every channel of the community. */
  channels?: string[]
  hidden?: string[]
  channelRights?: Record<string, Right[]>
}

/** A new app, as the developer console creates it. */
export interface NewApp {
  /** Default `app_` and 12 hex digits. */
  id?: string
  name: string
  scopes: Scope[]
  /** The rights its listing asks an installing admin for (default send_messages). */
  rights?: Right[]
}

export interface VoiceChange {
  /** Whether this Orb runs a voice server (`grant` works only while it does, ORB-078). */
  server?: boolean
  /** Seats per voice channel id. */
  capacity?: Record<string, number>
}

/** A message posted by a member: who listens (the events capability) is told here. */
export type MessageListener = (message: StoredMessage) => void

/**
 * What the people around a bot can do to the fake Orb (ORB-A04): members post, admins install and uninstall, the
 * developer rotates the token, the chain goes away, the voice server comes and goes. The control server's
 * `/control/orb/...` routes call these; in-process tests can call them directly.
 */
export class OrbControl {
  readonly #store: OrbStore
  readonly #world: World
  readonly #messageListeners: MessageListener[] = []

  constructor (store: OrbStore, world: World) {
    this.#store = store
    this.#world = world
  }

  /** Subscribes to every message a member posts through the control server. */
  onMemberMessage (listener: MessageListener): void {
    this.#messageListeners.push(listener)
  }

  /** `GET /control/orb/state`: apps with their tokens (this is the developer's console), communities, installs. */
  state (): Record<string, unknown> {
    const store = this.#store
    const state: Record<string, unknown> = {
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
          return { id, name: channel.name, kind: channel.kind, readOnly: channel.readOnly, ...(channel.kind === 'voice' ? { capacity: channel.capacity } : {}) }
        }),
        members: [...community.members].map(([id, rights]) => ({ id, name: store.members.get(id)!.name, rights: [...rights] }))
      })),
      members: [...store.members.values()].map((m) => ({ id: m.id, name: m.name, ...(m.address === undefined ? {} : { address: m.address }) })),
      installs: [...store.installs.values()].map((install) => ({
        server: install.community,
        app: install.app,
        role: { name: install.role.name, rights: [...install.role.rights] },
        channels: [...install.channels],
        hidden: [...install.hidden],
        channelRights: Object.fromEntries(install.channelRights)
      })),
      chain: { available: store.chainAvailable },
      voice: { server: store.voiceServer !== null, url: store.voiceServer?.url ?? null }
    }
    // Modules add their parts (seats, players); a part named like a key above extends it.
    for (const [name, part] of store.stateParts) {
      const value = part()
      const base = state[name]
      state[name] = typeof base === 'object' && base !== null && typeof value === 'object' && value !== null ? { ...base, ...value } : value
    }
    return state
  }

  /** `POST /control/orb/messages`: a member says something in a text channel. */
  memberPost (post: MemberPost): Record<string, unknown> {
    const store = this.#store
    const community = store.communities.get(post.server)
    if (community === undefined) throw new OrbControlError('not_found', `no community ${post.server}`)
    const channel = store.channels.get(post.channel)
    if (channel === undefined || channel.community !== community.id) throw new OrbControlError('not_found', `no channel ${post.channel} in ${post.server}`)
    if (channel.kind !== 'text') throw new OrbControlError('bad_request', `${post.channel} is a voice channel`)
    const rights = community.members.get(post.member)
    if (rights === undefined) throw new OrbControlError('not_found', `${post.member} is not a member of ${post.server}`)
    if (!rights.has('send_messages')) throw new OrbControlError('conflict', `${post.member} lacks send_messages in ${post.server}`)
    let replyTo: number | null = null
    if (post.replyTo !== undefined) {
      const target = store.messages.get(post.replyTo)
      if (target === undefined || target.deleted || target.channel !== channel.id) throw new OrbControlError('bad_request', `message ${post.replyTo} is not in ${post.channel}`)
      replyTo = target.id
    }
    const message = store.addMessage(channel, store.authorOf(post.member), post.content, { encrypted: post.encrypted ?? false, replyTo })
    for (const listener of this.#messageListeners) listener(message)
    // ORB-053, ORB-A10: a mention of an app, or a reply to one, is an event for it.
    const events = eventsOf(store).memberMessage(message)
    return { ...rendered(message), server: message.community, events: events.map((e) => ({ id: e.id, app: e.app.id })) }
  }

  /**
   * `POST /control/orb/commands/invoke`: a member types an app's command in a text channel (ORB-061, ORB-063). Only
   * an app the community installed, whose role sees the channel, and only when the member holds the command's right,
   * gets an `application_command` event; otherwise nothing happens and the reason is the answer.
   */
  invoke (invocation: CommandInvocation): Record<string, unknown> {
    const store = this.#store
    const community = store.communities.get(invocation.server)
    if (community === undefined) throw new OrbControlError('not_found', `no community ${invocation.server}`)
    const channel = store.channels.get(invocation.channel)
    if (channel === undefined || channel.community !== community.id) throw new OrbControlError('not_found', `no channel ${invocation.channel} in ${invocation.server}`)
    if (channel.kind !== 'text') throw new OrbControlError('bad_request', `${invocation.channel} is a voice channel; commands are typed in text channels`)
    const rights = community.members.get(invocation.member)
    if (rights === undefined) throw new OrbControlError('not_found', `${invocation.member} is not a member of ${invocation.server}`)
    // ORB-061: registering is not reaching; only apps installed here offer their commands.
    const offers = [...store.apps.values()].flatMap((app) => {
      if (invocation.app !== undefined && app.id !== invocation.app) return []
      const install = store.installOf(community.id, app.id)
      // ORB-061: only apps installed here, and whose role sees this channel, offer their commands in it.
      if (install === undefined || !canSee(install, channel.id)) return []
      const command = app.commands.find((c) => c.name === invocation.name && (c.community === null || c.community === community.id))
      return command === undefined ? [] : [{ app, command }]
    })
    if (offers.length === 0) throw new OrbControlError('not_found', `no app installed in ${invocation.server} that sees ${channel.id} has a command /${invocation.name}`)
    if (offers.length > 1) throw new OrbControlError('conflict', `several apps offer /${invocation.name} here (${offers.map((o) => o.app.id).join(', ')}); say which with "app"`)
    const { app, command } = offers[0]!
    // ORB-063: a member without the command's right cannot run it.
    if (!rights.has(command.right)) throw new OrbControlError('conflict', `${invocation.member} lacks ${command.right}, which /${command.name} needs`)
    const options = invocation.options ?? {}
    const declared = command.args.map((arg) => ({ name: String(arg.name), optional: arg.optional === true }))
    for (const name of Object.keys(options)) {
      if (!declared.some((d) => d.name === name)) throw new OrbControlError('bad_request', `/${command.name} has no option ${name}`)
    }
    for (const d of declared) {
      if (!d.optional && options[d.name] === undefined) throw new OrbControlError('bad_request', `/${command.name} needs its option ${d.name}`)
    }
    const member = store.members.get(invocation.member)!
    const event = eventsOf(store).command(app, { server: community.id, channel: channel.id }, { id: member.id, name: member.name }, { id: command.id, name: command.name, options: { ...options } })
    return { event: event.id, app: app.id, interaction: eventsOf(store).interaction(event.id) }
  }

  /** `GET /control/orb/apps/{app}/deliveries`: every webhook attempt for the app, oldest first (ORB-093, ORB-A11). */
  deliveries (appId: string): { deliveries: unknown[] } {
    if (!this.#store.apps.has(appId)) throw new OrbControlError('not_found', `no app ${appId}`)
    return { deliveries: webhooksOf(this.#store).deliveries(appId) }
  }

  /** `POST /control/orb/apps/{app}/test-event`: the developer presses "send test event" (ORB-A10). */
  testEvent (appId: string): { event: string } {
    const app = this.#store.apps.get(appId)
    if (app === undefined) throw new OrbControlError('not_found', `no app ${appId}`)
    return { event: eventsOf(this.#store).testEvent(app).id }
  }

  /**
   * `PUT /control/orb/apps/{app}/endpoint`: the developer sets the endpoint URL (ORB-A05): `https`, or `http` to
   * this machine; null returns the app to events mode. Either way the queue starts empty and the cursor keeps counting.
   */
  setEndpoint (appId: string, url: string | null): { app: string, endpoint: string | null, mode: 'events' | 'webhook' } {
    const app = this.#store.apps.get(appId)
    if (app === undefined) throw new OrbControlError('not_found', `no app ${appId}`)
    if (url !== null) checkEndpoint(url)
    const switched = (app.endpoint === null) !== (url === null)
    app.endpoint = url
    // ORB-A05: the queue starts empty only on a switch of mode; a new URL in webhook mode, or null again, changes nothing.
    if (switched) eventsOf(this.#store).modeChanged(app)
    if (switched && url === null) webhooksOf(this.#store).leftWebhookMode(app.id)
    return { app: appId, endpoint: url, mode: url === null ? 'events' : 'webhook' }
  }

  /** `PUT /control/orb/servers/{server}/apps/{app}`: an admin installs the app, or changes its role and allow-list. */
  install (server: string, appId: string, spec: InstallSpec): Record<string, unknown> {
    const store = this.#store
    const community = store.communities.get(server)
    if (community === undefined) throw new OrbControlError('not_found', `no community ${server}`)
    const app = store.apps.get(appId)
    if (app === undefined) throw new OrbControlError('not_found', `no app ${appId}`)
    for (const id of [...(spec.channels ?? []), ...(spec.hidden ?? []), ...Object.keys(spec.channelRights ?? {})]) {
      if (!community.channels.includes(id)) throw new OrbControlError('bad_request', `no channel ${id} in ${server}`)
    }
    const install = store.install(server, appId, {
      role: { name: spec.role?.name ?? app.name, rights: spec.role?.rights ?? app.source.rights ?? ['send_messages'] },
      channels: spec.channels ?? community.channels,
      hidden: spec.hidden,
      channelRights: spec.channelRights
    })
    return { server, app: appId, role: install.role, channels: [...install.channels], hidden: [...install.hidden], channelRights: Object.fromEntries(install.channelRights) }
  }

  /** `DELETE /control/orb/servers/{server}/apps/{app}`. */
  uninstall (server: string, appId: string): { uninstalled: true } {
    if (!this.#store.uninstall(server, appId)) throw new OrbControlError('not_found', `${appId} is not installed in ${server}`)
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
    if (store.apps.has(id) || store.members.has(id)) throw new OrbControlError('conflict', `${id} is taken`)
    if (store.deletedApps.has(id)) throw new OrbControlError('conflict', `${id} belonged to a deleted app; ids are not given out again`)
    const source: WorldApp = { id, name: spec.name, token: '', scopes: [...spec.scopes], listed: false, rights: [...(spec.rights ?? ['send_messages'])] }
    const app: AppState = { id, name: spec.name, token: '', scopes: new Set(spec.scopes), memberId: id, source, endpoint: null, commands: [], commandIds: new Map() }
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
    if (app === undefined) throw new OrbControlError('not_found', `no app ${appId}`)
    let removed = 0
    if (options.messages === true) {
      for (const message of store.messages.values()) {
        if (message.deleted || message.author.id !== app.memberId) continue
        message.deleted = true
        removed++
      }
    }
    for (const install of [...store.installs.values()]) if (install.app === appId) store.uninstall(install.community, appId)
    eventsOf(store).forget(app)
    store.tokens.delete(app.token)
    store.apps.delete(appId)
    store.deletedApps.add(appId)
    return { deleted: true, messages: removed }
  }

  /** `DELETE /control/orb/messages/{id}`: a moderator removes a message, whoever wrote it. */
  deleteMessage (id: number): { ok: true, id: number } {
    const message = this.#store.messages.get(id)
    if (message === undefined || message.deleted) throw new OrbControlError('not_found', `no message ${id}`)
    message.deleted = true
    return { ok: true, id }
  }

  /** `POST /control/orb/apps/{app}/rotate-token`: the new token, shown once as the console would (ORB-004, ORB-A22). */
  rotateToken (appId: string): { app: string, token: string } {
    const app = this.#store.apps.get(appId)
    if (app === undefined) throw new OrbControlError('not_found', `no app ${appId}`)
    const token = this.#store.rotateToken(app)
    // ORB-A22: a poll held with the old token is answered now, with 401.
    eventsOf(this.#store).wake(app)
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
      if (channel === undefined || channel.kind !== 'voice') throw new OrbControlError('bad_request', `${id} is not a voice channel`)
      if (!Number.isInteger(seats) || seats < 1) throw new OrbControlError('bad_request', `capacity of ${id} must be a positive integer`)
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
  if (!endpointAllowed(url)) throw new OrbControlError('bad_request', `${JSON.stringify(url)}: the endpoint URL must be https, or http to localhost`)
}

/** The voice server URL when a world has none and the control server switches one on. */
export const DEFAULT_VOICE_URL = 'wss://voice.orb.test'
