import fc from 'fast-check'
import { adapterId, CaseFailure, defineCase, type CaseContext, type ConformanceCase } from '../../orbtile-case.js'
import { forget, minimal } from '../../adapters.js'
import { REAL_SLACK_MS } from '../../time.js'
import { errorProblem } from '../../expect.js'
import type { Reply } from '../../transport.js'

/**
 * Leases as a state machine (OT-018, OT-020, OT-021, OT-023, OT-A06..A08): random sequences of registrations,
 * re-registrations with the current, a stale, a wrong or no token, unregistrations, session posts and silences,
 * each reply checked against a plain model of the spec.
 */

type TokenChoice = 'current' | 'stale' | 'wrong' | 'none'

interface Model {
  live: boolean
  current: string | undefined
  stale: string[]
  issued: Set<string>
  /** Silences a run may still wait out: any number on a virtual clock, one on a real one (each takes minutes). */
  silencesLeft: number
}

interface Real {
  ctx: CaseContext
  id: string
  /** The silence window of a lease with no sessions (OT-A08). */
  silenceMs: number
  /** Whether the target's clock is virtual. */
  virtual: boolean
}

const WRONG = 'W'.repeat(43)

/** The token a command sends: the current one, the last stale one, a wrong one, or none. */
function tokenFor (model: Model, choice: TokenChoice): string | undefined {
  if (choice === 'current') return model.current
  if (choice === 'stale') return model.stale.at(-1) ?? WRONG
  if (choice === 'wrong') return WRONG
  return undefined
}

/** The live lease ends: its token goes stale. */
function endLease (model: Model): void {
  model.live = false
  model.stale.push(model.current!)
  model.current = undefined
}

/** The adapter-token header, or none. */
const headers = (token: string | undefined): Record<string, string> =>
  token === undefined ? {} : { 'x-orbtile-adapter-token': token }

/** Fails the command with the reply. */
function fail (what: string, expected: string, reply: Reply): never {
  throw new CaseFailure(what, expected, `${reply.status} ${reply.text.slice(0, 300)}`)
}

/** Fails unless the reply is the error `code` (on `field`, when given). */
function expectCode (
  reply: Reply,
  code: 'unauthorized' | 'adapter_not_registered',
  what: string,
  field?: string
): void {
  if (errorProblem(reply, code, field) !== undefined) {
    fail(what, `${code}${field === undefined ? '' : ` on ${field}`}`, reply)
  }
}

/** A request with the chosen token: a registration, an unregistration or an adapter route. */
abstract class TokenCommand implements fc.AsyncCommand<Model, Real> {
  constructor (readonly choice: TokenChoice) {}
  check (): boolean {
    return true
  }

  abstract run (model: Model, real: Real): Promise<void>

  /** Sends the request with the chosen token's header (none for `none`). */
  protected send (model: Model, real: Real, request: { method: string, path: string, body?: unknown }): Promise<Reply> {
    return real.ctx.client.request({ ...request, headers: headers(tokenFor(model, this.choice)) })
  }

  /** Fails unless `doing` with a token other than the live lease's was refused as unauthorized. */
  protected expectUnauthorized (reply: Reply, doing: string): void {
    const token = this.choice === 'none' ? 'no' : `a ${this.choice}`
    expectCode(reply, 'unauthorized', `${doing} with ${token} token`, 'X-Orbtile-Adapter-Token')
  }
}

/** PUT /adapters/{id} with the chosen token. */
class Register extends TokenCommand {
  override async run (model: Model, real: Real): Promise<void> {
    const reply = await this.send(model, real, { method: 'PUT', path: `/adapters/${real.id}`, body: minimal() })
    if (model.live) {
      // OT-021, OT-A06: a live lease needs its own token to re-register; with it the lease and token carry on.
      if (this.choice === 'current') {
        if (reply.status !== 200 || reply.json?.adapterToken !== model.current) {
          fail('re-registering with the current token', '200 with the same adapterToken', reply)
        }
      } else {
        this.expectUnauthorized(reply, 're-registering a live lease')
      }
      return
    }
    // OT-A06: without a live lease any token is ignored and a new lease begins; OT-018: a new, well-formed token.
    const issued = reply.json?.adapterToken
    if (reply.status !== 200 || typeof issued !== 'string' || !/^[A-Za-z0-9_-]{43}$/.test(issued)) { fail(`registering with no live lease (${this.choice} token)`, '200 with a 43-character adapterToken', reply) }
    if (model.issued.has(issued)) {
      throw new CaseFailure(
        'a new lease reused an earlier token',
        'a token never issued before',
        issued.slice(0, 4) + '…'
      )
    }
    model.issued.add(issued)
    model.live = true
    model.current = issued
  }

