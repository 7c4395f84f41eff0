import fc from 'fast-check'
import { orbSpec } from '../../../../../src/spec/orb.js'
import { CaseFailure, type ConformanceCase } from '../../../core/case.js'
import { exactStatus } from '../../../core/strictness.js'
import { BOT, controlled, few, type OrbContext } from '../../orb-case.js'
import type { OrbBotClient, Speaker } from '../../transport.js'

/*
 * What the feature cases (commands, voice, the room player, passport) share: their paths, the apps a case makes for
 * itself, and the install it may change. Details only orbtest's decisions fix are held where `exactStatus` is on.
 */

export const COMMANDS = `${BOT}/commands`
export const VOICE = `${BOT}/voice`
export const MUSIC = `${BOT}/music`
export const PASSPORT = `${BOT}/passport`

/** The `action` enum of a POST route's body in the spec. */
function actionsOf (path: string): readonly string[] {
  const body = orbSpec().paths[path]!.post!.requestBody!.content['application/json']!.schema as any
  return Object.freeze([...(body.properties.action.enum as string[])])
}

/** The room player's actions (ORB-081), in the spec's order. */
export const MUSIC_ACTIONS = actionsOf('/api/bot/v1/music')
/** The voice actions, in the spec's order. */
export const VOICE_ACTIONS = actionsOf('/api/bot/v1/voice')
/** ORB-A17: the player's highest `volume` (an integer from 0 up to it); the spec's schema leaves `arg` open. */
export const MAX_VOLUME = 100

export const strict = exactStatus
export type Case = ConformanceCase<OrbBotClient>

/** The full app's member id (ORB-A06: `member` of GET /app), else its app id. */
export async function memberOf (ctx: OrbContext): Promise<string> {
  const reply = await ctx.client.get(`${BOT}/app`)
  const member = reply.json?.member
  return typeof member === 'string' ? member : ctx.client.target.full.id ?? ''
}

/**
 * An app of the case's own, made through the control API with `scopes` and installed in the community with `rights`
 * on `channels`; deleted when the case ends. Its token is known to the client, so no report shows it.
 */
export async function helperApp (
  ctx: OrbContext,
  label: string,
  scopes: string[],
  rights: string[],
  channels: string[]
): Promise<{ as: Speaker; member: string }> {
  const { control, target } = controlled(ctx)
  const created = await control.must('POST', '/control/orb/apps', {
    id: `app_orbtest_${ctx.uid(label)}`.slice(0, 64),
    name: `orbtest ${label}`,
    scopes,
    rights
  })
  ctx.client.secret(created.token)
  ctx.cleanup(async () => {
    await control.call('DELETE', `/control/orb/apps/${encodeURIComponent(created.id)}?messages=delete`)
  })
  await control.install(target.community, created.id, { role: { name: `orbtest ${label}`, rights }, channels })
  return { as: { token: created.token }, member: created.member }
}

/**
 * An app lacking only `scope`: with control, one of the case's own that otherwise reaches the text and voice
 * channels with connect and speak (so that a 403 can only come from the scope); without, the config's few app.
 */
export async function withoutScope (ctx: OrbContext, scope: string): Promise<Speaker> {
  if (ctx.control === undefined || ctx.client.target.controlled === undefined || ctx.readOnly) {
    // Creating an app through the control API changes the target: a --read-only run leaves it out.
    ctx.note(`${ctx.readOnly ? '--read-only: no app of the case\'s own is made' : 'no control API'}: the few app stands in for an app without ${scope}`)
    return few(ctx)
  }
  const t = ctx.client.target
  const scopes = ['messages:read', 'messages:write', 'voice', 'music', 'passport'].filter((s) => s !== scope)
  const channels = [t.channels.text, ...(t.channels.voice === undefined ? [] : [t.channels.voice])]
  return (
    await helperApp(ctx, `no-${scope.replace(':', '-')}`, scopes, ['send_messages', 'connect', 'speak'], channels)
  ).as
}

/** The install of the full app in the community as the control API shows it, and a cleanup that puts it back. */
export async function keepInstall (ctx: OrbContext): Promise<any> {
  const { control, target } = controlled(ctx)
  const state = await control.orbState()
  const install = (state.installs as any[]).find((i) => i.server === target.community && i.app === target.full.id)
  if (install === undefined) {
    throw new CaseFailure('the control state shows the full app installed', 'an install', 'none')
  }
  ctx.cleanup(async () => {
    await control.install(target.community, target.full.id!, {
      role: install.role,
      channels: install.channels,
      hidden: install.hidden,
      channelRights: install.channelRights
    })
  })
  return install
}

/** A JSON value that is no string, for the invalid-body generators: where a field wants a string. */
export const wrongType = fc.oneof(
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.integer(), { minLength: 1, maxLength: 2 }),
  fc.dictionary(fc.string({ maxLength: 3 }), fc.integer(), { maxKeys: 2 })
)
