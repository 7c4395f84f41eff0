import { adapterId, CaseSkip, type CaseContext } from './orbtile-case.js'
import { expectStatus } from './expect.js'
import type { Reply } from './transport.js'

/** A registration the spec accepts with the fewest fields. */
export const minimal = (baseHue = 200): Record<string, unknown> => ({
  name: 'orbtest conformance',
  palette: { baseHue }
})

export interface Registered {
  id: string
  token: string
  reply: Reply
  /** Headers of an adapter route: the lease token. */
  headers: Record<string, string>
}

/**
 * Registers a fresh adapter for the case and unregisters it when the case ends. With the control API the user allows
 * it first (and sets keypad decisions when asked), so it can do everything an enabled adapter does.
 */
export async function register (
  ctx: CaseContext,
  body: Record<string, unknown> = minimal(),
  options: { label?: string; allow?: boolean; keypad?: boolean } = {}
): Promise<Registered> {
  const id = adapterId(ctx, options.label)
  if (ctx.control !== undefined && (options.allow !== false || options.keypad !== undefined)) {
    await ctx.control.user(id, {
      ...(options.allow === false ? {} : { allowed: true }),
      ...(options.keypad === undefined ? {} : { keypad: options.keypad })
    })
  }
  const reply = await ctx.client.request({ method: 'PUT', path: `/adapters/${id}`, body })
  if (reply.status === 409 && reply.json?.error?.code === 'limit_exceeded') { throw new CaseSkip("the target holds 8 adapters; no room for this case's") }
  expectStatus(reply, 200, `registering ${id}`)
  const token = reply.json.adapterToken as string
  ctx.cleanup(async () => {
    // OT-A07: unregistering is orbtest's reading of "a lease ends on unregister"; a target without it keeps the lease
    // until its silence ends it, and the report says so.
    const reply = await ctx.client.request({
      method: 'DELETE',
      path: `/adapters/${id}`,
      headers: { 'x-orbtile-adapter-token': token }
    })
    if (leaseGone(reply)) await forget(ctx, id)
    else ctx.note(`cleanup: DELETE /adapters/${id} answered ${reply.status}; its lease stays until silence ends it`)
  })
  return { id, token, reply, headers: { 'x-orbtile-adapter-token': token } }
}

/**
 * Whether an unregister leaves the id without a lease: it succeeded, or there was none to end (the case, or silence,
 * ended it first).
 */
export const leaseGone = (reply: Reply): boolean =>
  (reply.status >= 200 && reply.status <= 299) || reply.json?.error?.code === 'adapter_not_registered'

/**
 * With orbtest's control API, the fake forgets an id whose lease is over, so that a run leaves no user settings
 * behind. An id with a live lease stays. A lease that ended by silence leaves its sessions on their TTL clocks
 * (OT-A08), and the fake keeps an id that holds any: a new lease, unregistered at once, ends them first.
 */
export async function forget (ctx: CaseContext, id: string): Promise<void> {
  const control = ctx.control
  if (control === undefined) return
  if ((await control.forget(id)).status !== 409) return
  const state = await control.call('GET', `/control/orbtile/adapters/${encodeURIComponent(id)}`)
  if (state.status !== 200 || state.json?.lease !== null) return
  const reg = await ctx.client.request({ method: 'PUT', path: `/adapters/${id}`, body: minimal() })
  if (reg.status !== 200 || typeof reg.json?.adapterToken !== 'string') return
  const done = await ctx.client.request({
    method: 'DELETE',
    path: `/adapters/${id}`,
    headers: { 'x-orbtile-adapter-token': reg.json.adapterToken }
  })
  if (done.status >= 200 && done.status <= 299) await control.forget(id)
}
