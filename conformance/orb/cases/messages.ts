import fc from 'fast-check'
import type { OrbFault } from '../../../src/orb-mock/faults.js'
import { orbSpec } from '../../../src/orb-mock/spec.js'
import { CaseFailure, CaseSkip, defineCase, type ConformanceCase } from '../../case.js'
import { arbitraryFor } from '../../schema-arbitrary.js'
import { expectComponent, expectEqual, expectOk, expectOrbError, expectRetryAfter, expectThat } from '../expect.js'
import { BOT, channel, controlled, fail, fullAppId, type OrbContext } from '../support.js'
import type { OrbBotClient, OrbReply, Speaker } from '../transport.js'

/*
 * Messages (ORB-023..042; decisions ORB-A02, ORB-A03, ORB-A20, ORB-A21): posting, reading, deleting and the post
 * throttles. Every post a case makes is deleted when the case ends; refused posts leave nothing to clean. Members'
 * messages (control only) cannot be deleted by anyone through the API: cases post them only where no existing one
 * will do.
 */

const MESSAGES = `${BOT}/messages`
const READ = { method: 'GET', path: '/api/bot/v1/messages' }
const POST = { method: 'POST', path: '/api/bot/v1/messages' }
const DELETE = { method: 'DELETE', path: '/api/bot/v1/messages/{id}' }

/** ORB-031: the spec's limits. */
const PER_CHANNEL = 12
const PER_APP = 30
const WINDOW_MS = 60_000

// ---------------------------------------------------------------------------------------------------------------
// Helpers

/** Posts a body as it is; a 200 is deleted when the case ends. Throttling is waited out unless `retry` is false. */
async function send (ctx: OrbContext, body: unknown, options: { as?: Speaker, retry?: boolean } = {}): Promise<OrbReply> {
  const as = options.as ?? 'full'
  const reply = await ctx.client.request({ method: 'POST', path: MESSAGES, body, as, retryThrottled: options.retry ?? true })
  if (reply.status === 200 && Number.isInteger(reply.json?.id)) {
    const id = reply.json.id as number
    ctx.cleanup(async () => { await remove(ctx, id, as) })
  }
  return reply
}

/** Posts plain text in `channelId` and fails the case unless it is accepted; the PostedMessage. */
async function postOk (ctx: OrbContext, channelId: string, content: string, extra: { reply_to?: number, retry?: boolean } = {}): Promise<any> {
  const reply = await send(ctx, { channel: channelId, content, ...(extra.reply_to === undefined ? {} : { reply_to: extra.reply_to }) }, { retry: extra.retry })
  if (reply.status !== 200 || !Number.isInteger(reply.json?.id)) fail(`posting ${JSON.stringify(content.slice(0, 40))} in ${channelId}`, '200 PostedMessage', reply)
  return reply.json
}

function remove (ctx: OrbContext, id: number | string, as: Speaker = 'full'): Promise<OrbReply> {
  return ctx.client.request({ method: 'DELETE', path: `${MESSAGES}/${String(id)}`, as })
}

/** GET /messages; a 200 checked against the spec's reply schema, with `messages` and `hasOlder` present. */
async function readPage (ctx: OrbContext, channelId: string, query: { before?: number, limit?: number } = {}, as: Speaker = 'full'): Promise<{ messages: any[], hasOlder: boolean }> {
  const reply = await ctx.client.get(MESSAGES, { channel: channelId, before: query.before, limit: query.limit }, as)
  const body = expectOk(reply, `GET /messages?channel=${channelId}${query.before === undefined ? '' : `&before=${query.before}`}${query.limit === undefined ? '' : `&limit=${query.limit}`}`, READ)
  if (!Array.isArray(body.messages) || typeof body.hasOlder !== 'boolean') fail('a page of messages', '{"messages":[…],"hasOlder":true|false}', reply)
  return body
}

/** Every message of a channel, oldest first, walking back with `before` (at most `pages` pages of 50). */
async function readAll (ctx: OrbContext, channelId: string, pages = 20): Promise<any[]> {
  const all: any[] = []
  let before: number | undefined
  for (let i = 0; i < pages; i++) {
    const page = await readPage(ctx, channelId, { before, limit: 50 })
    all.unshift(...page.messages)
    if (!page.hasOlder || page.messages.length === 0) break
    before = page.messages[0].id
  }
  return all
}

/** ORB-037: every field of a Message, present and of its type (the spec's schema alone requires none). */
function checkMessage (m: any, channelId: string, what: string): void {
  expectComponent(m, 'Message', what)
  const ok = Number.isInteger(m?.id) && m.channel === channelId &&
    typeof m.author?.id === 'string' && typeof m.author?.name === 'string' && typeof m.author?.bot === 'boolean' &&
    Number.isInteger(m.created) && (m.replyTo === null || Number.isInteger(m.replyTo)) && typeof m.encrypted === 'boolean' &&
    (m.body === null || typeof m.body === 'string') && Array.isArray(m.mentions) && m.mentions.every((x: unknown) => typeof x === 'string')
  expectThat(ok, `${what}: a Message with every field (ORB-037)`, `{"id":int,"channel":"${channelId}","author":{"id","name","bot"},"created":int,"replyTo":int|null,"encrypted":bool,"body":string|null,"mentions":[string]}`, m)
}

/** Strictly ascending ids (ORB-034: oldest first). */
function expectAscending (ids: number[], what: string): void {
  for (let i = 1; i < ids.length; i++) if (!(ids[i]! > ids[i - 1]!)) throw new CaseFailure(`${what}: ids are not ascending (oldest first, ORB-034)`, 'ascending ids', ids)
}

/** The app's member id: GET /app's `member` (ORB-A06), else the control API's record of the app. */
async function appMember (ctx: OrbContext): Promise<string | undefined> {
  const reply = await ctx.client.get(`${BOT}/app`)
  if (reply.status === 200 && typeof reply.json?.member === 'string') return reply.json.member
  if (ctx.control !== undefined) {
    const id = await fullAppId(ctx)
    const app = ((await ctx.control.orbState()).apps as any[]).find((a) => a.id === id)
    if (typeof app?.member === 'string') return app.member
  }
  return undefined
}

/** A member's (not an app's) message in the text channel: one already there, else (control) one a member posts now. */
async function memberMessage (ctx: OrbContext): Promise<any> {
  const text = channel(ctx, 'text')
  const found = (await readAll(ctx, text, 4)).find((m) => m.author?.bot === false)
  if (found !== undefined) return found
  if (ctx.control === undefined || ctx.client.target.controlled === undefined) throw new CaseSkip(`the text channel ${text} holds no member's message, and without the control API no member can post one`)
  if (ctx.readOnly) throw new CaseSkip(`the text channel ${text} holds no member's message, and --read-only forbids a member posting one`)
  const { control, world, target } = controlled(ctx)
  ctx.note('no member\'s message in the channel: a member posted one through the control API')
  const posted = await control.memberPost({ server: target.community, channel: text, member: world.member, content: `a member's words ${ctx.uid('m')}` })
  return posted
}

/** Lets every post window empty (ORB-A03: 60 s sliding windows); virtual time costs nothing. */
async function freshWindows (ctx: OrbContext): Promise<void> {
  await ctx.elapse(WINDOW_MS + 1000)
}

/**
 * A property's parameters on the target's clock. On a virtual clock the run's own (capped at `cap` runs); on a real
 * one `real` runs, and no shrinking: every accepted post costs a slot of ORB-031's windows (12 a minute in a channel),
 * and a shrink would post again and again.
 */
