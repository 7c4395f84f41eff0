import { createHash } from 'node:crypto'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { ErrorObject, ValidateFunction } from 'ajv'
import { createAjv } from '../shared/ajv.js'
import { packageRoot, readPackageJson } from '../shared/paths.js'
import { StartupError } from '../shared/startup-error.js'

/** The channel rights a role or a member can hold (CommandInput.right's vocabulary). */
export const RIGHTS = [
  'send_messages', 'attach_files', 'manage_messages', 'connect', 'speak', 'stream', 'move_members'
] as const
/** One channel right. */
export type Right = typeof RIGHTS[number]

/** ORB-007: the scope vocabulary. */
export const SCOPES = ['messages:read', 'messages:write', 'voice', 'music', 'passport'] as const
/** One scope an app can ask for. */
export type Scope = typeof SCOPES[number]

/** A person of the world: a member of communities, maybe with a wallet address (passport, ORB-A18). */
export interface WorldMember { id: string, name: string, address?: string }
/** A channel as a world file writes it. */
export interface WorldChannel {
  id: string
  name: string
  kind: 'text' | 'voice'
  readOnly?: boolean
  capacity?: number
  seated?: string[]
}
/** A community as a world file writes it: its members with their rights, and its channels. */
export interface WorldCommunity {
  id: string
  name: string
  members: Array<{ id: string, rights: Right[] }>
  channels: WorldChannel[]
}
/** A command an app has registered when the world starts (CommandInput, and `community` for community commands). */
export interface WorldCommand {
  name: string
  description?: string
  right?: Right
  options?: Array<Record<string, unknown>>
  community?: string | null
}
/** An app as a world file writes it: the console's and the directory's facts about it. */
export interface WorldApp {
  id: string
  name: string
  token: string
  scopes: Scope[]
  listed?: boolean
  listedAt?: number
  blurb?: string
  homepage?: string
  developer?: string
  rights?: Right[]
  endpoint?: string | null
  chain?: { app: string, price: string, retired: boolean } | null
  manifest?: string
  commands?: WorldCommand[]
}
/** An app installed in a community when the world starts (ORB-A04). */
export interface WorldInstall {
  community: string
  app: string
  role: { name: string, rights: Right[] }
  channels: string[]
  hidden?: string[]
  channelRights?: Record<string, Right[]>
}
/** A whole world: what the fake Orb starts with and returns to on reset (world.schema.json). */
export interface World {
  name?: string
  registry: {
    available?: boolean
    chainId: number
    contract: string | null
    asset: string
    feeRecipient: string
    feeBps: number
    apps: number
    fees: string
  }
  voiceServer?: { url: string } | null
  members: WorldMember[]
  communities: WorldCommunity[]
  apps: WorldApp[]
  installs?: WorldInstall[]
  passport?: Array<{ address: string, kind: string, count: number }>
  messages?: Array<{ channel: string, author: string, content: string, encrypted?: boolean }>
  settings?: { reservedCommands?: string[], cardPattern?: string }
}

/** The world file's JSON Schema, shipped with the package. */
export const WORLD_SCHEMA_FILE = 'src/orb-mock/world.schema.json'
/** The demo world `npm start` runs. */
export const DEFAULT_WORLD_FILE = 'fixtures/orb-world.json'

/** The demo world as the build checked it, with the fixture's SHA-256: `{sha256, world}`. */
export const CHECKED_WORLD_FILE = 'dist/src/orb-mock/default-world.json'

/** What the build writes to CHECKED_WORLD_FILE: the demo world checked (defaults filled in), and its fixture's hash. */
export function checkedDefaultWorld (): string {
  const text = readFileSync(join(packageRoot(), DEFAULT_WORLD_FILE), 'utf8')
  const world = checkWorld(JSON.parse(text), DEFAULT_WORLD_FILE)
  return `${JSON.stringify({ sha256: createHash('sha256').update(text).digest('hex'), world })}\n`
}

/** A world that is not valid: `problems` name each bad place by its path, for example `apps[1].scopes[0]`. */
export class WorldError extends Error {
  readonly problems: string[]
  constructor (source: string, problems: string[]) {
    super(`${source} is not a valid world:\n  ${problems.join('\n  ')}`)
    this.name = 'WorldError'
    this.problems = problems
  }
}

