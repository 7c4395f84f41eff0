import fc from 'fast-check'
import { CaseFailure, defineCase, type CaseContext, type ConformanceCase } from '../../orbtile-case.js'
import { errorProblem, expectEqual, expectError, expectSchema, expectStatus, expectThat } from '../../expect.js'
import type { Reply } from '../../transport.js'
import {
  agent, approval, controlOf, isVirtual, mustPost, newSession, sequences, settle, until, waitHeld, type Agent
} from '../../agent-sessions.js'
import { runEventsModel } from '../../model/events-commands.js'
import { agentWith, events, expectControl, keypadAgent, tappedAgent } from './sessions-support.js'

/** One run of OT-133.b: `n` polls race in the scheduler's order; one is held, then tapped awake or abandoned. */
async function race (ctx: CaseContext, a: Agent, s: fc.Scheduler, n: number, leave: boolean): Promise<void> {
  await mustPost(a, 's1', newSession())
  let answered = 0
  const holder = new AbortController()
  const polls = Array.from({ length: n }, (_, i) => s.schedule(Promise.resolve(i), `poll ${i}`)
    .then(() => settle(a.poll({ waitSeconds: 2 }, { timeoutMs: 10_000, signal: holder.signal })))
    .then((reply) => { answered++; return reply }))
  await s.waitAll()
  const replies: Array<Reply | Error> = []
  if (leave) {
    // The holder goes away (its client closes the connection once the others were refused and it is seen held), and
    // the adapter may poll again at once.
    await until(() => answered >= n - 1, 1500)
    await waitHeld(ctx, a.id)
    holder.abort()
    replies.push(...await Promise.all(polls))
    const next = await until(async () => (await a.poll({})).status === 200, 1000)
    expectThat(next, 'a poll after the held one\'s client went away', '200 (not poll_pending)', 'poll_pending')
  } else {
    const others = await until(() => answered >= n - 1, 1500)
    if (!others || answered > n - 1) {
      if (await isVirtual(ctx)) await ctx.elapse(2000)
      throw new CaseFailure(
        `${n} polls raced`,
        `${n - 1} answered poll_pending at once, one held`,
        `${answered} answered`
      )
    }
    expectControl(await ctx.control!.tap(a.id, 's1'), 200, 'the user taps s1')
    replies.push(...(await Promise.all(polls)))
  }
  const held = replies.filter((r): r is Reply => !(r instanceof Error) && r.status === 200)
  const pending = replies.filter((r) => !(r instanceof Error) && errorProblem(r, 'poll_pending') === undefined)
  const outcomes = replies.map((r) =>
    r instanceof Error ? `gone: ${r.message}` : `${r.status} ${r.text.slice(0, 120)}`
  )
  expectThat(
    pending.length === n - 1 && (leave ? replies.filter((r) => r instanceof Error).length : held.length) === 1,
    `${n} racing polls`,
    `${n - 1} poll_pending and one ${leave ? 'gone away' : 'answered 200'}`,
    outcomes
  )
  if (!leave) expectEqual(sequences(held[0]!), [1], "the holder's events after the tap")
}