function clockRuns<T> (ctx: OrbContext, virtual: boolean, cap: number, real: number): fc.Parameters<T> {
  const runs = ctx.fc().numRuns ?? cap
  return virtual ? ctx.fc<T>({ numRuns: Math.min(runs, cap) }) : ctx.fc<T>({ numRuns: Math.min(runs, real), endOnFailure: true })
}

/**
 * How many accepted posts a property may make: unbounded on a virtual clock; on a real one `real`, so that the case
 * (after the windows the cases before it filled) ends within a minute or two. Draws that would post past it are
 * skipped (fc.pre), never passed unchecked.
 */
function postBudget (virtual: boolean, real: number): number {
  return virtual ? Number.POSITIVE_INFINITY : real
}

/** After a throttle case, on a virtual clock, the next cases meet empty windows. */
function emptyWindowsAfter (ctx: OrbContext): void {
  ctx.cleanup(async () => { if (await ctx.virtualTime()) await ctx.elapse(WINDOW_MS + 1000) })
}

/** The full app's install in the community, as the control API records it (to put it back exactly). */
async function fullInstall (ctx: OrbContext): Promise<{ role: { name: string, rights: string[] }, channels: string[], hidden: string[], channelRights: Record<string, string[]> }> {
  const { control, target } = controlled(ctx)
  const app = await fullAppId(ctx)
  const install = ((await control.orbState()).installs as any[]).find((i) => i.server === target.community && i.app === app)
  if (install === undefined) throw new Error(`control: ${app} is not installed in ${target.community}`)
  return { role: { name: install.role.name, rights: [...install.role.rights] }, channels: [...install.channels], hidden: [...install.hidden], channelRights: { ...install.channelRights } }
}

/** Content with a case-changed word (`eVeRyOnE`). */
const anyCase = (word: string): fc.Arbitrary<string> =>
  fc.array(fc.boolean(), { minLength: word.length, maxLength: word.length }).map((up) => [...word].map((c, i) => up[i]! ? c.toUpperCase() : c).join(''))

/** Harmless words around a mention (never a slash at a line start, never `everyone`). */
const words = fc.array(fc.constantFrom('hi', 'team', 'update', 'ok', '🚀', 'today', 'read this', 'ünïcode'), { maxLength: 3 }).map((w) => w.join(' '))
/** What stands before a mention: the start, or words and a separator that is not a word character. */
const lead = fc.tuple(words, fc.constantFrom(' ', '\n', ' (', ': ', ' "', '\n> ', ' *', ', ')).map(([w, sep]) => w === '' ? sep.trimStart() : `${w}${sep}`)
/** What follows: the end, punctuation or white space, then maybe words. */
const trail = fc.tuple(fc.constantFrom('', ' ', '!', '?', ',', '.', ')', '\n', '"', '*', ':'), words).map(([p, w]) => w === '' ? p : `${p}${/\s$/.test(p) ? '' : ' '}${w}`)
/** ORB-026: `@everyone` as a token of its own, in any case, anywhere in the content. */
const everyoneContent = fc.tuple(lead, anyCase('everyone'), trail).map(([a, word, b]) => `${a}@${word}${b}`)
const hereContent = fc.tuple(lead, anyCase('here'), trail).map(([a, word, b]) => `${a}@${word}${b}`)

/** ORB-A02: content of nothing but white space. */
const blankContent = fc.array(fc.constantFrom(' ', '\t', '\n', '\r', '\u00a0', '\u2003', '\u3000'), { maxLength: 12 }).map((c) => c.join(''))

/** JSON values of every type but `type` (wrong types for a field, ORB-023). */
function notOfType (type: 'string' | 'integer'): fc.Arbitrary<unknown> {
  const all = fc.oneof(
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }).filter((d) => !Number.isInteger(d)),
    fc.boolean(),
    fc.constant(null),
    fc.string({ maxLength: 8 }),
    fc.array(fc.integer(), { maxLength: 3 }),
    fc.dictionary(fc.string({ maxLength: 4 }), fc.integer(), { maxKeys: 2 })
  )
  return all.filter((v) => type === 'string' ? typeof v !== 'string' : !Number.isInteger(v))
}

// The request body's schema, straight from the spec (ORB-023).
function postBodySchema (): Record<string, any> {
  return (orbSpec().paths['/api/bot/v1/messages']!.post as any).requestBody.content['application/json'].schema
}
function readParameter (name: string): Record<string, any> {
  return ((orbSpec().paths['/api/bot/v1/messages']!.get as any).parameters as any[]).find((p) => p.name === name).schema
}

// Content a real Orb could take for a card or @everyone is kept out of generated valid content.
const PLAIN = (s: string): boolean => !/^[\s\u200b-\u200d\u2060\ufeff]*$/u.test(s) && !/@everyone/i.test(s) && !/^\s*\//m.test(s)

// ---------------------------------------------------------------------------------------------------------------
// ORB-034: paging as a state machine

