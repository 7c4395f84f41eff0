import { LIMITS } from '../../../../../src/spec/orbtile.js'
import { CaseFailure, defineCase, type CaseContext, type ConformanceCase } from '../../orbtile-case.js'
import { expectEqual, expectError, expectStatus, expectThat } from '../../expect.js'
import type { Reply } from '../../transport.js'
import {
  agent, approval, controlOf, isVirtual, newSession, pass, passUntil, passUntilTarget, sequences, sessionState,
  settle, snapshot, waitHeld, type Agent
} from '../../agent-sessions.js'
import { REAL_MARGIN_MS, REAL_SLACK_MS, slowPart } from '../../time.js'
import { agentWith, events, expectControl } from './sessions-support.js'

/** Four long polls held across four adapters (OT-141, OT-A21); the fifth adapter is free. */
async function fourHeld (
  ctx: CaseContext
): Promise<{ agents: Agent[]; held: Array<Promise<Reply | Error>>; release: () => Promise<void> }> {
  const agents: Agent[] = []
  for (let i = 0; i < 5; i++) agents.push(await agent(ctx, { capabilities: ['tap'], label: 'longpoll' }))
  const held = agents.slice(0, 4).map((a) => settle(a.poll({ waitSeconds: 2 }, { timeoutMs: 5000 })))
  for (const a of agents.slice(0, 4)) {
    expectThat(await waitHeld(ctx, a.id), 'a long poll with no event is held', 'held', 'not held')
  }
  const release = async (): Promise<void> => {
    if (await isVirtual(ctx)) await ctx.elapse(2000)
    await Promise.all(held)
  }
  ctx.cleanup(release)
  return { agents, held, release }
}

