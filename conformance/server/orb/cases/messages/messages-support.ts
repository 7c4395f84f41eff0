import fc from 'fast-check'
import { expectEqual, expectOk, expectOrbError } from '../../expect.js'
import { BOT, channel, controlled, fail, fullAppId, type OrbContext } from '../../orb-case.js'
import { ORB_A03_WINDOWS } from '../../../../../src/spec/orb.js'
import type { OrbReply, Speaker } from '../../transport.js'

/*
 * What the message cases share: the endpoint and the spec's post limits, requests to /messages that clean up after
 * themselves, the clock-aware property parameters, and the delete steps both a required and a decision case take.
 */

export const MESSAGES = `${BOT}/messages`
export const READ = { method: 'GET', path: '/api/bot/v1/messages' }
export const POST = { method: 'POST', path: '/api/bot/v1/messages' }
export const DELETE = { method: 'DELETE', path: '/api/bot/v1/messages/{id}' }

/** ORB-031: the posting throttle's windows (src/spec/orb.ts, shared with the fake and read by no fake code). */
export const PER_CHANNEL = ORB_A03_WINDOWS.postsPerChannel.limit
export const PER_APP = ORB_A03_WINDOWS.postsPerApp.limit
export const WINDOW_MS = ORB_A03_WINDOWS.postsPerApp.windowMs

// ---------------------------------------------------------------------------------------------------------------
// Requests

/** Posts a body as it is; a 200 is deleted when the case ends. Throttling is waited out unless `retry` is false. */
export async function send (
  ctx: OrbContext,
  body: unknown,
  options: { as?: Speaker; retry?: boolean } = {}
): Promise<OrbReply> {
  const as = options.as ?? 'full'
  const reply = await ctx.client.request({
    method: 'POST',
    path: MESSAGES,
    body,
    as,
    retryThrottled: options.retry ?? true
  })
  if (reply.status === 200 && Number.isInteger(reply.json?.id)) {
    const id = reply.json.id as number
    ctx.cleanup(async () => {
      await remove(ctx, id, as)
    })
  }
  return reply
}

/** Posts plain text in `channelId` and fails the case unless it is accepted; the PostedMessage. */
export async function postOk (
  ctx: OrbContext,
  channelId: string,
  content: string,
  extra: { reply_to?: number; retry?: boolean } = {}
): Promise<any> {
  const reply = await send(
    ctx,
    { channel: channelId, content, ...(extra.reply_to === undefined ? {} : { reply_to: extra.reply_to }) },
    { retry: extra.retry }
  )
  if (reply.status !== 200 || !Number.isInteger(reply.json?.id)) { fail(`posting ${JSON.stringify(content.slice(0, 40))} in ${channelId}`, '200 PostedMessage', reply) }
  return reply.json
}

/** DELETE /messages/{id} as `as` (the full app unless told); the reply, unchecked. */
export function remove (ctx: OrbContext, id: number | string, as: Speaker = 'full'): Promise<OrbReply> {
  return ctx.client.request({ method: 'DELETE', path: `${MESSAGES}/${String(id)}`, as })
}

/** GET /messages; a 200 checked against the spec's reply schema, with `messages` and `hasOlder` present. */
export async function readPage (
  ctx: OrbContext,
  channelId: string,
  query: { before?: number; limit?: number } = {},
  as: Speaker = 'full'
): Promise<{ messages: any[]; hasOlder: boolean }> {
  const reply = await ctx.client.get(MESSAGES, { channel: channelId, before: query.before, limit: query.limit }, as)
  const body = expectOk(
    reply,
    `GET /messages?channel=${channelId}${query.before === undefined ? '' : `&before=${query.before}`}${query.limit === undefined ? '' : `&limit=${query.limit}`}`,
    READ
  )
  if (!Array.isArray(body.messages) || typeof body.hasOlder !== 'boolean') {
    fail('a page of messages', '{"messages":[…],"hasOlder":true|false}', reply)
  }
  return body
}

/** Every message of a channel, oldest first, walking back with `before` (at most `pages` pages of 50). */
export async function readAll (ctx: OrbContext, channelId: string, pages = 20): Promise<any[]> {
  const all: any[] = []
  let before: number | undefined
  for (let i = 0; i < pages; i++) {
    const page = await readPage(ctx, channelId, { before, limit: 50 })
    all.unshift(...page.messages)
    if (!page.hasOlder || page.messages.length === 0) break
    before = page.messages[0].id
  }
  return all
}

/** The highest id of `known` and of `channelId`'s newest page: ids far above it are unknown. */
export async function highestId (ctx: OrbContext, channelId: string, known: number): Promise<number> {
  return Math.max(known, ...(await readPage(ctx, channelId)).messages.map((m) => m.id as number))
}

