import { CaseSkip, defineCase, type CaseContext, type ConformanceCase } from '../../orbtile-case.js'
import { expectEqual, expectStatus, expectThat } from '../../expect.js'
import {
  agent, isVirtual, mustPost, newSession, pass, passUntil, sessionState, type Agent
} from '../../agent-sessions.js'
import { REAL_MARGIN_MS, REAL_SLACK_MS, slowPart } from '../../time.js'
import { expectExists } from './sessions-support.js'

/** OT-A18.b: a heartbeat revives offline s1 with its last activity; an update without title, s2 with the new one. */
async function expectRevived (ctx: CaseContext, a: Agent): Promise<void> {
  await mustPost(a, 's1', {}, 'a heartbeat to an offline session')
  let s = await sessionState(ctx, a.id, 's1')
  expectEqual([s.offline, s.activity], [false, 'tool'], 'revived with its last activity: [offline, activity]')
  await mustPost(a, 's2', { activity: 'idle' }, 'an update without title to an offline session')
  s = await sessionState(ctx, a.id, 's2')
  expectEqual([s.offline, s.activity], [false, 'idle'], 'revived with the new activity: [offline, activity]')
}

/** An offline session s1 is still there 599.999 s on (as `before` says) and removed at 600 s (as `at` says). */
async function expectRemovedIn (ctx: CaseContext, a: Agent, before: string, at: string): Promise<void> {
  await pass(ctx, 599_999, [a])
  expectThat((await sessionState(ctx, a.id, 's1')) !== undefined, before, 'still there', 'removed')
  await pass(ctx, 1, [a])
  expectEqual(await sessionState(ctx, a.id, 's1'), undefined, at)
}

/**
 * OT-A18.b on a real clock, in one TTL rather than two: beside `a`, whose sessions go offline and are revived, a
 * second adapter's session is kept online by a batch. Each state is looked at a little after its deadline (10 s,
 * the shortest TTL), or well before it.
 */
async function offlineRevivedInRealTime (ctx: CaseContext, a: Agent): Promise<void> {
  const b = await agent(ctx, { label: 'batch' })
  await mustPost(a, 's1', newSession({ ttlSeconds: 10, activity: 'tool' }))
  await mustPost(a, 's2', newSession({ ttlSeconds: 10, activity: 'tool' }))
  const sent = performance.now()
  await mustPost(b, 's1', newSession({ ttlSeconds: 10, activity: 'tool' }))
  const created = performance.now()
  // b's batch comes 4.5 s in: b's session is looked at past its creation's deadline and well before the batch's.
  await passUntil(ctx, sent + 4_500, [a, b])
  const batched = performance.now()
  expectStatus(await b.batch([{ id: 's1', ...newSession({ ttlSeconds: 10 }) }]), 200, 'a batch listing b\'s session')
  await passUntil(ctx, created + 10_000 + REAL_SLACK_MS, [a, b])
  const late = (performance.now() - batched) / 1000
  if (late > 10 - REAL_SLACK_MS / 1000) throw new CaseSkip(`this side looked ${late.toFixed(1)} s after the batch, too close to its 10 s TTL to tell`)
  expectEqual([(await sessionState(ctx, a.id, 's1')).offline, (await sessionState(ctx, a.id, 's2')).offline], [true, true], `a's sessions ${10 + REAL_SLACK_MS / 1000} s after their last post`)
  expectEqual((await sessionState(ctx, b.id, 's1')).offline, false, `b's session ${10 + REAL_SLACK_MS / 1000} s after its creation, ${late.toFixed(1)} s after a batch that listed it`)
  await expectRevived(ctx, a)
}

