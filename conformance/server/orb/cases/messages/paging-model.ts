import fc from 'fast-check'
import { CaseFailure, CaseSkip } from '../../../core/case.js'
import { expectEqual, expectOk, expectThat } from '../../expect.js'
import { controlled, type OrbContext } from '../../orb-case.js'
import { DELETE, postOk, readPage, remove } from './messages-support.js'

/*
 * ORB-034: paging as a state machine. A model of the channel above an anchor message, and the commands
 * (fast-check's AsyncCommand) that post, delete, read a page and walk every page against it.
 */

/** Strictly ascending ids (ORB-034: oldest first). */
export function expectAscending (ids: number[], what: string): void {
  for (let i = 1; i < ids.length; i++) {
    if (!(ids[i]! > ids[i - 1]!)) {
      throw new CaseFailure(`${what}: ids are not ascending (oldest first, ORB-034)`, 'ascending ids', ids)
    }
  }
}

/** The model: what the channel holds above the anchor, and what the run made. */
export interface PagingModel {
  /** The app's message posted before the run: every id the run makes is above it, everything older is not modelled. */
  anchor: number
  /** How many posts the commands may make in a run (a real clock's throttle windows bound it; Infinity otherwise). */
  budget: number
  /** Live messages above the anchor, ascending. */
  live: number[]
  /** The app's own live messages above the anchor. */
  own: number[]
  /** Every id the run made, deleted ones too. */
  made: number[]
}

/** What the commands act on: the case, the channel and the run's uid. */
export interface PagingReal {
  ctx: OrbContext
  channel: string
  uid: string
}

/** A read's `before`: none, an id the run made, the anchor, or just above the newest id. */
export type BeforeChoice =
  { kind: 'none' } | { kind: 'made'; n: number } | { kind: 'anchor' } | { kind: 'above'; k: number }

function resolveBefore (model: PagingModel, choice: BeforeChoice): number | undefined {
  if (choice.kind === 'none') return undefined
  if (choice.kind === 'anchor') return model.anchor
  const top = Math.max(model.anchor, ...model.made)
  if (choice.kind === 'above') return top + choice.k
  return model.made.length === 0 ? top + 1 : model.made[choice.n % model.made.length]!
}

/** Checks one page against the model (ORB-034, ORB-A20, ORB-039). */
function checkPage (
  model: PagingModel,
  page: { messages: any[]; hasOlder: boolean },
  before: number | undefined,
  limit: number | undefined,
  what: string
): void {
  const size = limit ?? 50
  const ids = page.messages.map((m) => m.id as number)
  expectAscending(ids, what)
  expectThat(ids.length <= size, `${what}: more than limit messages`, `at most ${size}`, ids.length)
  if (before !== undefined) expectThat(ids.every((id) => id < before), `${what}: a message not older than before=${before} (ORB-033, ORB-A20)`, `ids below ${before}`, ids)
  const made = new Set(model.made)
  for (const id of ids) {
    if (id > model.anchor && !made.has(id)) throw new CaseSkip(`message ${id} appeared in the channel during the run from someone other than this case: the channel must be quiet for the paging model`)
    if (made.has(id) && !model.live.includes(id)) throw new CaseFailure(`${what}: deleted message ${id} is returned (ORB-039, ORB-A20)`, 'deleted messages left out', ids)
  }
  if (before !== undefined && before <= model.anchor) return
  // The newest `size` live messages older than `before`: the modelled ones, then older ones ending with the anchor.
  const expected = model.live.filter((id) => before === undefined || id < before)
  if (expected.length >= size) {
    expectEqual(ids, expected.slice(-size), `${what}: the page is not the ${size} newest messages older than ${before ?? 'now'} (ORB-034)`)
    expectThat(page.hasOlder, `${what}: hasOlder is false, but older messages exist (ORB-034)`, true, page.hasOlder)
    return
  }
  const tail = ids.slice(ids.length - expected.length)
  const head = ids.slice(0, ids.length - expected.length)
  expectEqual(
    tail,
    expected,
    `${what}: the newest messages of the page are not the live ones older than ${before ?? 'now'} (ORB-034)`
  )
  expectThat(
    head.length > 0 && head.at(-1) === model.anchor && head.every((id) => id <= model.anchor),
    `${what}: the page stops short: ${size} were asked, and message ${model.anchor} (and maybe older ones) are older than before (ORB-034)`,
    `…, ${model.anchor}, ${expected.join(', ')}`,
    ids
  )
  if (ids.length < size) {
    expectThat(!page.hasOlder, `${what}: a short page says hasOlder (ORB-034)`, false, page.hasOlder)
  }
}

