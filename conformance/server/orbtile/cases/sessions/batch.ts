import { CaseFailure, defineCase, type ConformanceCase } from '../../orbtile-case.js'
import { errorProblem, expectEqual, expectError, expectStatus, expectThat } from '../../expect.js'
import { agent, approval, newSession, question, sessionState, snapshot } from '../../agent-sessions.js'
import { runSessionsModel } from '../../model/sessions-commands.js'
import { agentAndBystander, agentWith, expectExists } from './sessions-support.js'

/** Batch replace (OT-114..119, OT-A19.model). */
export const batchCases: ConformanceCase[] = [
  defineCase({
    id: 'OT-114',
    title: "a batch replaces the set: listed sessions are created or updated, unlisted ones end, other adapters' stay",
    level: 'required',
    async run (ctx) {
      const [a, other] = await agentAndBystander(ctx, { keep: {}, drop: {} }, { drop: {} })
      expectStatus(
        await a.batch([
          { id: 'keep', ...newSession({ activity: 'idle' }) },
          { id: 'new', ...newSession() }
        ]),
        200,
        'the batch'
      )
      await expectExists(a, 'keep', true, 'a listed session that existed')
      await expectExists(a, 'new', true, 'a listed session that did not exist')
      await expectExists(a, 'drop', false, 'an unlisted session')
      await expectExists(other, 'drop', true, "another adapter's session of the same id")
      if (ctx.control !== undefined) {
        expectEqual(
          (await snapshot(ctx, a.id)).sessions.map((s: { id: string }) => s.id).sort(),
          ['keep', 'new'],
          'the stored sessions'
        )
        expectEqual((await sessionState(ctx, a.id, 'keep')).lastActivity, 'idle', 'the updated activity')
      }
    }
  }),
  defineCase({
    id: 'OT-A19.model',
    title: 'model-based: any sequence of batches (some with a bad item) and updates matches the model (OT-114..118); refused batches change nothing',
    level: 'decision',
    async run (ctx) {
      const runs = await runSessionsModel(ctx, 'batches')
      ctx.note(`${runs} command sequences`)
    }
  }),
  defineCase({
    id: 'OT-115',
    title: 'sessions is required: a batch without it is invalid_field sessions',
    level: 'required',
    async run (ctx) {
      const a = await agent(ctx)
      expectError(await a.putBatch({}), 'invalid_field', 'a batch {}', 'sessions')
      expectError(await a.putBatch({ session: [] }), 'invalid_field', 'a batch with a misspelt key', 'sessions')
      expectError(await a.putBatch({ sessions: {} }), 'invalid_field', 'sessions that is not an array', 'sessions')
    }
  }),
  defineCase({
    id: 'OT-116',
    title: 'a batch holds at most 32 items: 33 are refused and change nothing',
    level: 'required',
    async run (ctx) {
      const a = await agent(ctx)
      const items = Array.from({ length: 33 }, (_, i) => ({ id: `s${i}`, ...newSession() }))
      expectError(await a.batch(items), 'invalid_field', '33 items')
      await expectExists(a, 's0', false, 'after the refused batch')
      expectStatus(await a.batch(items.slice(0, 32)), 200, '32 items')
      await expectExists(a, 's31', true, 'after the 32-item batch')
    }
  }),
  defineCase({
    id: 'OT-117',
    title: 'every item needs id, title and activity, even for a session that exists',
    level: 'required',
    async run (ctx) {
      const a = await agentWith(ctx, { s0: {} })
      expectError(
        await a.batch([
          { id: 's1', ...newSession() },
          { id: 's2', ...newSession() },
          { id: 's0', activity: 'idle' }
        ]),
        'invalid_field',
        'an existing session without title',
        'sessions[2].title'
      )
      expectError(
        await a.batch([{ id: 's0', title: 'x' }]),
        'invalid_field',
        'an existing session without activity',
        'sessions[0].activity'
      )
      expectError(await a.batch([newSession()]), 'invalid_field', 'an item without id', 'sessions[0].id')
      expectError(
        await a.batch([{ id: 'bad id', ...newSession() }]),
        'invalid_field',
        'an id that is not a SessionID',
        'sessions[0].id'
      )
      await expectExists(a, 's1', false, 'after the refused batches')
      await expectExists(a, 's0', true, 'after the refused batches')
    }
  }),
  defineCase({
    id: 'OT-118',
    title: 'every item obeys every SessionUpdate rule, approvals and questions included',
    level: 'required',
    async run (ctx) {
      const a = await agent(ctx)
      const item = (id: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
        id,
        ...newSession(),
        ...extra
      })
      const cases: Array<[unknown[], string]> = [
        [[item('s0'), item('s1', { ttlSeconds: 5 })], 'sessions[1].ttlSeconds'],
        [[item('s0', { title: 'x'.repeat(121) })], 'sessions[0].title'],
        [[item('s0', { activity: 'empty' })], 'sessions[0].activity'],
        [[item('s0'), item('s1', { host: 'a b' })], 'sessions[1].host'],
        [[item('s0', { subagentCount: 100 })], 'sessions[0].subagentCount'],
        [[item('s0', { project: '   ' })], 'sessions[0].project'],
        [[item('s0', { message: { id: 'm' } })], 'sessions[0].message.text'],
        [[item('s0'), item('s1', { openURL: 'https://example.com' })], 'sessions[1].openURL'],
        [[item('s0', { pid: 0 })], 'sessions[0].pid'],
        [[item('s0', { approval: { id: 'r1', toolName: '', commandSummary: 'x' } })], 'sessions[0].approval.toolName'],
        [[item('s0', { question: question('q1', { questions: [] }) })], 'sessions[0].question.questions'],
        [
          [item('s0', { approval: approval('r1') }), item('s1', { approval: approval('r1') })],
          'sessions[1].approval.id'
        ],
        [[item('s0', { approval: approval('r1'), question: question('q1') })], 'sessions[0]']
      ]
      for (const [items, field] of cases) {
        const reply = await a.batch(items)
        const problem = errorProblem(reply, 'invalid_field')
        if (problem !== undefined || !String(reply.json.error.field).startsWith(field)) {
          throw new CaseFailure(
            `a batch with a bad item: ${problem ?? `field ${reply.json.error.field}`}`,
            `invalid_field on ${field}`,
            `${reply.status} ${reply.text.slice(0, 300)}`
          )
        }
      }
      expectStatus(
        await a.batch([
          item('s0', { approval: approval('r1') }),
          item('s1', { question: question('q1'), openURL: 'vscode://x', ttlSeconds: 3600 })
        ]),
        200,
        'a batch of good items'
      )
    }
  }),
  defineCase({
    id: 'OT-119',
    title: '{"sessions": []} ends every session of the adapter',
    level: 'required',
    async run (ctx) {
      const [a, other] = await agentAndBystander(ctx, { s1: { approval: approval('r1') }, s2: {} }, { s1: {} })
      expectStatus(await a.batch([]), 200, 'an empty batch')
      await expectExists(a, 's1', false, 's1 after the empty batch')
      await expectExists(a, 's2', false, 's2 after the empty batch')
      await expectExists(other, 's1', true, 'another adapter\'s session')
      if (ctx.control !== undefined) expectEqual((await snapshot(ctx, a.id)).sessions, [], 'the stored sessions')
    }
  })
]

