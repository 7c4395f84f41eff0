import fc from 'fast-check'
import { CaseFailure, CaseSkip } from '../../../core/case.js'
import { expectThat } from '../../expect.js'
import { controlled, fail, type OrbContext } from '../../orb-case.js'
import type { OrbReply, Speaker } from '../../transport.js'
import { memberOf, strict, VOICE, wrongType } from './features-support.js'

/*
 * Voice (ORB-073..080, ORB-A16): the requests the voice cases make, where the seats stand, and the granted token.
 */

const VOICE_ACTIONS = ['join', 'roster', 'heartbeat', 'leave', 'grant']

export const voice = (ctx: OrbContext, body: unknown, as: Speaker = 'full'): Promise<OrbReply> =>
  ctx.client.request({ method: 'POST', path: VOICE, body, as })

/** The control state's entry for the voice channel `ch` (its call, capacity and participants), if any. */
const voiceEntry = (state: any, ch: string): any =>
  (state.voice?.channels as any[] | undefined)?.find((c) => c.channel === ch)

/** The call the control state shows `member` seated in on `ch`, if any. */
async function controlCall (ctx: OrbContext, ch: string, member: string): Promise<string | undefined> {
  if (ctx.control === undefined) return undefined
  const entry = voiceEntry(await ctx.control.orbState(), ch)
  const seatedThere = (entry?.participants as any[] | undefined)?.some((p) => p.id === member) === true
  return seatedThere && typeof entry.call === 'string' ? entry.call : undefined
}

/**
 * The full app joins the voice channel (200) and leaves when the case ends; the call id and the reply. The spec gives
 * join's 200 no shape: the id is ORB-A16's `call` (with control, else the control state's call), and a reply without
 * one skips the case, since the seat cannot be addressed.
 */
export async function join (ctx: OrbContext, ch: string): Promise<{ call: string; body: any }> {
  const reply = await voice(ctx, { action: 'join', channel: ch })
  if (reply.status === 409 && ctx.control === undefined) {
    throw new CaseSkip(
      `joining ${ch} answered 409 (the channel full, or the app seated elsewhere in the community): the case needs a seat`
    )
  }
  if (reply.status !== 200) fail(`joining ${ch}`, 200, reply)
  const call =
    typeof reply.json?.call === 'string' ? (reply.json.call as string) : await controlCall(ctx, ch, await memberOf(ctx))
  if (call === undefined) {
    throw new CaseSkip(
      'join answered 200 without a call id (ORB-A16\'s "call"): the case cannot address its seat, which goes after 90 s without a heartbeat'
    )
  }
  ctx.cleanup(async () => {
    await voice(ctx, { action: 'leave', call })
  })
  return { call, body: reply.json }
}

export async function roster (ctx: OrbContext, ch: string): Promise<any> {
  const reply = await voice(ctx, { action: 'roster', channel: ch })
  if (reply.status !== 200 || !Array.isArray(reply.json?.members)) {
    fail(`the roster of ${ch}`, '200 {"members":[…]}', reply)
  }
  return reply.json
}

export const seated = (rosterReply: any, member: string): boolean =>
  (rosterReply.members as any[]).some((m) => m.id === member)

/**
 * Whether `member` holds a seat in `ch` is `want`: by the control state's seats (what members see), and where strict
 * by ORB-A16's roster (the spec gives roster's 200 no shape); without either it is only noted.
 */
export async function expectSeat (
  ctx: OrbContext,
  ch: string,
  member: string,
  want: boolean,
  what: string
): Promise<void> {
  let checked = false
  if (ctx.control !== undefined) {
    const entry = voiceEntry(await ctx.control.orbState(), ch)
    const ids = ((entry?.participants as any[] | undefined) ?? []).map((p) => p.id)
    expectThat(
      ids.includes(member) === want,
      `${what}: the seats members see`,
      want ? `${member} seated` : `${member} not seated`,
      ids
    )
    checked = true
  }
  if (strict(ctx.client)) {
    const listed = await roster(ctx, ch)
    expectThat(
      seated(listed, member) === want,
      `${what}: the roster (ORB-A16)`,
      want ? 'the app in the roster' : 'the app not in the roster',
      listed
    )
    checked = true
  }
  if (!checked) { ctx.note(`${what}: not checked (no control API, and the roster's shape is ORB-A16's, held only where strict)`) }
}

