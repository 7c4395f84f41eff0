import { CaseFailure, defineCase, type ConformanceCase } from '../../orbtile-case.js'
import { expectEqual, expectError, expectSchema, expectStatus, expectThat } from '../../expect.js'
import {
  agent, approval, controlOf, isVirtual, mustPost, newSession, question, sequences, settle, sleep, until, waitHeld,
  type Agent
} from '../../agent-sessions.js'
import { agentWith, events, expectControl, expectRefusedByControl, keypadAgent } from './sessions-support.js'

/** Long polls and the events: their fields, taps, decisions and picks (OT-140..146). */
export const eventCases: ConformanceCase[] = [
  defineCase({
    id: 'OT-140',
    title: 'a long poll is held up to waitSeconds, answered early when an event arrives; waitSeconds 0 answers at once',
    level: 'required',
    async run (ctx) {
      const a = await agentWith(ctx, { s1: {} })
      const virtual = await isVirtual(ctx)
      const started = Date.now()
      expectEqual(sequences(await a.poll({ waitSeconds: 0 })), [], 'waitSeconds 0 with no event')
      expectThat(Date.now() - started < 1000, 'waitSeconds 0', 'answered at once', `${Date.now() - started} ms`)
      let answered = false
      const held = settle(a.poll({ waitSeconds: 2 }, { timeoutMs: 5000 })).then((reply) => {
        answered = true
        return reply
      })
      expectThat(await waitHeld(ctx, a.id), 'a long poll with no event', 'held', 'answered')
      if (virtual) {
        await ctx.elapse(1999)
        await sleep(50)
        expectThat(!answered, 'the poll 1.999 s into a 2 s wait', 'still held', 'answered')
        await ctx.elapse(1)
      }
      const reply = await held
      if (reply instanceof Error) throw new CaseFailure('the long poll', 'a reply', reply.message)
      expectStatus(reply, 200, 'the long poll at its deadline')
      expectEqual(reply.json.events, [], 'the events at the deadline')
      if (!virtual) {
        expectThat(
          Date.now() - started >= 1900,
          'a 2 s long poll with no event',
          'held about 2 s',
          `${Date.now() - started} ms`
        )
      }
      if (ctx.control === undefined) return
      const early = settle(a.poll({ waitSeconds: 2 }, { timeoutMs: 5000 }))
      expectThat(await waitHeld(ctx, a.id), 'a second long poll', 'held', 'answered')
      const tapped = Date.now()
      expectControl(await ctx.control.tap(a.id, 's1'), 200, 'the user taps s1')
      const woken = await early
      if (woken instanceof Error) throw new CaseFailure('the long poll', 'a reply', woken.message)
      expectEqual(sequences(woken), [1], "the held poll's events after a tap")
      expectThat(
        Date.now() - tapped < 1500,
        'the held poll after a tap',
        'answered at once',
        `${Date.now() - tapped} ms`
      )
    }
  }),
  defineCase({
    id: 'OT-141',
    title: 'at most 4 long polls at once: a 5th is limit_exceeded; a client that goes away frees its slot',
    level: 'required',
    async run (ctx) {
      const agents: Agent[] = []
      for (let i = 0; i < 5; i++) agents.push(await agent(ctx, { capabilities: ['tap'], label: 'longpoll' }))
      const held = agents.slice(0, 3).map((a) => settle(a.poll({ waitSeconds: 2 }, { timeoutMs: 5000 })))
      // The 4th client goes away once the 5th has been refused: it closes its connection (no timer to wait out).
      const leaver = new AbortController()
      const leaving = settle(agents[3]!.poll({ waitSeconds: 2 }, { timeoutMs: 5000, signal: leaver.signal }))
      for (const a of agents.slice(0, 4)) {
        expectThat(await waitHeld(ctx, a.id), `${a.id}'s long poll`, 'held', 'not held')
      }
      ctx.cleanup(async () => {
        if (await isVirtual(ctx)) await ctx.elapse(2000)
        await Promise.all(held)
      })
      expectError(await agents[4]!.poll({ waitSeconds: 1 }), 'limit_exceeded', 'a 5th long poll')
      leaver.abort()
      const gone = await leaving instanceof Error
      expectThat(gone, 'the 4th poll\'s client', 'went away (closed its connection)', 'answered')
      const freed = await until(async () => {
        const reply = await agents[4]!.poll({ waitSeconds: 1 }, { timeoutMs: 200 }).catch(() => undefined)
        return reply === undefined || reply.status === 200
      }, 1500)
      expectThat(
        freed,
        "a 5th adapter's long poll after one client went away",
        'held or answered, not limit_exceeded',
        'limit_exceeded'
      )
    }
  }),
  defineCase({
    id: 'OT-142',
    title: 'polling events with no event capability is events_not_supported',
    level: 'required',
    async run (ctx) {
      const none = await agent(ctx, { capabilities: [] })
      expectError(await none.poll({}), 'events_not_supported', 'a registration without capabilities')
      expectError(await none.poll({ waitSeconds: 1 }), 'events_not_supported', 'a long poll without capabilities')
    }
  }),
  defineCase({
    id: 'OT-143',
    title: 'events: sequence >= 1, unique and increasing; type, sessionId, host; tap has only those, decisions add their fields',
    level: 'required',
    needs: ['control'],
    async run (ctx) {
      const { a, control } = await keypadAgent(ctx, {
        s1: { host: 'devbox', approval: approval('r1') },
        s2: { question: question('q1') }
      })
      expectControl(await control.tap(a.id, 's1'), 200, 'a tap on s1')
      expectControl(await control.decide(a.id, 'r1', { decision: 'allow' }), 200, 'allow r1')
      expectControl(await control.decide(a.id, 'q1', { picks: [[0]] }), 200, 'answer q1')
      expectControl(await control.tap(a.id, 's2'), 200, 'a tap on s2')
      const reply = await a.poll({})
      expectStatus(reply, 200, 'the poll')
      expectSchema(reply.json, 'EventsReply', 'the reply')
      const got = reply.json.events as Array<Record<string, any>>
      expectEqual(
        got.map((e) => e.sequence),
        [1, 2, 3, 4],
        'sequences'
      )
      // A tap event has only the four common fields; decision events add theirs (their schemas check them).
      expectEqual(
        [got[0], got[3]].map((e) =>
          Object.keys(e ?? {})
            .sort()
            .join(',')
        ),
        ['host,sequence,sessionId,type', 'host,sequence,sessionId,type'],
        'the fields of the tap events'
      )
      expectEqual(
        [
          got[1]?.requestId,
          got[1]?.decision,
          typeof got[1]?.expiresAt,
          got[2]?.requestId,
          got[2]?.picks,
          typeof got[2]?.expiresAt
        ],
        ['r1', 'allow', 'number', 'q1', [[0]], 'number'],
        "the decision events' [requestId, decision, expiresAt] and [requestId, picks, expiresAt]"
      )
      expectEqual(
        got.map((e) => [e.type, e.sessionId, e.host]),
        [
          ['tap', 's1', 'devbox'],
          ['approval', 's1', 'devbox'],
          ['question', 's2', 'local'],
          ['tap', 's2', 'local']
        ],
        '[type, sessionId, host]'
      )
      expectSchema(got[0], 'TapEvent', 'the tap event')
      expectSchema(got[1], 'ApprovalEvent', 'the approval event')
      expectSchema(got[2], 'QuestionEvent', 'the question event')
      await mustPost(a, 's1', { host: 'build-01' })
      expectControl(await control.tap(a.id, 's1'), 200, 'a tap after the host changed')
      expectEqual(
        (await events(a, { after: 4 })).map((e) => [e.sequence, e.host]),
        [[5, 'build-01']],
        'the event echoes the current host'
      )
    }
  }),
  defineCase({
    id: 'OT-144',
    title: 'tap events go only to adapters that declared tap, for their own sessions',
    level: 'required',
    needs: ['control'],
    async run (ctx) {
      const control = controlOf(ctx)
      const noTap = await agent(ctx, { capabilities: ['approvals'] })
      const tapper = await agent(ctx, { capabilities: ['tap'] })
      const bystander = await agent(ctx, { capabilities: ['tap'] })
      await mustPost(noTap, 's1', newSession())
      await mustPost(tapper, 's1', newSession())
      await mustPost(bystander, 's1', newSession())
      const tap = await control.tap(noTap.id, 's1')
      expectControl(tap, 200, 'the user taps a session of an adapter without tap')
      expectEqual(tap.json.event, null, 'the event of that tap')
      expectEqual(await events(noTap), [], 'the events of an adapter without tap')
      expectControl(await control.tap(tapper.id, 's1'), 200, 'the user taps a session of an adapter with tap')
      expectEqual(
        (await events(tapper)).map((e) => [e.type, e.sessionId]),
        [['tap', 's1']],
        'the events of the tapped adapter'
      )
      expectEqual(await events(bystander), [], 'the events of another adapter with tap')
    }
  }),
  defineCase({
    id: 'OT-145',
    title: 'a decision event names the request that was pending on that session, approval or question',
    level: 'required',
    needs: ['control'],
    async run (ctx) {
      const { a, control } = await keypadAgent(ctx, {
        A: { approval: approval('r1') },
        B: { question: question('q1') },
        C: { approval: approval('r2') }
      })
      expectRefusedByControl(
        await control.decide(a.id, 'nope', { decision: 'allow' }),
        'a decision on an id that is not pending'
      )
      expectControl(await control.decide(a.id, 'q1', { picks: [[1]] }), 200, 'answer q1')
      expectControl(await control.decide(a.id, 'r2', { decision: 'deny' }), 200, 'deny r2')
      expectControl(await control.decide(a.id, 'r1', { decision: 'allow' }), 200, 'allow r1')
      expectEqual((await events(a)).map((e) => [e.type, e.sessionId, e.requestId, e.decision ?? e.picks]), [
        ['question', 'B', 'q1', [[1]]], ['approval', 'C', 'r2', 'deny'], ['approval', 'A', 'r1', 'allow']
      ], '[type, sessionId, requestId, decision or picks]')
    }
  }),
  defineCase({
    id: 'OT-146',
    title: 'picks: one array per question in order, unique indices below each option count, one for single-select',
    level: 'required',
    needs: ['control'],
    async run (ctx) {
      const { a, control } = await keypadAgent(ctx)
      const questions = [
        { text: 'a?', multiSelect: true, options: [{ label: 'x' }, { label: 'y' }, { label: 'z' }] },
        { text: 'b?', options: [{ label: 'x' }, { label: 'y' }] }
      ]
      await mustPost(a, 's1', newSession({ question: { id: 'q1', questions } }))
      for (const picks of [[[0, 2]], [[0, 2], [0, 1]], [[3], [0]], [[0, 0], [1]], [[0], []], [[0], [1], [0]]]) {
        expectRefusedByControl(await control.decide(a.id, 'q1', { picks }), `picks ${JSON.stringify(picks)}`)
      }
      expectEqual(await events(a), [], 'events after refused answers')
      expectControl(await control.decide(a.id, 'q1', { picks: [[2, 0], [1]] }), 200, 'picks [[2,0],[1]]')
      const [event] = await events(a)
      const picks = event?.picks as number[][]
      expectThat(
        Array.isArray(picks) &&
          picks.length === questions.length &&
          picks.every(
            (p, i) =>
              p.length >= 1 &&
              new Set(p).size === p.length &&
              p.every((n) => Number.isInteger(n) && n >= 0 && n < questions[i]!.options.length) &&
              (questions[i]!.multiSelect === true || p.length === 1)
          ),
        "the event's picks",
        'one array per question, unique indices in range, one for the single-select',
        picks
      )
      expectEqual(
        picks.map((p) => [...p].sort()),
        [[0, 2], [1]],
        'the picks, as answered'
      )
    }
  })
]

/** The decision on the events of ended sessions (OT-A30). */
export const eventDecisions: ConformanceCase[] = [
  defineCase({
    id: 'OT-A30',
    title: 'events queued for a session that ended stay deliverable; no new tap or decision events are made for it',
    level: 'decision',
    needs: ['control'],
    async run (ctx) {
      const sessions = { s1: { approval: approval('r1') }, s2: { approval: approval('r2') } }
      const { a, control } = await keypadAgent(ctx, sessions)
      expectControl(await control.tap(a.id, 's1'), 200, 'a tap on s1')
      expectControl(await control.decide(a.id, 'r1', { decision: 'allow' }), 200, 'allow r1')
      expectStatus(await a.batch([]), 200, 'a batch that ends s1 and s2')
      expectRefusedByControl(await control.tap(a.id, 's1'), 'a tap on an ended session')
      expectRefusedByControl(
        await control.decide(a.id, 'r2', { decision: 'allow' }),
        'a decision on the request of an ended session'
      )
      expectEqual(
        (await events(a)).map((e) => [e.type, e.sessionId]),
        [
          ['tap', 's1'],
          ['approval', 's1']
        ],
        'the events queued before s1 ended'
      )
    }
  })
]
