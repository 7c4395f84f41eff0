import { LIMITS } from '../../../../../src/spec/orbtile.js'
import { defineCase, type ConformanceCase } from '../../orbtile-case.js'
import { expectEqual, expectError, expectStatus, expectThat } from '../../expect.js'
import {
  agent, approval, controlOf, isVirtual, mustPost, newSession, pass, passUntilTarget, question, sessionState,
  snapshot
} from '../../agent-sessions.js'
import { REAL_MARGIN_MS, REAL_SLACK_MS } from '../../time.js'
import {
  agentWith, events, expectAccepted, expectControl, expectIdRefused, expectRefused, expectRefusedByControl,
  expectRequestFields, keypadAgent
} from './sessions-support.js'

/** Approvals, questions and request ids (OT-120..126). */
export const requestCases: ConformanceCase[] = [
  defineCase({
    id: 'OT-120',
    title: 'approval needs id, toolName 1..80 and commandSummary 1..512; null clears it',
    level: 'required',
    async run (ctx) {
      await expectRequestFields(ctx, [
        [{ approval: { id: 'r', toolName: '', commandSummary: 'x' } }, 'approval.toolName'],
        [{ approval: { id: 'r', toolName: 'x'.repeat(81), commandSummary: 'x' } }, 'approval.toolName'],
        [{ approval: { id: 'r', toolName: 'x', commandSummary: '' } }, 'approval.commandSummary'],
        [{ approval: { id: 'r', toolName: 'x', commandSummary: 'x'.repeat(513) } }, 'approval.commandSummary'],
        [{ approval: { toolName: 'x', commandSummary: 'x' } }, 'approval.id'],
        [{ approval: { id: 'r', commandSummary: 'x' } }, 'approval.toolName'],
        [{ approval: { id: 'r', toolName: 'x' } }, 'approval.commandSummary']
      ], [
        { approval: { id: 'r1', toolName: 'x'.repeat(80), commandSummary: 'x'.repeat(512) } },
        { approval: null },
        // Cleared: the session may now hold a question (OT-122 would refuse it beside a pending approval).
        { question: question('q1') }
      ])
    }
  }),
  defineCase({
    id: 'OT-121',
    title: 'question has 1..4 questions of 2..4 options; text 1..1024, header up to 12, labels 1..120; null clears it',
    level: 'required',
    async run (ctx) {
      const a = await agentWith(ctx, { s1: {} })
      const q = (questions: unknown): Record<string, unknown> => ({ question: { id: 'q', questions } })
      const opt = [{ label: 'a' }, { label: 'b' }]
      await expectRefused(a, 's1', [
        [q([]), 'question.questions'],
        [q(Array(5).fill({ text: 't', options: opt })), 'question.questions'],
        [q([{ text: 't', options: [{ label: 'a' }] }]), 'question.questions[0].options'],
        [q([{ text: 't', options: Array(5).fill({ label: 'a' }) }]), 'question.questions[0].options'],
        [q([{ text: 't', header: 'x'.repeat(13), options: opt }]), 'question.questions[0].header'],
        [q([{ text: '', options: opt }]), 'question.questions[0].text'],
        [q([{ text: 'x'.repeat(1025), options: opt }]), 'question.questions[0].text'],
        [q([{ text: 't', options: [{ label: '' }, { label: 'b' }] }]), 'question.questions[0].options[0].label'],
        [
          q([{ text: 't', options: [{ label: 'x'.repeat(121) }, { label: 'b' }] }]),
          'question.questions[0].options[0].label'
        ],
        [
          q([{ text: 't', options: [{ label: 'a', description: 'x'.repeat(513) }, { label: 'b' }] }]),
          'question.questions[0].options[0].description'
        ],
        [q([{ text: 't', multiSelect: 'yes', options: opt }]), 'question.questions[0].multiSelect'],
        [{ question: { questions: [{ text: 't', options: opt }] } }, 'question.id']
      ])
      const full = Array.from({ length: 4 }, (_, i) => ({
        text: 'x'.repeat(1024),
        header: 'h'.repeat(12),
        multiSelect: i % 2 === 0,
        options: Array.from({ length: 4 }, (_, j) => ({
          label: `${'l'.repeat(119)}${j}`,
          description: 'd'.repeat(512)
        }))
      }))
      await expectAccepted(a, 's1', [
        { question: { id: 'q1', questions: full } },
        { question: null },
        { approval: approval('r1') }
      ])
    }
  }),
  defineCase({
    id: 'OT-122',
    title: 'a session holds one pending request at most: an update that would leave both is refused',
    level: 'required',
    async run (ctx) {
      const a = await agentWith(ctx, { s1: { approval: approval('r1') } })
      expectError(
        await a.post('s1', { question: question('q1') }),
        'invalid_field',
        'a question beside the pending approval'
      )
      expectError(
        await a.post('s1', { approval: approval('r2'), question: question('q2') }),
        'invalid_field',
        'both in one update'
      )
      expectError(
        await a.post('s2', newSession({ approval: approval('r3'), question: question('q3') })),
        'invalid_field',
        'both on creation'
      )
      await expectAccepted(a, 's1', [{ approval: null, question: question('q1') }])
      expectError(
        await a.post('s1', { approval: approval('r4') }),
        'invalid_field',
        'an approval beside the pending question'
      )
    }
  }),
  defineCase({
    id: 'OT-123',
    title:
      'an adapter holds 32 pending requests; a 33rd cannot arise (32 sessions, one each), and a replacement is not one',
    level: 'required',
    async run (ctx) {
      const a = await agent(ctx)
      expectStatus(
        await a.batch(
          Array.from({ length: LIMITS.maxPendingRequestsPerAdapter }, (_, i) => ({
            id: `s${i}`,
            ...newSession(),
            approval: approval(`r${i}`)
          }))
        ),
        200,
        '32 sessions with one approval each'
      )
      expectError(
        await a.post('s32', newSession({ approval: approval('r32') })),
        'limit_exceeded',
        'a 33rd session with a 33rd request'
      )
      expectStatus(await a.post('s0', { approval: approval('r0b') }), 200, 'replacing one of the 32')
      if (ctx.control !== undefined) expectEqual((await snapshot(ctx, a.id)).requests.length, 32, 'pending requests')
    }
  }),
  defineCase({
    id: 'OT-124',
    title: 'request ids are 1..128 of [A-Za-z0-9._:-]',
    level: 'required',
    async run (ctx) {
      await expectRequestFields(ctx, [
        [{ approval: approval('a b') }, 'approval.id'],
        [{ approval: approval('') }, 'approval.id'],
        [{ approval: approval('r/1') }, 'approval.id'],
        [{ question: question('x'.repeat(129)) }, 'question.id'],
        [{ question: question('é') }, 'question.id']
      ], [{ approval: approval('a.B_c:d-1') }, { approval: approval('x'.repeat(128)) }])
    }
  }),
  defineCase({
    id: 'OT-125',
    title:
      'request ids share one namespace across sessions and kinds: an id pending elsewhere, or as the other kind, is refused',
    level: 'required',
    async run (ctx) {
      const a = await agentWith(ctx, { A: { approval: approval('r1') }, B: {} })
      await expectIdRefused(a, 'B', 'question', 'r1', 'question r1 on B while approval r1 is pending on A')
      await expectIdRefused(a, 'B', 'approval', 'r1', 'approval r1 on B while pending on A')
      await mustPost(a, 'C', newSession({ question: question('q1') }))
      await expectIdRefused(a, 'B', 'approval', 'q1', 'approval q1 while question q1 is pending on C')
      expectError(
        await a.post('A', { approval: null, question: question('r1') }),
        'invalid_field',
        'r1 as a question on A in the update that clears approval r1'
      )
    }
  }),
  defineCase({
    id: 'OT-126',
    title: 'a retired id is refused on any session: cleared with null, or replaced',
    level: 'required',
    async run (ctx) {
      const a = await agentWith(ctx, { s1: { approval: approval('r1') } })
      await mustPost(a, 's1', { approval: null })
      await expectIdRefused(a, 's1', 'approval', 'r1', 'r1 again on s1 after null')
      await mustPost(a, 's2', newSession())
      await expectIdRefused(a, 's2', 'approval', 'r1', 'r1 on s2 after null')
      await expectIdRefused(a, 's2', 'question', 'r1', 'r1 as a question after null')
      await mustPost(a, 's2', { question: question('q1') })
      await mustPost(a, 's2', { question: null })
      await expectIdRefused(a, 's1', 'question', 'q1', 'q1 again after null')
    }
  })
]

