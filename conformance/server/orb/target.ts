import { readFileSync } from 'node:fs'
import type { ErrorObject } from 'ajv'
import { createAjv } from '../../../src/shared/ajv.js'
import { readPackageJson } from '../../../src/shared/paths.js'
import { UsageError } from '../../../src/shared/usage-error.js'
import type { ControlClient } from '../core/control.js'

/** An app the suite speaks as. */
export interface TargetApp {
  token: string
  /** Its id and member id, when known (control discovery, or `GET /app`). */
  id?: string
}

/** What the Orb suite knows of its target: where it is, which apps, community and channels it works with. */
export interface OrbTarget {
  /** The origin, for example `http://127.0.0.1:8787`. */
  url: string
  /** An app with every scope, installed in `community`. */
  full: TargetApp
  /** An app with few scopes (at least not voice, music, passport or messages:write), installed in `community`. */
  few?: TargetApp
  community: string
  /** A community the full app is not installed in. */
  otherCommunity?: string
  /** A text channel of `otherCommunity`. */
  otherChannel?: string
  channels: {
    text: string
    readOnly?: string
    voice?: string
    outsideAllowList?: string
    hidden?: string
  }
  passport?: { address: string, kind: string, count: number }
  /** Where the suite's receiver listens and how the server reaches it. */
  webhook: { host: string, port: number, url?: string }
  /** Set when the suite built its own apps through orbtest's control API (and can act as members). */
  controlled?: ControlledWorld
}

/** What a target set up through the control API offers beyond the config: members, and its own apps to delete. */
export interface ControlledWorld {
  /** A member of `community` holding every right. */
  member: string
  /** A member of `community` without `lacks`. */
  lacking?: { member: string, lacks: string }
  /** Seats of the voice channel and how many are taken by members now. */
  voiceCapacity?: number
  /** The app ids the suite created (deleted when the run ends). */
  apps: string[]
}

let validateConfig: ReturnType<ReturnType<typeof createAjv>['compile']> | undefined

/** Reads and checks `--config FILE` (see target.schema.json); `$NAME` strings come from the environment. */
export function loadTargetConfig (file: string, url: string): OrbTarget {
  const config = fromEnvironment(readConfigFile(file), file) as any
  validateConfig ??= createAjv({ allErrors: false }).compile(
    readPackageJson('conformance/server/orb/target.schema.json') as object
  )
  if (!validateConfig(config)) throw new UsageError(`${file}${invalidConfigMessage(validateConfig.errors?.[0])}`)
  const [host, port] = splitListen(config.webhook?.listen ?? '127.0.0.1:0')
  return {
    url,
    full: { token: config.tokens.full },
    ...(config.tokens.few === undefined ? {} : { few: { token: config.tokens.few } }),
    community: config.community,
    ...(config.otherCommunity === undefined ? {} : { otherCommunity: config.otherCommunity }),
    ...(config.otherChannel === undefined ? {} : { otherChannel: config.otherChannel }),
    channels: { ...config.channels },
    ...(config.passport === undefined ? {} : { passport: config.passport }),
    webhook: { host, port, ...(config.webhook?.url === undefined ? {} : { url: config.webhook.url }) }
  }
}

/** The config file's JSON; a file that cannot be read or parsed is the user's mistake to fix. */
function readConfigFile (file: string): unknown {
  try {
    return JSON.parse(readFileSync(file, 'utf8'))
  } catch (err) {
    throw new UsageError(
      `cannot read the target config ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`
    )
  }
}

/** What follows the file's name when the schema refuses the config: where, what, and the unknown property if any. */
function invalidConfigMessage (e: ErrorObject | undefined): string {
  const property = e?.params !== undefined && 'additionalProperty' in e.params
    ? ` (${String(e.params.additionalProperty)})`
    : ''
  return `${e?.instancePath ?? ''}: ${e?.message ?? 'not valid'}${property}`
}

