import { defineCase, type CaseContext, type ConformanceCase } from '../../orbtile-case.js'
import { expectEqual, expectStatus, expectThat } from '../../expect.js'
import {
  agent, approval, controlOf, isVirtual, mustPost, newSession, pass, passUntilTarget, question, sessionState,
  snapshot, targetNow, type Agent
} from '../../agent-sessions.js'
import { REAL_MARGIN_MS, REAL_SLACK_MS, slowPart } from '../../time.js'
import { events, expectControl, expectIdRefused, expectRefusedByControl } from './sessions-support.js'

/** Posts the update (it must be accepted) between two readings of the target's clock, in epoch ms. */
async function timedPost (
  ctx: CaseContext, a: Agent, sessionId: string, update: Record<string, unknown>
): Promise<{ before: number, after: number }> {
  const before = await targetNow(ctx)
  await mustPost(a, sessionId, update)
  return { before, after: await targetNow(ctx) }
}

/** An adapter whose user set keypad decisions on (or off); fails unless its registration reply says so. */
async function keypadSet (ctx: CaseContext, on: boolean, what: string): Promise<Agent> {
  const a = await agent(ctx, { keypad: on })
  expectEqual(a.reply.json.keypadDecisions, on, what)
  return a
}

/** Request expiry and the keypad opt-in (OT-127..130). */
export const expiryCases: ConformanceCase[] = [
  defineCase({
    id: 'OT-127',
    title: 'an identical pending update is accepted and does not refresh the expiry: the decision carries the original expiresAt',
    level: 'required',
    needs: ['control'],
    async run (ctx) {
      const a = await agent(ctx, { keypad: true })
      const virtual = await isVirtual(ctx)
      const pending = await timedPost(ctx, a, 's1', newSession({ approval: approval('r1') }))
      const [first, firstDone] = [pending.before, pending.after]
      if (virtual) await pass(ctx, 300_000, [a])
      else await ctx.elapse(2500)
      expectStatus(await a.post('s1', { approval: approval('r1') }), 200, 'the identical approval again')
      const resent = await targetNow(ctx)
      expectControl(await controlOf(ctx).decide(a.id, 'r1', { decision: 'allow' }), 200, 'the user allows r1')
      const [event] = await events(a, {}, 'the poll after the decision')
      const expiresAt = event?.expiresAt as number
      expectThat(
        typeof expiresAt === 'number' &&
          expiresAt >= first / 1000 + 599 &&
          expiresAt <= firstDone / 1000 + 601 &&
          expiresAt < resent / 1000 + 599,
        "the decision's expiresAt",
        `600 s after the first send (${Math.round(first / 1000) + 600}), not after the re-send (${Math.round(resent / 1000) + 600})`,
        expiresAt
      )
      if (virtual) {
        // Not refreshed: the request expires 600 s after it first became pending, and its id retires (OT-126).
        await pass(ctx, 302_000, [a])
        await expectIdRefused(a, 's1', 'approval', 'r1', 'r1 again 602 s after it first became pending')
        return
      }
      // A real clock: the expiry itself is watched with --slow only, a little after the expiresAt the decision carried.
      await slowPart(
        "the decision's expiresAt is 600 s after the first send, not after an identical re-send 2.5 s later",
        async () => {
          await passUntilTarget(ctx, expiresAt * 1000 + REAL_SLACK_MS, [a])
          await expectIdRefused(a, 's1', 'approval', 'r1', `r1 again ${REAL_SLACK_MS / 1000} s past its expiresAt`)
        }
      )
    }
  }),
  defineCase({
    id: 'OT-129',
    title:
      "questions expire 600 s after they became pending; a QuestionEvent's expiresAt is that time in epoch seconds",
    level: 'required',
    needs: ['control'],
    async run (ctx) {
      const a = await agent(ctx, { keypad: true })
      const { before, after } = await timedPost(
        ctx,
        a,
        's1',
        newSession({ question: question('q1'), ttlSeconds: 3600 })
      )
      expectControl(await controlOf(ctx).decide(a.id, 'q1', { picks: [[1]] }), 200, 'the user answers q1')
      const [event] = await events(a, {}, 'the poll after the answer')
      expectThat(
        event?.type === 'question' &&
          typeof event.expiresAt === 'number' &&
          event.expiresAt >= before / 1000 + 599 &&
          event.expiresAt <= after / 1000 + 601,
        "the question event's expiresAt",
        `about ${Math.round(before / 1000) + 600}`,
        event
      )
      await mustPost(a, 's2', newSession({ question: question('q2'), ttlSeconds: 3600 }))
      if (await isVirtual(ctx)) {
        await pass(ctx, 599_000, [a])
        expectStatus(
          await a.post('s2', { question: question('q2') }),
          200,
          'q2 is pending at 599 s (the identical re-send)'
        )
        await pass(ctx, 2000, [a])
        await expectIdRefused(a, 's2', 'question', 'q2', 'q2 at 601 s: expired, so retired')
        expectEqual(
          (await sessionState(ctx, a.id, 's2')).question,
          null,
          'the expired question is gone from the session'
        )
        return
      }
      // A real clock: q2 is watched (with --slow) well before and a little after the expiresAt the target holds for it.
      const q2 = ((await snapshot(ctx, a.id)).requests as Array<{ id: string; expiresAt: number }>).find(
        (r) => r.id === 'q2'
      )
      expectThat(q2 !== undefined, 'q2 among the pending requests (control API)', 'pending', 'absent')
      await slowPart("the question event's expiresAt is 600 s after the question became pending", async () => {
        await passUntilTarget(ctx, q2!.expiresAt * 1000 - REAL_MARGIN_MS, [a])
        expectStatus(
          await a.post('s2', { question: question('q2') }),
          200,
          `q2 is pending ${REAL_MARGIN_MS / 1000} s before its expiresAt (the identical re-send)`
        )
        await passUntilTarget(ctx, q2!.expiresAt * 1000 + REAL_SLACK_MS, [a])
        await expectIdRefused(a, 's2', 'question', 'q2', `q2 ${REAL_SLACK_MS / 1000} s past its expiresAt: expired, so retired`)
        expectEqual(
          (await sessionState(ctx, a.id, 's2')).question,
          null,
          'the expired question is gone from the session'
        )
      })
    }
  }),
  defineCase({
    id: 'OT-130',
    title:
      "decision events need the capability and the user's keypad opt-in; without the opt-in the keypad decides nothing",
    level: 'required',
    needs: ['control'],
    async run (ctx) {
      const off = await keypadSet(ctx, false, "keypadDecisions without the user's opt-in")
      await mustPost(off, 's1', newSession({ approval: approval('r1') }))
      await mustPost(off, 's2', newSession({ question: question('q1') }))
      expectRefusedByControl(
        await controlOf(ctx).decide(off.id, 'r1', { decision: 'allow' }),
        'the keypad decides an approval without the opt-in'
      )
      expectRefusedByControl(
        await controlOf(ctx).decide(off.id, 'q1', { picks: [[0]] }),
        'the keypad answers a question without the opt-in'
      )
      expectEqual(await events(off), [], 'events without the opt-in')
      const on = await keypadSet(ctx, true, 'keypadDecisions with the opt-in')
      await mustPost(on, 's1', newSession({ approval: approval('r1') }))
      expectControl(
        await controlOf(ctx).decide(on.id, 'r1', { decision: 'deny' }),
        200,
        'the keypad decides with the opt-in'
      )
      expectEqual(
        (await events(on)).map((e) => e.type),
        ['approval'],
        'events with the opt-in'
      )
    }
  })
]
