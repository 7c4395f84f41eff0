import { createHmac } from 'node:crypto'
import { readFileSync, statSync, type Stats } from 'node:fs'
import { CaseFailure, CaseSkip, type CaseContext } from './orbtile-case.js'
import type { Reply, RequestOptions } from './transport.js'

/** What the transport cases read of the discovery file the target was found through (OT-002..004, OT-A04). */
export interface Discovery {
  path: string
  stat: Stats
  text: string
  json: any
}

/** The discovery file, read as an adapter reads it; the case is skipped for a target named without one (`unix:`). */
export function readDiscovery (ctx: CaseContext): Discovery {
  const path = ctx.client.target.discovery
  if (path === undefined) throw new CaseSkip('the target was named without a discovery file (unix:…), so there is none to check')
  let stat: Stats
  let text: string
  try {
    stat = statSync(path)
    text = readFileSync(path, 'utf8')
  } catch (err) {
    throw new CaseFailure(
      `the discovery file ${path} cannot be read`,
      'a readable discovery file',
      (err as Error).message
    )
  }
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    throw new CaseFailure('the discovery file is not JSON', 'a JSON object', text.slice(0, 300))
  }
  return { path, stat, text, json }
}

/**
 * `hex(HMAC-SHA256(key: token, message: nonce))` with OT-A29's encodings: the token's UTF-8 bytes, the nonce as sent.
 */
export const proofOf = (token: string, nonce: string): string =>
  createHmac('sha256', Buffer.from(token, 'utf8')).update(Buffer.from(nonce, 'ascii')).digest('hex')

/** The ledger's test vector for OT-037; the cases check their own HMAC against it before trusting it. */
export const PROOF_VECTOR = {
  token: 'example-discovery-token',
  nonce: '00112233445566778899aabbccddeeff',
  proof: 'd46aef2004d523d1f8184aa25bac27c6b4246da88c189cfa589ffcdfe8a534fc'
} as const

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/** Whether the target's clock is virtual: only then can a case move time instead of waiting for it. */
export async function hasVirtualClock (ctx: CaseContext): Promise<boolean> {
  if (ctx.control === undefined) return false
  try {
    return await ctx.control.virtualClock()
  } catch {
    return false
  }
}

/**
 * Lets every rate-limit bucket of the target refill completely (60 tokens at 20/s take 3 s): the virtual clock is
 * advanced, or real time passes. Returns whether the clock is virtual.
 */
export async function refillBuckets (ctx: CaseContext): Promise<boolean> {
  if (await hasVirtualClock(ctx)) {
    await ctx.elapse(3000)
    return true
  }
  ctx.note('no virtual clock: waited 3.1 s of real time for the buckets to refill, assuming no other client uses the target')
  await ctx.elapse(3100)
  return false
}

/** Sends `n` copies of a request at once (the client keeps up to 16 connections) without waiting out a 429. */
export function burst (ctx: CaseContext, n: number, options: RequestOptions = {}): Promise<Reply[]> {
  return Promise.all(Array.from({ length: n }, () => ctx.client.request({ ...options, retryRateLimited: false })))
}

/** Whether a reply is the spec's `rate_limited`. */
export const isRateLimited = (reply: Reply): boolean =>
  reply.status === 429 && reply.json?.error?.code === 'rate_limited'

/** OT-026: for every pair of admitted timestamps (ms), the admitted count between them is at most 60 + 20 t. */
export function windowProblem (admitted: readonly number[]): string | undefined {
  for (let i = 0; i < admitted.length; i++) {
    for (let j = i + 59; j < admitted.length; j++) {
      const seconds = (admitted[j]! - admitted[i]!) / 1000
      if (j - i + 1 > 60 + 20 * seconds + 1e-9) return `${j - i + 1} requests admitted within ${seconds} s (at most ${60 + 20 * seconds})`
    }
  }
  return undefined
}

/**
 * The user's Adapter API switch through the control API (OT-001, OT-155, OT-A03). The case switches the API back on
 * when it ends, whatever happens.
 */
export async function switchApi (ctx: CaseContext, change: { enabled: boolean, listening?: boolean }): Promise<void> {
  const control = ctx.control!
  if (!change.enabled) ctx.cleanup(() => control.must('PUT', '/control/orbtile/api', { enabled: true }))
  await control.must('PUT', '/control/orbtile/api', change)
}

/** A request that must not reach the server: the code of the connection error (ENOENT, ECONNREFUSED…), or the reply. */
export async function connectionRefusal (
  ctx: CaseContext,
  options: RequestOptions = {}
): Promise<{ code?: string; reply?: Reply }> {
  try {
    return { reply: await ctx.client.request({ ...options, retryRateLimited: false, timeoutMs: 3000 }) }
  } catch (err) {
    return { code: (err as NodeJS.ErrnoException).code ?? (err as Error).message }
  }
}

/**
 * Waits until the target holds a long poll of each adapter: asks the control API when there is one (an adapter's
 * `events.pollHeld`), else gives the requests 300 ms of real time to arrive.
 */
export async function pollsHeld (ctx: CaseContext, ids: readonly string[]): Promise<void> {
  if (ctx.control === undefined) {
    await sleep(300)
    return
  }
  for (let i = 0; i < 500; i++) {
    const states = await Promise.all(
      ids.map((id) => ctx.control!.call('GET', `/control/orbtile/adapters/${encodeURIComponent(id)}`))
    )
    if (states.every((s) => s.json?.events?.pollHeld === true)) return
    if (states.some((s) => s.status !== 200 || s.json?.events === undefined)) {
      await sleep(300)
      return
    }
    await sleep(2)
  }
  throw new CaseFailure('the long polls were never held', `${ids.length} held polls`, 'fewer')
}

/** Whether a promise settles within `ms` of real time; its value when it does. */
export async function within<T> (
  promise: Promise<T>,
  ms: number
): Promise<{ settled: true; value: T } | { settled: false }> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<{ settled: false }>((resolve) => {
    timer = setTimeout(() => resolve({ settled: false }), ms)
  })
  try {
    return await Promise.race([promise.then((value) => ({ settled: true as const, value })), timeout])
  } finally {
    clearTimeout(timer)
  }
}
