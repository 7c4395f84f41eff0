import { defineCase, type ConformanceCase } from '../../orbtile-case.js'
import { expectEqual, expectError, expectSchema, expectStatus, expectThat } from '../../expect.js'
import { agent, approval, mustPost, newSession, sessionState } from '../../agent-sessions.js'
import { runSessionsModel } from '../../model/sessions-commands.js'
import { DEFAULTS } from '../../model/sessions-model.js'
import { agentWith, expectExists } from './sessions-support.js'

/** Session updates: the reply, the session id, creation and merge (OT-089..092, OT-A17.model). */
export const updateCases: ConformanceCase[] = [
  defineCase({
    id: 'OT-089',
    title: 'a valid SessionUpdate answers 200 with a SessionReply: session.uid, session.visible, optional warnings',
    level: 'required',
    async run (ctx) {
      const a = await agent(ctx)
      for (const update of [newSession(), { activity: 'tool', toolLabel: 'npm test' }]) {
        const reply = await a.post('s1', update)
        expectStatus(reply, 200, `POST ${JSON.stringify(update)}`)
        expectSchema(reply.json, 'SessionReply', 'the reply')
        expectThat(
          typeof reply.json.session.uid === 'string' && typeof reply.json.session.visible === 'boolean',
          'session.uid and session.visible',
          'a string and a boolean',
          reply.json.session
        )
        expectThat(
          reply.json.warnings === undefined || Array.isArray(reply.json.warnings),
          'warnings',
          'absent or an array',
          reply.json.warnings
        )
      }
    }
  }),
  defineCase({
    id: 'OT-090',
    title: 'sessionId is 1..128 of [A-Za-z0-9._:-]; 129 characters, a space, a slash and é are invalid_field sessionId',
    level: 'required',
    async run (ctx) {
      const a = await agent(ctx)
      for (const id of ['a.B_c:d-1', 'x'.repeat(128), '0']) {
        expectStatus(await a.post(id, newSession()), 200, `session id ${id.slice(0, 20)}`)
      }
      for (const id of ['x'.repeat(129), '%20', 'a%2Fb', '%C3%A9', 'a+b']) {
        expectError(await a.post(id, newSession()), 'invalid_field', `session id ${id.slice(0, 20)}`, 'sessionId')
      }
    }
  }),
  defineCase({
    id: 'OT-091',
    title: 'creating a session needs title and activity; a refused create creates nothing',
    level: 'required',
    async run (ctx) {
      const a = await agent(ctx)
      expectError(await a.post('s1', { activity: 'idle' }), 'invalid_field', 'no title', 'title')
      expectError(await a.post('s1', { title: 'x' }), 'invalid_field', 'no activity', 'activity')
      expectError(await a.post('s1', { model: 'm1' }), 'invalid_field', 'neither', 'title')
      await expectExists(a, 's1', false, 'after the refused creates')
      await mustPost(a, 's1', newSession())
      await mustPost(a, 's1', { model: 'm1' }, 'an update of an existing session needs neither')
    }
  }),
  defineCase({
    id: 'OT-092',
    title: 'merge: an absent field keeps its stored value, null clears it; every nullable field takes null',
    level: 'required',
    needs: ['control'],
    async run (ctx) {
      const created = { model: 'm1', cwd: '/x', statusDetail: 'building', subagentCount: 2, ttlSeconds: 300 }
      const a = await agentWith(ctx, { s1: created })
      await mustPost(a, 's1', { activity: 'tool' })
      let s = await sessionState(ctx, a.id, 's1')
      expectEqual(
        [s.model, s.cwd, s.statusDetail, s.subagentCount, s.ttlSeconds, s.lastActivity, s.title],
        ['m1', '/x', 'building', 2, 300, 'tool', 'orbtest session'],
        'after {"activity":"tool"}: [model, cwd, statusDetail, subagentCount, ttlSeconds, activity, title]'
      )
      await mustPost(a, 's1', { model: null })
      s = await sessionState(ctx, a.id, 's1')
      expectEqual(
        [s.model, s.cwd, s.statusDetail, s.subagentCount],
        [null, '/x', 'building', 2],
        'after {"model":null}: [model, cwd, statusDetail, subagentCount]'
      )
      const nullable = [
        'cwd',
        'project',
        'model',
        'toolLabel',
        'toolKind',
        'message',
        'statusDetail',
        'openURL',
        'pid',
        'approval',
        'question'
      ]
      await mustPost(a, 's1', {
        project: 'P',
        toolLabel: 'npm',
        toolKind: 'shell',
        message: { id: 'm', text: 'hi' },
        openURL: 'vscode://file/x',
        pid: process.pid,
        approval: approval('r1')
      })
      for (const key of nullable) expectStatus(await a.post('s1', { [key]: null }), 200, `${key}: null`)
      s = await sessionState(ctx, a.id, 's1')
      expectEqual(
        Object.fromEntries(nullable.map((key) => [key, s[key]])),
        Object.fromEntries(nullable.map((key) => [key, null])),
        'every nullable field cleared'
      )
    }
  }),
  defineCase({
    id: 'OT-092.b',
    title: 'merge, seen through the protocol: an update that leaves out approval keeps the approval pending',
    level: 'required',
    async run (ctx) {
      const a = await agentWith(ctx, { s1: { approval: approval('r1') } })
      await mustPost(a, 's1', { activity: 'waitingPermission', statusDetail: 'waiting' })
      // Still pending: the identical re-send is accepted (OT-127); had it been cleared, r1 would have retired (OT-126).
      expectStatus(
        await a.post('s1', { approval: approval('r1') }),
        200,
        'the identical approval again, after an update that left it out'
      )
      expectError(
        await a.post('s2', newSession({ approval: approval('r1') })),
        'invalid_field',
        'r1 on another session while pending',
        'approval.id'
      )
      await mustPost(a, 's1', { approval: null })
      expectError(
        await a.post('s1', { approval: approval('r1') }),
        'invalid_field',
        'r1 again after null cleared it',
        'approval.id'
      )
    }
  }),
  defineCase({
    id: 'OT-A17.model',
    title: 'model-based: any sequence of updates, heartbeats and batches is stored as merged (OT-092), from the OT-A17 defaults, with the request-id rules (OT-125, OT-126, OT-A22)',
    level: 'decision',
    async run (ctx) {
      const runs = await runSessionsModel(ctx, 'updates')
      ctx.note(`${runs} command sequences${ctx.control === undefined ? ' (replies only: no control API to read the stored fields)' : ', stored fields compared after every command'}`)
    }
  })
]