/**
 * The decisions on requests: capabilities, replacement, decided requests, downgrades, expiry, the id limit
 * (OT-A22).
 */
export const requestDecisions: ConformanceCase[] = [
  defineCase({
    id: 'OT-A22',
    title:
      'requests need their capability; a new id replaces the pending one (the old retires); an id names fixed content',
    level: 'decision',
    async run (ctx) {
      const tapOnly = await agentWith(ctx, { s1: {} }, { capabilities: ['tap'] })
      expectError(
        await tapOnly.post('s1', { approval: approval('r1') }),
        'invalid_field',
        'an approval without the approvals capability',
        'approval'
      )
      expectError(
        await tapOnly.post('s1', { question: question('q1') }),
        'invalid_field',
        'a question without the questions capability',
        'question'
      )
      const a = await agent(ctx, { keypad: false })
      await mustPost(a, 's1', newSession({ approval: approval('r1') }), 'an approval without keypad decisions')
      await mustPost(a, 's1', { approval: approval('r2') }, 'a new approval id on the same session')
      await mustPost(a, 's2', newSession())
      await expectIdRefused(a, 's2', 'approval', 'r1', 'r1 after r2 replaced it')
      expectError(
        await a.post('s1', { approval: approval('r2', { commandSummary: 'rm -rf /' }) }),
        'invalid_field',
        'r2 with other content',
        'approval.id'
      )
      expectError(
        await a.post('s1', { question: question('q1') }),
        'invalid_field',
        'a question while an approval is pending',
        'question'
      )
      await mustPost(a, 's1', { approval: null, question: question('q1') })
      expectError(
        await a.post('s1', { approval: approval('r3') }),
        'invalid_field',
        'an approval while a question is pending',
        'approval'
      )
      expectError(
        await a.post('s1', {
          question: question('q1', { questions: [{ text: 'Other?', options: [{ label: 'a' }, { label: 'b' }] }] })
        }),
        'invalid_field',
        'q1 with other content',
        'question.id'
      )
      await mustPost(
        a,
        's1',
        {
          question: question('q1', {
            questions: [{ text: 'Which branch?', multiSelect: false, options: [{ label: 'main' }, { label: 'dev' }] }]
          })
        },
        'q1 with its default multiSelect spelt out'
      )
    }
  }),
  defineCase({
    id: 'OT-A22.b',
    title: 'after the user decides, the request is not decidable again and stays pending until the adapter clears it',
    level: 'decision',
    needs: ['control'],
    async run (ctx) {
      const { a, control } = await keypadAgent(ctx, { s1: { approval: approval('r1') } })
      expectControl(await control.decide(a.id, 'r1', { decision: 'deny' }), 200, 'deny r1')
      expectRefusedByControl(await control.decide(a.id, 'r1', { decision: 'allow' }), 'a second decision on r1')
      expectEqual((await events(a)).map((e) => [e.requestId, e.decision]), [['r1', 'deny']], 'one decision event')
      expectStatus(await a.post('s1', { approval: approval('r1') }), 200, 'r1 is still pending (identical re-send)')
      expectEqual((await sessionState(ctx, a.id, 's1')).approval?.id, 'r1', 'the session\'s approval')
      await mustPost(a, 's1', { approval: null })
      expectRefusedByControl(await control.decide(a.id, 'r1', { decision: 'allow' }), 'a decision on r1 once cleared')
    }
  }),
  defineCase({
    id: 'OT-A22.c',
    title: 'a capability downgrade retires that kind\'s pending requests and drops their queued events',
    level: 'decision',
    needs: ['control'],
    async run (ctx) {
      const sessions = { s1: { approval: approval('r1') }, s2: { question: question('q1') } }
      const a = await agentWith(ctx, sessions, { keypad: true })
      expectControl(await controlOf(ctx).decide(a.id, 'r1', { decision: 'allow' }), 200, 'allow r1')
      expectStatus(await a.reregister({ capabilities: ['tap', 'questions'] }), 200, 're-registering without approvals')
      expectEqual((await snapshot(ctx, a.id)).requests.map((r: { id: string }) => r.id), ['q1'], 'the pending requests')
      expectEqual((await sessionState(ctx, a.id, 's1')).approval, null, 's1\'s approval')
      expectEqual(await events(a), [], 'the queued approval event')
      expectStatus(await a.post('s2', { question: question('q1') }), 200, 'q1 is still pending')
    }
  }),
  defineCase({
    id: 'OT-A22.d',
    title: 'approvals expire 600 s after they first became pending, and their id retires',
    level: 'decision',
    needs: ['control', 'slow'],
    async run (ctx) {
      const a = await agentWith(ctx, { s1: { approval: approval('r1'), ttlSeconds: 3600 } })
      const virtual = await isVirtual(ctx)
      if (virtual) {
        await pass(ctx, 599_000, [a])
        expectEqual((await snapshot(ctx, a.id)).requests.map((r: { id: string }) => r.id), ['r1'], 'pending at 599 s')
        await pass(ctx, 2_000, [a])
      } else {
        // A real clock (--slow): looked at well before and a little after the expiresAt the target holds for r1.
        const [r1] = (await snapshot(ctx, a.id)).requests as Array<{ id: string; expiresAt: number }>
        expectThat(r1?.id === 'r1', 'the pending requests (control API)', 'r1', r1)
        await passUntilTarget(ctx, r1!.expiresAt * 1000 - REAL_MARGIN_MS, [a])
        expectEqual(
          (await snapshot(ctx, a.id)).requests.map((r: { id: string }) => r.id),
          ['r1'],
          `pending ${REAL_MARGIN_MS / 1000} s before its expiresAt`
        )
        await passUntilTarget(ctx, r1!.expiresAt * 1000 + REAL_SLACK_MS, [a])
      }
      expectEqual(
        [(await snapshot(ctx, a.id)).requests, (await sessionState(ctx, a.id, 's1')).approval],
        [[], null],
        `[pending requests, the session's approval] ${virtual ? 'at 601 s' : `${REAL_SLACK_MS / 1000} s after its expiresAt`}`
      )
      await expectIdRefused(a, 's1', 'approval', 'r1', 'r1 after it expired')
    }
  }),
  defineCase({
    id: 'OT-A22.e',
    title: 'maxRequestIDs: 4096 distinct ids per lease; the 4097th is limit_exceeded, re-registering keeps the count, a new lease resets it',
    level: 'decision',
    async run (ctx) {
      const a = await agent(ctx, { capabilities: ['approvals'] })
      const per = LIMITS.maxSessionsPerAdapter
      for (let round = 0; round < LIMITS.maxRequestIDs / per; round++) {
        const reply = await a.batch(
          Array.from({ length: per }, (_, i) => ({
            id: `s${i}`,
            ...newSession(),
            approval: approval(`r${round}-${i}`)
          }))
        )
        expectStatus(reply, 200, `batch ${round + 1} (ids ${round * per + 1}..${(round + 1) * per})`)
      }
      expectError(await a.post('s0', { approval: approval('r-one-more') }), 'limit_exceeded', 'the 4097th id')
      expectStatus(await a.reregister(), 200, 're-registering with the token')
      expectError(
        await a.post('s0', { approval: approval('r-one-more') }),
        'limit_exceeded',
        'the 4097th id after re-registering'
      )
      expectStatus(await a.unregister(), 204, 'unregistering')
      expectStatus(await a.reregister(), 200, 'a new lease')
      await mustPost(a, 's0', newSession({ approval: approval('r0-0') }), 'an id of the old lease, under the new one')
    }
  })
]