/** Offline after the TTL, removed 600 s later (OT-112). */
export const ttlCases: ConformanceCase[] = [
  defineCase({
    id: 'OT-112',
    title: 'offline after ttlSeconds without contact, removed 600 s later; a heartbeat restarts the clock',
    level: 'required',
    needs: ['control'],
    async run (ctx) {
      const a = await agent(ctx)
      if (await isVirtual(ctx)) {
        await mustPost(a, 's1', newSession({ ttlSeconds: 30, activity: 'tool' }))
        await pass(ctx, 29_000, [a])
        expectEqual((await sessionState(ctx, a.id, 's1')).offline, false, 'offline at 29 s')
        await mustPost(a, 's1', {}, 'a heartbeat')
        await pass(ctx, 29_999, [a])
        expectEqual((await sessionState(ctx, a.id, 's1')).offline, false, 'offline 29.999 s after the heartbeat')
        await pass(ctx, 1, [a])
        const s = await sessionState(ctx, a.id, 's1')
        expectEqual([s.offline, s.activity], [true, 'offline'], '[offline, activity shown] 30 s after the heartbeat')
        await expectRemovedIn(ctx, a, 'the session 1 ms before ttl + 600 s', 'the session at ttl + 600 s')
        await expectExists(a, 's1', false, 'after removal, {} needs title and activity again')
        return
      }
      // A real clock: the shortest TTL the spec allows (10 s); each state is looked at well before its deadline or a
      // little after it. The heartbeat comes 5 s in, so that the look past the first deadline is well before the
      // heartbeat's. The removal, 600 s later, waits with --slow only.
      const created = performance.now()
      await mustPost(a, 's1', newSession({ ttlSeconds: 10, activity: 'tool' }))
      const answered = performance.now()
      await passUntil(ctx, created + 5_000, [a])
      expectEqual((await sessionState(ctx, a.id, 's1')).offline, false, 'offline 5 s after creation (ttlSeconds 10)')
      const sent = performance.now()
      await mustPost(a, 's1', {}, 'a heartbeat')
      const contact = performance.now()
      await passUntil(ctx, answered + 10_000 + REAL_SLACK_MS, [a])
      const since = (performance.now() - sent) / 1000
      if (since > 10 - REAL_SLACK_MS / 1000) {
        throw new CaseSkip(
          `this side looked ${since.toFixed(1)} s after the heartbeat, too close to its 10 s TTL to tell`
        )
      }
      expectEqual(
        (await sessionState(ctx, a.id, 's1')).offline,
        false,
        `offline ${10 + REAL_SLACK_MS / 1000} s after creation, ${since.toFixed(1)} s after the heartbeat`
      )
      await passUntil(ctx, contact + 10_000 + REAL_SLACK_MS, [a])
      const s = await sessionState(ctx, a.id, 's1')
      expectEqual(
        [s.offline, s.activity],
        [true, 'offline'],
        `[offline, activity shown] ${10 + REAL_SLACK_MS / 1000} s after the heartbeat`
      )
      await slowPart('offline after ttlSeconds 10 without contact, not before', async () => {
        await passUntil(ctx, sent + 610_000 - REAL_MARGIN_MS, [a])
        expectThat(
          (await sessionState(ctx, a.id, 's1')) !== undefined,
          `the session ${REAL_MARGIN_MS / 1000} s before ttl + 600 s`,
          'still there',
          'removed'
        )
        await passUntil(ctx, contact + 610_000 + REAL_SLACK_MS, [a])
        expectEqual(
          await sessionState(ctx, a.id, 's1'),
          undefined,
          `the session ${REAL_SLACK_MS / 1000} s after ttl + 600 s`
        )
        await expectExists(a, 's1', false, 'after removal, {} needs title and activity again')
      })
    }
  }),
  defineCase({
    id: 'OT-112.b',
    title: 'the default TTL: offline after 120 s, removed after 720 s; events polls are no contact',
    level: 'required',
    needs: ['control', 'slow'],
    async run (ctx) {
      const a = await agent(ctx)
      if (await isVirtual(ctx)) {
        await mustPost(a, 's1', newSession())
        await pass(ctx, 119_999, [a], 30_000)
        expectEqual((await sessionState(ctx, a.id, 's1')).offline, false, 'offline at 119.999 s (polls every 30 s)')
        await pass(ctx, 1, [a])
        expectEqual((await sessionState(ctx, a.id, 's1')).offline, true, 'offline at 120 s')
        await expectRemovedIn(ctx, a, 'the session at 719.999 s', 'the session at 720 s')
        return
      }
      // A real clock (--slow): 12 minutes, each state looked at well before its deadline or a little after it.
      const sent = performance.now()
      await mustPost(a, 's1', newSession())
      const contact = performance.now()
      await passUntil(ctx, sent + 120_000 - REAL_MARGIN_MS, [a], 30_000)
      expectEqual((await sessionState(ctx, a.id, 's1')).offline, false, `offline at ${120 - REAL_MARGIN_MS / 1000} s (polls every 30 s)`)
      await passUntil(ctx, contact + 120_000 + REAL_SLACK_MS, [a], 30_000)
      expectEqual((await sessionState(ctx, a.id, 's1')).offline, true, `offline at ${120 + REAL_SLACK_MS / 1000} s`)
      await passUntil(ctx, sent + 720_000 - REAL_MARGIN_MS, [a])
      expectThat(await sessionState(ctx, a.id, 's1') !== undefined, `the session at ${720 - REAL_MARGIN_MS / 1000} s`, 'still there', 'removed')
      await passUntil(ctx, contact + 720_000 + REAL_SLACK_MS, [a])
      expectEqual(await sessionState(ctx, a.id, 's1'), undefined, `the session at ${720 + REAL_SLACK_MS / 1000} s`)
    }
  })
]

/** The decision on reviving an offline session (OT-A18.b). */
export const ttlDecisions: ConformanceCase[] = [
  defineCase({
    id: 'OT-A18.b',
    title: 'an offline session is revived by an update without title; a batch that lists a session is contact',
    level: 'decision',
    needs: ['control'],
    async run (ctx) {
      const a = await agent(ctx)
      if (!await isVirtual(ctx)) return offlineRevivedInRealTime(ctx, a)
      await mustPost(a, 's1', newSession({ ttlSeconds: 10, activity: 'tool' }))
      await mustPost(a, 's2', newSession({ ttlSeconds: 10, activity: 'tool' }))
      await pass(ctx, 10_000, [a])
      expectEqual(
        [(await sessionState(ctx, a.id, 's1')).offline, (await sessionState(ctx, a.id, 's2')).offline],
        [true, true],
        'offline after 10 s'
      )
      await expectRevived(ctx, a)
      await pass(ctx, 9_000, [a])
      expectStatus(
        await a.batch([
          { id: 's1', ...newSession({ ttlSeconds: 10 }) },
          { id: 's2', ...newSession({ ttlSeconds: 10 }) }
        ]),
        200,
        'a batch listing both'
      )
      await pass(ctx, 9_000, [a])
      expectEqual(
        (await sessionState(ctx, a.id, 's1')).offline,
        false,
        'offline 9 s after the batch (18 s after the last post)'
      )
    }
  })
]