/** Fails unless message `id` is in `channelId`: the one message just older than `id + 1`. */
export async function expectShown (ctx: OrbContext, channelId: string, id: number, what: string): Promise<void> {
  const page = await readPage(ctx, channelId, { before: id + 1, limit: 1 })
  expectEqual(page.messages.map((m) => m.id), [id], what)
}

// ---------------------------------------------------------------------------------------------------------------
// The clock and the post windows

/** Lets every post window empty (ORB-A03: 60 s sliding windows); virtual time costs nothing. */
export async function freshWindows (ctx: OrbContext): Promise<void> {
  await ctx.elapse(WINDOW_MS + 1000)
}

/**
 * A property's parameters on the target's clock. On a virtual clock the run's own (capped at `cap` runs); on a real
 * one `real` runs, and no shrinking: every accepted post costs a slot of ORB-031's windows (12 a minute in a channel),
 * and a shrink would post again and again.
 */
export function clockRuns<T> (ctx: OrbContext, virtual: boolean, cap: number, real: number): fc.Parameters<T> {
  const runs = ctx.fc().numRuns ?? cap
  return virtual
    ? ctx.fc<T>({ numRuns: Math.min(runs, cap) })
    : ctx.fc<T>({ numRuns: Math.min(runs, real), endOnFailure: true })
}

/**
 * How many accepted posts a property may make: unbounded on a virtual clock; on a real one `real`, so that the case
 * (after the windows the cases before it filled) ends within a minute or two. Draws that would post past it are
 * skipped (fc.pre), never passed unchecked.
 */
export function postBudget (virtual: boolean, real: number): number {
  return virtual ? Number.POSITIVE_INFINITY : real
}

/** After a throttle case, on a virtual clock, the next cases meet empty windows. */
export function emptyWindowsAfter (ctx: OrbContext): void {
  ctx.cleanup(async () => { if (await ctx.virtualTime()) await ctx.elapse(WINDOW_MS + 1000) })
}

// ---------------------------------------------------------------------------------------------------------------
// Content

/** Content with a case-changed word (`eVeRyOnE`). */
export const anyCase = (word: string): fc.Arbitrary<string> =>
  fc
    .array(fc.boolean(), { minLength: word.length, maxLength: word.length })
    .map((up) => [...word].map((c, i) => (up[i]! ? c.toUpperCase() : c)).join(''))

// ---------------------------------------------------------------------------------------------------------------
// Shared steps

/**
 * The full app's install in the community, as the control API records it; the case ends with the install put back
 * exactly so (as discoverTarget, or whoever, made it), whatever happens after this call.
 */
export async function keepInstall (
  ctx: OrbContext
): Promise<{
  role: { name: string; rights: string[] }
  channels: string[]
  hidden: string[]
  channelRights: Record<string, string[]>
}> {
  const { control, target } = controlled(ctx)
  const app = await fullAppId(ctx)
  const install = ((await control.orbState()).installs as any[]).find(
    (i) => i.server === target.community && i.app === app
  )
  if (install === undefined) throw new Error(`control: ${app} is not installed in ${target.community}`)
  const kept = {
    role: { name: install.role.name, rights: [...install.role.rights] },
    channels: [...install.channels],
    hidden: [...install.hidden],
    channelRights: { ...install.channelRights }
  }
  ctx.cleanup(async () => {
    await control.install(target.community, app, kept)
  })
  return kept
}

/** ORB-042, ORB-A21: the app's own message, deleted (200) and deleted again (404); the message. */
export async function deleteTwice (ctx: OrbContext, decided: boolean): Promise<any> {
  const text = channel(ctx, 'text')
  const mine = await postOk(ctx, text, `twice ${ctx.uid('x')}`)
  expectOk(await remove(ctx, mine.id), `DELETE /messages/${mine.id}`, DELETE)
  expectOrbError(await remove(ctx, mine.id), 404, `DELETE /messages/${mine.id} a second time`, { decided })
  return mine
}

/** ORB-041, ORB-A21: the app's own message, in a community that uninstalled the app, cannot be deleted. */
export async function deleteWhileUninstalled (ctx: OrbContext, decided: boolean): Promise<void> {
  const { control, target } = controlled(ctx)
  const app = await fullAppId(ctx)
  const text = channel(ctx, 'text')
  const own = await postOk(ctx, text, `taken back later ${ctx.uid('u')}`)
  const install = await keepInstall(ctx)
  const gone = await control.uninstall(target.community, app)
  if (gone.status !== 200) throw new Error(`control: uninstalling ${app} answered ${gone.status}`)
  const reply = await remove(ctx, own.id)
  expectOrbError(reply, 403, `DELETE /messages/${own.id} (the app's own) after ${target.community} uninstalled the app`, { decided })
  await control.install(target.community, app, install)
  // Reinstalled: the message was not taken back by the refused call, and the app may delete it now.
  await expectShown(ctx, text, own.id, 'the refused delete left the message in place')
  expectOk(await remove(ctx, own.id), `DELETE /messages/${own.id} once reinstalled`, DELETE)
}
