/**
 * Helpers for the sessions area's cases (OT-089..148, OT-A16..A24, OT-A30): an adapter with its lease token on
 * every call, the user's side through the control API, and time (a virtual clock is advanced; a real one waits).
 */
import { CaseFailure, CaseSkip, SHORT_REAL_WAIT_MS, type CaseContext } from './orbtile-case.js'
import type { ControlClient } from '../core/control.js'
import { forget, leaseGone, minimal, register, type Registered } from './adapters.js'
import { errorProblem, expectStatus } from './expect.js'
import type { Reply, RequestOptions } from './transport.js'

/** A new session's smallest body (OT-091). */
export const newSession = (extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  title: 'orbtest session',
  activity: 'thinking',
  ...extra
})

/** An approval whose content follows from its id, so that sending one id twice is an identical re-send (OT-127). */
export const approval = (id: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  id,
  toolName: 'Bash',
  commandSummary: `npm test # ${id}`,
  ...extra
})

/** A one-question, two-option question (OT-121). */
export const question = (id: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  id,
  questions: [{ text: 'Which branch?', options: [{ label: 'main' }, { label: 'dev' }] }],
  ...extra
})

export interface AgentOptions {
  /** Event capabilities (default `tap`, `approvals`, `questions`). */
  capabilities?: string[]
  /** URL schemes for openURL (default `vscode`). */
  urlSchemes?: string[]
  /** The user switches keypad decisions on (control API). */
  keypad?: boolean
  /** The user allows the adapter (control API; default true). */
  allow?: boolean
  label?: string
  /** More registration fields. */
  extra?: Record<string, unknown>
}

/** A registered adapter of a case: every call carries its lease token. */
export interface Agent extends Registered {
  body: Record<string, unknown>
  post(sessionId: string, update: unknown, options?: RequestOptions): Promise<Reply>
  /** `PUT /adapters/{id}/sessions` with `{sessions}`. */
  batch(sessions: unknown[], options?: RequestOptions): Promise<Reply>
  /** `PUT /adapters/{id}/sessions` with any body. */
  putBatch(body: unknown): Promise<Reply>
  poll(body?: Record<string, unknown>, options?: RequestOptions): Promise<Reply>
  /** Registers again with the lease token (the same lease, OT-A06); `extra` replaces registration fields. */
  reregister(extra?: Record<string, unknown>): Promise<Reply>
  /** Ends the lease (OT-A07). */
  unregister(): Promise<Reply>
  /**
   * Whether the session exists, by a heartbeat (`{}`, OT-A18): 200 if it does, `invalid_field` on `title` or
   * `activity` if it does not (OT-091). A heartbeat is contact: it restarts the session's TTL.
   */
  exists(sessionId: string): Promise<boolean>
}

/** Registers an adapter with event capabilities and URL schemes; it is unregistered when the case ends. */
export async function agent (ctx: CaseContext, options: AgentOptions = {}): Promise<Agent> {
  const body = {
    ...minimal(),
    capabilities: options.capabilities ?? ['tap', 'approvals', 'questions'],
    ...(options.urlSchemes === undefined
      ? { urlSchemes: ['vscode'] }
      : options.urlSchemes.length === 0
        ? {}
        : { urlSchemes: options.urlSchemes }),
    ...options.extra
  }
  if (Array.isArray(body.capabilities) && body.capabilities.length === 0) {
    delete (body as Record<string, unknown>).capabilities
  }
  const registered = await register(ctx, body, {
    label: options.label,
    allow: options.allow,
    ...(options.keypad === undefined ? {} : { keypad: options.keypad })
  })
  const self = agentOf(ctx, registered, body)
  // With the token it holds when the case ends: a case may have begun a new lease (OT-A22, OT-A23). Once no lease is
  // left, the fake forgets the id (its user settings), whoever ended the lease.
  ctx.cleanup(async () => {
    if (leaseGone(await self.unregister())) await forget(ctx, self.id)
  })
  return self
}

/** The calls of an adapter already registered. */
export function agentOf (ctx: CaseContext, registered: Registered, body: Record<string, unknown>): Agent {
  const { client } = ctx
  const self: Agent = {
    ...registered,
    body,
    post: (sessionId, update, options = {}) =>
      client.request({
        method: 'POST',
        path: `/adapters/${self.id}/sessions/${sessionId}`,
        body: update,
        headers: { ...self.headers },
        ...options
      }),
    batch: (sessions, options = {}) =>
      client.request({
        method: 'PUT',
        path: `/adapters/${self.id}/sessions`,
        body: { sessions },
        headers: { ...self.headers },
        ...options
      }),
    putBatch: (batch) =>
      client.request({
        method: 'PUT',
        path: `/adapters/${self.id}/sessions`,
        body: batch,
        headers: { ...self.headers }
      }),
    poll: (poll = {}, options = {}) =>
      client.request({
        method: 'POST',
        path: `/adapters/${self.id}/events`,
        body: poll,
        headers: { ...self.headers },
        ...options
      }),
    reregister: async (extra = {}) => {
      const reply = await client.request({
        method: 'PUT',
        path: `/adapters/${self.id}`,
        body: { ...body, ...extra },
        headers: { ...self.headers }
      })
      if (reply.status === 200 && typeof reply.json?.adapterToken === 'string') {
        self.token = reply.json.adapterToken
        self.headers['x-orbtile-adapter-token'] = self.token
      }
      return reply
    },
    unregister: () => client.request({ method: 'DELETE', path: `/adapters/${self.id}`, headers: { ...self.headers } }),
    exists: async (sessionId) => {
      const reply = await self.post(sessionId, {})
      if (reply.status === 200) return true
      if (
        errorProblem(reply, 'invalid_field') === undefined &&
        ['title', 'activity'].includes(reply.json.error.field)
      ) {
        return false
      }
      throw new CaseFailure(
        `a heartbeat {} to session ${sessionId}`,
        '200 (it exists) or invalid_field on title (it does not)',
        `${reply.status} ${reply.text.slice(0, 300)}`
      )
    }
  }
  return self
}

