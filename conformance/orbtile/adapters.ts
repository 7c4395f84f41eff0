import { CaseSkip, type CaseContext } from '../case.js'
import { expectStatus } from './expect.js'
import type { Reply } from './transport.js'

/** A registration the spec accepts with the fewest fields. */
export const minimal = (baseHue = 200): Record<string, unknown> => ({ name: 'orbtest conformance', palette: { baseHue } })

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
export async function register (ctx: CaseContext, body: Record<string, unknown> = minimal(), options: { label?: string, allow?: boolean, keypad?: boolean } = {}): Promise<Registered> {
  const id = ctx.adapterId(options.label)
  if (ctx.control !== undefined && (options.allow !== false || options.keypad !== undefined)) {
    await ctx.control.user(id, { ...(options.allow === false ? {} : { allowed: true }), ...(options.keypad === undefined ? {} : { keypad: options.keypad }) })
  }
  const reply = await ctx.client.request({ method: 'PUT', path: `/adapters/${id}`, body })
  if (reply.status === 409 && reply.json?.error?.code === 'limit_exceeded') throw new CaseSkip('the target holds 8 adapters; no room for this case\'s')
  expectStatus(reply, 200, `registering ${id}`)
  const token = reply.json.adapterToken as string
  ctx.cleanup(async () => {
    // OT-A07: unregistering is orbtest's reading of "a lease ends on unregister"; a target without it keeps the lease
    // until its silence ends it, and the report says so.
    const reply = await ctx.client.request({ method: 'DELETE', path: `/adapters/${id}`, headers: { 'x-orbtile-adapter-token': token } })
    if (reply.status < 200 || reply.status > 299) ctx.note(`cleanup: DELETE /adapters/${id} answered ${reply.status}; its lease stays until silence ends it`)
  })
  return { id, token, reply, headers: { 'x-orbtile-adapter-token': token } }
}