/** The decisions on the limits: the rate limit, sessions, long polls, events and decisions (OT-A20, OT-A21). */
export const limitDecisions: ConformanceCase[] = [
  defineCase({
    id: 'OT-A20',
    title: 'rate limit: a bucket of 60 per adapter; a 429 rate_limited with Retry-After; other adapters and /info unaffected',
    level: 'decision',
    async run (ctx) {
      const a = await agent(ctx, { capabilities: ['tap'] })
      const b = await agent(ctx, { capabilities: ['tap'] })
      let served = 1 // the registration took a token from the adapter's bucket
      let refused: Reply | undefined
      const started = Date.now()
      for (let i = 0; i < LIMITS.burst * 3 && refused === undefined; i++) {
        const reply = await a.poll({}, { retryRateLimited: false })
        if (reply.status === 429) refused = reply
        else {
          expectStatus(reply, 200, `poll ${i + 1}`)
          served++
        }
      }
      if (refused === undefined) {
        throw new CaseFailure(
          `${LIMITS.burst * 3} polls in a row`,
          'a 429 rate_limited once the burst is spent',
          `${served} served`
        )
      }
      expectError(refused, 'rate_limited', 'the poll past the burst')
      const retryAfter = String(refused.headers['retry-after'])
      expectThat(/^[1-9]\d*$/.test(retryAfter), 'Retry-After', 'an integer of at least 1', retryAfter)
      const virtual = await isVirtual(ctx)
      const refill = virtual ? 0 : Math.ceil(((Date.now() - started) / 1000) * LIMITS.requestsPerSecond) + 1
      expectThat(
        served >= LIMITS.burst && served <= LIMITS.burst + refill,
        'requests served before the 429',
        virtual ? `${LIMITS.burst} (the burst; the clock stood still)` : `${LIMITS.burst}..${LIMITS.burst + refill}`,
        served
      )
      expectEqual(retryAfter, '1', 'Retry-After at 20 tokens per second')
      expectStatus(await b.poll({}, { retryRateLimited: false }), 200, "another adapter's poll")
      expectStatus(await ctx.client.request({ path: '/info', retryRateLimited: false }), 200, 'GET /info')
    }
  }),
  defineCase({
    id: 'OT-A21',
    title: 'maxSessionsPerAdapter counts offline sessions until they are removed',
    level: 'decision',
    async run (ctx) {
      const a = await agent(ctx)
      expectStatus(
        await a.batch(
          Array.from({ length: LIMITS.maxSessionsPerAdapter }, (_, i) => ({
            id: `s${i}`,
            ...newSession({ ttlSeconds: 10 })
          }))
        ),
        200,
        '32 sessions'
      )
      const contact = performance.now()
      expectError(await a.post('s32', newSession()), 'limit_exceeded', 'a 33rd session')
      if (await isVirtual(ctx)) {
        await pass(ctx, 11_000, [a])
        expectEqual((await sessionState(ctx, a.id, 's0')).offline, true, 's0 after 11 s')
        expectError(await a.post('s32', newSession()), 'limit_exceeded', 'a 33rd session while the 32 are offline')
        await pass(ctx, 600_000, [a])
        expectEqual((await snapshot(ctx, a.id)).sessions, [], 'the sessions 610 s after they went offline')
        expectStatus(await a.post('s32', newSession()), 200, 'a new session once they are removed')
        return
      }
      // A real clock: looked at a little after the TTL (10 s), then (with --slow) a little after the removal 600 s
      // later. Without the control API the offline state itself is not seen, only what it does to the limit.
      await passUntil(ctx, contact + 10_000 + REAL_SLACK_MS, [a])
      if (ctx.control !== undefined) {
        expectEqual(
          (await sessionState(ctx, a.id, 's0')).offline,
          true,
          `s0 ${10 + REAL_SLACK_MS / 1000} s after the batch`
        )
      }
      expectError(await a.post('s32', newSession()), 'limit_exceeded', 'a 33rd session while the 32 are offline')
      await slowPart('the 32 sessions count while offline', async () => {
        await passUntil(ctx, contact + 610_000 + REAL_SLACK_MS, [a])
        if (ctx.control !== undefined) expectEqual((await snapshot(ctx, a.id)).sessions, [], `the sessions ${600 + REAL_SLACK_MS / 1000} s after they went offline`)
        expectStatus(await a.post('s32', newSession()), 200, 'a new session once they are removed')
      })
    }
  }),
  defineCase({
    id: 'OT-A21.b',
    title: 'maxLongPolls is global; polls with waitSeconds 0 never count',
    level: 'decision',
    async run (ctx) {
      const { agents } = await fourHeld(ctx)
      for (let i = 0; i < 3; i++) {
        expectStatus(
          await agents[4]!.poll({ waitSeconds: 0 }),
          200,
          `a waitSeconds 0 poll while 4 long polls are held (${i + 1})`
        )
      }
      expectError(await agents[4]!.poll({ waitSeconds: 2 }), 'limit_exceeded', 'a 5th long poll, another adapter')
    }
  }),
  defineCase({
    id: 'OT-A21.c',
    title: 'maxEvents: past 128 unacknowledged events the oldest is dropped; sequences are not reused',
    level: 'decision',
    needs: ['control'],
    async run (ctx) {
      const a = await agentWith(ctx, { s1: {} }, { capabilities: ['tap'] })
      for (let i = 0; i < LIMITS.maxEvents + 2; i++) {
        expectControl(await controlOf(ctx).tap(a.id, 's1'), 200, `tap ${i + 1}`)
      }
      const reply = await a.poll({})
      expectStatus(reply, 200, 'the poll')
      const got = sequences(reply)
      expectEqual(
        [got.length, got[0], got.at(-1), reply.json.lastSequence],
        [LIMITS.maxEvents, 3, LIMITS.maxEvents + 2, LIMITS.maxEvents + 2],
        '[events, first, last, lastSequence]'
      )
    }
  }),
  defineCase({
    id: 'OT-A21.d',
    title: 'decision events whose expiresAt has passed are dropped from the queue',
    level: 'decision',
    needs: ['control', 'slow'],
    async run (ctx) {
      const a = await agentWith(ctx, { s1: { approval: approval('r1'), ttlSeconds: 3600 } }, { keypad: true })
      expectControl(await controlOf(ctx).decide(a.id, 'r1', { decision: 'allow' }), 200, 'allow r1')
      if (await isVirtual(ctx)) {
        await pass(ctx, 598_000, [a])
        expectEqual((await events(a)).map((e) => e.requestId), ['r1'], 'the decision at 598 s')
        await pass(ctx, 3_000, [a])
        expectEqual(await events(a), [], 'the decision at 601 s')
        return
      }
      // A real clock (--slow): looked at well before and a little after the expiresAt the decision carries.
      const [decision] = await events(a)
      expectThat(typeof decision?.expiresAt === 'number', 'the decision event', 'an expiresAt', decision)
      await passUntilTarget(ctx, decision!.expiresAt * 1000 - REAL_MARGIN_MS, [a])
      expectEqual((await events(a)).map((e) => e.requestId), ['r1'], `the decision ${REAL_MARGIN_MS / 1000} s before its expiresAt`)
      await passUntilTarget(ctx, decision!.expiresAt * 1000 + REAL_SLACK_MS, [a])
      expectEqual(await events(a), [], `the decision ${REAL_SLACK_MS / 1000} s after its expiresAt`)
    }
  })
]
