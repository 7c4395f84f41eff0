import type { Right, Scope } from './world.js'

// What the control server's `/control/orb/...` bodies hold: the inputs of OrbControl's actions.

/** `POST /control/orb/messages`: a member's post in a text channel. */
export interface MemberPost {
  server: string
  channel: string
  member: string
  content: string
  encrypted?: boolean
  /** The id of a message in the same channel. */
  replyTo?: number
}

/** `POST /control/orb/commands/invoke`: a member types an app's command (ORB-061, ORB-063). */
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

/** `PUT /control/orb/servers/{server}/apps/{app}`: what an admin accepts when installing an app (ORB-A04). */
export interface InstallSpec {
  /** The role the app gets; default the app's name, with the rights its listing asks for. */
  role?: { name?: string, rights: Right[] }
  /** The allow-list; default every channel of the community. */
  channels?: string[]
  /** Channels the app's role cannot see. */
  hidden?: string[]
  /** The role's rights in single channels, in place of its own. */
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

/** `PUT /control/orb/voice`: the voice server, and seats per voice channel. */
export interface VoiceChange {
  /** Whether this Orb runs a voice server (`grant` works only while it does, ORB-078). */
  server?: boolean
  /** Seats per voice channel id. */
  capacity?: Record<string, number>
}