  override toString (): string { return `register(${this.choice})` }
}

/** DELETE /adapters/{id} with the chosen token. */
class Unregister extends TokenCommand {
  override async run (model: Model, real: Real): Promise<void> {
    const reply = await this.send(model, real, { method: 'DELETE', path: `/adapters/${real.id}` })
    if (!model.live) return expectCode(reply, 'adapter_not_registered', 'unregistering with no live lease')
    if (this.choice !== 'current') return this.expectUnauthorized(reply, 'unregistering')
    if (reply.status !== 204) fail('unregistering with the current token', '204', reply)
    endLease(model)
  }

  override toString (): string { return `unregister(${this.choice})` }
}

/** An adapter route (an events poll) with the chosen token. */
class Post extends TokenCommand {
  override async run (model: Model, real: Real): Promise<void> {
    const body = { after: 0, ack: 0, waitSeconds: 0 }
    const reply = await this.send(model, real, { method: 'POST', path: `/adapters/${real.id}/events`, body })
    // OT-020, OT-A06: on an adapter route, no live lease is adapter_not_registered whatever the token; a live one needs
    // its token.
    if (!model.live) {
      return expectCode(reply, 'adapter_not_registered', `an adapter route with no live lease (${this.choice} token)`)
    }
    if (this.choice !== 'current') return this.expectUnauthorized(reply, 'an adapter route')
    // The adapter declared no capabilities: the lease is accepted, and the poll says events are not supported.
    if (errorProblem(reply, 'events_not_supported') !== undefined) {
      fail('an events poll with the current token, no capabilities', 'events_not_supported (the lease accepted)', reply)
    }
  }

  override toString (): string {
    return `post(${this.choice})`
  }
}

/** Time passes without a request: a lease with no sessions ends. */
class Silence implements fc.AsyncCommand<Model, Real> {
  check (model: Readonly<Model>): boolean { return model.silencesLeft > 0 }
  async run (model: Model, real: Real): Promise<void> {
    // OT-023, OT-A08: a lease with no sessions ends after 120 s without a request. A real clock waits (with --slow)
    // only when there is a lease to end, and a little past the window.
    if (real.virtual) await real.ctx.elapse(real.silenceMs + 1000)
    else if (model.live) {
      model.silencesLeft--
      await real.ctx.elapse(real.silenceMs + REAL_SLACK_MS)
    }
    if (model.live) endLease(model)
  }

  toString (): string { return 'silence' }
}

const choice = fc.constantFrom<TokenChoice>('current', 'stale', 'wrong', 'none')

/** The lease state machine (OT-A06.model). */
export const leaseModelCases: ConformanceCase[] = [
  defineCase({
    id: 'OT-A06.model',
    title: 'leases as a state machine: any sequence of registrations, unregistrations, adapter-route calls and silences, with any token, answers as the spec\'s model says',
    level: 'decision',
    // Silences take minutes of real time: a real clock runs 2 sequences of one silence each, with --slow.
    needs: ['control', 'slow'],
    async run (ctx) {
      const virtual = await ctx.virtualTime()
      const commands = fc.commands(
        [
          choice.map((c) => new Register(c)),
          choice.map((c) => new Unregister(c)),
          choice.map((c) => new Post(c)),
          fc.constant(new Silence())
        ],
        { maxCommands: 12 }
      )
      await fc.assert(
        fc.asyncProperty(commands, async (cmds) => {
          const id = adapterId(ctx, 'lease')
          await ctx.control!.user(id, { allowed: true })
          const model: Model = {
            live: false,
            current: undefined,
            stale: [],
            issued: new Set(),
            silencesLeft: virtual ? Infinity : 1
          }
          const real: Real = { ctx, id, silenceMs: 120_000, virtual }
          try {
            await fc.asyncModelRun(() => ({ model, real }), cmds)
            // A real clock runs two sequences: one that had no silence of a live lease ends with one.
            if (!virtual && model.silencesLeft > 0) {
              for (const cmd of [new Register('none'), new Silence(), new Post('stale'), new Register('stale')]) {
                await cmd.run(model, real)
              }
            }
          } finally {
            if (model.live) {
              await ctx.client.request({ method: 'DELETE', path: `/adapters/${id}`, headers: headers(model.current) })
            }
            // Each sequence has an id of its own: the fake forgets it at once.
            await forget(ctx, id)
          }
        }),
        virtual ? ctx.fc({ numRuns: Math.min(ctx.fc().numRuns ?? 20, 15) }) : ctx.fc({ numRuns: 2, endOnFailure: true })
      )
    }
  })
]