// Compiled on the first world that needs it (never at import), and never changed after.
let validateWorld: ValidateFunction | undefined

/** Checks a parsed world against the schema, then that every reference names something that exists (ORB-A04). */
export function checkWorld (value: unknown, source = 'the world'): World {
  validateWorld ??= createAjv({ allErrors: true, useDefaults: true })
    .compile(readPackageJson<object>(WORLD_SCHEMA_FILE))
  if (!validateWorld(value)) throw new WorldError(source, (validateWorld.errors ?? []).map(describeSchemaError))
  const world = value as World
  const problems = references(world)
  if (problems.length > 0) throw new WorldError(source, problems)
  return world
}

/** Reads and checks a world file; start-up faults name the file and every bad path. */
export function loadWorldFile (file: string): World {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (err) {
    throw new StartupError('ORBTEST_WORLD_UNREADABLE', `cannot read the world file ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`)
  }
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch (err) {
    throw new StartupError('ORBTEST_WORLD_INVALID', `the world file ${file} is not JSON: ${(err as Error).message}`)
  }
  try {
    return checkWorld(parsed, `the world file ${file}`)
  } catch (err) {
    if (err instanceof WorldError) throw new StartupError('ORBTEST_WORLD_INVALID', err.message)
    throw err
  }
}

/** The demo world, a fresh copy each call. */
export function defaultWorld (): World {
  const checked = join(packageRoot(), CHECKED_WORLD_FILE)
  return demoWorld(readFileSync(join(packageRoot(), DEFAULT_WORLD_FILE), 'utf8'),
    existsSync(checked) ? readFileSync(checked, 'utf8') : undefined)
}

/**
 * The demo world from its fixture's text. The build checks it once (scripts/build-if-stale.js writes
 * CHECKED_WORLD_FILE): while the fixture is the one it checked, byte for byte, that checked form (defaults filled
 * in) is used and no schema is compiled; any other text is checked now.
 */
export function demoWorld (text: string, checked: string | undefined): World {
  if (checked !== undefined) {
    const built = JSON.parse(checked) as { sha256: string, world: World }
    if (built.sha256 === createHash('sha256').update(text).digest('hex')) return built.world
  }
  return checkWorld(JSON.parse(text), DEFAULT_WORLD_FILE)
}

/** ORB-A05: an endpoint URL is `https`, except that the fake also allows `http` to this machine. */
export function endpointAllowed (url: string): boolean {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return false
  }
  const host = parsed.hostname.replace(/^\[(.*)\]$/, '$1')
  const local = host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host)
  return parsed.protocol === 'https:' || (parsed.protocol === 'http:' && local)
}

/** `/apps/1/scopes/0` → `apps[1].scopes[0]`. */
export function jsonPointerToPath (pointer: string): string {
  let path = ''
  for (const raw of pointer.split('/').slice(1)) {
    const part = raw.replaceAll('~1', '/').replaceAll('~0', '~')
    path += /^\d+$/.test(part) ? `[${part}]` : path === '' ? part : `.${part}`
  }
  return path
}

function describeSchemaError (error: ErrorObject): string {
  const at = jsonPointerToPath(error.instancePath)
  const where = at === '' ? '(top level)' : at
  const params = error.params as Record<string, unknown>
  switch (error.keyword) {
    case 'additionalProperties': return `${where}: unknown key ${JSON.stringify(params.additionalProperty)}`
    case 'required': return `${where}: ${JSON.stringify(params.missingProperty)} is required`
    case 'enum': return `${where}: must be one of ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`
    default: return `${where}: ${error.message ?? 'is invalid'}`
  }
}