function fromEnvironment (value: unknown, file: string): unknown {
  if (typeof value === 'string' && value.startsWith('$')) {
    const found = process.env[value.slice(1)]
    if (found === undefined || found === '') throw new UsageError(`${file} reads ${value} from the environment, which does not set it`)
    return found
  }
  if (Array.isArray(value)) return value.map((v) => fromEnvironment(v, file))
  if (typeof value === 'object' && value !== null) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, k === '$schema' ? v : fromEnvironment(v, file)]))
  return value
}

function splitListen (listen: string): [string, number] {
  const at = listen.lastIndexOf(':')
  const port = Number(listen.slice(at + 1))
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new UsageError(`webhook.listen: ${listen} has no valid port`)
  }
  return [listen.slice(0, at).replace(/^\[|\]$/g, ''), port]
}

const ALL_RIGHTS = ['send_messages', 'attach_files', 'manage_messages', 'connect', 'speak', 'stream', 'move_members']
const ROLE_RIGHTS = ['send_messages', 'connect', 'speak']

interface StateChannel { id: string, kind: 'text' | 'voice', readOnly: boolean, capacity?: number }
interface StateServer { id: string, channels: StateChannel[], members: Array<{ id: string, rights: string[] }> }

/** The channels of a community the suite can use: writable text channels, a read-only one, a voice one. */
interface Fits { text: StateChannel[]; readOnly?: StateChannel; voice?: StateChannel }

const fitsOf = (s: StateServer): Fits => ({
  text: s.channels.filter((c) => c.kind === 'text' && !c.readOnly),
  readOnly: s.channels.find((c) => c.kind === 'text' && c.readOnly),
  voice: s.channels.find((c) => c.kind === 'voice')
})

const holdsEveryRight = (m: { rights: string[] }): boolean => ALL_RIGHTS.every((r) => m.rights.includes(r))

/** How well a community serves the cases: text channels first (up to three), then read-only, voice, a full member. */
function fitScore (s: StateServer): number {
  const f = fitsOf(s)
  return (
    Math.min(f.text.length, 3) * 4 +
    (f.readOnly === undefined ? 0 : 2) +
    (f.voice === undefined ? 0 : 2) +
    (s.members.some(holdsEveryRight) ? 1 : 0)
  )
}

/** The community the suite runs in, with its channels by role and its members. */
interface Community {
  server: StateServer
  f: Fits
  text: StateChannel
  hidden?: StateChannel
  outside?: StateChannel
  member: { id: string, rights: string[] }
  lackingMember?: { id: string, rights: string[] }
}

/** The community that fits the cases best; one without a writable text channel or a member who may post will not do. */
function pickCommunity (servers: StateServer[]): Community {
  const server = [...servers].sort((a, b) => fitScore(b) - fitScore(a))[0]
  if (server === undefined) throw new Error("the fake Orb's world has no community to run the suite in")
  const f = fitsOf(server)
  const text = f.text[0]
  if (text === undefined) throw new Error(`community ${server.id} has no writable text channel`)
  const member =
    server.members.find(holdsEveryRight) ??
    server.members.find((m) => m.rights.includes('send_messages'))
  if (member === undefined) throw new Error(`community ${server.id} has no member who may post`)
  const lackingMember = server.members.find((m) => m.id !== member.id && ALL_RIGHTS.some((r) => !m.rights.includes(r)))
  return { server, f, text, hidden: f.text[1], outside: f.text[2], member, lackingMember }
}

/** An app the suite made: its token and id. */
interface MadeApp { token: string, id: string }

