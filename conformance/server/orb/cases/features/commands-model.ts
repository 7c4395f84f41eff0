import { isDeepStrictEqual } from 'node:util'
import fc from 'fast-check'
import { CaseFailure } from '../../../core/case.js'
import { expectOrbError, expectThat } from '../../expect.js'
import { fail, type OrbContext } from '../../orb-case.js'
import {
  checkListed,
  globals,
  listCommands,
  NAME_POOL,
  namesOf,
  syncOk,
  type CommandInput
} from './commands-support.js'
import { COMMANDS, strict } from './features-support.js'
import type { Strictness } from '../../../core/strictness.js'

/*
 * An app's global commands as a model (ORB-056, ORB-064, ORB-A15): syncs, deletes and GETs as fast-check commands,
 * each checked against the list the model says is registered.
 */

export interface CommandModel {
  registered: Map<string, CommandInput>
  /** Ids of names registered without a break since they were first seen (ORB-A15). */
  ids: Map<string, string>
}

/** The app's global commands are exactly the model's (ORB-056, ORB-064), each as registered. */
export function compareListing (of: Strictness, listed: any[], model: CommandModel, what: string): void {
  const shown = globals(listed)
  const want = [...model.registered.keys()].sort()
  if (!isDeepStrictEqual(namesOf(shown), want)) throw new CaseFailure(`${what}: the app's commands are not exactly the last PUT's list minus the deletes (ORB-056)`, want, namesOf(shown))
  for (const c of shown) {
    checkListed(of, c, model.registered.get(c.name)!, what)
    const known = model.ids.get(c.name)
    if (known !== undefined && strict(of) && known !== c.id) throw new CaseFailure(`${what}: /${String(c.name)} changed its id across syncs (ORB-A15)`, known, c.id)
    model.ids.set(c.name, c.id)
  }
}

export interface CommandReal { ctx: OrbContext }

export class SyncCommand implements fc.AsyncCommand<CommandModel, CommandReal> {
  constructor (readonly list: CommandInput[]) {}
  check (): boolean { return true }
  async run (model: CommandModel, { ctx }: CommandReal): Promise<void> {
    const reply = await syncOk(ctx, this.list, this.toString())
    model.registered = new Map(this.list.map((c) => [c.name, c]))
    for (const name of [...model.ids.keys()]) if (!model.registered.has(name)) model.ids.delete(name)
    // ORB-A15: PUT answers the registered commands as GET does.
    if (strict(ctx.client)) {
      if (!Array.isArray(reply.json?.commands)) {
        fail(`${this.toString()}: the PUT reply (ORB-A15)`, '{"commands":[…]}', reply)
      }
      compareListing(ctx.client, reply.json.commands, model, `${this.toString()}, its reply`)
    }
    compareListing(ctx.client, await listCommands(ctx), model, `GET after ${this.toString()}`)
  }

  toString (): string { return `sync([${this.list.map((c) => c.name).join(',')}])` }
}

/** DELETE ?name= of a name from the pool, or (a number) of the n-th registered one. */
export class DeleteCommand implements fc.AsyncCommand<CommandModel, CommandReal> {
  constructor (readonly choice: string | number) {}
  check (): boolean {
    return true
  }

  async run (model: CommandModel, { ctx }: CommandReal): Promise<void> {
    const registered = [...model.registered.keys()]
    const name =
      typeof this.choice === 'string'
        ? this.choice
        : (registered[this.choice % Math.max(1, registered.length)] ?? NAME_POOL[0]!)
    const what = `delete(${name})`
    const reply = await ctx.client.request({ method: 'DELETE', path: COMMANDS, query: { name } })
    if (!model.registered.has(name)) return expectOrbError(reply, 404, `${what} of a name not registered (ORB-064)`)
    if (reply.status !== 200) fail(`${what} of a registered name (ORB-064)`, 200, reply)
    if (strict(ctx.client)) {
      expectThat(
        isDeepStrictEqual(reply.json, { ok: true, name }),
        `${what}: the reply (ORB-A15)`,
        { ok: true, name },
        reply.json
      )
    }
    model.registered.delete(name)
    model.ids.delete(name)
    compareListing(ctx.client, await listCommands(ctx), model, `GET after ${what}`)
  }

  toString (): string { return `delete(${typeof this.choice === 'string' ? this.choice : `#${this.choice}`})` }
}

export class ListCommands implements fc.AsyncCommand<CommandModel, CommandReal> {
  check (): boolean { return true }
  async run (model: CommandModel, { ctx }: CommandReal): Promise<void> {
    compareListing(ctx.client, await listCommands(ctx), model, 'GET /commands')
  }

  toString (): string { return 'get' }
}
