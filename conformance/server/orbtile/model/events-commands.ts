import fc from 'fast-check'
import { CaseFailure, type CaseContext } from '../orbtile-case.js'
import { agent, targetNow } from '../agent-sessions.js'
import { errorProblem, expectSchema } from '../expect.js'
import { fail, requestBody, RIDS, sidArb, SIDS, type Kind } from './common.js'
import {
  emptyEventsModel, retireRequest, type EventsCommand, type EventsModel, type EventsReal
} from './events-model.js'

// The commands of the events model: the adapter's updates, batches and re-registrations, the user's taps and
// decisions (control API), and polls with any cursor, each reply checked against events-model.ts.

/** The adapter creates or updates a session (its host, now and then). */
class UpsertCommand implements EventsCommand {
  constructor (
    readonly sessionId: string,
    readonly host: string | undefined
  ) {}

  check (): true {
    return true
  }

  async run (m: EventsModel, { a }: EventsReal): Promise<void> {
    const reply = await a.post(this.sessionId, {
      title: 'orbtest',
      activity: 'thinking',
      ...(this.host === undefined ? {} : { host: this.host })
    })
    if (reply.status !== 200) fail(this.toString(), 200, reply)
    const s = m.sessions.get(this.sessionId) ?? { host: 'local', request: null }
    if (this.host !== undefined) s.host = this.host
    m.sessions.set(this.sessionId, s)
  }

  toString (): string { return `upsert(${this.sessionId}${this.host === undefined ? '' : `, host ${this.host}`})` }
}

/** A heartbeat `{}`: 200 for a live session, invalid_field otherwise. */
class HeartbeatCommand implements EventsCommand {
  constructor (readonly sessionId: string) {}
  check (): true { return true }
  async run (m: EventsModel, { a }: EventsReal): Promise<void> {
    const reply = await a.post(this.sessionId, {})
    if (m.sessions.has(this.sessionId) ? reply.status !== 200 : errorProblem(reply, 'invalid_field') !== undefined) {
      fail(this.toString(), m.sessions.has(this.sessionId) ? 200 : 'invalid_field', reply)
    }
  }

  toString (): string { return `heartbeat(${this.sessionId})` }
}

/** The adapter sets a session's approval or question, clearing the other kind. */
class RequestCommand implements EventsCommand {
  constructor (
    readonly sessionId: string,
    readonly kind: Kind,
    readonly id: string
  ) {}

  check (): true {
    return true
  }

  async run (m: EventsModel, { ctx, a }: EventsReal): Promise<void> {
    const other: Kind = this.kind === 'approval' ? 'question' : 'approval'
    const now = await targetNow(ctx)
    const reply = await a.post(this.sessionId, {
      [this.kind]: requestBody(this.kind, { id: this.id, variant: false }),
      [other]: null
    })
    const s = m.sessions.get(this.sessionId)
    const current = s?.request === null || s === undefined ? undefined : m.requests.get(s.request)
    let why: string | undefined
    if (s === undefined) why = 'no such session: title and activity needed'
    else if (s.request === this.id && current?.kind === this.kind) why = undefined // an identical re-send (OT-127)
    else if (m.requests.has(this.id)) why = 'the id is pending'
    else if (m.retired.has(this.id)) why = 'the id has retired'
    if (why !== undefined) {
      if (errorProblem(reply, 'invalid_field') !== undefined) fail(`${this}: refused by the model (${why})`, 'invalid_field', reply)
      return
    }
    if (reply.status !== 200) fail(`${this}: accepted by the model`, 200, reply)
    if (s!.request === this.id && current?.kind === this.kind) return
    retireRequest(m, s!.request)
    m.requests.set(this.id, { kind: this.kind, sessionId: this.sessionId, decided: false, pendingSince: now / 1000 })
    s!.request = this.id
  }

  toString (): string { return `${this.kind}(${this.sessionId}, ${this.id})` }
}

/** The adapter clears a session's requests. */
class ClearCommand implements EventsCommand {
  constructor (readonly sessionId: string) {}
  check (): true { return true }
  async run (m: EventsModel, { a }: EventsReal): Promise<void> {
    const reply = await a.post(this.sessionId, { approval: null, question: null })
    const s = m.sessions.get(this.sessionId)
    if (s === undefined) {
      if (errorProblem(reply, 'invalid_field') !== undefined) fail(this.toString(), 'invalid_field', reply)
      return
    }
    if (reply.status !== 200) fail(this.toString(), 200, reply)
    retireRequest(m, s.request)
    s.request = null
  }

  toString (): string { return `clear(${this.sessionId})` }
}

/** A batch that lists these sessions; the others end. */
class EventsBatchCommand implements EventsCommand {
  constructor (readonly ids: readonly string[]) {}
  check (): true { return true }
  async run (m: EventsModel, { a }: EventsReal): Promise<void> {
    const reply = await a.batch(this.ids.map((id) => ({ id, title: 'orbtest', activity: 'idle' })))
    if (reply.status !== 200) fail(this.toString(), 200, reply)
    for (const [id, s] of [...m.sessions]) {
      if (this.ids.includes(id)) continue
      retireRequest(m, s.request) // OT-A18
      m.sessions.delete(id)
    }
    for (const id of this.ids) if (!m.sessions.has(id)) m.sessions.set(id, { host: 'local', request: null })
  }

