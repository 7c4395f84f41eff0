import { validatorFor } from '../../../../../src/spec/orbtile.js'
import { adapterId, CaseFailure, CaseSkip, type CaseContext, type ConformanceCase } from '../../orbtile-case.js'
import { forget, minimal } from '../../adapters.js'
import { expectStatus } from '../../expect.js'
import type { Reply } from '../../transport.js'

// What the topics of the registration area share: registration bodies, the leases a case starts (each ended when the
// case ends), and requests on an adapter's routes under a lease's token.

export type Body = Record<string, unknown>

export const TOKEN_HEADER = 'x-orbtile-adapter-token'
export const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/
export const NEW_SESSION = { title: 'orbtest conformance', activity: 'thinking' } as const
export const registrationValid = validatorFor('AdapterRegistration')

/** A body with the fewest fields plus `extra` (the registration's own palette unless `extra` brings one). */
export const body = (extra: Body = {}): Body => ({ ...minimal(), ...extra })

/** A body with the given palette and the fewest other fields, plus `extra`. */
export const withPalette = (palette: Body, extra: Body = {}): Body =>
  ({ name: 'orbtest conformance', palette, ...extra })

// ---------------------------------------------------------------------------------------------------------------
// Leases: every token a case is issued is ended once, by the case or at its cleanup; every id it registered (or set
// the user's settings of) is forgotten by the fake once its leases are over.

interface CaseLeases { cleaned: Set<string>, ended: Set<string>, known: Set<string> }

/** What a registration case runs with: the case's context and the book of the leases it started. */
export interface RegistrationContext extends CaseContext {
  readonly leases: CaseLeases
}

/** A registration case, whose run gets the book of its leases. */
export type RegistrationCase = Omit<ConformanceCase, 'run'> & { run(ctx: RegistrationContext): Promise<void> }

/** The case with a fresh lease book for each run: the book lives as long as the case, in no module. */
export function withLeases (c: RegistrationCase): ConformanceCase {
  return { ...c, run: (ctx) => c.run({ ...ctx, leases: { cleaned: new Set(), ended: new Set(), known: new Set() } }) }
}

/**
 * The first time a case leaves state under an id, the id is forgotten when the case ends. Not at each unregister: a
 * case may register the id again and expect the user's settings kept (OT-A07.b, OT-A09). Cleanups run newest first,
 * so this one runs after every unregister of the id the case goes on to schedule.
 */
function known (ctx: RegistrationContext, id: string): void {
  if (ctx.leases.known.has(id)) return
  ctx.leases.known.add(id)
  ctx.cleanup(() => forget(ctx, id))
}

/** The header that carries a lease's token, or none. */
export const tokenHeaders = (token: string | undefined): Record<string, string> =>
  token === undefined ? {} : { [TOKEN_HEADER]: token }

/** `PUT /adapters/{id}`; a lease it starts is ended when the case ends. */
export async function put (ctx: RegistrationContext, id: string, payload: unknown, token?: string): Promise<Reply> {
  const reply = await ctx.client.request({
    method: 'PUT',
    path: `/adapters/${id}`,
    body: payload,
    headers: tokenHeaders(token)
  })
  const issued: unknown = reply.status === 200 ? reply.json?.adapterToken : undefined
  const state = ctx.leases
  if (reply.status === 200) known(ctx, id)
  if (typeof issued === 'string' && !state.cleaned.has(issued)) {
    state.cleaned.add(issued)
    ctx.cleanup(async () => { if (!state.ended.has(issued)) await del(ctx, id, issued) })
  }
  return reply
}

/** `DELETE /adapters/{id}` (OT-A07). */
export async function del (ctx: RegistrationContext, id: string, token?: string): Promise<Reply> {
  const reply = await ctx.client.request({ method: 'DELETE', path: `/adapters/${id}`, headers: tokenHeaders(token) })
  if (token !== undefined && reply.status >= 200 && reply.status < 300) ctx.leases.ended.add(token)
  return reply
}

export interface Lease {
  id: string
  token: string
  reply: Reply
}

