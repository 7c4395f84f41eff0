import { CaseFailure } from '../../../core/case.js'
import { expectComponent, expectOk, expectOrbError } from '../../expect.js'
import { BOT, DIRECTORY, controlled, type OrbContext } from '../../orb-case.js'
import { ORB_PROSE_LIMITS } from '../../../../../src/spec/orb.js'
import type { OrbReply, OrbRequest, Speaker } from '../../transport.js'

// The vocabulary and small helpers that several topics of the access area share.

/** ORB-007: the whole scope vocabulary. */
export const SCOPES = ['messages:read', 'messages:write', 'voice', 'music', 'passport'] as const
export type ScopeName = (typeof SCOPES)[number]
/** The channel rights a role can carry (CommandInput.right's enum). */
export const RIGHTS = [
  'send_messages',
  'attach_files',
  'manage_messages',
  'connect',
  'speak',
  'stream',
  'move_members'
] as const
/** A well-formed address for passport calls when the config names none. */
export const SOME_ADDRESS = `0x${'1'.repeat(40)}`
/** ORB-013, ORB-A03: the directory's limit, of apps listed and of requests in a window (the two are equal). */
export const DIRECTORY_LIMIT = ORB_PROSE_LIMITS.directorySize
/** A token of the right shape that no app holds. */
export const NOT_A_TOKEN: Speaker = { token: 'orb_conformance_not_a_token_0000000000' }

/** GET /app?server= of a community the app is not in, or of none at all, answers 404 (the case fails as `what`). */
export async function expectNotIn (ctx: OrbContext, server: string, what: string): Promise<void> {
  expectOrbError(await ctx.client.get(`${BOT}/app`, { server }), 404, what)
}

/** A reply, short enough for a failure's Actual. */
export const short = (reply: OrbReply): string => `${reply.status} ${reply.text.slice(0, 400)}`

/** The directory, as anybody (the client waits out a 429 unless told not to). */
export async function readDirectory (ctx: OrbContext, options: Partial<OrbRequest> = {}): Promise<any> {
  return expectOk(await ctx.client.request({ path: DIRECTORY, as: null, ...options }), 'GET /api/orb/directory', {
    method: 'GET',
    path: DIRECTORY
  })
}

/** GET /app (or /app?server=) as `as`; fails unless 200 JSON. */
export async function readApp (ctx: OrbContext, as: Speaker = 'full', server?: string): Promise<any> {
  const reply = await ctx.client.get(`${BOT}/app`, server === undefined ? undefined : { server }, as)
  return expectOk(reply, `GET /app${server === undefined ? '' : `?server=${server}`}`, {
    method: 'GET',
    path: `${BOT}/app`
  })
}

/** The passport query of the target (its config's address and kind, or a well-formed stand-in). */
export function passportQuery (ctx: OrbContext, server = ctx.client.target.community): Record<string, string> {
  const p = ctx.client.target.passport
  return { server, address: p?.address ?? SOME_ADDRESS, kind: p?.kind ?? 'human' }
}

/** ORB-101: a JSON `{"error":{"message":<string>,"code":<integer>}}`. */
export function expectErrorBody (reply: OrbReply, what: string): void {
  if (!/^application\/json\b/i.test(String(reply.headers['content-type']))) throw new CaseFailure(`${what}: an error that is not JSON (content-type ${String(reply.headers['content-type'])})`, '{"error":{"message":"…","code":…}}', short(reply))
  const error = reply.json?.error
  if (typeof error?.message !== 'string' || !Number.isInteger(error?.code)) throw new CaseFailure(`${what}: not the spec's Error body (ORB-101)`, '{"error":{"message":"…","code":<integer>}}', short(reply))
  expectComponent(reply.json, 'Error', what)
}

/** A message the case did not mean to leave (a refusal that was accepted) is deleted again. */
export function deleteIfPosted (ctx: OrbContext, reply: OrbReply, as: Speaker): void {
  if (reply.status === 200 && Number.isInteger(reply.json?.id)) {
    ctx.cleanup(async () => {
      await ctx.client.request({ method: 'DELETE', path: `${BOT}/messages/${reply.json.id as number}`, as })
    })
  }
}

/** POST /messages as `as`; a post it makes after all is deleted when the case ends (deleteIfPosted). */
export async function postProbe (
  ctx: OrbContext,
  body: Record<string, unknown>,
  as: Speaker = 'full'
): Promise<OrbReply> {
  const reply = await ctx.client.post(`${BOT}/messages`, body, as)
  deleteIfPosted(ctx, reply, as)
  return reply
}

export interface OwnApp { id: string, token: string, member: string, as: Speaker }

/**
 * An app of the case's own, made through the control API (the developer's console), deleted when the case ends (or
 * earlier with `dropApp`). Its token is masked in the report.
 */
export async function ownApp (ctx: OrbContext, label: string, scopes: readonly ScopeName[]): Promise<OwnApp> {
  const { control } = controlled(ctx)
  const made = await control.must('POST', '/control/orb/apps', { id: `app_${ctx.uid(label)}`, name: `orbtest ${label}`, scopes: [...scopes], rights: ['send_messages'] })
  ctx.client.secret(made.token, '$OWN_TOKEN')
  ctx.cleanup(async () => { await dropApp(ctx, made.id) })
  return { id: made.id, token: made.token, member: made.member, as: { token: made.token } }
}

/** Deletes an app of the case's own, and its messages. */
export async function dropApp (ctx: OrbContext, id: string): Promise<void> {
  await ctx.control?.call('DELETE', `/control/orb/apps/${encodeURIComponent(id)}?messages=delete`)
}

/** An install as the control API reports it. */
export interface StateInstall {
  server: string
  app: string
  role: { name: string; rights: string[] }
  channels: string[]
  hidden: string[]
  channelRights: Record<string, string[]>
}

/** The install of `app` in `server` as the control API reports it. */
export async function installOf (ctx: OrbContext, server: string, app: string): Promise<StateInstall | undefined> {
  const state = await controlled(ctx).control.orbState()
  return (state.installs as StateInstall[]).find((i) => i.server === server && i.app === app)
}