/** The voice channel's capacity and seats taken, as the control state shows them. */
export async function voiceSeats (ctx: OrbContext, ch: string): Promise<{ capacity: number; taken: number }> {
  const state = await controlled(ctx).control.orbState()
  const entry = voiceEntry(state, ch)
  const capacity =
    entry?.capacity ?? (state.servers as any[]).flatMap((s) => s.channels).find((c: any) => c.id === ch)?.capacity
  if (!Number.isInteger(capacity)) {
    throw new CaseFailure(`the control state shows ${ch}'s capacity`, 'an integer', capacity)
  }
  return { capacity, taken: (entry?.participants as unknown[] | undefined)?.length ?? 0 }
}

/** The target's clock now, in ms since the epoch. */
export async function nowMs (ctx: OrbContext): Promise<number> {
  if (ctx.control === undefined) return Date.now()
  return Number((await ctx.control.must('GET', '/control/clock')).now)
}

/** A voice server on (or off) for the rest of the case; put back as it was. */
export async function voiceServer (ctx: OrbContext, on: boolean): Promise<void> {
  const { control } = controlled(ctx)
  const before = (await control.orbState()).voice?.server === true
  if (before === on) return
  await control.setVoice({ server: on })
  ctx.cleanup(async () => {
    await control.setVoice({ server: before })
  })
}

export const invalidVoiceBody = (ch: string): fc.Arbitrary<unknown> =>
  fc.oneof(
    fc.record(
      {
        action: fc.string({ maxLength: 12 }).filter((a) => !VOICE_ACTIONS.includes(a)),
        channel: fc.constant(ch),
        call: fc.constant('call_1')
      },
      { requiredKeys: ['action'] }
    ),
    fc.constantFrom('JOIN', 'Join', ' join', 'roster ', 'kick').map((action) => ({ action, channel: ch })),
    fc.record({ channel: fc.constant(ch), call: fc.constant('call_1'), speaking: fc.boolean() }, { requiredKeys: [] }),
    fc.record({
      action: fc.oneof(fc.integer(), fc.boolean(), fc.constant(null), fc.constant(['join'])),
      channel: fc.constant(ch)
    }),
    fc.tuple(fc.constantFrom('join', 'roster'), wrongType).map(([action, channel]) => ({ action, channel })),
    fc.tuple(fc.constantFrom('heartbeat', 'leave', 'grant'), wrongType).map(([action, call]) => ({ action, call })),
    fc
      .oneof(fc.integer(), fc.string({ maxLength: 4 }), fc.constant(null), fc.constant(['join']))
      .map((speaking) => ({ action: 'heartbeat', call: 'call_1', speaking })),
    fc.oneof(
      fc.integer(),
      fc.string({ maxLength: 8 }),
      fc.constant(null),
      fc.array(fc.string({ maxLength: 3 }), { maxLength: 2 })
    )
  )

/** Every JWT with an exp among the strings of a reply (a few levels deep), with its claims. */
export function jwtsIn (
  value: unknown,
  depth = 0
): Array<{ token: string; claims: { exp?: number; iat?: number; nbf?: number } }> {
  if (typeof value === 'string') {
    const claims = jwtClaims(value)
    return claims === undefined ? [] : [{ token: value, claims }]
  }
  if (typeof value !== 'object' || value === null || depth > 3) return []
  return Object.values(value).flatMap((v) => jwtsIn(v, depth + 1))
}

/** The claims of a JWT (a LiveKit token is one), or undefined. */
export function jwtClaims (token: string): { exp?: number, iat?: number, nbf?: number } | undefined {
  const parts = token.split('.')
  if (parts.length !== 3) return undefined
  try {
    const claims = JSON.parse(Buffer.from(parts[1]!, 'base64url').toString('utf8'))
    return typeof claims === 'object' && claims !== null && typeof claims.exp === 'number' ? claims : undefined
  } catch {
    return undefined
  }
}