/** Fails unless the post answered 200. */
export async function mustPost (
  a: Agent,
  sessionId: string,
  update: unknown,
  what = `POST session ${sessionId}`
): Promise<Reply> {
  const reply = await a.post(sessionId, update)
  expectStatus(reply, 200, what)
  return reply
}

/** The control API, which the case declared it needs. */
export function controlOf (ctx: CaseContext): ControlClient {
  if (ctx.control === undefined) throw new CaseSkip('needs the target\'s control API (--control URL)')
  return ctx.control
}

/** Whether the target's clock is virtual (only known through the control API). */
export async function isVirtual (ctx: CaseContext): Promise<boolean> {
  return ctx.control !== undefined && await ctx.control.virtualClock()
}

/** The target's time in epoch milliseconds: its control clock, else this machine's (one host: a Unix socket). */
export async function targetNow (ctx: CaseContext): Promise<number> {
  if (ctx.control === undefined) return Date.now()
  const clock = await ctx.control.must('GET', '/control/clock')
  return clock.now as number
}

/**
 * Lets `ms` of the target's time pass in steps, each followed by an events poll `{}` of every keep-alive adapter: a
 * poll keeps the lease (OT-A08) without being contact for any session (OT-A18). A virtual clock is advanced; on a
 * real one the steps are waited out against one deadline (so the polls' own time does not add up), and a wait of
 * minutes skips the case without --slow (ctx.elapse).
 */
export async function pass (
  ctx: CaseContext,
  ms: number,
  keepAlive: readonly Agent[] = [],
  step = 60_000
): Promise<void> {
  const keep = async (): Promise<void> => {
    for (const a of keepAlive) expectStatus(await a.poll({}), 200, `a keep-alive events poll of ${a.id}`)
  }
  if (await isVirtual(ctx)) {
    for (let left = ms; left > 0; left -= step) {
      await ctx.elapse(Math.min(step, left))
      await keep()
    }
    return
  }
  // A real step stays above the short-wait bound, so that a long wait is never cut into short ones that would run
  // without --slow (and below the 120 s a lease lasts without a request).
  const most = Math.max(step, SHORT_REAL_WAIT_MS + 1)
  const end = performance.now() + ms
  for (let left = ms; left > 0; left = end - performance.now()) {
    try {
      await ctx.elapse(Math.min(most, left))
    } catch (err) {
      // Skipped at the first step: the reason names the whole wait.
      if (err instanceof CaseSkip && left === ms) {
        throw new CaseSkip(err.message.replace(/^needs \d+ s/, `needs ${Math.round(ms / 1000)} s`))
      }
      throw err
    }
    await keep()
  }
}

/** `pass` until `performance.now()` reaches `at` (a real-clock deadline measured on this side). */
export async function passUntil (
  ctx: CaseContext,
  at: number,
  keepAlive: readonly Agent[] = [],
  step?: number
): Promise<void> {
  await pass(ctx, at - performance.now(), keepAlive, step)
}

/** `pass` until the target's clock reads `epochMs` (a deadline the target stated, like a request's expiresAt). */
export async function passUntilTarget (
  ctx: CaseContext,
  epochMs: number,
  keepAlive: readonly Agent[] = []
): Promise<void> {
  await pass(ctx, epochMs - (await targetNow(ctx)), keepAlive)
}

/** The adapter as the control API shows it (sessions, requests, events). */
export async function snapshot (ctx: CaseContext, adapterId: string): Promise<any> {
  return controlOf(ctx).adapter(adapterId)
}

/** One session as the control API shows it, or undefined. */
export async function sessionState (ctx: CaseContext, adapterId: string, sessionId: string): Promise<any> {
  return ((await snapshot(ctx, adapterId)).sessions as any[] | undefined)?.find((s) => s.id === sessionId)
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/** Waits (real time) until `condition` holds, up to `ms`; answers whether it did. */
export async function until (condition: () => boolean | Promise<boolean>, ms = 2000): Promise<boolean> {
  const end = Date.now() + ms
  for (;;) {
    if (await condition()) return true
    if (Date.now() >= end) return false
    await sleep(5)
  }
}

/** Whether the adapter's events poll is being held (control API), else a short real wait and a guess. */
export async function waitHeld (ctx: CaseContext, adapterId: string, ms = 2000): Promise<boolean> {
  if (ctx.control === undefined) {
    await sleep(150)
    return true
  }
  return until(async () => (await snapshot(ctx, adapterId)).events?.pollHeld === true, ms)
}

/** A request that may never be answered (a held poll): it resolves to the reply, or to the error that ended it. */
export function settle (pending: Promise<Reply>): Promise<Reply | Error> {
  return pending.catch((err: unknown) => err instanceof Error ? err : new Error(String(err)))
}

/** The sequences of an events reply. */
export const sequences = (reply: Reply): number[] =>
  ((reply.json?.events ?? []) as Array<{ sequence: number }>).map((e) => e.sequence)