/** The events poll: its reply and fields, one poll per adapter, the cursor and the ack (OT-131..137, OT-A23.model). */
export const pollCases: ConformanceCase[] = [
  defineCase({
    id: 'OT-131',
    title: 'an events poll answers 200 with an EventsReply: events, lastSequence and acknowledged',
    level: 'required',
    async run (ctx) {
      const a = await agent(ctx, { capabilities: ['tap'] })
      for (const body of [{}, { after: 0, ack: 0, waitSeconds: 0 }]) {
        const reply = await a.poll(body)
        expectStatus(reply, 200, `poll ${JSON.stringify(body)}`)
        expectSchema(reply.json, 'EventsReply', 'the reply')
        expectEqual(
          [reply.json.events, reply.json.lastSequence, reply.json.acknowledged],
          [[], 0, 0],
          'a fresh lease: [events, lastSequence, acknowledged]'
        )
      }
    }
  }),
  defineCase({
    id: 'OT-132',
    title: 'after and ack are integers 0..2^53-1, waitSeconds 0..2',
    level: 'required',
    async run (ctx) {
      const a = await agent(ctx, { capabilities: ['tap'] })
      for (const [body, field] of [
        [{ after: -1 }, 'after'],
        [{ after: 9007199254740992 }, 'after'],
        [{ after: 1.5 }, 'after'],
        [{ after: '0' }, 'after'],
        [{ ack: -1 }, 'ack'],
        [{ ack: 9007199254740992 }, 'ack'],
        [{ ack: 0.5 }, 'ack'],
        [{ waitSeconds: 3 }, 'waitSeconds'],
        [{ waitSeconds: -1 }, 'waitSeconds'],
        [{ waitSeconds: 1.5 }, 'waitSeconds'],
        [{ waitSeconds: '1' }, 'waitSeconds']
      ] as const) {
        expectError(await a.poll(body), 'invalid_field', `poll ${JSON.stringify(body)}`, field)
      }
      // The largest `after` is valid as a field; it is refused as a cursor (OT-137), not as a field.
      expectError(await a.poll({ after: 9007199254740991 }), 'invalid_cursor', 'after 2^53-1 with nothing delivered')
    }
  }),
  defineCase({
    id: 'OT-133',
    title:
      'one outstanding poll per adapter: a second while the first is held is poll_pending, and the first carries on',
    level: 'required',
    async run (ctx) {
      const a = await agentWith(ctx, { s1: {} })
      let answered = false
      const first = settle(a.poll({ waitSeconds: 2 }, { timeoutMs: 5000 })).then((reply) => {
        answered = true
        return reply
      })
      expectThat(await waitHeld(ctx, a.id), 'a long poll with no event', 'held', 'not held')
      expectError(await a.poll({}), 'poll_pending', 'a second poll while the first is held')
      expectError(await a.poll({ waitSeconds: 1 }), 'poll_pending', 'a second long poll while the first is held')
      expectThat(!answered, 'the first poll after the refused ones', 'still held', 'answered')
      if (ctx.control !== undefined) expectControl(await ctx.control.tap(a.id, 's1'), 200, 'the user taps s1')
      const reply = await first
      if (reply instanceof Error) throw new CaseFailure('the first poll', 'a reply', reply.message)
      expectStatus(reply, 200, 'the first poll')
      expectEqual(sequences(reply), ctx.control === undefined ? [] : [1], 'the first poll\'s events')
    }
  }),
  defineCase({
    id: 'OT-133.b',
    title:
      'racing polls (fc.scheduler): whatever the order, one is held and the others are poll_pending; a holder that goes away frees the adapter',
    level: 'required',
    needs: ['control'],
    async run (ctx) {
      await fc.assert(
        fc.asyncProperty(fc.scheduler(), fc.integer({ min: 2, max: 4 }), fc.boolean(), async (s, n, leave) => {
          // A fresh adapter per run: its own lease, cursor and rate-limit bucket.
          const a = await agent(ctx, { capabilities: ['tap'], label: 'race' })
          try {
            await race(ctx, a, s, n, leave)
          } finally {
            await a.unregister()
          }
        }),
        ctx.fc({ endOnFailure: true })
      )
    }
  }),
  defineCase({
    id: 'OT-135',
    title: 'a reply holds the unacknowledged events after `after`, in ascending sequence order',
    level: 'required',
    needs: ['control'],
    async run (ctx) {
      const a = await agentWith(ctx, { s1: {}, s2: {} })
      for (const sid of ['s1', 's2', 's1', 's2', 's1']) {
        expectControl(await controlOf(ctx).tap(a.id, sid), 200, `the user taps ${sid}`)
      }
      expectEqual(sequences(await a.poll({})), [1, 2, 3, 4, 5], 'after 0')
      expectEqual(sequences(await a.poll({ after: 3 })), [4, 5], 'after 3')
      expectEqual(sequences(await a.poll({ after: 5 })), [], 'after 5')
      expectEqual(
        sequences(await a.poll({ after: 1 })),
        [2, 3, 4, 5],
        'after 1: delivered but unacknowledged events come again'
      )
      expectEqual(
        (await events(a, { after: 1 })).map((e) => e.sessionId),
        ['s2', 's1', 's2', 's1'],
        'their sessions, in order'
      )
    }
  }),
  defineCase({
    id: 'OT-A23.model',
    title: 'model-based: random posts, heartbeats, batches, taps, decisions and polls with any after/ack; every reply matches the cursor model (OT-135..137, OT-143..145)',
    level: 'decision',
    needs: ['control'],
    async run (ctx) {
      const runs = await runEventsModel(ctx)
      ctx.note(`${runs} command sequences`)
    }
  }),
  defineCase({
    id: 'OT-136',
    title: 'the ack is cumulative and never goes down; acknowledged events never come back',
    level: 'required',
    needs: ['control'],
    async run (ctx) {
      const a = await tappedAgent(ctx, 5)
      let highest = 0
      const poll = async (body: Record<string, unknown>, what: string): Promise<Reply> => {
        const reply = await a.poll(body)
        expectStatus(reply, 200, what)
        expectThat(
          reply.json.acknowledged >= highest,
          `${what}: acknowledged`,
          `at least ${highest} (never lower than before)`,
          reply.json.acknowledged
        )
        highest = reply.json.acknowledged
        return reply
      }
      await poll({}, 'the first poll')
      const acked = await poll({ after: 4, ack: 4 }, 'ack 4')
      expectEqual([acked.json.acknowledged, sequences(acked)], [4, [5]], 'ack 4: [acknowledged, events]')
      const lower = await poll({ after: 2, ack: 1 }, 'ack 1 after ack 4')
      expectEqual([lower.json.acknowledged, sequences(lower)], [4, [5]], 'a lower ack: [acknowledged, events]')
      const none = await poll({ after: 0 }, 'no ack at all')
      expectEqual([none.json.acknowledged, sequences(none)], [4, [5]], 'no ack (default 0): [acknowledged, events]')
      await poll({ after: 5, ack: 5 }, 'ack 5')
      expectEqual(
        sequences(await poll({}, 'after 0 once all are acknowledged')),
        [],
        'events with sequence <= acknowledged'
      )
    }
  }),
  defineCase({
    id: 'OT-137',
    title: 'invalid_cursor when ack > after, or after is beyond the highest sequence delivered',
    level: 'required',
    needs: ['control'],
    async run (ctx) {
      const a = await tappedAgent(ctx, 4)
      expectError(await a.poll({ after: 1 }), 'invalid_cursor', 'after 1 before anything was delivered')
      expectError(await a.poll({ after: 0, ack: 1 }), 'invalid_cursor', 'ack 1 > after 0')
      expectEqual(sequences(await a.poll({})), [1, 2, 3, 4], 'the first poll')
      expectError(await a.poll({ after: 3, ack: 5 }), 'invalid_cursor', '{after:3, ack:5}')
      expectError(await a.poll({ after: 10 }), 'invalid_cursor', '{after:10} when 1..4 were delivered')
      expectError(await a.poll({ after: 5, ack: 5 }), 'invalid_cursor', '{after:5, ack:5} when 1..4 were delivered')
      expectStatus(await a.poll({ after: 4, ack: 4 }), 200, '{after:4, ack:4} after 1..4 were delivered')
    }
  })
]