/** The app posts; the new id is above every older one. */
export class PostOwn implements fc.AsyncCommand<PagingModel, PagingReal> {
  check (model: Readonly<PagingModel>): boolean { return model.made.length < model.budget }
  async run (model: PagingModel, real: PagingReal): Promise<void> {
    const posted = await postOk(real.ctx, real.channel, `paging ${real.uid} #${model.made.length}`)
    const top = Math.max(model.anchor, ...model.made)
    expectThat(posted.id > top, 'a new message\'s id is above every older one (ORB-034: ascending id is oldest first)', `> ${top}`, posted.id)
    model.made.push(posted.id)
    model.live.push(posted.id)
    model.own.push(posted.id)
  }

  toString (): string { return 'post' }
}

/** A member posts (control API). */
export class MemberPost implements fc.AsyncCommand<PagingModel, PagingReal> {
  check (model: Readonly<PagingModel>): boolean {
    return model.made.length < model.budget
  }

  async run (model: PagingModel, real: PagingReal): Promise<void> {
    const { control, world, target } = controlled(real.ctx)
    const posted = await control.memberPost({
      server: target.community,
      channel: real.channel,
      member: world.member,
      content: `member ${real.uid} #${model.made.length}`
    })
    model.made.push(posted.id)
    model.live.push(posted.id)
  }

  toString (): string { return 'memberPost' }
}

/** The app deletes one of its live messages (ORB-039). */
export class DeleteOwn implements fc.AsyncCommand<PagingModel, PagingReal> {
  constructor (readonly n: number) {}
  check (model: Readonly<PagingModel>): boolean { return model.own.length > 0 }
  async run (model: PagingModel, real: PagingReal): Promise<void> {
    const id = model.own[this.n % model.own.length]!
    const reply = await remove(real.ctx, id)
    const body = expectOk(reply, `DELETE /messages/${id}`, DELETE)
    expectEqual({ ok: body.ok, id: body.id }, { ok: true, id }, `DELETE /messages/${id} answers {ok:true,id} (ORB-039)`)
    model.own = model.own.filter((x) => x !== id)
    model.live = model.live.filter((x) => x !== id)
  }

  toString (): string { return `delete(${this.n})` }
}

/** One page with a drawn `before` and `limit`, checked against the model. */
export class Read implements fc.AsyncCommand<PagingModel, PagingReal> {
  constructor (readonly before: BeforeChoice, readonly limit: number | undefined) {}
  check (): boolean { return true }
  async run (model: PagingModel, real: PagingReal): Promise<void> {
    const before = resolveBefore(model, this.before)
    const page = await readPage(real.ctx, real.channel, { before, limit: this.limit })
    checkPage(model, page, before, this.limit, `GET /messages before=${before ?? '-'} limit=${this.limit ?? '-'}`)
  }

  toString (): string { return `read(${JSON.stringify(this.before)}, ${this.limit ?? '-'})` }
}

/** Walks back from the newest page, `limit` messages a page, to the anchor. */
export class Walk implements fc.AsyncCommand<PagingModel, PagingReal> {
  constructor (readonly limit: number) {}
  check (): boolean { return true }
  async run (model: PagingModel, real: PagingReal): Promise<void> {
    // ORB-034: walking back with before = the first id of each page visits every message once, newest pages first.
    const seen: number[] = []
    let before: number | undefined
    for (let pages = 0; pages < 100; pages++) {
      const page = await readPage(real.ctx, real.channel, { before, limit: this.limit })
      const ids = page.messages.map((m) => m.id as number)
      expectAscending(ids, `walk page ${pages + 1}`)
      if (seen.length > 0 && ids.length > 0) expectThat(ids.at(-1)! < seen[0]!, `walking with before=${before}: the page repeats or overlaps the previous one (ORB-034)`, `ids below ${seen[0]}`, ids)
      seen.unshift(...ids)
      if (ids.length === 0 || !page.hasOlder || ids[0]! <= model.anchor) break
      before = ids[0]
    }
    const above = seen.filter((id) => id > model.anchor)
    expectEqual(above, model.live, `walking pages of ${this.limit}: every live message exactly once, in order (ORB-034)`)
    expectThat(seen.includes(model.anchor), `walking pages of ${this.limit} reaches message ${model.anchor}`, 'the anchor visited', seen.slice(0, 10))
  }

  toString (): string { return `walk(${this.limit})` }
}