/** Makes the suite's two apps (every scope; messages:read only) and installs them in the community. */
async function installSuiteApps (
  control: ControlClient,
  run: string,
  c: Community
): Promise<{ full: MadeApp, few: MadeApp }> {
  const full = await control.must('POST', '/control/orb/apps', {
    id: `app_orbtest_${run}_full`,
    name: 'orbtest conformance (every scope)',
    scopes: ['messages:read', 'messages:write', 'voice', 'music', 'passport'],
    rights: ROLE_RIGHTS
  })
  const few = await control.must('POST', '/control/orb/apps', {
    id: `app_orbtest_${run}_few`,
    name: 'orbtest conformance (messages:read)',
    scopes: ['messages:read'],
    rights: ['send_messages']
  })
  const { server, f, text, hidden } = c
  const allowed = [
    text.id,
    ...(hidden === undefined ? [] : [hidden.id]),
    ...(f.readOnly === undefined ? [] : [f.readOnly.id]),
    ...(f.voice === undefined ? [] : [f.voice.id])
  ]
  const installPath = (app: string): string =>
    `/control/orb/servers/${encodeURIComponent(server.id)}/apps/${encodeURIComponent(app)}`
  await control.must('PUT', installPath(full.id), {
    role: { name: 'orbtest conformance', rights: ROLE_RIGHTS },
    channels: allowed,
    hidden: hidden === undefined ? [] : [hidden.id]
  })
  await control.must('PUT', installPath(few.id), {
    role: { name: 'orbtest conformance (few)', rights: ['send_messages'] },
    channels: [text.id]
  })
  return { full, few }
}

/** Another community, and a text channel of it, for the cases that reach outside the app's installs. */
function otherCommunityOf (servers: StateServer[], community: string): Partial<OrbTarget> {
  const other = servers.find((s) => s.id !== community)
  if (other === undefined) return {}
  const otherText = other.channels.find((c) => c.kind === 'text')
  return { otherCommunity: other.id, ...(otherText === undefined ? {} : { otherChannel: otherText.id }) }
}

/** What the control API lets the cases do beyond the config: members who post or lack a right, the seats. */
function controlledWorld (c: Community, apps: string[]): ControlledWorld {
  const { lackingMember, f } = c
  const lacks = lackingMember === undefined ? undefined : ALL_RIGHTS.find((r) => !lackingMember.rights.includes(r))
  return {
    member: c.member.id,
    ...(lackingMember === undefined || lacks === undefined ? {} : { lacking: { member: lackingMember.id, lacks } }),
    ...(f.voice?.capacity === undefined ? {} : { voiceCapacity: f.voice.capacity }),
    apps
  }
}

/**
 * With orbtest's control API the suite needs no config: it creates two apps of its own (every scope; messages:read
 * only), installs them in a community that has what the cases need, and says which member can do what. Nothing the
 * apps a person uses hold is touched. The apps are deleted by `releaseTarget`.
 */
export async function discoverTarget (
  control: ControlClient,
  url: string,
  run: string,
  webhook?: OrbTarget['webhook']
): Promise<OrbTarget> {
  const state = (await control.must('GET', '/control/orb/state')) as { servers: StateServer[] }
  const c = pickCommunity(state.servers)
  const { full, few } = await installSuiteApps(control, run, c)
  const { f, text, hidden, outside } = c
  return {
    url,
    full: { token: full.token, id: full.id },
    few: { token: few.token, id: few.id },
    community: c.server.id,
    ...otherCommunityOf(state.servers, c.server.id),
    channels: {
      text: text.id,
      ...(f.readOnly === undefined ? {} : { readOnly: f.readOnly.id }),
      ...(f.voice === undefined ? {} : { voice: f.voice.id }),
      ...(outside === undefined ? {} : { outsideAllowList: outside.id }),
      ...(hidden === undefined ? {} : { hidden: hidden.id })
    },
    webhook: webhook ?? { host: '127.0.0.1', port: 0 },
    controlled: controlledWorld(c, [full.id, few.id])
  }
}

/**
 * Deletes the apps the suite created, with everything they posted (their installs, seats and events go with them),
 * and the messages the suite posted as members: a run leaves the community as it found it.
 */
export async function releaseTarget (control: ControlClient | undefined, target: OrbTarget): Promise<void> {
  if (control === undefined || target.controlled === undefined) return
  for (const app of target.controlled.apps) {
    await control.call('DELETE', `/control/orb/apps/${encodeURIComponent(app)}?messages=delete`).catch(() => undefined)
  }
  for (const id of control.memberMessages.splice(0)) {
    await control.call('DELETE', `/control/orb/messages/${id}`).catch(() => undefined)
  }
}
