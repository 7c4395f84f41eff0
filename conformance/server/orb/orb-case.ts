import { CaseFailure, CaseSkip, type CaseContext } from '../core/case.js'
import type { ControlClient } from '../core/control.js'
import type { Hook } from './receiver.js'
import type { ControlledWorld, OrbTarget } from './target.js'
import type { OrbBotClient, OrbReply, Speaker } from './transport.js'

/** What an Orb case runs with. */
export type OrbContext = CaseContext<OrbBotClient>

export const BOT = '/api/bot/v1'
export const DIRECTORY = '/api/orb/directory'

/** The channel of the target's config named `kind`, or a skip that says the config lacks it. */
export function channel (ctx: OrbContext, kind: keyof OrbTarget['channels']): string {
  const id = ctx.client.target.channels[kind]
  if (id === undefined) throw new CaseSkip(`the target config names no ${kind} channel (channels.${kind})`)
  return id
}

/** The app with few scopes, or a skip. */
export function few (ctx: OrbContext): Speaker {
  if (ctx.client.target.few === undefined) {
    throw new CaseSkip('the target config names no app with few scopes (tokens.few)')
  }
  return 'few'
}

/** The control API and the world it set up (members, the suite's own apps), or a skip. */
export function controlled (ctx: OrbContext): { control: ControlClient; world: ControlledWorld; target: OrbTarget } {
  const world = ctx.client.target.controlled
  if (ctx.control === undefined || world === undefined) { throw new CaseSkip("acts as a member or the developer: needs orbtest's control API (--control URL)") }
  return { control: ctx.control, world, target: ctx.client.target }
}

/** The full app's id (known with control, or read from GET /app). */
export async function fullAppId (ctx: OrbContext): Promise<string> {
  const known = ctx.client.target.full.id
  if (known !== undefined) return known
  const reply = await ctx.client.get(`${BOT}/app`)
  const id = reply.json?.app?.id
  if (reply.status !== 200 || typeof id !== 'string') {
    throw new CaseFailure(
      'GET /app names the app',
      '200 {"app":{"id":…}}',
      `${reply.status} ${reply.text.slice(0, 300)}`
    )
  }
  ctx.client.target.full.id = id
  return id
}

/**
 * Posts as the full app (or `as`) and deletes the message when the case ends. Fails the case unless the post is
 * accepted; throttling is waited out by the client.
 */
export async function post (
  ctx: OrbContext,
  content: string,
  options: { channel?: string; replyTo?: number; as?: Speaker } = {}
): Promise<any> {
  const reply = await ctx.client.post(
    `${BOT}/messages`,
    {
      channel: options.channel ?? channel(ctx, 'text'),
      content,
      ...(options.replyTo === undefined ? {} : { reply_to: options.replyTo })
    },
    options.as
  )
  if (reply.status !== 200 || !Number.isInteger(reply.json?.id)) {
    throw new CaseFailure('posting a plain message', '200 PostedMessage', `${reply.status} ${reply.text.slice(0, 300)}`)
  }
  const id = reply.json.id as number
  ctx.cleanup(async () => {
    await ctx.client.request({ method: 'DELETE', path: `${BOT}/messages/${id}`, as: options.as ?? 'full' })
  })
  return reply.json
}

/** Every event the full app (or `as`) holds after `after`, following `next` to the end; and the last `next`. */
export async function drain (
  ctx: OrbContext,
  after = 0,
  as: Speaker = 'full'
): Promise<{ events: any[]; next: number }> {
  const events: any[] = []
  let cursor = after
  for (let pages = 0; pages < 20; pages++) {
    const reply = await ctx.client.get(`${BOT}/events`, { after: cursor, limit: 100 }, as)
    if (reply.status !== 200 || !Array.isArray(reply.json?.events)) {
      throw new CaseFailure(
        'reading events',
        '200 {"events":[…],"next":…}',
        `${reply.status} ${reply.text.slice(0, 300)}`
      )
    }
    events.push(...reply.json.events)
    if (reply.json.events.length === 0 || reply.json.next === cursor) return { events, next: reply.json.next }
    cursor = reply.json.next
  }
  return { events, next: cursor }
}