interface PagingModel {
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

interface PagingReal {
  ctx: OrbContext
  channel: string
  uid: string
}

type BeforeChoice = { kind: 'none' } | { kind: 'made', n: number } | { kind: 'anchor' } | { kind: 'above', k: number }

function resolveBefore (model: PagingModel, choice: BeforeChoice): number | undefined {
  if (choice.kind === 'none') return undefined
  if (choice.kind === 'anchor') return model.anchor
  const top = Math.max(model.anchor, ...model.made)
  if (choice.kind === 'above') return top + choice.k
  return model.made.length === 0 ? top + 1 : model.made[choice.n % model.made.length]!
}

/** Checks one page against the model (ORB-034, ORB-A20, ORB-039). */
function checkPage (model: PagingModel, page: { messages: any[], hasOlder: boolean }, before: number | undefined, limit: number | undefined, what: string): void {
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
  expectEqual(tail, expected, `${what}: the newest messages of the page are not the live ones older than ${before ?? 'now'} (ORB-034)`)
  expectThat(head.length > 0 && head.at(-1) === model.anchor && head.every((id) => id <= model.anchor), `${what}: the page stops short: ${size} were asked, and message ${model.anchor} (and maybe older ones) are older than before (ORB-034)`, `…, ${model.anchor}, ${expected.join(', ')}`, ids)
  if (ids.length < size) expectThat(!page.hasOlder, `${what}: a short page says hasOlder (ORB-034)`, false, page.hasOlder)
}

class PostOwn implements fc.AsyncCommand<PagingModel, PagingReal> {
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

class MemberPost implements fc.AsyncCommand<PagingModel, PagingReal> {
  check (model: Readonly<PagingModel>): boolean { return model.made.length < model.budget }
  async run (model: PagingModel, real: PagingReal): Promise<void> {
    const { control, world, target } = controlled(real.ctx)
    const posted = await control.memberPost({ server: target.community, channel: real.channel, member: world.member, content: `member ${real.uid} #${model.made.length}` })
    model.made.push(posted.id)
    model.live.push(posted.id)
  }
  toString (): string { return 'memberPost' }
}

class DeleteOwn implements fc.AsyncCommand<PagingModel, PagingReal> {
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

class Read implements fc.AsyncCommand<PagingModel, PagingReal> {
  constructor (readonly before: BeforeChoice, readonly limit: number | undefined) {}
  check (): boolean { return true }
  async run (model: PagingModel, real: PagingReal): Promise<void> {
    const before = resolveBefore(model, this.before)
    const page = await readPage(real.ctx, real.channel, { before, limit: this.limit })
    checkPage(model, page, before, this.limit, `GET /messages before=${before ?? '-'} limit=${this.limit ?? '-'}`)
  }
  toString (): string { return `read(${JSON.stringify(this.before)}, ${this.limit ?? '-'})` }
}

class Walk implements fc.AsyncCommand<PagingModel, PagingReal> {
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

// ---------------------------------------------------------------------------------------------------------------
// ORB-A03: the post windows as a model

type ThrottleStep = { kind: 'post' } | { kind: 'wait', ms: number } | { kind: 'honest' }

/** What the per-channel window says of a post at `now`: admitted, or the Retry-After it must carry. */
function windowVerdict (accepted: number[], now: number): { ok: true } | { ok: false, retryAfter: number } {
  const live = accepted.filter((t) => t > now - WINDOW_MS)
  if (live.length < PER_CHANNEL) return { ok: true }
  const freeAt = live[live.length - PER_CHANNEL]! + WINDOW_MS
  return { ok: false, retryAfter: Math.max(1, Math.ceil((freeAt - now) / 1000)) }
}

// ---------------------------------------------------------------------------------------------------------------
// Shared steps

/** ORB-041, ORB-A21: the app's own message, in a community that uninstalled the app, cannot be deleted. */
async function deleteWhileUninstalled (ctx: OrbContext, decided: boolean): Promise<void> {
  const { control, target } = controlled(ctx)
  const app = await fullAppId(ctx)
  const text = channel(ctx, 'text')
  const own = await postOk(ctx, text, `taken back later ${ctx.uid('u')}`)
  // Put the install back exactly as discoverTarget (or whoever) made it, whatever happens below.
  const install = await fullInstall(ctx)
  ctx.cleanup(async () => { await control.install(target.community, app, install) })
  const gone = await control.uninstall(target.community, app)
  if (gone.status !== 200) throw new Error(`control: uninstalling ${app} answered ${gone.status}`)
  const reply = await remove(ctx, own.id)
  expectOrbError(reply, 403, `DELETE /messages/${own.id} (the app's own) after ${target.community} uninstalled the app`, { decided })
  await control.install(target.community, app, install)
  // Reinstalled: the message was not taken back by the refused call, and the app may delete it now.
  const page = await readPage(ctx, text, { before: own.id + 1, limit: 1 })
  expectEqual(page.messages.map((m) => m.id), [own.id], 'the refused delete left the message in place')
  expectOk(await remove(ctx, own.id), `DELETE /messages/${own.id} once reinstalled`, DELETE)
}

// ---------------------------------------------------------------------------------------------------------------

export const messagesCases: Array<ConformanceCase<OrbBotClient>> = [
  defineCase<OrbBotClient>({
    id: 'ORB-023',
    title: 'POST /messages: bodies generated from the spec\'s schema are accepted; no body, a missing field, 2001 characters or a wrong type is 400',
    level: 'required',
    writes: true,
    async run (ctx) {
      const text = channel(ctx, 'text')
      const target = await postOk(ctx, text, `reply target ${ctx.uid('t')}`)
      const schema = postBodySchema()
      // Valid: the spec's schema, with the one text channel, a reply to a message of it, and plain content.
      const valid = arbitraryFor(schema, schema, {
        channel: fc.constant(text),
        content: arbitraryFor(schema.properties.content, schema).filter((s) => PLAIN(s as string)),
        reply_to: fc.constant(target.id)
      }) as fc.Arbitrary<Record<string, unknown>>
      type Mutation = { kind: 'valid' } | { kind: 'no body' } | { kind: 'not an object', body: unknown } | { kind: 'drop', fields: string[] } |
        { kind: 'too long', content: string } | { kind: 'wrong type', field: string, value: unknown }
      const mutation: fc.Arbitrary<Mutation> = fc.oneof(
        { weight: 2, arbitrary: fc.constant<Mutation>({ kind: 'valid' }) },
        { weight: 1, arbitrary: fc.constant<Mutation>({ kind: 'no body' }) },
        { weight: 1, arbitrary: fc.oneof(fc.constant(null), fc.array(fc.jsonValue({ maxDepth: 1 }), { maxLength: 3 }), fc.string({ maxLength: 10 }), fc.integer(), fc.boolean()).map((body): Mutation => ({ kind: 'not an object', body })) },
        { weight: 2, arbitrary: fc.constantFrom('channel', 'content', 'both').map((f): Mutation => ({ kind: 'drop', fields: f === 'both' ? ['channel', 'content'] : [f] })) },
        { weight: 2, arbitrary: fc.tuple(fc.integer({ min: 2001, max: 2100 }), fc.constantFrom('x', 'é', '字', '🙂', 'ab ')).map(([n, unit]): Mutation => ({ kind: 'too long', content: [...unit.repeat(n)].slice(0, n).join('') })) },
        { weight: 3, arbitrary: fc.oneof(
          notOfType('string').map((value): Mutation => ({ kind: 'wrong type', field: 'channel', value })),
          notOfType('string').map((value): Mutation => ({ kind: 'wrong type', field: 'content', value })),
          notOfType('integer').map((value): Mutation => ({ kind: 'wrong type', field: 'reply_to', value }))
        ) }
      )
      // Refused bodies cost no window slot (ORB-A03); on a real clock the accepted ones are few (ORB-031's 12 a minute).
      const virtual = await ctx.virtualTime()
      const budget = postBudget(virtual, 3)
      let accepted = 0
      await fc.assert(fc.asyncProperty(valid, mutation, async (body, change) => {
        if (change.kind === 'valid') {
          fc.pre(accepted < budget)
          const reply = await send(ctx, body)
          expectOk(reply, `POST /messages ${JSON.stringify(body).slice(0, 120)} (valid by the spec's schema)`, POST)
          accepted++
          await remove(ctx, reply.json.id)
          return
        }
        let sent: unknown = { ...body }
        if (change.kind === 'not an object') sent = change.body
        if (change.kind === 'drop') for (const f of change.fields) delete (sent as Record<string, unknown>)[f]
        if (change.kind === 'too long') (sent as Record<string, unknown>).content = change.content
        if (change.kind === 'wrong type') (sent as Record<string, unknown>)[change.field] = change.value
        const reply = change.kind === 'no body'
          ? await ctx.client.request({ method: 'POST', path: MESSAGES })
          : await send(ctx, sent)
        expectOrbError(reply, 400, `POST /messages with ${change.kind === 'no body' ? 'no body' : JSON.stringify(sent).slice(0, 120)} (${change.kind}${change.kind === 'wrong type' ? ` ${change.field}` : ''})`)
      }), virtual ? ctx.fc() : ctx.fc({ endOnFailure: true }))
      // The bound itself: 2000 characters are allowed, 2001 are not.
      const at = await send(ctx, { channel: text, content: 'x'.repeat(2000) })
      expectOk(at, 'POST /messages with 2000 characters of content', POST)
      expectOrbError(await send(ctx, { channel: text, content: 'x'.repeat(2001) }), 400, 'POST /messages with 2001 characters of content')
      ctx.note(`${accepted} generated valid bodies accepted${virtual ? '' : ` (real clock: at most ${budget})`}`)
    }
  }),

  defineCase<OrbBotClient>({
    id: 'ORB-024',
    title: 'a post answers 200 PostedMessage (id, channel, server, created, author) whose author is the app\'s member with bot: true',
    level: 'required',
    writes: true,
    async run (ctx) {
      const text = channel(ctx, 'text')
      const member = await appMember(ctx)
      const first = await send(ctx, { channel: text, content: `who posts ${ctx.uid('p')}` })
      const body = expectOk(first, 'POST /messages', POST)
      const shape = Number.isInteger(body.id) && body.channel === text && body.server === ctx.client.target.community && Number.isInteger(body.created) &&
        typeof body.author?.id === 'string' && typeof body.author?.name === 'string' && body.author?.bot === true
      expectThat(shape, 'the PostedMessage has every field, the channel and community posted to, and author.bot true', `{"id":int,"channel":"${text}","server":"${ctx.client.target.community}","created":int,"author":{"id","name","bot":true}}`, body)
      if (member !== undefined) expectEqual(body.author.id, member, 'author.id is the app\'s member id (GET /app member)')
      else ctx.note('the app\'s member id is not known (no GET /app member, no control): author compared across posts only')
      const second = expectOk(await send(ctx, { channel: text, content: `again ${ctx.uid('p')}` }), 'a second POST /messages', POST)
      expectEqual(second.author, body.author, 'every post of the app has the same author: its member')
      expectThat(second.id > body.id, 'a later post has a higher id', `> ${body.id}`, second.id)
      // Read back, the message carries the same author.
      const page = await readPage(ctx, text, { before: second.id + 1, limit: 2 })
      expectEqual(page.messages.map((m) => [m.id, m.author]), [[body.id, body.author], [second.id, body.author]], 'GET /messages shows the posts with the app\'s member as author')
    }
  }),

  defineCase<OrbBotClient>({
    id: 'ORB-025',
    title: 'reply_to must name a message of the same channel: one of it is accepted (replyTo read back); another channel\'s or an unknown id is 400',
    level: 'required',
    writes: true,
    async run (ctx) {
      const text = channel(ctx, 'text')
      const parent = await postOk(ctx, text, `parent ${ctx.uid('r')}`)
      const child = await postOk(ctx, text, `child ${ctx.uid('r')}`, { reply_to: parent.id })
      const page = await readPage(ctx, text, { before: child.id + 1, limit: 1 })
      expectEqual(page.messages[0]?.replyTo, parent.id, 'the reply reads back with replyTo = the message replied to')
      // Unknown ids: far above every id the channel shows.
      const top = Math.max(child.id, ...(await readPage(ctx, text)).messages.map((m) => m.id as number))
      await fc.assert(fc.asyncProperty(fc.integer({ min: 1_000_000, max: 1_000_000_000 }), async (gap) => {
        expectOrbError(await send(ctx, { channel: text, content: 'a reply to nothing', reply_to: top + gap }), 400, `reply_to ${top + gap}, an unknown id`)
      }), clockRuns(ctx, await ctx.virtualTime(), 5, 5))
      // Another channel's message: one read from the read-only channel, else one a member posts in another channel.
      let foreign: { id: number, channel: string } | undefined
      const readOnly = ctx.client.target.channels.readOnly
      if (readOnly !== undefined) {
        const m = (await readPage(ctx, readOnly, { limit: 1 })).messages[0]
        if (m !== undefined) foreign = { id: m.id, channel: readOnly }
      }
      if (foreign === undefined && ctx.control !== undefined && ctx.client.target.controlled !== undefined) {
        const { control, world, target } = controlled(ctx)
        const elsewhere = target.channels.readOnly ?? target.channels.hidden ?? target.channels.outsideAllowList
        if (elsewhere !== undefined) {
          const m = await control.memberPost({ server: target.community, channel: elsewhere, member: world.member, content: `elsewhere ${ctx.uid('r')}` })
          foreign = { id: m.id, channel: elsewhere }
        }
      }
      if (foreign === undefined) {
        ctx.note('no message of another channel is known (no read-only channel with messages, no control): the cross-channel half was not run')
        return
      }
      expectOrbError(await send(ctx, { channel: text, content: 'a reply across channels', reply_to: foreign.id }), 400, `reply_to ${foreign.id}, a message of ${foreign.channel}, posted in ${text}`)
    }
  }),

  defineCase<OrbBotClient>({
    id: 'ORB-026',
    title: 'content with @everyone, in any case and anywhere, is refused; @here is accepted',
    level: 'required',
    writes: true,
    async run (ctx) {
      const text = channel(ctx, 'text')
      const content = fc.oneof({ weight: 4, arbitrary: everyoneContent.map((c) => ({ everyone: true, c })) }, { weight: 1, arbitrary: hereContent.map((c) => ({ everyone: false, c })) })
      // Refused posts cost no window slot (ORB-A03); on a real clock the accepted @here posts are few (ORB-031).
      const virtual = await ctx.virtualTime()
      const budget = postBudget(virtual, 3)
      let refused = 0
      let here = 0
      await fc.assert(fc.asyncProperty(content, async ({ everyone, c }) => {
        if (!everyone) fc.pre(here < budget)
        const reply = await send(ctx, { channel: text, content: c })
        if (everyone) {
          // ORB-A02: 403; a required case accepts any refusal of the 4xx class unless --strict.
          expectOrbError(reply, 403, `POST /messages ${JSON.stringify(c)}`, { decided: true })
          refused++
        } else {
          expectOk(reply, `POST /messages ${JSON.stringify(c)} (@here is allowed)`, POST)
          here++
          await remove(ctx, reply.json.id)
        }
      }), virtual ? ctx.fc() : ctx.fc({ endOnFailure: true }))
      // The plainest form, whatever the generator drew.
      expectOrbError(await send(ctx, { channel: text, content: '@everyone' }), 403, 'POST /messages "@everyone"', { decided: true })
      ctx.note(`${refused} generated @everyone posts refused, ${here} @here posts accepted${virtual ? '' : ` (real clock: at most ${budget})`}`)
    }
  }),

  defineCase<OrbBotClient>({
    id: 'ORB-028',
    title: 'text posted to a voice channel is refused',
    level: 'required',
    writes: true,
    async run (ctx) {
      const voice = channel(ctx, 'voice')
      expectOrbError(await send(ctx, { channel: voice, content: `into the voice channel ${ctx.uid('v')}` }), 400, `POST /messages to voice channel ${voice}`, { decided: true })
    }
  }),

  defineCase<OrbBotClient>({
    id: 'ORB-029',
    title: 'posting to a read-only channel is refused, and nothing is stored',
    level: 'required',
    writes: true,
    async run (ctx) {
      const readOnly = channel(ctx, 'readOnly')
      const content = `into the read-only channel ${ctx.uid('ro')}`
      expectOrbError(await send(ctx, { channel: readOnly, content }), 403, `POST /messages to read-only channel ${readOnly}`, { decided: true })
      const page = await readPage(ctx, readOnly)
      expectThat(!page.messages.some((m) => m.body === content), 'the refused post is not in the read-only channel', 'no such message', page.messages.slice(-3))
    }
  }),

  defineCase<OrbBotClient>({
    id: 'ORB-030',
    title: 'posting to a channel left out of the app\'s allow-list is 403',
    level: 'required',
    writes: true,
    async run (ctx) {
      const outside = channel(ctx, 'outsideAllowList')
      expectOrbError(await send(ctx, { channel: outside, content: `outside ${ctx.uid('o')}` }), 403, `POST /messages to ${outside}, not on the allow-list`)
      // ORB-009: a channel hidden from the app's role is out of reach too (the status is ORB-A02's).
      const hidden = ctx.client.target.channels.hidden
      if (hidden !== undefined) expectOrbError(await send(ctx, { channel: hidden, content: `hidden ${ctx.uid('o')}` }), 403, `POST /messages to ${hidden}, hidden from the app's role`, { decided: true })
    }
  }),

  defineCase<OrbBotClient>({
    id: 'ORB-031',
    title: 'the 13th post in a minute in one channel is 429 with an integer Retry-After and an Error body; after Retry-After seconds a post is accepted',
    level: 'required',
    // A clean window takes a minute: at once on a virtual clock, with --slow on a real one.
    needs: ['slow'],
    writes: true,
    async run (ctx) {
      const text = channel(ctx, 'text')
      emptyWindowsAfter(ctx)
      await freshWindows(ctx)
      for (let i = 1; i <= PER_CHANNEL; i++) await postOk(ctx, text, `tick ${i} ${ctx.uid('t')}`, { retry: false })
      const thirteenth = await send(ctx, { channel: text, content: `tick 13 ${ctx.uid('t')}` }, { retry: false })
      expectOrbError(thirteenth, 429, `the ${PER_CHANNEL + 1}th post in a minute in ${text}`)
      const wait = expectRetryAfter(thirteenth, 'the 13th post')
      expectThat(wait >= 1 && wait <= 60, 'Retry-After is within the minute window', '1..60', wait)
      // ORB-099, ORB-100: Retry-After is honest: waiting it out is enough.
      await ctx.elapse(wait * 1000)
      const after = await send(ctx, { channel: text, content: `after the wait ${ctx.uid('t')}` }, { retry: false })
      if (after.status !== 200) fail(`a post ${wait} s (Retry-After) after the 429`, '200: waiting Retry-After seconds is enough', after)
    }
  }),

  defineCase<OrbBotClient>({
    id: 'ORB-031.app',
    title: 'the 31st post in a minute across channels is 429 with an integer Retry-After; after Retry-After seconds a post is accepted',
    level: 'required',
    // Only one channel of a config is writable; the control API opens three to the app for the case.
    needs: ['control', 'slow'],
    writes: true,
    async run (ctx) {
      const { control, target } = controlled(ctx)
      const app = await fullAppId(ctx)
      const server = ((await control.orbState()).servers as any[]).find((s) => s.id === target.community)
      const writable = [target.channels.text, ...(server.channels as any[]).filter((c) => c.kind === 'text' && !c.readOnly && c.id !== target.channels.text).map((c) => c.id as string)]
      if (writable.length < 3) throw new CaseSkip(`${target.community} has ${writable.length} writable text channels; 30 posts without 12 in one channel need 3`)
      const [a, b, c] = writable as [string, string, string]
      const install = await fullInstall(ctx)
      ctx.cleanup(async () => { await control.install(target.community, app, install) })
      const channelRights = Object.fromEntries(Object.entries(install.channelRights).filter(([id]) => ![a, b, c].includes(id)))
      await control.install(target.community, app, { ...install, channels: [...new Set([...install.channels, a, b, c])], hidden: install.hidden.filter((id) => ![a, b, c].includes(id)), channelRights })
      emptyWindowsAfter(ctx)
      await freshWindows(ctx)
      const plan: Array<[string, number]> = [[a, PER_CHANNEL], [b, PER_CHANNEL], [c, PER_APP - 2 * PER_CHANNEL]]
      for (const [id, n] of plan) for (let i = 1; i <= n; i++) await postOk(ctx, id, `tick ${id} ${i} ${ctx.uid('t')}`, { retry: false })
      const over = await send(ctx, { channel: c, content: `the 31st ${ctx.uid('t')}` }, { retry: false })
      expectOrbError(over, 429, `the ${PER_APP + 1}st post in a minute (${PER_APP - 2 * PER_CHANNEL + 1}th in ${c})`)
      const wait = expectRetryAfter(over, 'the 31st post')
      await ctx.elapse(wait * 1000)
      const after = await send(ctx, { channel: c, content: `after the wait ${ctx.uid('t')}` }, { retry: false })
      if (after.status !== 200) fail(`a post ${wait} s (Retry-After) after the 429`, '200: waiting Retry-After seconds is enough', after)
    }
  }),

  defineCase<OrbBotClient>({
    id: 'ORB-033',
    title: 'GET /messages: channel is required, limit is an integer 1..50, before an integer (generated); valid queries give pages that honour limit and before',
    level: 'required',
    // Not `writes`: it reads. Unless --read-only it posts one message first, to know the newest id; read-only it takes
    // the newest message the channel holds.
    async run (ctx) {
      const text = channel(ctx, 'text')
      let mine: any
      if (ctx.readOnly) {
        mine = (await readPage(ctx, text, { limit: 1 })).messages[0]
        if (mine === undefined) throw new CaseSkip(`${text} holds no message, and --read-only forbids posting one`)
        ctx.note(`--read-only: nothing was posted; message ${String(mine.id)}, the newest, stands for the case's own`)
      } else mine = await postOk(ctx, text, `query ${ctx.uid('q')}`)
      const newest = await readPage(ctx, text, { limit: 3 })
      const ids = newest.messages.map((m) => m.id as number)
      expectThat(ids.includes(mine.id), 'the newest page holds the message just posted', mine.id, ids)
      // before = an id: that message itself is not returned, only older ones.
      const older = await readPage(ctx, text, { before: mine.id, limit: 50 })
      expectThat(!older.messages.some((m) => m.id === mine.id), `GET before=${mine.id} returns message ${mine.id} itself`, `ids below ${mine.id}`, older.messages.map((m) => m.id))
      const known = (await readAll(ctx, text, 2)).map((m) => m.id as number)
      const nonInteger = fc.oneof(fc.stringMatching(/^[a-z]{1,8}$/), fc.tuple(fc.integer({ min: -100, max: 100 }), fc.integer({ min: 1, max: 9 })).map(([i, f]) => `${i}.${f}`))
      type Query = { valid: boolean, query: Record<string, string | number | undefined> }
      const limitSchema = readParameter('limit')
      const beforeSchema = readParameter('before')
      const validQuery: fc.Arbitrary<Query> = fc.record({
        limit: fc.option(arbitraryFor(limitSchema, limitSchema) as fc.Arbitrary<number>, { nil: undefined }),
        before: fc.option(fc.oneof(arbitraryFor(beforeSchema, beforeSchema) as fc.Arbitrary<number>, fc.constantFrom(...known)), { nil: undefined })
      }).map((q) => ({ valid: true, query: { channel: text, ...q } }))
      const invalidQuery: fc.Arbitrary<Query> = fc.oneof(
        fc.record({ limit: fc.option(fc.integer({ min: 1, max: 50 }), { nil: undefined }) }).map((q) => ({ valid: false, query: { ...q } })),
        fc.oneof(fc.integer({ min: -1_000_000, max: 0 }), fc.integer({ min: 51, max: 1_000_000 }), nonInteger).map((limit) => ({ valid: false, query: { channel: text, limit } })),
        nonInteger.map((before) => ({ valid: false, query: { channel: text, before } }))
      )
      await fc.assert(fc.asyncProperty(fc.oneof(validQuery, invalidQuery), async ({ valid, query }) => {
        const what = `GET /messages?${new URLSearchParams(Object.entries(query).filter(([, v]) => v !== undefined).map(([k, v]): [string, string] => [k, String(v)])).toString()}`
        const reply = await ctx.client.get(MESSAGES, query)
        if (!valid) {
          expectOrbError(reply, 400, what)
          return
        }
        const body = expectOk(reply, what, READ)
        expectThat(Array.isArray(body.messages), `${what}: messages is an array`, '[…]', body)
        const page = (body.messages as any[]).map((m) => m.id as number)
        const limit = (query.limit as number | undefined) ?? 50
        expectThat(page.length <= limit, `${what}: more messages than limit`, `at most ${limit}`, page.length)
        const before = query.before as number | undefined
        if (before !== undefined) expectThat(page.every((id) => id < before), `${what}: only ids below before`, `ids below ${before}`, page)
        expectAscending(page, what)
      }), ctx.fc())
    }
  }),

  defineCase<OrbBotClient>({
    id: 'ORB-034.model',
    title: 'paging as a state machine: random posts, deletes (and members\' posts) and reads with random before/limit match a model; walking back with before visits each message once',
    level: 'required',
    writes: true,
    async run (ctx) {
      const text = channel(ctx, 'text')
      const members = ctx.control !== undefined && ctx.client.target.controlled !== undefined
      if (!members) ctx.note('without the control API only the app\'s own posts are modelled')
      // A real clock admits 12 posts a minute in the channel (ORB-031): 2 runs of at most 8 posts each (the anchor, 5
      // drawn posts, the 2 of the closing walk) fit a couple of windows. A virtual clock takes the full run.
      const virtual = await ctx.virtualTime()
      const budget = virtual ? Number.POSITIVE_INFINITY : 5
      if (!virtual) ctx.note('real clock: 2 runs of at most 8 commands and 5 drawn posts each (throttle windows)')
      const before: fc.Arbitrary<BeforeChoice> = fc.oneof(
        { weight: 2, arbitrary: fc.constant<BeforeChoice>({ kind: 'none' }) },
        { weight: 4, arbitrary: fc.nat().map((n): BeforeChoice => ({ kind: 'made', n })) },
        { weight: 1, arbitrary: fc.constant<BeforeChoice>({ kind: 'anchor' }) },
        { weight: 1, arbitrary: fc.integer({ min: 1, max: 3 }).map((k): BeforeChoice => ({ kind: 'above', k })) }
      )
      const limit = fc.oneof({ weight: 5, arbitrary: fc.integer({ min: 1, max: 6 }) }, { weight: 1, arbitrary: fc.constantFrom<number | undefined>(undefined, 50) })
      const commands = fc.commands<PagingModel, PagingReal, false>([
        fc.constant(new PostOwn()),
        ...(members ? [fc.constant(new MemberPost())] : []),
        fc.nat().map((n) => new DeleteOwn(n)),
        fc.tuple(before, limit).map(([b, l]) => new Read(b, l)),
        fc.integer({ min: 1, max: 4 }).map((l) => new Walk(l))
      ], { maxCommands: virtual ? 14 : 8 })
      await fc.assert(fc.asyncProperty(commands, async (cmds) => {
        const uid = ctx.uid('page')
        const anchor = await postOk(ctx, text, `anchor ${uid}`)
        const model: PagingModel = { anchor: anchor.id, budget, live: [], own: [], made: [] }
        try {
          const real: PagingReal = { ctx, channel: text, uid }
          await fc.asyncModelRun(() => ({ model, real }), cmds)
          // Every run ends with a walk one message a page over two fresh posts, whatever the commands drew.
          for (const cmd of [new PostOwn(), new PostOwn(), new Walk(1)]) await cmd.run(model, real)
        } finally {
          for (const id of [...model.own, anchor.id]) await remove(ctx, id)
        }
      }), clockRuns(ctx, virtual, 15, 2))
    }
  }),

  defineCase<OrbBotClient>({
    id: 'ORB-035',
    title: 'an end-to-end encrypted message reads back as encrypted: true, body: null, its text nowhere in the reply',
    level: 'required',
    // Not `writes`: it reads the encrypted messages the channel holds. With control, and not --read-only, a member
    // posts one first (members' messages cannot be deleted through the API).
    async run (ctx) {
      const text = channel(ctx, 'text')
      let secret: string | undefined
      let id: number | undefined
      if (ctx.readOnly && ctx.control !== undefined) ctx.note('--read-only: no member posted an encrypted message; only those already in the channel were checked')
      if (!ctx.readOnly && ctx.control !== undefined && ctx.client.target.controlled !== undefined) {
        const { control, world, target } = controlled(ctx)
        secret = `sealed ${ctx.uid('e2e')}`
        id = (await control.memberPost({ server: target.community, channel: text, member: world.member, content: secret, encrypted: true })).id
      }
      const all = await readAll(ctx, text, 4)
      const sealed = all.filter((m) => m.encrypted === true)
      if (id !== undefined) expectThat(sealed.some((m) => m.id === id), `the encrypted message ${id} reads back with encrypted: true`, { id, encrypted: true }, all.find((m) => m.id === id))
      if (sealed.length === 0) throw new CaseSkip(`${text} holds no encrypted message, and ${ctx.readOnly ? '--read-only forbids a member posting one' : 'without the control API no member can post one'}`)
      for (const m of sealed) expectThat(m.body === null, `encrypted message ${m.id} has body null`, null, m.body)
      const plain = all.filter((m) => m.encrypted === false)
      expectThat(plain.every((m) => typeof m.body === 'string'), 'messages that are not encrypted carry their body', 'string bodies', plain.find((m) => typeof m.body !== 'string'))
      if (secret !== undefined) {
        const reply = await ctx.client.get(MESSAGES, { channel: text, before: id! + 1, limit: 1 })
        expectThat(!reply.text.includes(secret), 'the encrypted message\'s text is nowhere in the reply', 'no plaintext', reply.text.slice(0, 300))
      }
      ctx.note(`${sealed.length} encrypted messages checked`)
    }
  }),

  defineCase<OrbBotClient>({
    id: 'ORB-037',
    title: 'every message read has the spec\'s Message fields: id, channel, author {id, name, bot}, created, replyTo, encrypted, body, mentions',
    level: 'required',
    // Not `writes`: it checks the messages the channels hold. Unless --read-only, it first posts a message and a reply
    // to it, so that an app's message and a replyTo are among them.
    async run (ctx) {
      const text = channel(ctx, 'text')
      let parent: any
      if (!ctx.readOnly) {
        parent = await postOk(ctx, text, `shape ${ctx.uid('s')}`)
        await postOk(ctx, text, `shape reply ${ctx.uid('s')}`, { reply_to: parent.id })
      } else ctx.note('--read-only: nothing was posted; only the messages already in the channels were checked')
      const all = await readAll(ctx, text, 4)
      if (parent === undefined && all.length === 0) throw new CaseSkip(`${text} holds no message, and --read-only forbids posting one`)
      expectThat(all.length >= (parent === undefined ? 1 : 2), 'the channel shows the messages just posted', 'at least 2 messages', all.length)
      for (const m of all) checkMessage(m, text, `message ${String(m?.id)}`)
      if (parent !== undefined) expectThat(all.some((m) => m.replyTo === parent.id), 'the reply shows replyTo', parent.id, all.slice(-2))
      for (const kind of ['readOnly'] as const) {
        const id = ctx.client.target.channels[kind]
        if (id !== undefined) for (const m of (await readPage(ctx, id)).messages) checkMessage(m, id, `message ${String(m?.id)} of ${id}`)
      }
    }
  }),

  defineCase<OrbBotClient>({
    id: 'ORB-038',
    title: 'reading a channel off the allow-list or hidden from the role is 403 (and, with control, reading without messages:read)',
    level: 'required',
    // Not `writes`: only the scope half creates an app (control), and --read-only leaves it out.
    async run (ctx) {
      const outside = channel(ctx, 'outsideAllowList')
      expectOrbError(await ctx.client.get(MESSAGES, { channel: outside }), 403, `GET /messages of ${outside}, not on the allow-list`)
      const hidden = ctx.client.target.channels.hidden
      if (hidden !== undefined) expectOrbError(await ctx.client.get(MESSAGES, { channel: hidden }), 403, `GET /messages of ${hidden}, hidden from the role`)
      else ctx.note('no hidden channel in the target: only the allow-list half ran')
      // The app's own channel is readable (the 403s are the gates, not a broken read).
      await readPage(ctx, channel(ctx, 'text'), { limit: 1 })
      if (ctx.control === undefined || ctx.client.target.controlled === undefined) {
        ctx.note('the scope half needs an app without messages:read: only the control API can make one')
        return
      }
      if (ctx.readOnly) {
        ctx.note('--read-only: the scope half (it creates and installs an app through the control API) did not run')
        return
      }
      // The scope half: an app of the case's own with messages:write but not messages:read, installed with the text channel.
      const { control, target } = controlled(ctx)
      const created = await control.must('POST', '/control/orb/apps', { id: `app_${ctx.uid('noread').replace(/[^a-z0-9]/g, '_')}`, name: 'orbtest conformance (no messages:read)', scopes: ['messages:write'], rights: ['send_messages'] })
      ctx.client.secret(created.token)
      ctx.cleanup(async () => { await control.call('DELETE', `/control/orb/apps/${encodeURIComponent(created.id)}?messages=delete`) })
      await control.install(target.community, created.id, { role: { name: 'orbtest no read', rights: ['send_messages'] }, channels: [target.channels.text] })
      const as = { token: created.token as string }
      expectOk(await ctx.client.get(`${BOT}/app`, undefined, as), 'GET /app with the new app\'s token')
      expectOrbError(await ctx.client.get(MESSAGES, { channel: target.channels.text }, as), 403, `GET /messages of ${target.channels.text} by an app without messages:read`)
    }
  }),

  defineCase<OrbBotClient>({
    id: 'ORB-039',
    title: 'DELETE of the app\'s own message answers 200 {ok: true, id} and the message no longer appears in GET /messages',
    level: 'required',
    writes: true,
    async run (ctx) {
      const text = channel(ctx, 'text')
      const mine = await postOk(ctx, text, `to take back ${ctx.uid('d')}`)
      const shown = await readPage(ctx, text, { before: mine.id + 1, limit: 1 })
      expectEqual(shown.messages.map((m) => m.id), [mine.id], 'the message is there before the delete')
      const body = expectOk(await remove(ctx, mine.id), `DELETE /messages/${mine.id}`, DELETE)
      expectEqual({ ok: body.ok, id: body.id }, { ok: true, id: mine.id }, `DELETE /messages/${mine.id} answers {"ok":true,"id":${mine.id}}`)
      const after = await readPage(ctx, text, { before: mine.id + 1, limit: 50 })
      expectThat(!after.messages.some((m) => m.id === mine.id), `message ${mine.id} is gone from GET /messages`, 'absent', after.messages.map((m) => m.id))
      const latest = await readPage(ctx, text)
      expectThat(!latest.messages.some((m) => m.id === mine.id), `message ${mine.id} is gone from the newest page`, 'absent', latest.messages.map((m) => m.id))
    }
  }),

  defineCase<OrbBotClient>({
    id: 'ORB-040',
    title: 'deleting another member\'s message is 403, and the message stays',
    level: 'required',
    // Not `writes`: it uses a member's message already there; only when there is none (and not --read-only) does a
    // member post one through the control API.
    async run (ctx) {
      const text = channel(ctx, 'text')
      const theirs = await memberMessage(ctx)
      expectOrbError(await remove(ctx, theirs.id), 403, `DELETE /messages/${theirs.id}, a member's message`)
      const page = await readPage(ctx, text, { before: theirs.id + 1, limit: 1 })
      expectEqual(page.messages.map((m) => m.id), [theirs.id], 'the member\'s message is still there')
    }
  }),

  defineCase<OrbBotClient>({
    id: 'ORB-041',
    title: 'deleting the app\'s own message in a community that uninstalled the app is refused (403); reinstalled, it can be',
    level: 'required',
    needs: ['control'],
    writes: true,
    async run (ctx) {
      await deleteWhileUninstalled(ctx, true)
    }
  }),

  defineCase<OrbBotClient>({
    id: 'ORB-042',
    title: 'DELETE of an unknown or already deleted id is 404; a non-integer id is 400 (generated)',
    level: 'required',
    writes: true,
    async run (ctx) {
      const text = channel(ctx, 'text')
      const mine = await postOk(ctx, text, `twice ${ctx.uid('x')}`)
      expectOk(await remove(ctx, mine.id), `DELETE /messages/${mine.id}`, DELETE)
      expectOrbError(await remove(ctx, mine.id), 404, `DELETE /messages/${mine.id} a second time`, { decided: true })
      const top = Math.max(mine.id, ...(await readPage(ctx, text)).messages.map((m) => m.id as number))
      const nonInteger = fc.oneof(
        fc.stringMatching(/^[a-z_]{1,12}$/),
        fc.tuple(fc.integer({ min: 0, max: 10_000 }), fc.integer({ min: 1, max: 99 })).map(([i, f]) => `${i}.${f}`),
        fc.constantFrom('abc', 'one', 'true', 'null', '1a', 'x1')
      )
      const probe = fc.oneof(
        fc.integer({ min: 1_000_000, max: 1_000_000_000 }).map((gap) => ({ id: String(top + gap), status: 404 })),
        nonInteger.map((id) => ({ id, status: 400 }))
      )
      await fc.assert(fc.asyncProperty(probe, async ({ id, status }) => {
        expectOrbError(await remove(ctx, encodeURIComponent(id)), status, `DELETE /messages/${id} (${status === 404 ? 'unknown' : 'not an integer'})`)
      }), ctx.fc())
    }
  }),

  // Decisions ------------------------------------------------------------------------------------------------------

  defineCase<OrbBotClient>({
    id: 'ORB-A02',
    title: 'refused posts answer ORB-A02\'s table: @everyone 403, voice 400, read-only 403, off the allow-list 403, unknown or uninstalled channel 404, blank content 400; @here 200',
    level: 'decision',
    writes: true,
    async run (ctx) {
      const text = channel(ctx, 'text')
      const t = ctx.client.target
      const rows: Array<[string | undefined, string, number, string]> = [
        [text, '@everyone', 403, '@everyone'],
        [text, 'Look here @EVERYONE!', 403, '@EVERYONE in a sentence'],
        [t.channels.voice, 'hello', 400, 'a voice channel'],
        [t.channels.readOnly, 'hello', 403, 'a read-only channel'],
        [t.channels.outsideAllowList, 'hello', 403, 'a channel off the allow-list'],
        [`ch_${ctx.uid('nowhere').replace(/-/g, '_')}`, 'hello', 404, 'an unknown channel'],
        [t.otherChannel, 'hello', 404, 'a channel of a community that did not install the app']
      ]
      for (const [id, content, status, what] of rows) {
        if (id === undefined) {
          ctx.note(`skipped: ${what} (the target names none)`)
          continue
        }
        expectOrbError(await send(ctx, { channel: id, content }), status, `POST /messages ${JSON.stringify(content)} to ${what} (${id})`)
      }
      await fc.assert(fc.asyncProperty(blankContent, async (content) => {
        expectOrbError(await send(ctx, { channel: text, content }), 400, `POST /messages with blank content ${JSON.stringify(content)}`)
      }), clockRuns(ctx, await ctx.virtualTime(), 10, 10))
      expectOk(await send(ctx, { channel: text, content: `@here ${ctx.uid('h')}` }), 'POST /messages "@here …" is not refused', POST)
    }
  }),

  defineCase<OrbBotClient>({
    id: 'ORB-A03',
    title: 'post windows slide: any pattern of posts and waits in one channel is admitted or refused as a 12-a-minute sliding window says, refused posts do not count, and Retry-After is the ceiling of the seconds until the oldest counted post leaves',
    level: 'decision',
    needs: ['control'],
    writes: true,
    async run (ctx) {
      if (!await ctx.virtualTime()) throw new CaseSkip('exact window arithmetic needs the target\'s virtual clock')
      const text = channel(ctx, 'text')
      emptyWindowsAfter(ctx)
      const step: fc.Arbitrary<ThrottleStep> = fc.oneof(
        { weight: 5, arbitrary: fc.constant<ThrottleStep>({ kind: 'post' }) },
        { weight: 3, arbitrary: fc.integer({ min: 1, max: 25_000 }).map((ms): ThrottleStep => ({ kind: 'wait', ms })) },
        { weight: 2, arbitrary: fc.constant<ThrottleStep>({ kind: 'honest' }) }
      )
      const burst = fc.array(fc.integer({ min: 0, max: 4_000 }), { minLength: PER_CHANNEL, maxLength: PER_CHANNEL })
      await fc.assert(fc.asyncProperty(burst, fc.array(step, { minLength: 4, maxLength: 16 }), async (gaps, steps) => {
        await freshWindows(ctx)
        const uid = ctx.uid('w')
        const accepted: number[] = []
        const posted: number[] = []
        let now = 0
        const wait = async (ms: number): Promise<void> => {
          await ctx.elapse(ms)
          now += ms
        }
        const attempt = async (what: string): Promise<{ ok: true } | { ok: false, retryAfter: number }> => {
          const expected = windowVerdict(accepted, now)
          const reply = await ctx.client.request({ method: 'POST', path: MESSAGES, body: { channel: text, content: `${uid} ${posted.length}` }, retryThrottled: false })
          const at = `${what} at +${now} ms (${accepted.filter((t) => t > now - WINDOW_MS).length} counted posts in the window)`
          if (expected.ok) {
            if (reply.status !== 200) fail(at, '200: the window has room', reply)
            posted.push(reply.json.id)
            accepted.push(now)
            return expected
          }
          expectOrbError(reply, 429, at)
          expectEqual(expectRetryAfter(reply, at), expected.retryAfter, `${at}: Retry-After is the ceiling of the seconds until the oldest counted post leaves the window`)
          return expected
        }
        try {
          for (const gap of gaps) {
            await wait(gap)
            await attempt('a post of the opening burst')
          }
          for (const s of steps) {
            if (s.kind === 'wait') await wait(s.ms)
            else if (s.kind === 'post') await attempt('a post')
            else {
              const first = await attempt('a post')
              if (first.ok) continue
              // Honest Retry-After: one second short is still refused (when it is over 1 s); exactly it is enough.
              if (first.retryAfter > 1) {
                await wait((first.retryAfter - 1) * 1000)
                await attempt(`a post ${first.retryAfter - 1} s after Retry-After ${first.retryAfter}`)
                await wait(1000)
              } else await wait(first.retryAfter * 1000)
              const then = await attempt(`a post ${first.retryAfter} s (Retry-After) after the 429`)
              expectThat(then.ok, 'the model admits a post after Retry-After', true, then)
            }
          }
        } finally {
          for (const id of posted) await remove(ctx, id)
        }
      }), ctx.fc({ numRuns: Math.min(ctx.fc().numRuns ?? 20, 12) }))
    }
  }),

  defineCase<OrbBotClient>({
    id: 'ORB-A20',
    title: 'GET /messages of a voice channel is 400; deleted messages are not returned; mentions lists the member ids mentioned; before gives the limit messages just older',
    level: 'decision',
    writes: true,
    async run (ctx) {
      const text = channel(ctx, 'text')
      const voice = ctx.client.target.channels.voice
      if (voice !== undefined) expectOrbError(await ctx.client.get(MESSAGES, { channel: voice }), 400, `GET /messages of voice channel ${voice}`)
      else ctx.note('no voice channel in the target: the voice half did not run')
      // mentions: a member id the channel shows (or the control API's member).
      const member = ctx.client.target.controlled?.member ?? (await readAll(ctx, text, 2)).find((m) => m.author?.bot === false)?.author.id as string | undefined
      const plain = await postOk(ctx, text, `no mention ${ctx.uid('m')}`)
      let mentioned: any
      if (member !== undefined) mentioned = await postOk(ctx, text, `hello <@${member}> ${ctx.uid('m')}`)
      const gone = await postOk(ctx, text, `deleted soon ${ctx.uid('m')}`)
      const last = await postOk(ctx, text, `last ${ctx.uid('m')}`)
      expectOk(await remove(ctx, gone.id), `DELETE /messages/${gone.id}`, DELETE)
      const page = await readPage(ctx, text, { before: last.id + 1, limit: 50 })
      const byId = new Map(page.messages.map((m) => [m.id as number, m]))
      expectThat(!byId.has(gone.id), `deleted message ${gone.id} is not returned`, 'absent', [...byId.keys()].slice(-5))
      expectEqual(byId.get(plain.id)?.mentions, [], 'a message that mentions nobody has mentions []')
      if (mentioned !== undefined) expectEqual(byId.get(mentioned.id)?.mentions, [member], `a message with <@${member!}> lists that member id in mentions`)
      else ctx.note('no member id known: the mentions half did not run')
      // before: the limit messages immediately older, skipping the deleted one.
      const just = await readPage(ctx, text, { before: last.id, limit: 2 })
      expectEqual(just.messages.map((m) => m.id), mentioned === undefined ? [...page.messages.map((m) => m.id).filter((id: number) => id < last.id).slice(-2)] : [plain.id, mentioned.id], `GET before=${last.id}&limit=2 is the two live messages just older`)
    }
  }),

  defineCase<OrbBotClient>({
    id: 'ORB-A20.cards',
    title: 'orbtest\'s card syntax: a line starting with /trade, /signal or /market (any case) is refused with 403; look-alikes are not',
    level: 'decision',
    // The spec gives no card syntax: only orbtest's fake is known to use ORB-A20's default pattern.
    needs: ['control'],
    writes: true,
    async run (ctx) {
      const text = channel(ctx, 'text')
      const card = fc.tuple(fc.constantFrom('', 'look:\n', 'hi team\n  ', '\t'), anyCase('trade').chain((t) => fc.constantFrom(t, 'signal', 'MARKET', 'Signal')), fc.constantFrom('', ' ETH 2x', ' BUY now', '\nmore')).map(([a, w, b]) => `${a}/${w}${b}`)
      await fc.assert(fc.asyncProperty(card, async (content) => {
        expectOrbError(await send(ctx, { channel: text, content }), 403, `POST /messages ${JSON.stringify(content)} (a card)`)
      }), clockRuns(ctx, await ctx.virtualTime(), 10, 10))
      for (const content of ['we do not /trade here', '/trader joe', '/tradeable']) {
        expectOk(await send(ctx, { channel: text, content }), `POST /messages ${JSON.stringify(content)} (not a card)`, POST)
      }
    }
  }),

  defineCase<OrbBotClient>({
    id: 'ORB-A21',
    title: 'a second delete of the same id is 404 exactly; with control, deleting in a community that uninstalled the app is 403 exactly',
    level: 'decision',
    writes: true,
    async run (ctx) {
      const text = channel(ctx, 'text')
      const mine = await postOk(ctx, text, `twice ${ctx.uid('x')}`)
      expectOk(await remove(ctx, mine.id), `DELETE /messages/${mine.id}`, DELETE)
      expectOrbError(await remove(ctx, mine.id), 404, `DELETE /messages/${mine.id} a second time`)
      if (ctx.control === undefined || ctx.client.target.controlled === undefined) {
        ctx.note('the uninstalled half needs the control API')
        return
      }
      await deleteWhileUninstalled(ctx, false)
    }
  })
]

/** Which cases each fault of the fake Orb must make fail. */
export const messagesFaults: Partial<Record<OrbFault, string[]>> = {
  'everyone-allowed': ['ORB-026', 'ORB-A02'],
  'retry-after-early': ['ORB-031', 'ORB-031.app', 'ORB-A03'],
  'paging-includes-before': ['ORB-034.model', 'ORB-033']
}