/** The decision on the batch reply, merging and atomicity (OT-A19). */
export const batchDecisions: ConformanceCase[] = [
  defineCase({
    id: 'OT-A19',
    title:
      'batch: reply {sessions, ended, warnings}; items merge; atomic; duplicate ids and 33 items refused with their field',
    level: 'decision',
    async run (ctx) {
      const sessions = { keep: { approval: approval('r1'), model: 'm1' }, drop: {} }
      const a = await agentWith(ctx, sessions, { urlSchemes: ['vscode'] })
      const reply = await a.batch([
        { id: 'keep', ...newSession({ activity: 'idle' }) },
        { id: 'new', ...newSession() }
      ])
      expectStatus(reply, 200, 'a batch')
      const listed = (reply.json.sessions ?? []) as Array<Record<string, unknown>>
      expectThat(
        listed.length === 2 && listed.every((s) => typeof s.uid === 'string' && typeof s.visible === 'boolean'),
        "the reply's sessions",
        '[{id, uid, visible}] in order',
        reply.json.sessions
      )
      expectEqual(
        [listed.map((s) => s.id), reply.json.ended, Array.isArray(reply.json.warnings)],
        [['keep', 'new'], ['drop'], true],
        'the reply: [session ids, ended, warnings is an array]'
      )
      // Items merge: the approval left out of the item is still pending.
      expectStatus(
        await a.post('keep', { approval: approval('r1') }),
        200,
        'r1 is still pending after the batch left it out'
      )
      if (ctx.control !== undefined) {
        expectEqual((await sessionState(ctx, a.id, 'keep')).model, 'm1', 'the model left out of the item')
      }
      // Atomic: a bad item after good ones changes nothing, whether the schema or a later rule refuses it.
      for (const [bad, field] of [
        [{ id: 'late', ...newSession({ approval: approval('r1') }) }, 'sessions[2].approval.id'],
        [{ id: 'late', ...newSession({ openURL: 'https://example.com' }) }, 'sessions[2].openURL'],
        [{ id: 'late', ...newSession({ ttlSeconds: 1 }) }, 'sessions[2].ttlSeconds']
      ] as const) {
        expectError(
          await a.batch([
            { id: 'fresh', ...newSession({ approval: approval('r9') }) },
            { id: 'keep', ...newSession(), approval: null },
            bad
          ]),
          'invalid_field',
          `a batch whose third item is bad (${field})`,
          field
        )
        await expectExists(a, 'new', true, `after the refused batch (${field}), the unlisted session`)
        await expectExists(a, 'fresh', false, `after the refused batch (${field}), the first item's session`)
        expectStatus(
          await a.post('keep', { approval: approval('r1') }),
          200,
          `after the refused batch (${field}), r1 is still pending on keep`
        )
      }
      expectStatus(await a.post('new', { approval: approval('r9') }), 200, 'r9 of a refused batch is fresh')
      expectError(
        await a.batch([
          { id: 'x', ...newSession() },
          { id: 'y', ...newSession() },
          { id: 'x', ...newSession() }
        ]),
        'invalid_field',
        'a duplicate id',
        'sessions[2].id'
      )
      expectError(
        await a.batch(Array.from({ length: 33 }, (_, i) => ({ id: `s${i}`, ...newSession() }))),
        'invalid_field',
        '33 items',
        'sessions'
      )
      // 32 sessions by batch; a POST that creates a 33rd is limit_exceeded.
      expectStatus(
        await a.batch(Array.from({ length: 32 }, (_, i) => ({ id: `s${i}`, ...newSession() }))),
        200,
        '32 items'
      )
      expectError(await a.post('s32', newSession()), 'limit_exceeded', 'a POST creating a 33rd session')
    }
  })
]
