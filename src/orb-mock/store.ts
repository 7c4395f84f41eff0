import { randomBytes } from 'node:crypto'
import type { Clock } from '../shared/clock.js'
import { OrbFaults } from './faults.js'
import type {
  AppState, Author, ChannelState, CommunityState, InstallState, StoredCommand, StoredMessage
} from './records.js'
import { SlidingWindows } from './throttle.js'
import type { Right, World, WorldApp, WorldCommand, WorldCommunity } from './world.js'

/** What an install is made of: the role the admin accepted, the allow-list, hidden channels and rights per channel. */
export interface InstallInput {
  role: { name: string, rights: Right[] }
  channels: string[]
  hidden?: string[]
  channelRights?: Record<string, Right[]>
}

/** Everything the fake Orb holds, built from a world and rebuilt from it on reset. */
export class OrbStore {
  readonly clock: Clock
  readonly throttles: SlidingWindows
  /** Deliberate faults, for the conformance suite's self-test only (faults.ts); none in every real use. */
  readonly faults: OrbFaults
  world: World
  apps = new Map<string, AppState>()
  tokens = new Map<string, string>()
  members = new Map<string, { id: string, name: string, address?: string }>()
  communities = new Map<string, CommunityState>()
  channels = new Map<string, ChannelState>()
  installs = new Map<string, InstallState>()
  /** Every message by id, oldest first (a message is marked deleted, never removed). */
  messages = new Map<number, StoredMessage>()
  passport = new Map<string, number>()
  chainAvailable = true
  /**
   * Ids of apps the developer deleted: never given out again, so that a new app cannot inherit an old one's messages
   * (their author), events or cursor.
   */
  deletedApps = new Set<string>()
  voiceServer: { url: string } | null = null
  reservedCommands: ReadonlySet<string> = new Set()
  cardPattern: RegExp = DEFAULT_CARD_PATTERN
  #nextMessageId = 1
  #nextCommandId = 1
  readonly #resetHooks: Array<() => void> = []
  readonly #installHooks: Array<(community: string, app: string) => void> = []

  constructor (world: World, clock: Clock, faults: OrbFaults = new OrbFaults()) {
    this.clock = clock
    this.faults = faults
    this.throttles = new SlidingWindows(clock, faults.has('retry-after-early') ? 1 : 0)
    this.world = world
    this.load(world)
  }

  /** Runs `fn` whenever the store is rebuilt, and when the fake closes (services clear their own state and timers). */
  onReset (fn: () => void): void {
    this.#resetHooks.push(fn)
  }

  /** Runs `fn` after an app is installed, has its role or allow-list changed, or is uninstalled in a community. */
  onInstallChange (fn: (community: string, app: string) => void): void {
    this.#installHooks.push(fn)
  }

  /** Lets go of what the services hold (timers above all); the fake is closing. */
  dispose (): void {
    for (const hook of this.#resetHooks) hook()
  }

  /** Back to the world's start: every message, command, install, token and throttle as the world says. */
  load (world: World): void {
    for (const hook of this.#resetHooks) hook()
    this.world = world
    this.apps = new Map()
    this.tokens = new Map()
    this.members = new Map(world.members.map((m) => [m.id, { ...m }]))
    this.communities = new Map()
    this.channels = new Map()
    this.installs = new Map()
    this.messages = new Map()
    this.#loadSettings(world)
    this.throttles.clear()
    this.deletedApps = new Set()
    this.#nextMessageId = 1
    this.#nextCommandId = 1
    for (const community of world.communities) this.#loadCommunity(community)
    for (const app of world.apps) this.#loadApp(app)
    for (const install of world.installs ?? []) this.install(install.community, install.app, install)
    for (const message of world.messages ?? []) {
      const channel = this.channels.get(message.channel)!
      const encrypted = message.encrypted ?? false
      this.addMessage(channel, this.authorOf(message.author), message.content, { encrypted, replyTo: null })
    }
  }

  /** The world's registry, voice server and settings, each with its default where the world names none. */
  #loadSettings (world: World): void {
    this.passport = new Map((world.passport ?? []).map((p) => [passportKey(p.address, p.kind), p.count]))
    this.chainAvailable = world.registry.available ?? true
    this.voiceServer = world.voiceServer === undefined || world.voiceServer === null ? null : { ...world.voiceServer }
    this.reservedCommands = new Set(world.settings?.reservedCommands ?? DEFAULT_RESERVED_COMMANDS)
    const cards = world.settings?.cardPattern
    this.cardPattern = cards === undefined ? DEFAULT_CARD_PATTERN : new RegExp(cards, 'm')
  }

  /** A community of the world and its channels, none with a message yet. */
  #loadCommunity (community: WorldCommunity): void {
    this.communities.set(community.id, {
      id: community.id,
      name: community.name,
      members: new Map(community.members.map((m) => [m.id, new Set(m.rights)])),
      channels: community.channels.map((c) => c.id)
    })
    for (const channel of community.channels) {
      this.channels.set(channel.id, {
        id: channel.id,
        name: channel.name,
        kind: channel.kind,
        readOnly: channel.readOnly ?? false,
        community: community.id,
        capacity: channel.capacity ?? DEFAULT_VOICE_CAPACITY,
        messages: []
      })
    }
  }

