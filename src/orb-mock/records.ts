import type { Right, Scope, WorldApp } from './world.js'

// What the store holds, record by record: the state each route and service reads and changes.

/** An author as messages show it (ORB-024, ORB-037). */
export interface Author { id: string, name: string, bot: boolean }

/** An app as the store holds it: its identity, token, scopes, endpoint and commands (ORB-008). */
export interface AppState {
  id: string
  name: string
  token: string
  scopes: ReadonlySet<Scope>
  /** ORB-008, ORB-A06: the app's member id, the same in every community that installed it. */
  memberId: string
  source: WorldApp
  endpoint: string | null
  /** Commands by name (global ones, community null) and community ones, in registration order (ORB-055). */
  commands: StoredCommand[]
  /** ORB-A15: a name keeps its command id across syncs. */
  commandIds: Map<string, string>
}

/** A registered command (ORB-055, ORB-A15). */
export interface StoredCommand {
  id: string
  name: string
  description: string
  args: Array<Record<string, unknown>>
  right: Right
  community: string | null
}

/** A text or voice channel of a community. */
export interface ChannelState {
  id: string
  name: string
  kind: 'text' | 'voice'
  readOnly: boolean
  community: string
  /** Seats in a voice channel. */
  capacity: number
  /** Message ids, ascending (text channels). */
  messages: number[]
}

/** A community: its members with their rights, and its channels in order. */
export interface CommunityState {
  id: string
  name: string
  /** Members and the channel rights each holds. */
  members: Map<string, ReadonlySet<Right>>
  channels: string[]
}

/** An app installed in a community: its role, allow-list, hidden channels and per-channel rights (ORB-A04). */
export interface InstallState {
  community: string
  app: string
  role: { name: string, rights: Right[] }
  /** The community's allow-list for the app (ORB-009). */
  channels: Set<string>
  /** Channels the app's role cannot see. */
  hidden: Set<string>
  channelRights: Map<string, Right[]>
}

/** A message as stored; `deleted` ones stay, unseen (ORB-A20). */
export interface StoredMessage {
  id: number
  channel: string
  community: string
  author: Author
  created: number
  replyTo: number | null
  encrypted: boolean
  content: string
  mentions: string[]
  deleted: boolean
}