/** The decisions on sequences and polling while not enabled (OT-A23). */
export const pollDecisions: ConformanceCase[] = [
  defineCase({
    id: 'OT-A23',
    title: 'sequences are per lease from 1, shared by all types, kept across re-registration, restarted by a new lease',
    level: 'decision',
    needs: ['control'],
    async run (ctx) {
      const { a, control } = await keypadAgent(ctx, { s1: { approval: approval('r1') } })
      expectEqual((await a.poll({})).json.lastSequence, 0, 'lastSequence before any event')
      expectControl(await control.tap(a.id, 's1'), 200, 'a tap')
      expectStatus(await a.reregister(), 200, 're-registering with the token')
      expectControl(await control.decide(a.id, 'r1', { decision: 'allow' }), 200, 'allow r1')
      expectControl(await control.tap(a.id, 's1'), 200, 'a tap')
      const reply = await a.poll({})
      expectEqual(
        [
          (reply.json.events as Array<{ sequence: number; type: string }>).map((e) => `${e.sequence}:${e.type}`),
          reply.json.lastSequence
        ],
        [['1:tap', '2:approval', '3:tap'], 3],
        '[events, lastSequence]'
      )
      // after below the stored ack is accepted: events start at max(after, acknowledged) + 1.
      expectEqual(sequences(await a.poll({ after: 2, ack: 2 })), [3], 'ack 2')
      expectEqual(sequences(await a.poll({ after: 1 })), [3], 'after 1 below acknowledged 2')
      expectStatus(await a.unregister(), 204, 'unregistering')
      expectStatus(await a.reregister(), 200, 'a new lease')
      expectError(await a.poll({ after: 3 }), 'invalid_cursor', 'an after from the old lease')
      await mustPost(a, 's1', newSession())
      expectControl(await control.tap(a.id, 's1'), 200, 'a tap under the new lease')
      const fresh = await a.poll({})
      expectEqual(
        [sequences(fresh), fresh.json.lastSequence, fresh.json.acknowledged],
        [[1], 1, 0],
        'the new lease: [events, lastSequence, acknowledged]'
      )
    }
  }),
  defineCase({
    id: 'OT-A23.b',
    title: 'polling while the adapter is not enabled is allowed and returns nothing',
    level: 'decision',
    needs: ['control'],
    async run (ctx) {
      const a = await agent(ctx, { allow: false })
      expectEqual(a.reply.json.enabled, false, 'enabled without the user\'s approval')
      const reply = await a.poll({})
      expectStatus(reply, 200, 'a poll while awaiting the user')
      expectEqual([reply.json.events, reply.json.lastSequence], [[], 0], '[events, lastSequence]')
    }
  })
]