/** The decisions on uid, visibility, defaults and heartbeats (OT-A17, OT-A18). */
export const updateDecisions: ConformanceCase[] = [
  defineCase({
    id: 'OT-A17',
    title: 'uid is stable and unique across adapters; visible follows the user\'s approval, not background; the defaults',
    level: 'decision',
    needs: ['control'],
    async run (ctx) {
      const a = await agent(ctx)
      const uid = (await mustPost(a, 's1', newSession())).json.session.uid
      expectEqual((await mustPost(a, 's1', { activity: 'idle' })).json.session.uid, uid, 'the uid on the next update')
      const bg = await mustPost(a, 's1', { background: true })
      expectEqual([bg.json.session.uid, bg.json.session.visible], [uid, true], '[uid, visible] with background true')
      const hidden = await agent(ctx, { allow: false })
      const other = await mustPost(hidden, 's1', newSession())
      expectThat(
        other.json.session.uid !== uid,
        'the same sessionId under another adapter',
        `a uid other than ${uid}`,
        other.json.session.uid
      )
      expectEqual(other.json.session.visible, false, 'visible for an adapter awaiting the user')
      await mustPost(a, 's2', newSession())
      const s = await sessionState(ctx, a.id, 's2')
      // OT-A17's defaults, as the sessions model holds them, and no pending request.
      const defaults: Record<string, unknown> = { ...DEFAULTS, approval: null, question: null }
      const stored = Object.fromEntries(Object.keys(defaults).map((k) => [k, s[k]]))
      expectEqual(stored, defaults, 'a new session\'s defaults')
    }
  }),
  defineCase({
    id: 'OT-A18',
    title: 'a heartbeat {} changes nothing; ending a session retires its request; no route deletes one session',
    level: 'decision',
    async run (ctx) {
      const a = await agentWith(ctx, { s1: { model: 'm1', approval: approval('r1') } })
      const before = ctx.control === undefined ? undefined : await sessionState(ctx, a.id, 's1')
      await mustPost(a, 's1', {}, 'a heartbeat {}')
      if (before !== undefined) {
        const after = await sessionState(ctx, a.id, 's1')
        const strip = (s: Record<string, unknown>): Record<string, unknown> =>
          Object.fromEntries(Object.entries(s).filter(([k]) => !['lastContact', 'offlineAt', 'removeAt'].includes(k)))
        expectEqual(strip(after), strip(before), 'the session after a heartbeat')
      }
      expectStatus(await a.post('s1', { approval: approval('r1') }), 200, 'r1 is still pending after the heartbeat')
      expectStatus(await a.batch([]), 200, 'a batch that ends s1')
      expectError(
        await a.post('s2', newSession({ approval: approval('r1') })),
        'invalid_field',
        'r1 after its session ended',
        'approval.id'
      )
      await expectExists(a, 's1', false, 'an ended session')
      const del = await ctx.client.request({
        method: 'DELETE',
        path: `/adapters/${a.id}/sessions/s2`,
        headers: { ...a.headers }
      })
      expectEqual([del.status, del.headers.allow], [405, 'POST'], 'DELETE on a session path: [status, Allow]')
    }
  })
]
