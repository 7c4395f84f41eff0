import fc from 'fast-check'
import { existsSync, readFileSync } from 'node:fs'
import { CaseFailure, CaseSkip, defineCase, type CaseContext } from '../case.js'
import type { Fault } from '../../../src/orbtile-mock/faults.js'
import { LIMITS } from '../../../src/orbtile-mock/spec.js'
import { errorProblem, expectEqual, expectError, expectSchema, expectStatus, expectThat } from '../expect.js'
import type { Reply } from '../transport.js'
import {
  agent, approval, controlOf, isVirtual, mustPost, newSession, pass, passUntil, passUntilTarget, question, sequences,
  sessionState, settle, sleep, snapshot, targetNow, until, waitHeld, type Agent
} from '../agent-sessions.js'
import { REAL_MARGIN_MS, REAL_SLACK_MS, slowPart } from '../time.js'
import { runEventsModel, runSessionsModel } from '../model-sessions.js'

/** Fails unless the session exists (or not), probed with a heartbeat (OT-A18). */
async function expectExists (a: Agent, sessionId: string, exists: boolean, what: string): Promise<void> {
  const found = await a.exists(sessionId)
  expectThat(found === exists, what, exists ? `session ${sessionId} exists` : `session ${sessionId} does not exist`, found ? 'it exists' : 'it does not exist')
}

/** Fails unless every update is refused with invalid_field on `field` (the key, unless given). */
async function expectRefused (a: Agent, sessionId: string, cases: Array<[Record<string, unknown>, string?]>): Promise<void> {
  for (const [update, field] of cases) {
    expectError(await a.post(sessionId, update), 'invalid_field', `POST ${JSON.stringify(update).slice(0, 120)}`, field ?? Object.keys(update)[0])
  }
}

/** Fails unless every update is accepted. */
async function expectAccepted (a: Agent, sessionId: string, updates: Array<Record<string, unknown>>): Promise<void> {
  for (const update of updates) expectStatus(await a.post(sessionId, update), 200, `POST ${JSON.stringify(update).slice(0, 120)}`)
}

const expectControl = (reply: { status: number, json: unknown }, status: number, what: string): void => {
  if (reply.status !== status) throw new CaseFailure(what, `control API ${status}`, `${reply.status} ${JSON.stringify(reply.json)}`)
}

const expectRefusedByControl = (reply: { status: number, json: unknown }, what: string): void => {
  if (reply.status === 200) throw new CaseFailure(what, 'the user action refused (4xx)', `200 ${JSON.stringify(reply.json)}`)
}

/** One poll's events (it must answer 200). */
async function events (a: Agent, body: Record<string, unknown> = {}, what = 'an events poll'): Promise<Array<Record<string, any>>> {
  const reply = await a.poll(body)
  expectStatus(reply, 200, what)
  return reply.json.events
}

/** A pid that names no process here, or undefined. */
function deadPid (): number | undefined {
  for (const pid of [2 ** 22 + 12_345, 999_999, 2 ** 31 - 2]) {
    try {
      process.kill(pid, 0)
    } catch (err) {
      if ((err as { code?: string }).code === 'ESRCH') return pid
    }
  }
  return undefined
}

/** A live process of another user, or undefined (Linux only: /proc/1 belongs to root in most setups). */
function foreignPid (): number | undefined {
  const uid = process.getuid?.()
  if (uid === undefined || uid === 0 || !existsSync('/proc/1/status')) return undefined
  const owner = /^Uid:\s+(\d+)/m.exec(readFileSync('/proc/1/status', 'utf8'))?.[1]
  return owner !== undefined && Number(owner) !== uid ? 1 : undefined
}

/** Four long polls held across four adapters (OT-141, OT-A21); the fifth adapter is free. */
async function fourHeld (ctx: CaseContext): Promise<{ agents: Agent[], held: Array<Promise<Reply | Error>>, release: () => Promise<void> }> {
  const agents: Agent[] = []
  for (let i = 0; i < 5; i++) agents.push(await agent(ctx, { capabilities: ['tap'], label: 'longpoll' }))
  const held = agents.slice(0, 4).map((a) => settle(a.poll({ waitSeconds: 2 }, { timeoutMs: 5000 })))
  for (const a of agents.slice(0, 4)) expectThat(await waitHeld(ctx, a.id), 'a long poll with no event is held', 'held', 'not held')
  const release = async (): Promise<void> => {
    if (await isVirtual(ctx)) await ctx.elapse(2000)
    await Promise.all(held)
  }
  ctx.cleanup(release)
  return { agents, held, release }
}

/** One run of OT-133.b: `n` polls race in the scheduler's order; one is held, then tapped awake or abandoned. */
async function race (ctx: CaseContext, a: Agent, s: fc.Scheduler, n: number, leave: boolean): Promise<void> {
  await mustPost(a, 's1', newSession())
  let answered = 0
  const polls = Array.from({ length: n }, (_, i) => s.schedule(Promise.resolve(i), `poll ${i}`)
    .then(() => settle(a.poll({ waitSeconds: 2 }, { timeoutMs: leave ? 250 : 10_000 })))
    .then((reply) => { answered++; return reply }))
  await s.waitAll()
  const replies: Array<Reply | Error> = []
  if (leave) {
    // The holder goes away (its client times out): the others were refused, and the adapter may poll again at once.
    replies.push(...await Promise.all(polls))
    const next = await until(async () => (await a.poll({})).status === 200, 1000)
    expectThat(next, 'a poll after the held one\'s client went away', '200 (not poll_pending)', 'poll_pending')
  } else {
    const others = await until(() => answered >= n - 1, 1500)
    if (!others || answered > n - 1) {
      if (await isVirtual(ctx)) await ctx.elapse(2000)
      throw new CaseFailure(`${n} polls raced`, `${n - 1} answered poll_pending at once, one held`, `${answered} answered`)
    }
    expectControl(await ctx.control!.tap(a.id, 's1'), 200, 'the user taps s1')
    replies.push(...await Promise.all(polls))
  }
  const held = replies.filter((r): r is Reply => !(r instanceof Error) && r.status === 200)
  const pending = replies.filter((r) => !(r instanceof Error) && errorProblem(r, 'poll_pending') === undefined)
  const outcomes = replies.map((r) => r instanceof Error ? `gone: ${r.message}` : `${r.status} ${r.text.slice(0, 120)}`)
  expectThat(pending.length === n - 1 && (leave ? replies.filter((r) => r instanceof Error).length : held.length) === 1, `${n} racing polls`,
    `${n - 1} poll_pending and one ${leave ? 'gone away' : 'answered 200'}`, outcomes)
  if (!leave) expectEqual(sequences(held[0]!), [1], 'the holder\'s events after the tap')
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
  await mustPost(a, 's1', {}, 'a heartbeat to an offline session')
  let s = await sessionState(ctx, a.id, 's1')
  expectEqual([s.offline, s.activity], [false, 'tool'], 'revived with its last activity: [offline, activity]')
  await mustPost(a, 's2', { activity: 'idle' }, 'an update without title to an offline session')
  s = await sessionState(ctx, a.id, 's2')
  expectEqual([s.offline, s.activity], [false, 'idle'], 'revived with the new activity: [offline, activity]')
}