  /** An app of the world, its commands and its token. */
  #loadApp (app: WorldApp): void {
    const state: AppState = {
      id: app.id,
      name: app.name,
      token: app.token,
      scopes: new Set(app.scopes),
      memberId: app.id,
      source: app,
      endpoint: app.endpoint ?? null,
      commands: [],
      commandIds: new Map()
    }
    for (const command of app.commands ?? []) state.commands.push(this.command(state, command))
    this.apps.set(app.id, state)
    this.tokens.set(app.token, app.id)
  }

  /** The app a bearer token belongs to, if any (ORB-003). */
  appByToken (token: string): AppState | undefined {
    const id = this.tokens.get(token)
    return id === undefined ? undefined : this.apps.get(id)
  }

  /** The app's install in a community, if it has one. */
  installOf (community: string, app: string): InstallState | undefined {
    return this.installs.get(installKey(community, app))
  }

  /** ORB-A04: installs an app in a community (or replaces its rights and allow-list); the app's member row appears. */
  install (community: string, app: string, spec: InstallInput): InstallState {
    const state: InstallState = {
      community,
      app,
      role: { name: spec.role.name, rights: [...spec.role.rights] },
      channels: new Set(spec.channels),
      hidden: new Set(spec.hidden ?? []),
      channelRights: new Map(Object.entries(spec.channelRights ?? {}))
    }
    this.installs.set(installKey(community, app), state)
    for (const hook of this.#installHooks) hook(community, app)
    return state
  }

  /** ORB-A04: uninstalling removes the app's reach into the community. Its old messages stay. */
  uninstall (community: string, app: string): boolean {
    const removed = this.installs.delete(installKey(community, app))
    if (removed) for (const hook of this.#installHooks) hook(community, app)
    return removed
  }

  /** Current installs of an app (ORB-A19's `installs`). */
  installCount (app: string): number {
    let n = 0
    for (const install of this.installs.values()) if (install.app === app) n++
    return n
  }

  /** ORB-A22: a fresh token; the old one stops working at once. */
  rotateToken (app: AppState): string {
    this.tokens.delete(app.token)
    app.token = `orb_${randomBytes(24).toString('base64url')}`
    this.tokens.set(app.token, app.id)
    return app.token
  }

  /** A member or an app, as an author. */
  authorOf (id: string): Author {
    const app = this.apps.get(id)
    if (app !== undefined) return { id: app.memberId, name: app.name, bot: true }
    const member = this.members.get(id)
    if (member === undefined) throw new Error(`no member ${id}`)
    return { id: member.id, name: member.name, bot: false }
  }

  /** Stores a message; mentions are the `<@id>` tokens that name a member or an installed app of the community. */
  addMessage (
    channel: ChannelState,
    author: Author,
    content: string,
    options: { encrypted: boolean, replyTo: number | null }
  ): StoredMessage {
    const message: StoredMessage = {
      id: this.#nextMessageId++,
      channel: channel.id,
      community: channel.community,
      author,
      created: this.clock.now(),
      replyTo: options.replyTo,
      encrypted: options.encrypted,
      content,
      mentions: this.mentionsIn(channel.community, content),
      deleted: false
    }
    this.messages.set(message.id, message)
    channel.messages.push(message.id)
    return message
  }

  /** The ids `<@id>` names in `content` that are members, or installed apps, of the community (ORB-037). */
  mentionsIn (community: string, content: string): string[] {
    const found: string[] = []
    if (!content.includes('<@')) return found
    const members = this.communities.get(community)?.members
    for (const match of content.matchAll(MENTION)) {
      const id = match[1]!
      const known = members?.has(id) === true || (this.apps.has(id) && this.installOf(community, id) !== undefined)
      if (known && !found.includes(id)) found.push(id)
    }
    return found
  }

  /** Builds a stored command, keeping the id a name had before (ORB-A15). */
  command (app: AppState, input: WorldCommand): StoredCommand {
    const community = input.community ?? null
    const key = `${community ?? ''}\u0000${input.name}`
    let id = app.commandIds.get(key)
    if (id === undefined) {
      id = `cmd_${this.#nextCommandId++}`
      app.commandIds.set(key, id)
    }
    return {
      id,
      name: input.name,
      description: input.description ?? '',
      args: (input.options ?? []).map((option) => ({ ...option })),
      right: input.right ?? 'send_messages',
      community
    }
  }

  /** ORB-086: the registry's evidence count, or null when the chain cannot be consulted. */
  evidence (address: string, kind: string): number | null {
    if (!this.chainAvailable) return null
    return this.passport.get(passportKey(address, kind)) ?? 0
  }
}

/** ORB-A20: the default card pattern: a line that starts with /trade, /signal or /market. */
export const DEFAULT_CARD_PATTERN = /^\s*\/(?:trade|signal|market)\b/im

/** ORB-A15: the room player's names and the administration commands. */
export const DEFAULT_RESERVED_COMMANDS: readonly string[] = [
  'add', 'play', 'pause', 'next', 'back', 'jump', 'remove', 'seek', 'volume', 'loop', 'shuffle', 'clear', 'state',
  'queue', 'skip', 'stop', 'np',
  'ban', 'kick', 'mute', 'unmute', 'timeout', 'warn', 'purge', 'role', 'slowmode', 'lock', 'unlock'
]

/** Seats in a voice channel whose world names none. */
export const DEFAULT_VOICE_CAPACITY = 10

// A mention in message text: <@member-or-app-id>.
const MENTION = /<@([A-Za-z0-9_.-]{1,64})>/g

const installKey = (community: string, app: string): string => `${community}\u0000${app}`
// ORB-A18: addresses match without regard to case.
const passportKey = (address: string, kind: string): string => `${address.toLowerCase()}\u0000${kind}`