  toString (): string { return `batch([${this.ids.join(', ')}])` }
}

/** The user taps a session (control API). */
class TapCommand implements EventsCommand {
  constructor (readonly sessionId: string) {}
  check (): true { return true }
  async run (m: EventsModel, { ctx, a }: EventsReal): Promise<void> {
    const reply = await ctx.control!.tap(a.id, this.sessionId)
    const s = m.sessions.get(this.sessionId)
    // OT-144; OT-A30: no tap events for sessions that have ended.
    if (s === undefined) {
      if (reply.status === 200) throw new CaseFailure(`${this}: the session has ended`, 'the tap refused', reply.json)
      return
    }
    if (reply.status !== 200) throw new CaseFailure(`${this}: the user taps a live session`, 200, reply)
    m.queue.push({ sequence: m.next++, type: 'tap', sessionId: this.sessionId, host: s.host })
  }

  toString (): string { return `tap(${this.sessionId})` }
}

/** The user decides a request: allows or denies an approval, picks an answer (control API). */
class DecideCommand implements EventsCommand {
  constructor (readonly id: string, readonly allow: boolean, readonly pick: number) {}
  check (): true { return true }
  async run (m: EventsModel, { ctx, a }: EventsReal): Promise<void> {
    const r = m.requests.get(this.id)
    const picks = [[this.pick]]
    const decision = this.allow ? 'allow' as const : 'deny' as const
    const reply = await ctx.control!.decide(a.id, this.id, r?.kind === 'question' ? { picks } : { decision })
    // OT-145, OT-A22: only a pending request, once.
    if (r === undefined || r.decided) {
      if (reply.status === 200) throw new CaseFailure(`${this}: ${r === undefined ? 'nothing is pending under this id' : 'it was decided already'}`, 'the decision refused', reply.json)
      return
    }
    if (reply.status !== 200) throw new CaseFailure(`${this}: the user decides a pending request`, 200, reply)
    r.decided = true
    const host = m.sessions.get(r.sessionId)!.host
    m.queue.push({
      sequence: m.next++,
      type: r.kind,
      sessionId: r.sessionId,
      host,
      requestId: this.id,
      ...(r.kind === 'approval' ? { decision } : { picks }),
      pendingSince: r.pendingSince
    })
  }

  toString (): string { return `decide(${this.id}, ${this.allow ? 'allow' : 'deny'}/pick ${this.pick})` }
}

type CursorChoice = 'highest' | 'acked' | 'zero' | 'back' | 'beyond'
type AckChoice = 'same' | 'after' | 'zero' | 'lower' | 'above'

/** An events poll with a cursor and an ack chosen relative to the model's. */
class PollCommand implements EventsCommand {
  constructor (readonly afterChoice: CursorChoice, readonly ackChoice: AckChoice, readonly back: number) {}
  check (): true { return true }
  async run (m: EventsModel, { a }: EventsReal): Promise<void> {
    const after = {
      highest: m.highestDelivered,
      acked: m.acknowledged,
      zero: 0,
      back: Math.max(0, m.highestDelivered - this.back),
      beyond: m.highestDelivered + this.back + 1
    }[this.afterChoice]
    const ack = {
      same: m.acknowledged,
      after,
      zero: 0,
      lower: Math.max(0, m.acknowledged - this.back),
      above: after + 1
    }[this.ackChoice]
    const what = `${this} = poll {after: ${after}, ack: ${ack}}`
    const reply = await a.poll({ after, ack })
    // OT-137, OT-A23: invalid_cursor exactly when ack > after or after is beyond the highest sequence delivered.
    if (ack > after || after > m.highestDelivered) {
      if (errorProblem(reply, 'invalid_cursor') !== undefined) fail(`${what}: (highest delivered ${m.highestDelivered})`, 'invalid_cursor', reply)
      return
    }
    if (reply.status !== 200) fail(what, 200, reply)
    expectSchema(reply.json, 'EventsReply', what)
    // OT-136, OT-A23: the ack is cumulative; a lower one changes nothing.
    m.acknowledged = Math.max(m.acknowledged, ack)
    m.queue = m.queue.filter((e) => e.sequence > m.acknowledged)
    // OT-135: the unacknowledged events after max(after, acknowledged), ascending, at most 128.
    const expected = m.queue.filter((e) => e.sequence > Math.max(after, m.acknowledged)).slice(0, 128)
    const got = reply.json.events as Array<Record<string, unknown>>
    const strip = (e: Record<string, unknown>): Record<string, unknown> =>
      Object.fromEntries(
        Object.entries(e)
          .filter(([k]) => k !== 'expiresAt' && k !== 'pendingSince')
          .sort(([x], [y]) => (x < y ? -1 : 1))
      )
    if (
      JSON.stringify(got.map(strip)) !==
      JSON.stringify(expected.map((e) => strip(e as unknown as Record<string, unknown>)))
    ) {
      throw new CaseFailure(
        `${what}: the events`,
        expected.map((e) => strip(e as unknown as Record<string, unknown>)),
        got
      )
    }
    // OT-129, OT-143: a decision's expiresAt is 600 s after its request first became pending.
    for (const [i, e] of expected.entries()) {
      if (e.pendingSince === undefined) continue
      const expiresAt = got[i]!.expiresAt as number
      if (typeof expiresAt !== 'number' || Math.abs(expiresAt - (e.pendingSince + 600)) > 1.5) {
        throw new CaseFailure(
          `${what}: expiresAt of event ${e.sequence}`,
          `about ${Math.round(e.pendingSince + 600)} (pending since + 600 s)`,
          expiresAt
        )
      }
    }
    if (reply.json.lastSequence !== m.next - 1) {
      throw new CaseFailure(`${what}: lastSequence`, m.next - 1, reply.json.lastSequence)
    }
    if (reply.json.acknowledged !== m.acknowledged) {
      throw new CaseFailure(`${what}: acknowledged`, m.acknowledged, reply.json.acknowledged)
    }
    const last = expected.at(-1)
    if (last !== undefined) m.highestDelivered = Math.max(m.highestDelivered, last.sequence)
  }