/** The sessions area: sessions, merge and TTL, batches, approvals and questions, the events poll (OT-089..148). */
export const sessionsCases = [
  // 1.6 Sessions, merge semantics and TTL ----------------------------------------------------------------------
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
        expectThat(typeof reply.json.session.uid === 'string' && typeof reply.json.session.visible === 'boolean', 'session.uid and session.visible', 'a string and a boolean', reply.json.session)
        expectThat(reply.json.warnings === undefined || Array.isArray(reply.json.warnings), 'warnings', 'absent or an array', reply.json.warnings)
      }
    }
  }),
  defineCase({
    id: 'OT-090',
    title: 'sessionId is 1..128 of [A-Za-z0-9._:-]; 129 characters, a space, a slash and é are invalid_field sessionId',
    level: 'required',
    async run (ctx) {
      const a = await agent(ctx)
      for (const id of ['a.B_c:d-1', 'x'.repeat(128), '0']) expectStatus(await a.post(id, newSession()), 200, `session id ${id.slice(0, 20)}`)
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
      const a = await agent(ctx)
      await mustPost(a, 's1', newSession({ model: 'm1', cwd: '/x', statusDetail: 'building', subagentCount: 2, ttlSeconds: 300 }))
      await mustPost(a, 's1', { activity: 'tool' })
      let s = await sessionState(ctx, a.id, 's1')
      expectEqual([s.model, s.cwd, s.statusDetail, s.subagentCount, s.ttlSeconds, s.lastActivity, s.title], ['m1', '/x', 'building', 2, 300, 'tool', 'orbtest session'], 'after {"activity":"tool"}: [model, cwd, statusDetail, subagentCount, ttlSeconds, activity, title]')
      await mustPost(a, 's1', { model: null })
      s = await sessionState(ctx, a.id, 's1')
      expectEqual([s.model, s.cwd, s.statusDetail, s.subagentCount], [null, '/x', 'building', 2], 'after {"model":null}: [model, cwd, statusDetail, subagentCount]')
      const nullable = ['cwd', 'project', 'model', 'toolLabel', 'toolKind', 'message', 'statusDetail', 'openURL', 'pid', 'approval', 'question']
      await mustPost(a, 's1', { project: 'P', toolLabel: 'npm', toolKind: 'shell', message: { id: 'm', text: 'hi' }, openURL: 'vscode://file/x', pid: process.pid, approval: approval('r1') })
      for (const key of nullable) expectStatus(await a.post('s1', { [key]: null }), 200, `${key}: null`)
      s = await sessionState(ctx, a.id, 's1')
      expectEqual(Object.fromEntries(nullable.map((key) => [key, s[key]])), Object.fromEntries(nullable.map((key) => [key, null])), 'every nullable field cleared')
    }
  }),
  defineCase({
    id: 'OT-092.b',
    title: 'merge, seen through the protocol: an update that leaves out approval keeps the approval pending',
    level: 'required',
    async run (ctx) {
      const a = await agent(ctx)
      await mustPost(a, 's1', newSession({ approval: approval('r1') }))
      await mustPost(a, 's1', { activity: 'waitingPermission', statusDetail: 'waiting' })
      // Still pending: the identical re-send is accepted (OT-127); had it been cleared, r1 would have retired (OT-126).
      expectStatus(await a.post('s1', { approval: approval('r1') }), 200, 'the identical approval again, after an update that left it out')
      expectError(await a.post('s2', newSession({ approval: approval('r1') })), 'invalid_field', 'r1 on another session while pending', 'approval.id')
      await mustPost(a, 's1', { approval: null })
      expectError(await a.post('s1', { approval: approval('r1') }), 'invalid_field', 'r1 again after null cleared it', 'approval.id')
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
  }),
  defineCase({
    id: 'OT-093',
    title: 'null on a field that is not nullable is invalid_field',
    level: 'required',
    async run (ctx) {
      const a = await agent(ctx)
      await mustPost(a, 's1', newSession())
      await expectRefused(a, 's1', ['title', 'activity', 'subagentCount', 'host', 'background', 'liveText', 'ttlSeconds'].map((key) => [{ [key]: null }]))
      expectError(await a.post('s2', { title: 'x', activity: null }), 'invalid_field', 'creating with activity null', 'activity')
    }
  }),
  defineCase({
    id: 'OT-094',
    title: 'title is 1 to 120 characters',
    level: 'required',
    async run (ctx) {
      const a = await agent(ctx)
      await mustPost(a, 's1', newSession({ title: 'x'.repeat(120) }))
      await expectAccepted(a, 's1', [{ title: 'x' }])
      await expectRefused(a, 's1', [[{ title: '' }], [{ title: 'x'.repeat(121) }], [{ title: 7 }]])
      expectError(await a.post('s2', newSession({ title: '' })), 'invalid_field', 'creating with an empty title', 'title')
    }
  }),
  defineCase({
    id: 'OT-095',
    title: 'activity is one of the 11 values; "empty" and any other value are invalid_field',
    level: 'required',
    async run (ctx) {
      const a = await agent(ctx)
      await mustPost(a, 's1', newSession())
      await expectAccepted(a, 's1', ['starting', 'idle', 'thinking', 'tool', 'streaming', 'waitingPermission', 'waitingQuestion', 'done', 'error', 'compacting', 'offline'].map((activity) => ({ activity })))
      await expectRefused(a, 's1', [[{ activity: 'empty' }], [{ activity: 'napping' }], [{ activity: 'Idle' }], [{ activity: '' }]])
    }
  }),
  defineCase({
    id: 'OT-096',
    title: 'cwd is a string of at most 1024 characters, or null',
    level: 'required',
    async run (ctx) {
      const a = await agent(ctx)
      await mustPost(a, 's1', newSession())
      await expectAccepted(a, 's1', [{ cwd: 'x'.repeat(1024) }, { cwd: '' }, { cwd: null }])
      await expectRefused(a, 's1', [[{ cwd: 'x'.repeat(1025) }], [{ cwd: 42 }]])
    }
  }),
  defineCase({
    id: 'OT-097',
    title: 'project is cleaned and trimmed, then 1..128 scalars: "   " is invalid_field, "  My Project  " is stored as My Project',
    level: 'required',
    async run (ctx) {
      const a = await agent(ctx)
      await mustPost(a, 's1', newSession())
      await expectAccepted(a, 's1', [{ project: '  My Project  ' }])
      if (ctx.control !== undefined) expectEqual((await sessionState(ctx, a.id, 's1')).project, 'My Project', 'the stored project')
      await expectAccepted(a, 's1', [{ project: 'x'.repeat(128) }, { project: `   ${'p'.repeat(128)}   ` }, { project: null }])
      if (ctx.control !== undefined) expectEqual((await sessionState(ctx, a.id, 's1')).project, null, 'null restores the cwd fallback')
      await expectRefused(a, 's1', [[{ project: '   ' }], [{ project: '' }], [{ project: 'x'.repeat(129) }]])
    }
  }),
  defineCase({
    id: 'OT-098',
    title: 'model is a string of at most 64 characters, or null',
    level: 'required',
    async run (ctx) {
      const a = await agent(ctx)
      await mustPost(a, 's1', newSession())
      await expectAccepted(a, 's1', [{ model: 'x'.repeat(64) }, { model: null }])
      await expectRefused(a, 's1', [[{ model: 'x'.repeat(65) }], [{ model: false }]])
    }
  }),
  defineCase({
    id: 'OT-099',
    title: 'toolLabel is a string of at most 80 characters, or null',
    level: 'required',
    async run (ctx) {
      const a = await agent(ctx)
      await mustPost(a, 's1', newSession({ activity: 'tool' }))
      await expectAccepted(a, 's1', [{ toolLabel: 'x'.repeat(80) }, { toolLabel: null }])
      await expectRefused(a, 's1', [[{ toolLabel: 'x'.repeat(81) }]])
    }
  }),
  defineCase({
    id: 'OT-100',
    title: 'toolKind is at most 32 characters or null; an unknown value is accepted with a warning',
    level: 'required',
    async run (ctx) {
      const a = await agent(ctx)
      await mustPost(a, 's1', newSession({ activity: 'tool' }))
      const unknown = await a.post('s1', { toolKind: 'banana' })
      expectStatus(unknown, 200, 'toolKind "banana"')
      expectThat(Array.isArray(unknown.json.warnings) && unknown.json.warnings.length > 0, 'an unknown toolKind adds a warning', 'a non-empty warnings array', unknown.json.warnings)
      for (const toolKind of ['shell', 'edit', 'read', 'web', 'delegate', 'plan', 'integration', 'other']) {
        const known = await a.post('s1', { toolKind })
        expectStatus(known, 200, `toolKind ${toolKind}`)
        const count = ((known.json.warnings ?? []) as string[]).length
        expectThat(count < unknown.json.warnings.length, `a known toolKind (${toolKind})`, `fewer warnings than "banana" (${unknown.json.warnings.length})`, known.json.warnings)
      }
      await expectAccepted(a, 's1', [{ toolKind: 'x'.repeat(32) }, { toolKind: null }])
      await expectRefused(a, 's1', [[{ toolKind: 'x'.repeat(33) }]])
    }
  }),
  defineCase({
    id: 'OT-101',
    title: 'message is {id 1..128, text up to 16384} or null; both required',
    level: 'required',
    async run (ctx) {
      const a = await agent(ctx)
      await mustPost(a, 's1', newSession())
      await expectAccepted(a, 's1', [{ message: { id: 'm', text: '' } }, { message: { id: 'x'.repeat(128), text: 'x'.repeat(16384) } }, { message: null }])
      await expectRefused(a, 's1', [
        [{ message: { id: 'm' } }, 'message.text'],
        [{ message: { text: 'x' } }, 'message.id'],
        [{ message: { id: '', text: 'x' } }, 'message.id'],
        [{ message: { id: 'x'.repeat(129), text: 'x' } }, 'message.id'],
        [{ message: { id: 'm', text: 'x'.repeat(16385) } }, 'message.text'],
        [{ message: 'hello' }, 'message']
      ])
    }
  }),
  defineCase({
    id: 'OT-102',
    title: 'the server keeps only the last 4096 bytes of message.text',
    level: 'required',
    needs: ['control'],
    async run (ctx) {
      const a = await agent(ctx)
      const text = `${'a'.repeat(5000)}${'z'.repeat(3000)}`
      await mustPost(a, 's1', newSession({ message: { id: 'm1', text } }))
      const kept = (await sessionState(ctx, a.id, 's1')).message?.text as string
      expectEqual(kept, text.slice(-4096), 'the stored text of 8000 ASCII bytes')
      await mustPost(a, 's1', { message: { id: 'm2', text: 'short' } })
      expectEqual((await sessionState(ctx, a.id, 's1')).message, { id: 'm2', text: 'short' }, 'a short text is kept whole')
    }
  }),
  defineCase({
    id: 'OT-104',
    title: 'statusDetail is a string of at most 120 characters, or null',
    level: 'required',
    async run (ctx) {
      const a = await agent(ctx)
      await mustPost(a, 's1', newSession())
      await expectAccepted(a, 's1', [{ statusDetail: 'x'.repeat(120) }, { statusDetail: null }])
      await expectRefused(a, 's1', [[{ statusDetail: 'x'.repeat(121) }]])
    }
  }),
  defineCase({
    id: 'OT-105',
    title: 'subagentCount is an integer from 0 to 99',
    level: 'required',
    async run (ctx) {
      const a = await agent(ctx)
      await mustPost(a, 's1', newSession())
      await expectAccepted(a, 's1', [{ subagentCount: 0 }, { subagentCount: 99 }])
      await expectRefused(a, 's1', [[{ subagentCount: 100 }], [{ subagentCount: -1 }], [{ subagentCount: 1.5 }], [{ subagentCount: '3' }]])
    }
  }),
  defineCase({
    id: 'OT-106',
    title: 'host is local or an ssh-style alias ^[A-Za-z0-9._-]{1,64}$',
    level: 'required',
    async run (ctx) {
      const a = await agent(ctx)
      await mustPost(a, 's1', newSession())
      await expectAccepted(a, 's1', [{ host: 'build-box.lan' }, { host: 'x'.repeat(64) }, { host: 'local' }, { host: 'A_1' }])
      await expectRefused(a, 's1', [[{ host: 'user@host' }], [{ host: 'a b' }], [{ host: 'x'.repeat(65) }], [{ host: '' }]])
    }
  }),
  defineCase({
    id: 'OT-107',
    title: 'openURL needs a scheme the registration declared, never an always-refused one, at most 2048 characters',
    level: 'required',
    async run (ctx) {
      const a = await agent(ctx, { urlSchemes: ['vscode', 'x-agent'] })
      await mustPost(a, 's1', newSession())
      await expectAccepted(a, 's1', [{ openURL: 'vscode://file/tmp/x' }, { openURL: 'x-agent://open?id=1' }, { openURL: `vscode://${'x'.repeat(2039)}` }, { openURL: null }])
      await expectRefused(a, 's1', [
        [{ openURL: 'https://example.com' }], [{ openURL: 'file:///etc/passwd' }], [{ openURL: 'javascript:alert(1)' }],
        [{ openURL: 'data:text/plain,x' }], [{ openURL: `vscode://${'x'.repeat(2040)}` }]
      ])
      const none = await agent(ctx, { urlSchemes: [] })
      await mustPost(none, 's1', newSession())
      await expectRefused(none, 's1', [[{ openURL: 'vscode://file/tmp/x' }], [{ openURL: 'https://example.com' }]])
      expectError(await none.post('s2', newSession({ openURL: 'vscode://x' })), 'invalid_field', 'creating with an openURL and no urlSchemes', 'openURL')
    }
  }),
  defineCase({
    id: 'OT-107.b',
    title: 'the openURL is opened when the user taps the key (alsoOpen)',
    level: 'required',
    needs: ['control'],
    async run (ctx) {
      const a = await agent(ctx, { urlSchemes: ['vscode'] })
      await mustPost(a, 's1', newSession({ openURL: 'vscode://file/tmp/x' }))
      const tap = await controlOf(ctx).tap(a.id, 's1')
      expectControl(tap, 200, 'the user taps s1')
      expectEqual(tap.json.opened, 'vscode://file/tmp/x', 'what the tap opened')
    }
  }),
  defineCase({
    id: 'OT-108',
    title: 'pid is an integer of at least 1 or null; the suite\'s own process is accepted',
    level: 'required',
    async run (ctx) {
      const a = await agent(ctx)
      await mustPost(a, 's1', newSession())
      await expectAccepted(a, 's1', [{ pid: process.pid }, { pid: null }])
      await expectRefused(a, 's1', [[{ pid: 0 }], [{ pid: -5 }], [{ pid: 1.5 }], [{ pid: String(process.pid) }]])
    }
  }),
  defineCase({
    id: 'OT-109',
    title: 'background is a boolean',
    level: 'required',
    async run (ctx) {
      const a = await agent(ctx)
      await mustPost(a, 's1', newSession())
      await expectAccepted(a, 's1', [{ background: true }, { background: false }])
      await expectRefused(a, 's1', [[{ background: 'yes' }], [{ background: 1 }]])
    }
  }),
  defineCase({
    id: 'OT-110',
    title: 'liveText is a boolean',
    level: 'required',
    async run (ctx) {
      const a = await agent(ctx)
      await mustPost(a, 's1', newSession())
      await expectAccepted(a, 's1', [{ liveText: false }, { liveText: true }])
      await expectRefused(a, 's1', [[{ liveText: 1 }], [{ liveText: 'false' }]])
    }
  }),
  defineCase({
    id: 'OT-111',
    title: 'ttlSeconds is an integer from 10 to 3600',
    level: 'required',
    async run (ctx) {
      const a = await agent(ctx)
      await mustPost(a, 's1', newSession({ ttlSeconds: 10 }))
      await expectAccepted(a, 's1', [{ ttlSeconds: 3600 }, { ttlSeconds: 120 }])
      await expectRefused(a, 's1', [[{ ttlSeconds: 9 }], [{ ttlSeconds: 3601 }], [{ ttlSeconds: 60.5 }], [{ ttlSeconds: 0 }]])
      if (ctx.control !== undefined) {
        await mustPost(a, 's2', newSession())
        expectEqual((await sessionState(ctx, a.id, 's2')).ttlSeconds, 120, 'the default ttlSeconds')
      }
    }
  }),
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
        await pass(ctx, 599_999, [a])
        expectThat(await sessionState(ctx, a.id, 's1') !== undefined, 'the session 1 ms before ttl + 600 s', 'still there', 'removed')
        await pass(ctx, 1, [a])
        expectEqual(await sessionState(ctx, a.id, 's1'), undefined, 'the session at ttl + 600 s')
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
      if (since > 10 - REAL_SLACK_MS / 1000) throw new CaseSkip(`this side looked ${since.toFixed(1)} s after the heartbeat, too close to its 10 s TTL to tell`)
      expectEqual((await sessionState(ctx, a.id, 's1')).offline, false, `offline ${10 + REAL_SLACK_MS / 1000} s after creation, ${since.toFixed(1)} s after the heartbeat`)
      await passUntil(ctx, contact + 10_000 + REAL_SLACK_MS, [a])
      const s = await sessionState(ctx, a.id, 's1')
      expectEqual([s.offline, s.activity], [true, 'offline'], `[offline, activity shown] ${10 + REAL_SLACK_MS / 1000} s after the heartbeat`)
      await slowPart('offline after ttlSeconds 10 without contact, not before', async () => {
        await passUntil(ctx, sent + 610_000 - REAL_MARGIN_MS, [a])
        expectThat(await sessionState(ctx, a.id, 's1') !== undefined, `the session ${REAL_MARGIN_MS / 1000} s before ttl + 600 s`, 'still there', 'removed')
        await passUntil(ctx, contact + 610_000 + REAL_SLACK_MS, [a])
        expectEqual(await sessionState(ctx, a.id, 's1'), undefined, `the session ${REAL_SLACK_MS / 1000} s after ttl + 600 s`)
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
        await pass(ctx, 599_999, [a])
        expectThat(await sessionState(ctx, a.id, 's1') !== undefined, 'the session at 719.999 s', 'still there', 'removed')
        await pass(ctx, 1, [a])
        expectEqual(await sessionState(ctx, a.id, 's1'), undefined, 'the session at 720 s')
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
  }),

  // 1.7 Batch replace ------------------------------------------------------------------------------------------
  defineCase({
    id: 'OT-114',
    title: 'a batch replaces the set: listed sessions are created or updated, unlisted ones end, other adapters\' stay',
    level: 'required',
    async run (ctx) {
      const a = await agent(ctx)
      const other = await agent(ctx)
      await mustPost(a, 'keep', newSession())
      await mustPost(a, 'drop', newSession())
      await mustPost(other, 'drop', newSession())
      expectStatus(await a.batch([{ id: 'keep', ...newSession({ activity: 'idle' }) }, { id: 'new', ...newSession() }]), 200, 'the batch')
      await expectExists(a, 'keep', true, 'a listed session that existed')
      await expectExists(a, 'new', true, 'a listed session that did not exist')
      await expectExists(a, 'drop', false, 'an unlisted session')
      await expectExists(other, 'drop', true, 'another adapter\'s session of the same id')
      if (ctx.control !== undefined) {
        expectEqual((await snapshot(ctx, a.id)).sessions.map((s: { id: string }) => s.id).sort(), ['keep', 'new'], 'the stored sessions')
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
      const a = await agent(ctx)
      await mustPost(a, 's0', newSession())
      expectError(await a.batch([{ id: 's1', ...newSession() }, { id: 's2', ...newSession() }, { id: 's0', activity: 'idle' }]), 'invalid_field', 'an existing session without title', 'sessions[2].title')
      expectError(await a.batch([{ id: 's0', title: 'x' }]), 'invalid_field', 'an existing session without activity', 'sessions[0].activity')
      expectError(await a.batch([newSession()]), 'invalid_field', 'an item without id', 'sessions[0].id')
      expectError(await a.batch([{ id: 'bad id', ...newSession() }]), 'invalid_field', 'an id that is not a SessionID', 'sessions[0].id')
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
      const item = (id: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({ id, ...newSession(), ...extra })
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
        [[item('s0', { approval: approval('r1') }), item('s1', { approval: approval('r1') })], 'sessions[1].approval.id'],
        [[item('s0', { approval: approval('r1'), question: question('q1') })], 'sessions[0]']
      ]
      for (const [items, field] of cases) {
        const reply = await a.batch(items)
        const problem = errorProblem(reply, 'invalid_field')
        if (problem !== undefined || !String(reply.json.error.field).startsWith(field)) {
          throw new CaseFailure(`a batch with a bad item: ${problem ?? `field ${reply.json.error.field}`}`, `invalid_field on ${field}`, `${reply.status} ${reply.text.slice(0, 300)}`)
        }
      }
      expectStatus(await a.batch([item('s0', { approval: approval('r1') }), item('s1', { question: question('q1'), openURL: 'vscode://x', ttlSeconds: 3600 })]), 200, 'a batch of good items')
    }
  }),
  defineCase({
    id: 'OT-119',
    title: '{"sessions": []} ends every session of the adapter',
    level: 'required',
    async run (ctx) {
      const a = await agent(ctx)
      const other = await agent(ctx)
      await mustPost(a, 's1', newSession({ approval: approval('r1') }))
      await mustPost(a, 's2', newSession())
      await mustPost(other, 's1', newSession())
      expectStatus(await a.batch([]), 200, 'an empty batch')
      await expectExists(a, 's1', false, 's1 after the empty batch')
      await expectExists(a, 's2', false, 's2 after the empty batch')
      await expectExists(other, 's1', true, 'another adapter\'s session')
      if (ctx.control !== undefined) expectEqual((await snapshot(ctx, a.id)).sessions, [], 'the stored sessions')
    }
  }),

  // 1.8 Approvals, questions and request ids -------------------------------------------------------------------
  defineCase({
    id: 'OT-120',
    title: 'approval needs id, toolName 1..80 and commandSummary 1..512; null clears it',
    level: 'required',
    async run (ctx) {
      const a = await agent(ctx)
      await mustPost(a, 's1', newSession())
      await expectRefused(a, 's1', [
        [{ approval: { id: 'r', toolName: '', commandSummary: 'x' } }, 'approval.toolName'],
        [{ approval: { id: 'r', toolName: 'x'.repeat(81), commandSummary: 'x' } }, 'approval.toolName'],
        [{ approval: { id: 'r', toolName: 'x', commandSummary: '' } }, 'approval.commandSummary'],
        [{ approval: { id: 'r', toolName: 'x', commandSummary: 'x'.repeat(513) } }, 'approval.commandSummary'],
        [{ approval: { toolName: 'x', commandSummary: 'x' } }, 'approval.id'],
        [{ approval: { id: 'r', commandSummary: 'x' } }, 'approval.toolName'],
        [{ approval: { id: 'r', toolName: 'x' } }, 'approval.commandSummary']
      ])
      await expectAccepted(a, 's1', [{ approval: { id: 'r1', toolName: 'x'.repeat(80), commandSummary: 'x'.repeat(512) } }])
      await expectAccepted(a, 's1', [{ approval: null }])
      // Cleared: the session may now hold a question (OT-122 would refuse it beside a pending approval).
      await expectAccepted(a, 's1', [{ question: question('q1') }])
    }
  }),
  defineCase({
    id: 'OT-121',
    title: 'question has 1..4 questions of 2..4 options; text 1..1024, header up to 12, labels 1..120; null clears it',
    level: 'required',
    async run (ctx) {
      const a = await agent(ctx)
      await mustPost(a, 's1', newSession())
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
        [q([{ text: 't', options: [{ label: 'x'.repeat(121) }, { label: 'b' }] }]), 'question.questions[0].options[0].label'],
        [q([{ text: 't', options: [{ label: 'a', description: 'x'.repeat(513) }, { label: 'b' }] }]), 'question.questions[0].options[0].description'],
        [q([{ text: 't', multiSelect: 'yes', options: opt }]), 'question.questions[0].multiSelect'],
        [{ question: { questions: [{ text: 't', options: opt }] } }, 'question.id']
      ])
      const full = Array.from({ length: 4 }, (_, i) => ({
        text: 'x'.repeat(1024), header: 'h'.repeat(12), multiSelect: i % 2 === 0,
        options: Array.from({ length: 4 }, (_, j) => ({ label: `${'l'.repeat(119)}${j}`, description: 'd'.repeat(512) }))
      }))
      await expectAccepted(a, 's1', [{ question: { id: 'q1', questions: full } }, { question: null }, { approval: approval('r1') }])
    }
  }),
  defineCase({
    id: 'OT-122',
    title: 'a session holds one pending request at most: an update that would leave both is refused',
    level: 'required',
    async run (ctx) {
      const a = await agent(ctx)
      await mustPost(a, 's1', newSession({ approval: approval('r1') }))
      expectError(await a.post('s1', { question: question('q1') }), 'invalid_field', 'a question beside the pending approval')
      expectError(await a.post('s1', { approval: approval('r2'), question: question('q2') }), 'invalid_field', 'both in one update')
      expectError(await a.post('s2', newSession({ approval: approval('r3'), question: question('q3') })), 'invalid_field', 'both on creation')
      await expectAccepted(a, 's1', [{ approval: null, question: question('q1') }])
      expectError(await a.post('s1', { approval: approval('r4') }), 'invalid_field', 'an approval beside the pending question')
    }
  }),
  defineCase({
    id: 'OT-123',
    title: 'an adapter holds 32 pending requests; a 33rd cannot arise (32 sessions, one each), and a replacement is not one',
    level: 'required',
    async run (ctx) {
      const a = await agent(ctx)
      expectStatus(await a.batch(Array.from({ length: LIMITS.maxPendingRequestsPerAdapter }, (_, i) => ({ id: `s${i}`, ...newSession(), approval: approval(`r${i}`) }))), 200, '32 sessions with one approval each')
      expectError(await a.post('s32', newSession({ approval: approval('r32') })), 'limit_exceeded', 'a 33rd session with a 33rd request')
      expectStatus(await a.post('s0', { approval: approval('r0b') }), 200, 'replacing one of the 32')
      if (ctx.control !== undefined) expectEqual((await snapshot(ctx, a.id)).requests.length, 32, 'pending requests')
    }
  }),
  defineCase({
    id: 'OT-124',
    title: 'request ids are 1..128 of [A-Za-z0-9._:-]',
    level: 'required',
    async run (ctx) {
      const a = await agent(ctx)
      await mustPost(a, 's1', newSession())
      await expectRefused(a, 's1', [
        [{ approval: approval('a b') }, 'approval.id'],
        [{ approval: approval('') }, 'approval.id'],
        [{ approval: approval('r/1') }, 'approval.id'],
        [{ question: question('x'.repeat(129)) }, 'question.id'],
        [{ question: question('é') }, 'question.id']
      ])
      await expectAccepted(a, 's1', [{ approval: approval('a.B_c:d-1') }, { approval: approval('x'.repeat(128)) }])
    }
  }),
  defineCase({
    id: 'OT-125',
    title: 'request ids share one namespace across sessions and kinds: an id pending elsewhere, or as the other kind, is refused',
    level: 'required',
    async run (ctx) {
      const a = await agent(ctx)
      await mustPost(a, 'A', newSession({ approval: approval('r1') }))
      await mustPost(a, 'B', newSession())
      expectError(await a.post('B', { question: question('r1') }), 'invalid_field', 'question r1 on B while approval r1 is pending on A', 'question.id')
      expectError(await a.post('B', { approval: approval('r1') }), 'invalid_field', 'approval r1 on B while pending on A', 'approval.id')
      await mustPost(a, 'C', newSession({ question: question('q1') }))
      expectError(await a.post('B', { approval: approval('q1') }), 'invalid_field', 'approval q1 while question q1 is pending on C', 'approval.id')
      expectError(await a.post('A', { approval: null, question: question('r1') }), 'invalid_field', 'r1 as a question on A in the update that clears approval r1')
    }
  }),
  defineCase({
    id: 'OT-126',
    title: 'a retired id is refused on any session: cleared with null, or replaced',
    level: 'required',
    async run (ctx) {
      const a = await agent(ctx)
      await mustPost(a, 's1', newSession({ approval: approval('r1') }))
      await mustPost(a, 's1', { approval: null })
      expectError(await a.post('s1', { approval: approval('r1') }), 'invalid_field', 'r1 again on s1 after null', 'approval.id')
      await mustPost(a, 's2', newSession())
      expectError(await a.post('s2', { approval: approval('r1') }), 'invalid_field', 'r1 on s2 after null', 'approval.id')
      expectError(await a.post('s2', { question: question('r1') }), 'invalid_field', 'r1 as a question after null', 'question.id')
      await mustPost(a, 's2', { question: question('q1') })
      await mustPost(a, 's2', { question: null })
      expectError(await a.post('s1', { question: question('q1') }), 'invalid_field', 'q1 again after null', 'question.id')
    }
  }),
  defineCase({
    id: 'OT-127',
    title: 'an identical pending update is accepted and does not refresh the expiry: the decision carries the original expiresAt',
    level: 'required',
    needs: ['control'],
    async run (ctx) {
      const a = await agent(ctx, { keypad: true })
      const virtual = await isVirtual(ctx)
      const first = await targetNow(ctx)
      await mustPost(a, 's1', newSession({ approval: approval('r1') }))
      const firstDone = await targetNow(ctx)
      if (virtual) await pass(ctx, 300_000, [a])
      else await ctx.elapse(2500)
      expectStatus(await a.post('s1', { approval: approval('r1') }), 200, 'the identical approval again')
      const resent = await targetNow(ctx)
      expectControl(await controlOf(ctx).decide(a.id, 'r1', { decision: 'allow' }), 200, 'the user allows r1')
      const [event] = await events(a, {}, 'the poll after the decision')
      const expiresAt = event?.expiresAt as number
      expectThat(typeof expiresAt === 'number' && expiresAt >= first / 1000 + 599 && expiresAt <= firstDone / 1000 + 601 && expiresAt < resent / 1000 + 599,
        'the decision\'s expiresAt', `600 s after the first send (${Math.round(first / 1000) + 600}), not after the re-send (${Math.round(resent / 1000) + 600})`, expiresAt)
      if (virtual) {
        // Not refreshed: the request expires 600 s after it first became pending, and its id retires (OT-126).
        await pass(ctx, 302_000, [a])
        expectError(await a.post('s1', { approval: approval('r1') }), 'invalid_field', 'r1 again 602 s after it first became pending', 'approval.id')
        return
      }
      // A real clock: the expiry itself is watched with --slow only, a little after the expiresAt the decision carried.
      await slowPart('the decision\'s expiresAt is 600 s after the first send, not after an identical re-send 2.5 s later', async () => {
        await passUntilTarget(ctx, expiresAt * 1000 + REAL_SLACK_MS, [a])
        expectError(await a.post('s1', { approval: approval('r1') }), 'invalid_field', `r1 again ${REAL_SLACK_MS / 1000} s past its expiresAt`, 'approval.id')
      })
    }
  }),
  defineCase({
    id: 'OT-129',
    title: 'questions expire 600 s after they became pending; a QuestionEvent\'s expiresAt is that time in epoch seconds',
    level: 'required',
    needs: ['control'],
    async run (ctx) {
      const a = await agent(ctx, { keypad: true })
      const before = await targetNow(ctx)
      await mustPost(a, 's1', newSession({ question: question('q1'), ttlSeconds: 3600 }))
      const after = await targetNow(ctx)
      expectControl(await controlOf(ctx).decide(a.id, 'q1', { picks: [[1]] }), 200, 'the user answers q1')
      const [event] = await events(a, {}, 'the poll after the answer')
      expectThat(event?.type === 'question' && typeof event.expiresAt === 'number' && event.expiresAt >= before / 1000 + 599 && event.expiresAt <= after / 1000 + 601,
        'the question event\'s expiresAt', `about ${Math.round(before / 1000) + 600}`, event)
      await mustPost(a, 's2', newSession({ question: question('q2'), ttlSeconds: 3600 }))
      if (await isVirtual(ctx)) {
        await pass(ctx, 599_000, [a])
        expectStatus(await a.post('s2', { question: question('q2') }), 200, 'q2 is pending at 599 s (the identical re-send)')
        await pass(ctx, 2000, [a])
        expectError(await a.post('s2', { question: question('q2') }), 'invalid_field', 'q2 at 601 s: expired, so retired', 'question.id')
        expectEqual((await sessionState(ctx, a.id, 's2')).question, null, 'the expired question is gone from the session')
        return
      }
      // A real clock: q2 is watched (with --slow) well before and a little after the expiresAt the target holds for it.
      const q2 = ((await snapshot(ctx, a.id)).requests as Array<{ id: string, expiresAt: number }>).find((r) => r.id === 'q2')
      expectThat(q2 !== undefined, 'q2 among the pending requests (control API)', 'pending', 'absent')
      await slowPart('the question event\'s expiresAt is 600 s after the question became pending', async () => {
        await passUntilTarget(ctx, q2!.expiresAt * 1000 - REAL_MARGIN_MS, [a])
        expectStatus(await a.post('s2', { question: question('q2') }), 200, `q2 is pending ${REAL_MARGIN_MS / 1000} s before its expiresAt (the identical re-send)`)
        await passUntilTarget(ctx, q2!.expiresAt * 1000 + REAL_SLACK_MS, [a])
        expectError(await a.post('s2', { question: question('q2') }), 'invalid_field', `q2 ${REAL_SLACK_MS / 1000} s past its expiresAt: expired, so retired`, 'question.id')
        expectEqual((await sessionState(ctx, a.id, 's2')).question, null, 'the expired question is gone from the session')
      })
    }
  }),
  defineCase({
    id: 'OT-130',
    title: 'decision events need the capability and the user\'s keypad opt-in; without the opt-in the keypad decides nothing',
    level: 'required',
    needs: ['control'],
    async run (ctx) {
      const off = await agent(ctx, { keypad: false })
      expectEqual(off.reply.json.keypadDecisions, false, 'keypadDecisions without the user\'s opt-in')
      await mustPost(off, 's1', newSession({ approval: approval('r1') }))
      await mustPost(off, 's2', newSession({ question: question('q1') }))
      expectRefusedByControl(await controlOf(ctx).decide(off.id, 'r1', { decision: 'allow' }), 'the keypad decides an approval without the opt-in')
      expectRefusedByControl(await controlOf(ctx).decide(off.id, 'q1', { picks: [[0]] }), 'the keypad answers a question without the opt-in')
      expectEqual(await events(off), [], 'events without the opt-in')
      const on = await agent(ctx, { keypad: true })
      expectEqual(on.reply.json.keypadDecisions, true, 'keypadDecisions with the opt-in')
      await mustPost(on, 's1', newSession({ approval: approval('r1') }))
      expectControl(await controlOf(ctx).decide(on.id, 'r1', { decision: 'deny' }), 200, 'the keypad decides with the opt-in')
      expectEqual((await events(on)).map((e) => e.type), ['approval'], 'events with the opt-in')
    }
  }),

  // 1.9 Events poll, cursor and ack semantics, long polls ------------------------------------------------------
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
        expectEqual([reply.json.events, reply.json.lastSequence, reply.json.acknowledged], [[], 0, 0], 'a fresh lease: [events, lastSequence, acknowledged]')
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
        [{ after: -1 }, 'after'], [{ after: 9007199254740992 }, 'after'], [{ after: 1.5 }, 'after'], [{ after: '0' }, 'after'],
        [{ ack: -1 }, 'ack'], [{ ack: 9007199254740992 }, 'ack'], [{ ack: 0.5 }, 'ack'],
        [{ waitSeconds: 3 }, 'waitSeconds'], [{ waitSeconds: -1 }, 'waitSeconds'], [{ waitSeconds: 1.5 }, 'waitSeconds'], [{ waitSeconds: '1' }, 'waitSeconds']
      ] as const) {
        expectError(await a.poll(body), 'invalid_field', `poll ${JSON.stringify(body)}`, field)
      }
      // The largest `after` is valid as a field; it is refused as a cursor (OT-137), not as a field.
      expectError(await a.poll({ after: 9007199254740991 }), 'invalid_cursor', 'after 2^53-1 with nothing delivered')
    }
  }),
  defineCase({
    id: 'OT-133',
    title: 'one outstanding poll per adapter: a second while the first is held is poll_pending, and the first carries on',
    level: 'required',
    async run (ctx) {
      const a = await agent(ctx)
      await mustPost(a, 's1', newSession())
      let answered = false
      const first = settle(a.poll({ waitSeconds: 2 }, { timeoutMs: 5000 })).then((reply) => { answered = true; return reply })
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
    title: 'racing polls (fc.scheduler): whatever the order, one is held and the others are poll_pending; a holder that goes away frees the adapter',
    level: 'required',
    needs: ['control'],
    async run (ctx) {
      await fc.assert(fc.asyncProperty(fc.scheduler(), fc.integer({ min: 2, max: 4 }), fc.boolean(), async (s, n, leave) => {
        // A fresh adapter per run: its own lease, cursor and rate-limit bucket.
        const a = await agent(ctx, { capabilities: ['tap'], label: 'race' })
        try {
          await race(ctx, a, s, n, leave)
        } finally {
          await a.unregister()
        }
      }), ctx.fc({ endOnFailure: true }))
    }
  }),
  defineCase({
    id: 'OT-135',
    title: 'a reply holds the unacknowledged events after `after`, in ascending sequence order',
    level: 'required',
    needs: ['control'],
    async run (ctx) {
      const a = await agent(ctx)
      await mustPost(a, 's1', newSession())
      await mustPost(a, 's2', newSession())
      for (const sid of ['s1', 's2', 's1', 's2', 's1']) expectControl(await controlOf(ctx).tap(a.id, sid), 200, `the user taps ${sid}`)
      expectEqual(sequences(await a.poll({})), [1, 2, 3, 4, 5], 'after 0')
      expectEqual(sequences(await a.poll({ after: 3 })), [4, 5], 'after 3')
      expectEqual(sequences(await a.poll({ after: 5 })), [], 'after 5')
      expectEqual(sequences(await a.poll({ after: 1 })), [2, 3, 4, 5], 'after 1: delivered but unacknowledged events come again')
      expectEqual((await events(a, { after: 1 })).map((e) => e.sessionId), ['s2', 's1', 's2', 's1'], 'their sessions, in order')
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
      const a = await agent(ctx)
      await mustPost(a, 's1', newSession())
      for (let i = 0; i < 5; i++) expectControl(await controlOf(ctx).tap(a.id, 's1'), 200, 'a tap')
      let highest = 0
      const poll = async (body: Record<string, unknown>, what: string): Promise<Reply> => {
        const reply = await a.poll(body)
        expectStatus(reply, 200, what)
        expectThat(reply.json.acknowledged >= highest, `${what}: acknowledged`, `at least ${highest} (never lower than before)`, reply.json.acknowledged)
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
      expectEqual(sequences(await poll({}, 'after 0 once all are acknowledged')), [], 'events with sequence <= acknowledged')
    }
  }),
  defineCase({
    id: 'OT-137',
    title: 'invalid_cursor when ack > after, or after is beyond the highest sequence delivered',
    level: 'required',
    needs: ['control'],
    async run (ctx) {
      const a = await agent(ctx)
      await mustPost(a, 's1', newSession())
      for (let i = 0; i < 4; i++) expectControl(await controlOf(ctx).tap(a.id, 's1'), 200, 'a tap')
      expectError(await a.poll({ after: 1 }), 'invalid_cursor', 'after 1 before anything was delivered')
      expectError(await a.poll({ after: 0, ack: 1 }), 'invalid_cursor', 'ack 1 > after 0')
      expectEqual(sequences(await a.poll({})), [1, 2, 3, 4], 'the first poll')
      expectError(await a.poll({ after: 3, ack: 5 }), 'invalid_cursor', '{after:3, ack:5}')
      expectError(await a.poll({ after: 10 }), 'invalid_cursor', '{after:10} when 1..4 were delivered')
      expectError(await a.poll({ after: 5, ack: 5 }), 'invalid_cursor', '{after:5, ack:5} when 1..4 were delivered')
      expectStatus(await a.poll({ after: 4, ack: 4 }), 200, '{after:4, ack:4} after 1..4 were delivered')
    }
  }),
  defineCase({
    id: 'OT-140',
    title: 'a long poll is held up to waitSeconds, answered early when an event arrives; waitSeconds 0 answers at once',
    level: 'required',
    async run (ctx) {
      const a = await agent(ctx)
      await mustPost(a, 's1', newSession())
      const virtual = await isVirtual(ctx)
      const started = Date.now()
      expectEqual(sequences(await a.poll({ waitSeconds: 0 })), [], 'waitSeconds 0 with no event')
      expectThat(Date.now() - started < 1000, 'waitSeconds 0', 'answered at once', `${Date.now() - started} ms`)
      let answered = false
      const held = settle(a.poll({ waitSeconds: 2 }, { timeoutMs: 5000 })).then((reply) => { answered = true; return reply })
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
      if (!virtual) expectThat(Date.now() - started >= 1900, 'a 2 s long poll with no event', 'held about 2 s', `${Date.now() - started} ms`)
      if (ctx.control === undefined) return
      const early = settle(a.poll({ waitSeconds: 2 }, { timeoutMs: 5000 }))
      expectThat(await waitHeld(ctx, a.id), 'a second long poll', 'held', 'answered')
      const tapped = Date.now()
      expectControl(await ctx.control.tap(a.id, 's1'), 200, 'the user taps s1')
      const woken = await early
      if (woken instanceof Error) throw new CaseFailure('the long poll', 'a reply', woken.message)
      expectEqual(sequences(woken), [1], 'the held poll\'s events after a tap')
      expectThat(Date.now() - tapped < 1500, 'the held poll after a tap', 'answered at once', `${Date.now() - tapped} ms`)
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
      const leaving = settle(agents[3]!.poll({ waitSeconds: 2 }, { timeoutMs: 1000 }))
      for (const a of agents.slice(0, 4)) expectThat(await waitHeld(ctx, a.id), `${a.id}'s long poll`, 'held', 'not held')
      ctx.cleanup(async () => {
        if (await isVirtual(ctx)) await ctx.elapse(2000)
        await Promise.all(held)
      })
      expectError(await agents[4]!.poll({ waitSeconds: 1 }), 'limit_exceeded', 'a 5th long poll')
      expectThat(await leaving instanceof Error, 'the 4th poll\'s client', 'went away (timed out)', 'answered')
      const freed = await until(async () => {
        const reply = await agents[4]!.poll({ waitSeconds: 1 }, { timeoutMs: 200 }).catch(() => undefined)
        return reply === undefined || reply.status === 200
      }, 1500)
      expectThat(freed, 'a 5th adapter\'s long poll after one client went away', 'held or answered, not limit_exceeded', 'limit_exceeded')
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
      const a = await agent(ctx, { keypad: true })
      const control = controlOf(ctx)
      await mustPost(a, 's1', newSession({ host: 'devbox', approval: approval('r1') }))
      await mustPost(a, 's2', newSession({ question: question('q1') }))
      expectControl(await control.tap(a.id, 's1'), 200, 'a tap on s1')
      expectControl(await control.decide(a.id, 'r1', { decision: 'allow' }), 200, 'allow r1')
      expectControl(await control.decide(a.id, 'q1', { picks: [[0]] }), 200, 'answer q1')
      expectControl(await control.tap(a.id, 's2'), 200, 'a tap on s2')
      const reply = await a.poll({})
      expectStatus(reply, 200, 'the poll')
      expectSchema(reply.json, 'EventsReply', 'the reply')
      const got = reply.json.events as Array<Record<string, any>>
      expectEqual(got.map((e) => e.sequence), [1, 2, 3, 4], 'sequences')
      // A tap event has only the four common fields; decision events add theirs (their schemas check them).
      expectEqual([got[0], got[3]].map((e) => Object.keys(e ?? {}).sort().join(',')), ['host,sequence,sessionId,type', 'host,sequence,sessionId,type'], 'the fields of the tap events')
      expectEqual([got[1]?.requestId, got[1]?.decision, typeof got[1]?.expiresAt, got[2]?.requestId, got[2]?.picks, typeof got[2]?.expiresAt], ['r1', 'allow', 'number', 'q1', [[0]], 'number'], 'the decision events\' [requestId, decision, expiresAt] and [requestId, picks, expiresAt]')
      expectEqual(got.map((e) => [e.type, e.sessionId, e.host]), [['tap', 's1', 'devbox'], ['approval', 's1', 'devbox'], ['question', 's2', 'local'], ['tap', 's2', 'local']], '[type, sessionId, host]')
      expectSchema(got[0], 'TapEvent', 'the tap event')
      expectSchema(got[1], 'ApprovalEvent', 'the approval event')
      expectSchema(got[2], 'QuestionEvent', 'the question event')
      await mustPost(a, 's1', { host: 'build-01' })
      expectControl(await control.tap(a.id, 's1'), 200, 'a tap after the host changed')
      expectEqual((await events(a, { after: 4 })).map((e) => [e.sequence, e.host]), [[5, 'build-01']], 'the event echoes the current host')
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
      expectEqual((await events(tapper)).map((e) => [e.type, e.sessionId]), [['tap', 's1']], 'the events of the tapped adapter')
      expectEqual(await events(bystander), [], 'the events of another adapter with tap')
    }
  }),
  defineCase({
    id: 'OT-145',
    title: 'a decision event names the request that was pending on that session, approval or question',
    level: 'required',
    needs: ['control'],
    async run (ctx) {
      const a = await agent(ctx, { keypad: true })
      const control = controlOf(ctx)
      await mustPost(a, 'A', newSession({ approval: approval('r1') }))
      await mustPost(a, 'B', newSession({ question: question('q1') }))
      await mustPost(a, 'C', newSession({ approval: approval('r2') }))
      expectRefusedByControl(await control.decide(a.id, 'nope', { decision: 'allow' }), 'a decision on an id that is not pending')
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
      const a = await agent(ctx, { keypad: true })
      const control = controlOf(ctx)
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
      expectThat(Array.isArray(picks) && picks.length === questions.length && picks.every((p, i) =>
        p.length >= 1 && new Set(p).size === p.length && p.every((n) => Number.isInteger(n) && n >= 0 && n < questions[i]!.options.length) && (questions[i]!.multiSelect === true || p.length === 1)),
      'the event\'s picks', 'one array per question, unique indices in range, one for the single-select', picks)
      expectEqual(picks.map((p) => [...p].sort()), [[0, 2], [1]], 'the picks, as answered')
    }
  }),

  // Decisions (OT-A16..A24, OT-A30) ----------------------------------------------------------------------------
  defineCase({
    id: 'OT-A16',
    title: 'pid: a live process of the calling user is accepted; a dead one or another user\'s is invalid_field pid',
    level: 'decision',
    async run (ctx) {
      const a = await agent(ctx)
      await mustPost(a, 's1', newSession({ pid: process.pid }))
      let checked = 0
      for (const [pid, what] of [[deadPid(), 'a pid no process has'], [foreignPid(), 'a process of another user (pid 1)']] as const) {
        if (pid === undefined) {
          ctx.note(`${what}: none found on this machine; not checked`)
          continue
        }
        const reply = await a.post('s1', { pid })
        if (reply.status === 200) {
          ctx.note(`${what} (${pid}) was accepted: the target's pid check is off or missing; cannot tell which from outside`)
          continue
        }
        expectError(reply, 'invalid_field', `${what} (${pid})`, 'pid')
        checked++
      }
      ctx.note(checked === 0 ? 'only the accepted side was checked' : `${checked} refusal(s) checked`)
    }
  }),
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
      expectThat(other.json.session.uid !== uid, 'the same sessionId under another adapter', `a uid other than ${uid}`, other.json.session.uid)
      expectEqual(other.json.session.visible, false, 'visible for an adapter awaiting the user')
      await mustPost(a, 's2', newSession())
      const s = await sessionState(ctx, a.id, 's2')
      const keys = ['host', 'ttlSeconds', 'subagentCount', 'background', 'liveText', 'cwd', 'project', 'model', 'toolLabel', 'toolKind', 'message', 'statusDetail', 'openURL', 'pid', 'approval', 'question']
      expectEqual(Object.fromEntries(keys.map((k) => [k, s[k]])), {
        host: 'local', ttlSeconds: 120, subagentCount: 0, background: false, liveText: true, cwd: null, project: null, model: null, toolLabel: null,
        toolKind: null, message: null, statusDetail: null, openURL: null, pid: null, approval: null, question: null
      }, 'a new session\'s defaults')
    }
  }),
  defineCase({
    id: 'OT-A18',
    title: 'a heartbeat {} changes nothing; ending a session retires its request; no route deletes one session',
    level: 'decision',
    async run (ctx) {
      const a = await agent(ctx)
      await mustPost(a, 's1', newSession({ model: 'm1', approval: approval('r1') }))
      const before = ctx.control === undefined ? undefined : await sessionState(ctx, a.id, 's1')
      await mustPost(a, 's1', {}, 'a heartbeat {}')
      if (before !== undefined) {
        const after = await sessionState(ctx, a.id, 's1')
        const strip = (s: Record<string, unknown>): Record<string, unknown> => Object.fromEntries(Object.entries(s).filter(([k]) => !['lastContact', 'offlineAt', 'removeAt'].includes(k)))
        expectEqual(strip(after), strip(before), 'the session after a heartbeat')
      }
      expectStatus(await a.post('s1', { approval: approval('r1') }), 200, 'r1 is still pending after the heartbeat')
      expectStatus(await a.batch([]), 200, 'a batch that ends s1')
      expectError(await a.post('s2', newSession({ approval: approval('r1') })), 'invalid_field', 'r1 after its session ended', 'approval.id')
      await expectExists(a, 's1', false, 'an ended session')
      const del = await ctx.client.request({ method: 'DELETE', path: `/adapters/${a.id}/sessions/s2`, headers: { ...a.headers } })
      expectEqual([del.status, del.headers.allow], [405, 'POST'], 'DELETE on a session path: [status, Allow]')
    }
  }),
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
      expectEqual([(await sessionState(ctx, a.id, 's1')).offline, (await sessionState(ctx, a.id, 's2')).offline], [true, true], 'offline after 10 s')
      await mustPost(a, 's1', {}, 'a heartbeat to an offline session')
      let s = await sessionState(ctx, a.id, 's1')
      expectEqual([s.offline, s.activity], [false, 'tool'], 'revived with its last activity: [offline, activity]')
      await mustPost(a, 's2', { activity: 'idle' }, 'an update without title to an offline session')
      s = await sessionState(ctx, a.id, 's2')
      expectEqual([s.offline, s.activity], [false, 'idle'], 'revived with the new activity: [offline, activity]')
      await pass(ctx, 9_000, [a])
      expectStatus(await a.batch([{ id: 's1', ...newSession({ ttlSeconds: 10 }) }, { id: 's2', ...newSession({ ttlSeconds: 10 }) }]), 200, 'a batch listing both')
      await pass(ctx, 9_000, [a])
      expectEqual((await sessionState(ctx, a.id, 's1')).offline, false, 'offline 9 s after the batch (18 s after the last post)')
    }
  }),
  defineCase({
    id: 'OT-A19',
    title: 'batch: reply {sessions, ended, warnings}; items merge; atomic; duplicate ids and 33 items refused with their field',
    level: 'decision',
    async run (ctx) {
      const a = await agent(ctx, { urlSchemes: ['vscode'] })
      await mustPost(a, 'keep', newSession({ approval: approval('r1'), model: 'm1' }))
      await mustPost(a, 'drop', newSession())
      const reply = await a.batch([{ id: 'keep', ...newSession({ activity: 'idle' }) }, { id: 'new', ...newSession() }])
      expectStatus(reply, 200, 'a batch')
      const listed = (reply.json.sessions ?? []) as Array<Record<string, unknown>>
      expectThat(listed.length === 2 && listed.every((s) => typeof s.uid === 'string' && typeof s.visible === 'boolean'), 'the reply\'s sessions', '[{id, uid, visible}] in order', reply.json.sessions)
      expectEqual([listed.map((s) => s.id), reply.json.ended, Array.isArray(reply.json.warnings)], [['keep', 'new'], ['drop'], true], 'the reply: [session ids, ended, warnings is an array]')
      // Items merge: the approval left out of the item is still pending.
      expectStatus(await a.post('keep', { approval: approval('r1') }), 200, 'r1 is still pending after the batch left it out')
      if (ctx.control !== undefined) expectEqual((await sessionState(ctx, a.id, 'keep')).model, 'm1', 'the model left out of the item')
      // Atomic: a bad item after good ones changes nothing, whether the schema or a later rule refuses it.
      for (const [bad, field] of [
        [{ id: 'late', ...newSession({ approval: approval('r1') }) }, 'sessions[2].approval.id'],
        [{ id: 'late', ...newSession({ openURL: 'https://example.com' }) }, 'sessions[2].openURL'],
        [{ id: 'late', ...newSession({ ttlSeconds: 1 }) }, 'sessions[2].ttlSeconds']
      ] as const) {
        expectError(await a.batch([{ id: 'fresh', ...newSession({ approval: approval('r9') }) }, { id: 'keep', ...newSession(), approval: null }, bad]), 'invalid_field', `a batch whose third item is bad (${field})`, field)
        await expectExists(a, 'new', true, `after the refused batch (${field}), the unlisted session`)
        await expectExists(a, 'fresh', false, `after the refused batch (${field}), the first item's session`)
        expectStatus(await a.post('keep', { approval: approval('r1') }), 200, `after the refused batch (${field}), r1 is still pending on keep`)
      }
      expectStatus(await a.post('new', { approval: approval('r9') }), 200, 'r9 of a refused batch is fresh')
      expectError(await a.batch([{ id: 'x', ...newSession() }, { id: 'y', ...newSession() }, { id: 'x', ...newSession() }]), 'invalid_field', 'a duplicate id', 'sessions[2].id')
      expectError(await a.batch(Array.from({ length: 33 }, (_, i) => ({ id: `s${i}`, ...newSession() }))), 'invalid_field', '33 items', 'sessions')
      // 32 sessions by batch; a POST that creates a 33rd is limit_exceeded.
      expectStatus(await a.batch(Array.from({ length: 32 }, (_, i) => ({ id: `s${i}`, ...newSession() }))), 200, '32 items')
      expectError(await a.post('s32', newSession()), 'limit_exceeded', 'a POST creating a 33rd session')
    }
  }),
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
      if (refused === undefined) throw new CaseFailure(`${LIMITS.burst * 3} polls in a row`, 'a 429 rate_limited once the burst is spent', `${served} served`)
      expectError(refused, 'rate_limited', 'the poll past the burst')
      const retryAfter = String(refused.headers['retry-after'])
      expectThat(/^[1-9]\d*$/.test(retryAfter), 'Retry-After', 'an integer of at least 1', retryAfter)
      const virtual = await isVirtual(ctx)
      const refill = virtual ? 0 : Math.ceil((Date.now() - started) / 1000 * LIMITS.requestsPerSecond) + 1
      expectThat(served >= LIMITS.burst && served <= LIMITS.burst + refill, 'requests served before the 429', virtual ? `${LIMITS.burst} (the burst; the clock stood still)` : `${LIMITS.burst}..${LIMITS.burst + refill}`, served)
      expectEqual(retryAfter, '1', 'Retry-After at 20 tokens per second')
      expectStatus(await b.poll({}, { retryRateLimited: false }), 200, 'another adapter\'s poll')
      expectStatus(await ctx.client.request({ path: '/info', retryRateLimited: false }), 200, 'GET /info')
    }
  }),
  defineCase({
    id: 'OT-A21',
    title: 'maxSessionsPerAdapter counts offline sessions until they are removed',
    level: 'decision',
    async run (ctx) {
      const a = await agent(ctx)
      expectStatus(await a.batch(Array.from({ length: LIMITS.maxSessionsPerAdapter }, (_, i) => ({ id: `s${i}`, ...newSession({ ttlSeconds: 10 }) }))), 200, '32 sessions')
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
      if (ctx.control !== undefined) expectEqual((await sessionState(ctx, a.id, 's0')).offline, true, `s0 ${10 + REAL_SLACK_MS / 1000} s after the batch`)
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
      for (let i = 0; i < 3; i++) expectStatus(await agents[4]!.poll({ waitSeconds: 0 }), 200, `a waitSeconds 0 poll while 4 long polls are held (${i + 1})`)
      expectError(await agents[4]!.poll({ waitSeconds: 2 }), 'limit_exceeded', 'a 5th long poll, another adapter')
    }
  }),
  defineCase({
    id: 'OT-A21.c',
    title: 'maxEvents: past 128 unacknowledged events the oldest is dropped; sequences are not reused',
    level: 'decision',
    needs: ['control'],
    async run (ctx) {
      const a = await agent(ctx, { capabilities: ['tap'] })
      await mustPost(a, 's1', newSession())
      for (let i = 0; i < LIMITS.maxEvents + 2; i++) expectControl(await controlOf(ctx).tap(a.id, 's1'), 200, `tap ${i + 1}`)
      const reply = await a.poll({})
      expectStatus(reply, 200, 'the poll')
      const got = sequences(reply)
      expectEqual([got.length, got[0], got.at(-1), reply.json.lastSequence], [LIMITS.maxEvents, 3, LIMITS.maxEvents + 2, LIMITS.maxEvents + 2], '[events, first, last, lastSequence]')
    }
  }),
  defineCase({
    id: 'OT-A21.d',
    title: 'decision events whose expiresAt has passed are dropped from the queue',
    level: 'decision',
    needs: ['control', 'slow'],
    async run (ctx) {
      const a = await agent(ctx, { keypad: true })
      await mustPost(a, 's1', newSession({ approval: approval('r1'), ttlSeconds: 3600 }))
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
  }),
  defineCase({
    id: 'OT-A22',
    title: 'requests need their capability; a new id replaces the pending one (the old retires); an id names fixed content',
    level: 'decision',
    async run (ctx) {
      const tapOnly = await agent(ctx, { capabilities: ['tap'] })
      await mustPost(tapOnly, 's1', newSession())
      expectError(await tapOnly.post('s1', { approval: approval('r1') }), 'invalid_field', 'an approval without the approvals capability', 'approval')
      expectError(await tapOnly.post('s1', { question: question('q1') }), 'invalid_field', 'a question without the questions capability', 'question')
      const a = await agent(ctx, { keypad: false })
      await mustPost(a, 's1', newSession({ approval: approval('r1') }), 'an approval without keypad decisions')
      await mustPost(a, 's1', { approval: approval('r2') }, 'a new approval id on the same session')
      await mustPost(a, 's2', newSession())
      expectError(await a.post('s2', { approval: approval('r1') }), 'invalid_field', 'r1 after r2 replaced it', 'approval.id')
      expectError(await a.post('s1', { approval: approval('r2', { commandSummary: 'rm -rf /' }) }), 'invalid_field', 'r2 with other content', 'approval.id')
      expectError(await a.post('s1', { question: question('q1') }), 'invalid_field', 'a question while an approval is pending', 'question')
      await mustPost(a, 's1', { approval: null, question: question('q1') })
      expectError(await a.post('s1', { approval: approval('r3') }), 'invalid_field', 'an approval while a question is pending', 'approval')
      expectError(await a.post('s1', { question: question('q1', { questions: [{ text: 'Other?', options: [{ label: 'a' }, { label: 'b' }] }] }) }), 'invalid_field', 'q1 with other content', 'question.id')
      await mustPost(a, 's1', { question: question('q1', { questions: [{ text: 'Which branch?', multiSelect: false, options: [{ label: 'main' }, { label: 'dev' }] }] }) }, 'q1 with its default multiSelect spelt out')
    }
  }),
  defineCase({
    id: 'OT-A22.b',
    title: 'after the user decides, the request is not decidable again and stays pending until the adapter clears it',
    level: 'decision',
    needs: ['control'],
    async run (ctx) {
      const a = await agent(ctx, { keypad: true })
      const control = controlOf(ctx)
      await mustPost(a, 's1', newSession({ approval: approval('r1') }))
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
      const a = await agent(ctx, { keypad: true })
      await mustPost(a, 's1', newSession({ approval: approval('r1') }))
      await mustPost(a, 's2', newSession({ question: question('q1') }))
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
      const a = await agent(ctx)
      await mustPost(a, 's1', newSession({ approval: approval('r1'), ttlSeconds: 3600 }))
      const virtual = await isVirtual(ctx)
      if (virtual) {
        await pass(ctx, 599_000, [a])
        expectEqual((await snapshot(ctx, a.id)).requests.map((r: { id: string }) => r.id), ['r1'], 'pending at 599 s')
        await pass(ctx, 2_000, [a])
      } else {
        // A real clock (--slow): looked at well before and a little after the expiresAt the target holds for r1.
        const [r1] = (await snapshot(ctx, a.id)).requests as Array<{ id: string, expiresAt: number }>
        expectThat(r1?.id === 'r1', 'the pending requests (control API)', 'r1', r1)
        await passUntilTarget(ctx, r1!.expiresAt * 1000 - REAL_MARGIN_MS, [a])
        expectEqual((await snapshot(ctx, a.id)).requests.map((r: { id: string }) => r.id), ['r1'], `pending ${REAL_MARGIN_MS / 1000} s before its expiresAt`)
        await passUntilTarget(ctx, r1!.expiresAt * 1000 + REAL_SLACK_MS, [a])
      }
      expectEqual([(await snapshot(ctx, a.id)).requests, (await sessionState(ctx, a.id, 's1')).approval], [[], null], `[pending requests, the session's approval] ${virtual ? 'at 601 s' : `${REAL_SLACK_MS / 1000} s after its expiresAt`}`)
      expectError(await a.post('s1', { approval: approval('r1') }), 'invalid_field', 'r1 after it expired', 'approval.id')
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
        const reply = await a.batch(Array.from({ length: per }, (_, i) => ({ id: `s${i}`, ...newSession(), approval: approval(`r${round}-${i}`) })))
        expectStatus(reply, 200, `batch ${round + 1} (ids ${round * per + 1}..${(round + 1) * per})`)
      }
      expectError(await a.post('s0', { approval: approval('r-one-more') }), 'limit_exceeded', 'the 4097th id')
      expectStatus(await a.reregister(), 200, 're-registering with the token')
      expectError(await a.post('s0', { approval: approval('r-one-more') }), 'limit_exceeded', 'the 4097th id after re-registering')
      expectStatus(await a.unregister(), 204, 'unregistering')
      expectStatus(await a.reregister(), 200, 'a new lease')
      await mustPost(a, 's0', newSession({ approval: approval('r0-0') }), 'an id of the old lease, under the new one')
    }
  }),
  defineCase({
    id: 'OT-A23',
    title: 'sequences are per lease from 1, shared by all types, kept across re-registration, restarted by a new lease',
    level: 'decision',
    needs: ['control'],
    async run (ctx) {
      const a = await agent(ctx, { keypad: true })
      const control = controlOf(ctx)
      await mustPost(a, 's1', newSession({ approval: approval('r1') }))
      expectEqual((await a.poll({})).json.lastSequence, 0, 'lastSequence before any event')
      expectControl(await control.tap(a.id, 's1'), 200, 'a tap')
      expectStatus(await a.reregister(), 200, 're-registering with the token')
      expectControl(await control.decide(a.id, 'r1', { decision: 'allow' }), 200, 'allow r1')
      expectControl(await control.tap(a.id, 's1'), 200, 'a tap')
      const reply = await a.poll({})
      expectEqual([(reply.json.events as Array<{ sequence: number, type: string }>).map((e) => `${e.sequence}:${e.type}`), reply.json.lastSequence], [['1:tap', '2:approval', '3:tap'], 3], '[events, lastSequence]')
      // after below the stored ack is accepted: events start at max(after, acknowledged) + 1.
      expectEqual(sequences(await a.poll({ after: 2, ack: 2 })), [3], 'ack 2')
      expectEqual(sequences(await a.poll({ after: 1 })), [3], 'after 1 below acknowledged 2')
      expectStatus(await a.unregister(), 204, 'unregistering')
      expectStatus(await a.reregister(), 200, 'a new lease')
      expectError(await a.poll({ after: 3 }), 'invalid_cursor', 'an after from the old lease')
      await mustPost(a, 's1', newSession())
      expectControl(await control.tap(a.id, 's1'), 200, 'a tap under the new lease')
      const fresh = await a.poll({})
      expectEqual([sequences(fresh), fresh.json.lastSequence, fresh.json.acknowledged], [[1], 1, 0], 'the new lease: [events, lastSequence, acknowledged]')
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
  }),
  defineCase({
    id: 'OT-A24',
    title: 'lengths count code points; project is cleaned (controls, format characters, whitespace runs) before 1..128 is counted',
    level: 'decision',
    async run (ctx) {
      const a = await agent(ctx)
      await mustPost(a, 's1', newSession({ title: '🛰'.repeat(120) }), 'a title of 120 astral code points')
      await expectRefused(a, 's1', [[{ title: '🛰'.repeat(121) }], [{ project: '\u200e\u0000' }], [{ project: ' \n\t ' }], [{ project: '\u200f'.repeat(3) }]])
      await expectAccepted(a, 's1', [{ project: `  ${'🛰'.repeat(128)}  ` }, { project: `${'p'.repeat(128)}\u200f\u0007` }, { model: '🛰'.repeat(64) }])
      await expectRefused(a, 's1', [[{ model: '🛰'.repeat(65) }]])
      if (ctx.control === undefined) return
      await mustPost(a, 's1', { project: 'a\n\n b\u200f\u0007c' })
      expectEqual((await sessionState(ctx, a.id, 's1')).project, 'a bc', 'the stored project of "a\\n\\n b\\u200f\\u0007c"')
    }
  }),
  defineCase({
    id: 'OT-A24.b',
    title: 'message.text keeps its last 4096 UTF-8 bytes, cut at a whole code point',
    level: 'decision',
    needs: ['control'],
    async run (ctx) {
      const a = await agent(ctx)
      const text = `${'a'.repeat(5000)}${'é'.repeat(3000)}`
      await mustPost(a, 's1', newSession({ message: { id: 'm', text } }))
      const kept = (await sessionState(ctx, a.id, 's1')).message?.text as string
      const bytes = Buffer.byteLength(kept ?? '')
      expectThat(typeof kept === 'string' && text.endsWith(kept) && bytes <= 4096 && bytes >= 4093 && !kept.includes('\ufffd'), 'the stored text',
        'a suffix of the text, 4093..4096 bytes, no broken code point', `${bytes} bytes: ${String(kept).slice(0, 40)}…`)
      expectEqual(kept, 'é'.repeat(2048), 'the last 4096 bytes of 3000 two-byte code points')
    }
  }),
  defineCase({
    id: 'OT-A30',
    title: 'events queued for a session that ended stay deliverable; no new tap or decision events are made for it',
    level: 'decision',
    needs: ['control'],
    async run (ctx) {
      const a = await agent(ctx, { keypad: true })
      const control = controlOf(ctx)
      await mustPost(a, 's1', newSession({ approval: approval('r1') }))
      await mustPost(a, 's2', newSession({ approval: approval('r2') }))
      expectControl(await control.tap(a.id, 's1'), 200, 'a tap on s1')
      expectControl(await control.decide(a.id, 'r1', { decision: 'allow' }), 200, 'allow r1')
      expectStatus(await a.batch([]), 200, 'a batch that ends s1 and s2')
      expectRefusedByControl(await control.tap(a.id, 's1'), 'a tap on an ended session')
      expectRefusedByControl(await control.decide(a.id, 'r2', { decision: 'allow' }), 'a decision on the request of an ended session')
      expectEqual((await events(a)).map((e) => [e.type, e.sessionId]), [['tap', 's1'], ['approval', 's1']], 'the events queued before s1 ended')
    }
  })
]

/** Which cases each fault of this area must make fail. */
export const sessionsFaults: Partial<Record<Fault, string[]>> = {
  'sessions-off-by-one': ['OT-029', 'OT-A21', 'OT-A19'],
  'no-merge': ['OT-092', 'OT-092.b', 'OT-A17.model'],
  'batch-not-atomic': ['OT-A19', 'OT-A19.model'],
  'cursor-from-zero': ['OT-131', 'OT-143', 'OT-A23', 'OT-A23.b', 'OT-A23.model'],
  'ack-decreases': ['OT-136', 'OT-A23.model'],
  'no-poll-pending': ['OT-133', 'OT-133.b']
}