function references (world: World): string[] {
  const problems: string[] = []
  const unique = (ids: string[], path: (i: number) => string, what: string): void => {
    const seen = new Set<string>()
    ids.forEach((id, i) => {
      if (seen.has(id)) problems.push(`${path(i)}: ${what} ${JSON.stringify(id)} is defined twice`)
      seen.add(id)
    })
  }
  const members = new Set(world.members.map((m) => m.id))
  const apps = new Set(world.apps.map((a) => a.id))
  const communities = new Map(world.communities.map((c) => [c.id, c]))
  const channelCommunity = new Map<string, { community: string, kind: 'text' | 'voice' }>()
  unique(world.members.map((m) => m.id), (i) => `members[${i}].id`, 'member')
  unique(world.apps.map((a) => a.id), (i) => `apps[${i}].id`, 'app')
  unique(world.apps.map((a) => a.token), (i) => `apps[${i}].token`, 'token')
  unique(world.communities.map((c) => c.id), (i) => `communities[${i}].id`, 'community')
  for (const id of apps) if (members.has(id)) problems.push(`apps: app id ${JSON.stringify(id)} is also a member id`)
  world.communities.forEach((community, ci) => {
    community.members.forEach((m, mi) => {
      if (!members.has(m.id)) problems.push(`communities[${ci}].members[${mi}].id: no member ${JSON.stringify(m.id)}`)
    })
    unique(community.members.map((m) => m.id), (i) => `communities[${ci}].members[${i}].id`, 'member')
    const inCommunity = new Set(community.members.map((m) => m.id))
    community.channels.forEach((channel, chi) => {
      if (channelCommunity.has(channel.id)) problems.push(`communities[${ci}].channels[${chi}].id: channel ${JSON.stringify(channel.id)} is defined twice`)
      channelCommunity.set(channel.id, { community: community.id, kind: channel.kind })
      if (channel.kind === 'text' && (channel.capacity !== undefined || channel.seated !== undefined)) {
        problems.push(`communities[${ci}].channels[${chi}]: capacity and seated are for voice channels`)
      }
      channel.seated?.forEach((id, si) => {
        if (!inCommunity.has(id)) problems.push(`communities[${ci}].channels[${chi}].seated[${si}]: ${JSON.stringify(id)} is not a member of ${community.id}`)
      })
      if ((channel.seated?.length ?? 0) > (channel.capacity ?? 10)) problems.push(`communities[${ci}].channels[${chi}].seated: more members than seats`)
    })
  })
  world.apps.forEach((app, ai) => {
    if (app.chain != null && app.manifest === undefined) problems.push(`apps[${ai}].manifest: an app on the registry needs the manifest its record commits to`)
    if (app.endpoint != null && !endpointAllowed(app.endpoint)) problems.push(`apps[${ai}].endpoint: must be https, or http to localhost (ORB-A05)`)
    app.commands?.forEach((command, ci) => {
      if (command.community != null && !communities.has(command.community)) problems.push(`apps[${ai}].commands[${ci}].community: no community ${JSON.stringify(command.community)}`)
    })
  })
  const installed = new Set<string>()
  world.installs?.forEach((install, ii) => {
    const at = `installs[${ii}]`
    if (!communities.has(install.community)) problems.push(`${at}.community: no community ${JSON.stringify(install.community)}`)
    if (!apps.has(install.app)) problems.push(`${at}.app: no app ${JSON.stringify(install.app)}`)
    const key = `${install.community}\u0000${install.app}`
    if (installed.has(key)) problems.push(`${at}: ${install.app} is installed in ${install.community} twice`)
    installed.add(key)
    const own = (list: string[] | undefined, name: string): void => list?.forEach((id, i) => {
      if (channelCommunity.get(id)?.community !== install.community) problems.push(`${at}.${name}[${i}]: no channel ${JSON.stringify(id)} in ${install.community}`)
    })
    own(install.channels, 'channels')
    own(install.hidden, 'hidden')
    own(Object.keys(install.channelRights ?? {}), 'channelRights')
  })
  world.messages?.forEach((message, mi) => {
    const channel = channelCommunity.get(message.channel)
    if (channel === undefined) problems.push(`messages[${mi}].channel: no channel ${JSON.stringify(message.channel)}`)
    else if (channel.kind !== 'text') problems.push(`messages[${mi}].channel: ${message.channel} is a voice channel`)
    if (!members.has(message.author) && !apps.has(message.author)) problems.push(`messages[${mi}].author: no member or app ${JSON.stringify(message.author)}`)
  })
  if (world.settings?.cardPattern !== undefined) {
    try {
      RegExp(world.settings.cardPattern, 'm')
    } catch {
      problems.push('settings.cardPattern: not a valid regular expression')
    }
  }
  return problems
}
