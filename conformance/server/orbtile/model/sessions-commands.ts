import fc from 'fast-check'
import { CaseFailure, type CaseContext } from '../orbtile-case.js'
import { agent, snapshot, type Agent } from '../agent-sessions.js'
import { errorProblem } from '../expect.js'
import { fail, sidArb, SIDS } from './common.js'
import {
  applyBatch, applyPatch, emptySessionsModel, FIELDS, patchArb, patchBody, showPatch, type Patch, type SessionsModel
} from './sessions-model.js'

// The commands of the sessions model: updates and batches, each reply checked against sessions-model.ts, and with
// the control API the stored sessions after every command.

/** The target a sessions model run drives. */
export interface SessionsReal { ctx: CaseContext, a: Agent, uids: Map<string, string> }

type SessionsCommand = fc.AsyncCommand<SessionsModel, SessionsReal>

/** OT-A17: a session's uid is stable for its life. */
function checkUid (real: SessionsReal, sessionId: string, uid: unknown, what: string): void {
  if (typeof uid !== 'string') throw new CaseFailure(`${what}: session.uid`, 'a string', uid)
  const before = real.uids.get(sessionId)
  if (before !== undefined && before !== uid) {
    throw new CaseFailure(`${what}: the uid of a live session changed`, before, uid)
  }
  real.uids.set(sessionId, uid)
}

/** One update of a session, checked against the model. */
class PostCommand implements SessionsCommand {
  constructor (readonly sessionId: string, readonly patch: Patch) {}
  check (): true { return true }
  async run (m: SessionsModel, real: SessionsReal): Promise<void> {
    const reply = await real.a.post(this.sessionId, patchBody(this.patch))
    const why = applyPatch(m, this.sessionId, this.patch)
    if (why !== undefined) {
      if (errorProblem(reply, 'invalid_field') !== undefined) fail(`${this}: refused by the model (${why})`, 'invalid_field', reply)
    } else {
      if (reply.status !== 200) fail(`${this}: accepted by the model`, 200, reply)
      checkUid(real, this.sessionId, reply.json?.session?.uid, this.toString())
    }
    await compareSessions(m, real, this.toString())
  }

  toString (): string { return `post(${this.sessionId}, ${showPatch(this.patch)})` }
}

/** A batch replace, checked against the model (all or nothing). */
class BatchCommand implements SessionsCommand {
  constructor (readonly items: ReadonlyArray<{ id: string, patch: Patch }>) {}
  check (): true { return true }
  async run (m: SessionsModel, real: SessionsReal): Promise<void> {
    const reply = await real.a.batch(this.items.map((item) => ({ id: item.id, ...patchBody(item.patch) })))
    const outcome = applyBatch(m, this.items)
    if ('refused' in outcome) {
      const problem = errorProblem(reply, 'invalid_field')
      if (problem !== undefined || !String(reply.json.error.field).startsWith('sessions[')) fail(`${this}: refused by the model (${outcome.refused})`, 'invalid_field on sessions[i]…', reply)
    } else {
      if (reply.status !== 200) fail(`${this}: accepted by the model`, 200, reply)
      // OT-A19: the reply lists the sessions in order, and the ids it ended.
      const ended = Array.isArray(reply.json?.ended) ? [...reply.json.ended].sort() : reply.json?.ended
      if (JSON.stringify(ended) !== JSON.stringify([...outcome.ended].sort())) {
        throw new CaseFailure(`${this}: ended`, [...outcome.ended].sort(), reply.json?.ended)
      }
      const listed = (reply.json?.sessions ?? []) as Array<{ id: string; uid: string }>
      if (JSON.stringify(listed.map((s) => s.id)) !== JSON.stringify(this.items.map((i) => i.id))) {
        throw new CaseFailure(
          `${this}: sessions`,
          this.items.map((i) => i.id),
          listed
        )
      }
      for (const id of outcome.ended) real.uids.delete(id)
      for (const s of listed) checkUid(real, s.id, s.uid, this.toString())
    }
    await compareSessions(m, real, this.toString())
  }

  toString (): string { return `batch([${this.items.map((i) => `${i.id}: ${showPatch(i.patch)}`).join(', ')}])` }
}

/** With the control API: the stored sessions, field by field, and the pending requests are the model's. */
async function compareSessions (m: SessionsModel, real: SessionsReal, what: string): Promise<void> {
  if (real.ctx.control === undefined) return
  const snap = await snapshot(real.ctx, real.a.id)
  const stored = [...(snap.sessions as any[])]
    .sort((x, y) => (x.id < y.id ? -1 : 1))
    .map((s) => {
      const fields: Record<string, unknown> = {}
      for (const key of FIELDS) fields[key] = key === 'activity' ? s.lastActivity : s[key]
      return { id: s.id, fields, approval: s.approval?.id ?? null, question: s.question?.id ?? null }
    })
  const modelled = [...m.sessions]
    .sort(([x], [y]) => (x < y ? -1 : 1))
    .map(([id, s]) => {
      const fields: Record<string, unknown> = {}
      for (const key of FIELDS) fields[key] = s.fields[key]
      return { id, fields, approval: s.approval?.id ?? null, question: s.question?.id ?? null }
    })
  if (JSON.stringify(stored) !== JSON.stringify(modelled)) {
    throw new CaseFailure(`after ${what}: the stored sessions`, modelled, stored)
  }
  const requests = (snap.requests as any[]).map((r) => `${r.id}:${r.kind}@${r.sessionId}`).sort()
  const expected = [...m.pending].map(([id, r]) => `${id}:${r.kind}@${r.sessionId}`).sort()
  if (JSON.stringify(requests) !== JSON.stringify(expected)) {
    throw new CaseFailure(`after ${what}: the pending requests`, expected, requests)
  }
}

const postArb = fc.tuple(sidArb, patchArb()).map(([sid, patch]) => new PostCommand(sid, patch))
// A heartbeat (OT-A18) is an empty update.
const heartbeatArb = sidArb.map((sid) => new PostCommand(sid, { fields: {} }))
const createArb = fc.tuple(sidArb, patchArb(true)).map(([sid, patch]) => new PostCommand(sid, patch))
const batchArb = fc
  .uniqueArray(sidArb, { maxLength: SIDS.length })
  .chain((ids) =>
    fc.tuple(...ids.map(() => patchArb(true))).map((patches) => ids.map((id, i) => ({ id, patch: patches[i]! })))
  )
  .map((items) => new BatchCommand(items))

/** Commands weighted toward single updates (OT-092) or toward batches (OT-114). */
export function sessionsCommands (focus: 'updates' | 'batches'): Array<fc.Arbitrary<SessionsCommand>> {
  return focus === 'updates'
    ? [postArb, postArb, postArb, createArb, createArb, heartbeatArb, batchArb]
    : [batchArb, batchArb, batchArb, createArb, postArb, heartbeatArb]
}

/** Runs the sessions model: each run on a fresh adapter (a fresh lease, request-id namespace and rate bucket). */
export async function runSessionsModel (ctx: CaseContext, focus: 'updates' | 'batches'): Promise<number> {
  let runs = 0
  await fc.assert(
    fc.asyncProperty(fc.commands(sessionsCommands(focus), { maxCommands: 30, size: 'large' }), async (cmds) => {
      runs++
      const a = await agent(ctx, { label: focus === 'updates' ? 'merge' : 'batchm' })
      try {
        await fc.asyncModelRun(() => ({ model: emptySessionsModel(), real: { ctx, a, uids: new Map() } }), cmds)
      } finally {
        await a.unregister()
      }
    }),
    ctx.fc()
  )
  return runs
}