  toString (): string { return `poll(after ${this.afterChoice}, ack ${this.ackChoice}, ${this.back})` }
}

/** The adapter registers again with its token. */
class ReregisterCommand implements EventsCommand {
  check (): true { return true }
  async run (_m: EventsModel, { a }: EventsReal): Promise<void> {
    // OT-A23: registering again with the token keeps the lease, and the sequences go on.
    const reply = await a.reregister()
    if (reply.status !== 200) fail(this.toString(), 200, reply)
  }

  toString (): string { return 'reregister()' }
}

/** The commands of an events model run, weighted toward polls and the user's actions. */
export function eventsCommands (): Array<fc.Arbitrary<EventsCommand>> {
  const rid = fc.constantFrom(...RIDS)
  const poll = fc
    .tuple(
      fc.constantFrom<CursorChoice>('highest', 'highest', 'highest', 'acked', 'zero', 'back', 'beyond'),
      fc.constantFrom<AckChoice>('same', 'after', 'after', 'after', 'zero', 'zero', 'lower', 'above'),
      fc.integer({ min: 0, max: 3 })
    )
    .map(([after, ack, back]) => new PollCommand(after, ack, back))
  const upsert = fc
    .tuple(sidArb, fc.option(fc.constantFrom('local', 'devbox', 'build-01'), { nil: undefined }))
    .map(([sid, host]) => new UpsertCommand(sid, host))
  const request = fc
    .tuple(sidArb, fc.constantFrom<Kind>('approval', 'question'), rid)
    .map(([sid, kind, id]) => new RequestCommand(sid, kind, id))
  const tap = sidArb.map((sid) => new TapCommand(sid))
  const decide = fc
    .tuple(rid, fc.boolean(), fc.integer({ min: 0, max: 1 }))
    .map(([id, allow, pick]) => new DecideCommand(id, allow, pick))
  // Weighted by repetition: polls and the user's actions most, so that cursors move far within a run.
  return [
    upsert,
    upsert,
    request,
    request,
    tap,
    tap,
    tap,
    decide,
    decide,
    poll,
    poll,
    poll,
    poll,
    poll,
    sidArb.map((sid) => new HeartbeatCommand(sid)),
    sidArb.map((sid) => new ClearCommand(sid)),
    fc.uniqueArray(sidArb, { maxLength: SIDS.length }).map((ids) => new EventsBatchCommand(ids)),
    fc.constant(new ReregisterCommand())
  ]
}

/** Runs the events model: each run on a fresh adapter with keypad decisions on (a fresh lease: sequences from 1). */
export async function runEventsModel (ctx: CaseContext): Promise<number> {
  let runs = 0
  await fc.assert(
    fc.asyncProperty(fc.commands(eventsCommands(), { maxCommands: 50, size: 'large' }), async (cmds) => {
      runs++
      const a = await agent(ctx, { label: 'cursor', keypad: true })
      try {
        // Every run starts with its cursor moved: two taps delivered, then acknowledged.
        const model = emptyEventsModel()
        const real = { ctx, a }
        for (const warmUp of [
          new UpsertCommand('a', undefined),
          new TapCommand('a'),
          new TapCommand('a'),
          new PollCommand('highest', 'same', 0),
          new PollCommand('highest', 'after', 0)
        ]) {
          await warmUp.run(model, real)
        }
        await fc.asyncModelRun(() => ({ model, real }), cmds)
      } finally {
        await a.unregister()
      }
    }),
    ctx.fc()
  )
  return runs
}