/** Skips the case when the target refused a registration for want of room (OT-028: 8 live leases). */
function skipWhenFull (reply: Reply): void {
  if (reply.status === 409 && reply.json?.error?.code === 'limit_exceeded') { throw new CaseSkip("the target holds 8 adapters; no room for this case's") }
}

/** How `lease` registers: the id's label, and the user's decisions made first (control API). */
export interface LeaseOptions { label?: string, allow?: boolean, keypad?: boolean }

/**
 * Registers a fresh id. `allow` (with the control API) has the user allow it first, `keypad` sets the keypad switch.
 * Without `allow` the id is one the user never decided on.
 */
export async function lease (
  ctx: RegistrationContext, payload: Body = body(), options: LeaseOptions = {}
): Promise<Lease> {
  const id = adapterId(ctx, options.label ?? 'reg')
  if (ctx.control !== undefined && (options.allow === true || options.keypad !== undefined)) {
    known(ctx, id)
    await ctx.control.user(id, {
      ...(options.allow === true ? { allowed: true } : {}),
      ...(options.keypad === undefined ? {} : { keypad: options.keypad })
    })
  }
  const reply = await put(ctx, id, payload)
  skipWhenFull(reply)
  expectStatus(reply, 200, `registering ${id}`)
  return { id, token: reply.json.adapterToken as string, reply }
}

/** Registers a fresh id and, when that worked, ends the lease at once: for properties that register many bodies. */
export async function once (ctx: RegistrationContext, payload: unknown, label = 'p'): Promise<Reply> {
  const id = adapterId(ctx, label)
  const reply = await put(ctx, id, payload)
  skipWhenFull(reply)
  if (reply.status === 200 && typeof reply.json?.adapterToken === 'string') await del(ctx, id, reply.json.adapterToken)
  return reply
}

// ---------------------------------------------------------------------------------------------------------------
// Requests under a lease's token.

export type AdapterRoute = 'session' | 'batch' | 'events'
export const ROUTES: readonly AdapterRoute[] = ['session', 'batch', 'events']

/** A request on one of the adapter's routes with a valid body, so that only the token can be at fault. */
export function onRoute (
  ctx: CaseContext, id: string, route: AdapterRoute, token: string | undefined, sessionId = 's1'
): Promise<Reply> {
  const headers = tokenHeaders(token)
  switch (route) {
    case 'session':
      return ctx.client.request({
        method: 'POST',
        path: `/adapters/${id}/sessions/${sessionId}`,
        body: NEW_SESSION,
        headers
      })
    case 'batch':
      return ctx.client.request({
        method: 'PUT',
        path: `/adapters/${id}/sessions`,
        body: { sessions: [{ id: sessionId, ...NEW_SESSION }] },
        headers
      })
    case 'events':
      return ctx.client.request({ method: 'POST', path: `/adapters/${id}/events`, body: {}, headers })
  }
}

/** `POST /adapters/{id}/sessions/{sessionId}` under the lease's token. */
export const postSession = (ctx: CaseContext, l: Lease, sessionId: string, update: Body): Promise<Reply> =>
  ctx.client.request({
    method: 'POST',
    path: `/adapters/${l.id}/sessions/${sessionId}`,
    body: update,
    headers: tokenHeaders(l.token)
  })

/** `POST /adapters/{id}/events` under the lease's token. */
export const poll = (ctx: CaseContext, l: Lease, request: Body = {}): Promise<Reply> =>
  ctx.client.request({
    method: 'POST',
    path: `/adapters/${l.id}/events`,
    body: request,
    headers: tokenHeaders(l.token)
  })

/** What a tap did: the event it queued, and the URL it opened. */
export interface Tapped {
  event: unknown
  opened: string | null
}

/** The reply of a control-API tap. */
export async function tap (ctx: CaseContext, l: Lease, sessionId: string): Promise<Tapped> {
  const reply = await ctx.control!.tap(l.id, sessionId)
  if (reply.status !== 200) { throw new CaseFailure(`the control API's tap of ${sessionId} answered ${reply.status}`, 200, reply.json) }
  return reply.json
}