/**
 * Points the full app's endpoint URL at a new hook of the suite's receiver (webhook mode) for the rest of the case;
 * the app is back in events mode when the case ends.
 */
export async function webhookMode (ctx: OrbContext, label = 'hook'): Promise<Hook> {
  const { control, target } = controlled(ctx)
  const receiver = ctx.client.receiver
  if (receiver === undefined) throw new CaseSkip('the run has no webhook receiver')
  const app = target.full.id!
  const hook = receiver.hook(ctx.uid(label), target.full.token)
  await control.setEndpoint(app, hook.url)
  ctx.cleanup(async () => {
    await control.setEndpoint(app, null)
    receiver.drop(hook)
  })
  return hook
}

/** A member of the community mentions the full app (it gets a message.mention event); the control answer. */
export async function mentionFull (ctx: OrbContext, text = 'ping'): Promise<any> {
  const { control, world, target } = controlled(ctx)
  return control.memberPost({
    server: target.community,
    channel: target.channels.text,
    member: world.member,
    content: `<@${target.full.id!}> ${text}`
  })
}

const syncedIn = new WeakMap<OrbContext, Set<string>>()

/**
 * The app's global commands as a `PUT /commands` body would give them back (ORB-055's Command to ORB-058's
 * CommandInput: `args` are the options). Community commands are not the API's to touch (ORB-A15) and are left out.
 */
export async function globalCommands (ctx: OrbContext, as: Speaker = 'full'): Promise<Array<Record<string, unknown>>> {
  const reply = await ctx.client.request({ path: `${BOT}/commands`, as })
  if (reply.status !== 200 || !Array.isArray(reply.json?.commands)) fail('GET /commands', '200 {"commands":[…]}', reply)
  return (reply.json.commands as any[]).filter((c) => c.community === null || c.community === undefined).map((c) => ({
    name: c.name,
    ...(typeof c.description === 'string' && c.description !== '' ? { description: c.description } : {}),
    ...(typeof c.right === 'string' ? { right: c.right } : {}),
    ...(Array.isArray(c.args) && c.args.length > 0 ? { options: c.args } : {})
  }))
}

/**
 * Makes the case end with the app's commands as they were at this call (one restoring sync per app and case): on a
 * real Orb the app's own commands come back.
 */
export async function keepCommands (ctx: OrbContext, as: Speaker = 'full'): Promise<void> {
  const key = as === null ? 'none' : typeof as === 'string' ? as : as.token
  let synced = syncedIn.get(ctx)
  if (synced === undefined) syncedIn.set(ctx, synced = new Set())
  if (synced.has(key)) return
  synced.add(key)
  const before = await globalCommands(ctx, as)
  ctx.cleanup(async () => {
    await ctx.client.request({ method: 'PUT', path: `${BOT}/commands`, body: { commands: before }, as })
  })
}

/** Syncs the app's commands to `commands`; the case ends with the commands the app had before it. */
export async function syncCommands (ctx: OrbContext, commands: unknown[], as: Speaker = 'full'): Promise<OrbReply> {
  await keepCommands(ctx, as)
  return ctx.client.request({ method: 'PUT', path: `${BOT}/commands`, body: { commands }, as })
}

/** A member types the full app's command `name` in the text channel; the event id. */
export async function invokeFull (
  ctx: OrbContext,
  name: string,
  options: Record<string, string> = {},
  member?: string
): Promise<string> {
  const { control, world, target } = controlled(ctx)
  const reply = await control.invoke({
    server: target.community,
    channel: target.channels.text,
    member: member ?? world.member,
    name,
    options,
    app: target.full.id!
  })
  if (reply.status !== 200 || typeof reply.json?.event !== 'string') { throw new Error(`control: invoking /${name} answered ${reply.status} ${JSON.stringify(reply.json)}`) }
  return reply.json.event
}

/** Fails with what was expected and what came. */
export function fail (what: string, expected: unknown, reply: OrbReply): never {
  throw new CaseFailure(what, expected, `${reply.status} ${reply.text.slice(0, 500)}`)
}
