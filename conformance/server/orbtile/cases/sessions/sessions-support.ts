import { CaseFailure, type CaseContext } from '../../orbtile-case.js'
import { expectError, expectStatus, expectThat } from '../../expect.js'
import type { ControlClient } from '../../../core/control.js'
import {
  agent, approval, controlOf, mustPost, newSession, question, type Agent, type AgentOptions
} from '../../agent-sessions.js'

// What the topics of the sessions area share: an adapter with its first sessions, expectations on updates, and the
// user's side through the control API. The adapter itself is ../../agent-sessions.ts.

/**
 * Registers an adapter (`agent`, unregistered when the case ends) and creates its first sessions, in order: each id
 * with `newSession(extra)`, which must answer 200.
 */
export async function agentWith (ctx: CaseContext, sessions: Sessions, options: AgentOptions = {}): Promise<Agent> {
  const a = await agent(ctx, options)
  await createSessions(a, sessions)
  return a
}

/**
 * An update asking approval or question `id` on `sessionId` is refused as invalid_field on `<kind>.id`: the id is
 * pending elsewhere, or retired (OT-125, OT-126).
 */
export async function expectIdRefused (
  a: Agent, sessionId: string, kind: 'approval' | 'question', id: string, what: string
): Promise<void> {
  const update = kind === 'approval' ? { approval: approval(id) } : { question: question(id) }
  expectError(await a.post(sessionId, update), 'invalid_field', what, `${kind}.id`)
}

/** An adapter and the control API that plays its user. */
export interface UserSide { a: Agent, control: ControlClient }

/** An adapter whose user switched keypad decisions on, its first sessions (as `agentWith`), and the user's side. */
export async function keypadAgent (ctx: CaseContext, sessions: Sessions = {}): Promise<UserSide> {
  const a = await agent(ctx, { keypad: true })
  const control = controlOf(ctx)
  await createSessions(a, sessions)
  return { a, control }
}

/** A fresh adapter with session s1, which the user has tapped `n` times (control API): `n` tap events queued. */
export async function tappedAgent (ctx: CaseContext, n: number): Promise<Agent> {
  const a = await agentWith(ctx, { s1: {} })
  for (let i = 0; i < n; i++) expectControl(await controlOf(ctx).tap(a.id, 's1'), 200, 'a tap')
  return a
}

/** Two adapters registered in turn, then their first sessions (the first's, then the bystander's). */
export async function agentAndBystander (
  ctx: CaseContext, sessions: Sessions, others: Sessions
): Promise<[Agent, Agent]> {
  const a = await agent(ctx)
  const other = await agent(ctx)
  await createSessions(a, sessions)
  await createSessions(other, others)
  return [a, other]
}

/** First sessions of an adapter: session id to the fields `newSession` adds. */
type Sessions = Record<string, Record<string, unknown>>

/** Creates the sessions in order, each with `newSession(extra)`; each must answer 200. */
async function createSessions (a: Agent, sessions: Sessions): Promise<void> {
  for (const [sessionId, extra] of Object.entries(sessions)) await mustPost(a, sessionId, newSession(extra))
}

/** Fails unless the session exists (or not), probed with a heartbeat (OT-A18). */
export async function expectExists (a: Agent, sessionId: string, exists: boolean, what: string): Promise<void> {
  const found = await a.exists(sessionId)
  expectThat(
    found === exists,
    what,
    exists ? `session ${sessionId} exists` : `session ${sessionId} does not exist`,
    found ? 'it exists' : 'it does not exist'
  )
}

/** A SessionUpdate as a case sends it. */
export type Update = Record<string, unknown>

/** An update that must be refused, and the field the refusal names (the update's key, unless given). */
export type Refusal = [Update, string?]

/** Fails unless every update is refused with invalid_field on `field` (the key, unless given). */
export async function expectRefused (a: Agent, sessionId: string, cases: Refusal[]): Promise<void> {
  for (const [update, field] of cases) {
    expectError(
      await a.post(sessionId, update),
      'invalid_field',
      `POST ${JSON.stringify(update).slice(0, 120)}`,
      field ?? Object.keys(update)[0]
    )
  }
}

/** Fails unless every update is accepted. */
export async function expectAccepted (a: Agent, sessionId: string, updates: Update[]): Promise<void> {
  for (const update of updates) {
    expectStatus(await a.post(sessionId, update), 200, `POST ${JSON.stringify(update).slice(0, 120)}`)
  }
}

/**
 * A field's rule on a fresh adapter's session s1 (created with `newSession(create)`): every update of `accepted` is
 * accepted, then every one of `refused` is invalid_field (see expectRefused). Answers the adapter.
 */
export async function expectFieldRule (
  ctx: CaseContext, accepted: Update[], refused: Refusal[], create: Update = {}
): Promise<Agent> {
  const a = await agentWith(ctx, { s1: create })
  await expectAccepted(a, 's1', accepted)
  await expectRefused(a, 's1', refused)
  return a
}

/**
 * A request field's rule on a fresh adapter's session s1: every update of `refused` is invalid_field (see
 * expectRefused), then every one of `accepted` is accepted, in turn.
 */
export async function expectRequestFields (ctx: CaseContext, refused: Refusal[], accepted: Update[]): Promise<void> {
  const a = await agentWith(ctx, { s1: {} })
  await expectRefused(a, 's1', refused)
  await expectAccepted(a, 's1', accepted)
}

/** Fails unless the control API answered `status` to the user's action. */
export const expectControl = (reply: { status: number; json: unknown }, status: number, what: string): void => {
  if (reply.status !== status) {
    throw new CaseFailure(what, `control API ${status}`, `${reply.status} ${JSON.stringify(reply.json)}`)
  }
}

/** Fails unless the control API refused the user's action. */
export const expectRefusedByControl = (reply: { status: number; json: unknown }, what: string): void => {
  if (reply.status === 200) {
    throw new CaseFailure(what, 'the user action refused (4xx)', `200 ${JSON.stringify(reply.json)}`)
  }
}

/** An event of a poll's reply. */
export type Event = Record<string, any>

/** One poll's events (it must answer 200). */
export async function events (a: Agent, body: Update = {}, what = 'an events poll'): Promise<Event[]> {
  const reply = await a.poll(body)
  expectStatus(reply, 200, what)
  return reply.json.events
}
