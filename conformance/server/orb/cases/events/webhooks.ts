import { createHash, createHmac } from 'node:crypto'
import fc from 'fast-check'
import { defineCase, type ConformanceCase } from '../../../core/case.js'
import { expectComponent, expectEqual, expectOrbError, expectThat } from '../../expect.js'
import { verifySignature, type Delivery, type Hook } from '../../receiver.js'
import { controlled, type OrbContext } from '../../orb-case.js'
import type { OrbBotClient } from '../../transport.js'
import {
  appOf,
  capped,
  expectAnswer,
  held,
  holdNext,
  hookMode,
  mention,
  nth,
  pingHook,
  records,
  respond,
  sleep,
  testEvent,
  typePing,
  virtualOnly
} from './events-support.js'

// 2.11 Webhooks: deliveries to the endpoint URL, their signature, retries and inline notices (ORB-090..098), and the
// delivery timeouts and retries the spec leaves open (ORB-A11).

const header = (d: Delivery, name: string): string => String(d.headers[name] ?? '')

/** A test event whose first attempt the hook answered as scripted, and the delivery log has: its id. */
async function firstAttempt (ctx: OrbContext, hook: Hook): Promise<string> {
  const id = await testEvent(ctx)
  await nth(hook, 1, 'the first attempt')
  await records(ctx, id, 1)
  return id
}

/**
 * How long (real time) a case waits to see that no further delivery comes, once the target has moved its clock past
 * the moment one would be due. A delivery that is due leaves while the clock moves, so it reaches the receiver
 * (in this process) within milliseconds; a window too short can only miss a stray delivery, never invent one.
 */
const QUIET_MS = 60

/**
 * A held delivery of `event` times out after `ms` of the target's clock: still in flight a millisecond before (as
 * `inFlight` says), and logged as a failed attempt at `ms` (else the case fails as `fails`).
 */
async function timesOut (ctx: OrbContext, event: string, ms: number, inFlight: string, fails: string): Promise<void> {
  await ctx.elapse(ms - 1)
  await sleep(30)
  expectEqual((await records(ctx, event, 1, 0)).length, 0, `${inFlight} at ${ms - 1} ms`)
  await ctx.elapse(1)
  const [record] = await records(ctx, event, 1)
  expectThat(record !== undefined && record.outcome !== 'delivered', fails, 'a failed attempt', record)
}

/** ORB-091: the ledger's test vector, computed with node:crypto alone (a sanity check of the receiver's checker). */
function checkTestVector (): void {
  const key = createHash('sha256').update('orb_example_token', 'utf8').digest('hex')
  expectEqual(
    key,
    '4265a59929f84c5dc34dd27ea4b48af187709ac6c2210ce8d86fd1a603ce8f06',
    'ORB-091 test vector: key = sha256(token) as lowercase hex'
  )
  const body = '{"id":"evt_1","type":"app.test"}'
  const v1 = createHmac('sha256', key).update(`1700000000000.${body}`, 'utf8').digest('hex')
  expectEqual(
    v1,
    'debe46c55152e066937fadf824466cc01e34b2456dbde615c85a6e6cd235a8fb',
    'ORB-091 test vector: v1 = HMAC-SHA256(key, "<t>.<raw body>")'
  )
  const verdict = verifySignature(`t=1700000000000,v1=${v1}`, Buffer.from(body, 'utf8'), 'orb_example_token')
  expectThat(verdict.ok, "the receiver's checker accepts the ledger's test vector", 'ok', verdict)
  expectThat(
    !verifySignature(`t=1700000000000,v1=${v1}`, Buffer.from(body, 'utf8'), 'orb_other_token').ok,
    "the receiver's checker refuses the vector under another token",
    'not ok',
    'ok'
  )
  expectThat(
    !verifySignature(`t=1700000000001,v1=${v1}`, Buffer.from(body, 'utf8'), 'orb_example_token').ok,
    "the receiver's checker refuses the vector with another t",
    'not ok',
    'ok'
  )
}

/** ORB-090..098 (2.11): deliveries to the endpoint URL. */
export const webhookCases: Array<ConformanceCase<OrbBotClient>> = [
  defineCase<OrbBotClient>({
    id: 'ORB-090',
    title: 'each event is POSTed as JSON to the endpoint URL: an Event without cursor',
    level: 'required',
    writes: true,
    async run (ctx) {
      const hook = await pingHook(ctx)
      const made = [await testEvent(ctx), (await mention(ctx, 'pushed')).event, await typePing(ctx)]
      const deliveries = await hook.atLeast(3)
      expectThat(
        deliveries.length === 3,
        'one delivery per event',
        3,
        deliveries.map((d) => d.json?.id)
      )
      expectEqual(deliveries.map((d) => d.json?.id).sort(), [...made].sort(), 'the events delivered')
      for (const d of deliveries) {
        expectEqual(d.method, 'POST', "the delivery's method")
        expectThat(
          /^application\/json\b/i.test(header(d, 'content-type')),
          'the delivery is JSON',
          'Content-Type: application/json',
          header(d, 'content-type')
        )
        expectThat(d.json !== undefined, 'the body parses as JSON', 'JSON', d.raw.toString('utf8').slice(0, 200))
        expectComponent(d.json, 'Event', `the delivered ${String(d.json?.type)} event`)
        expectThat(!Object.hasOwn(d.json, 'cursor'), 'no cursor in a webhook event', 'no "cursor"', Object.keys(d.json))
      }
    }
  }),
  defineCase<OrbBotClient>({
    id: 'ORB-091',
    title: 'every delivery is signed t=<ms>,v1=HMAC-SHA256(sha256(token) hex, "<t>.<raw body>"), checked by the suite\'s own receiver',
    level: 'required',
    writes: true,
    async run (ctx) {
      checkTestVector()
      const hook = await hookMode(ctx)
      const text = fc.string({ minLength: 1, maxLength: 60, unit: 'grapheme' }).filter((s) => !s.includes('<@'))
      let count = 0
      await fc.assert(
        fc.asyncProperty(fc.boolean(), text, async (isTest, said) => {
          const id = isTest ? await testEvent(ctx) : (await mention(ctx, said)).event
          const d = await nth(hook, ++count, 'the event is delivered')
          expectEqual(d.json?.id, id, 'the delivered event')
          const sig = header(d, 'x-orb-signature')
          expectThat(
            /^t=\d+,v1=[0-9a-f]{64}$/.test(sig),
            'X-Orb-Signature is t=<ms>,v1=<64 lowercase hex>',
            't=<ms>,v1=<hex>',
            sig
          )
          expectThat(
            d.signature.ok,
            `the signature verifies over the raw body (${d.signature.why ?? ''})`,
            'a valid signature',
            sig
          )
          expectThat(
            Math.abs((d.signature.t ?? 0) - Number(d.json?.sent_at)) < 10 * 60_000,
            't is milliseconds since the epoch (near sent_at)',
            d.json?.sent_at,
            d.signature.t
          )
          expectThat(
            !verifySignature(d.headers['x-orb-signature'], d.raw, `${hook.token}x`).ok,
            'the signature does not verify under another token',
            'not valid',
            'valid'
          )
        }),
        capped(ctx, 8)
      )
    }
  }),
  defineCase<OrbBotClient>({
    id: 'ORB-092',
    title: 'both attempts of one event carry X-Orb-Event = the event id, and different X-Orb-Delivery values',
    level: 'required',
    writes: true,
    async run (ctx) {
      const hook = await hookMode(ctx)
      hook.script({ status: 500, body: { error: 'once' } })
      const id = await firstAttempt(ctx, hook)
      await ctx.elapse(2000)
      const [first, second] = [
        await nth(hook, 1, 'the first attempt'),
        await nth(hook, 2, 'the second attempt, 2 s after a 500')
      ]
      expectEqual(
        [header(first, 'x-orb-event'), header(second, 'x-orb-event')],
        [id, id],
        'X-Orb-Event of both attempts'
      )
      expectThat(
        header(first, 'x-orb-delivery') !== '' && header(first, 'x-orb-delivery') !== header(second, 'x-orb-delivery'),
        'X-Orb-Delivery differs between the attempts',
        'two different values',
        [header(first, 'x-orb-delivery'), header(second, 'x-orb-delivery')]
      )
    }
  }),
  defineCase<OrbBotClient>({
    id: 'ORB-093',
    title: 'a failed delivery is tried a second time (2 s later on the target\'s clock), never a third, and the delivery log records both',
    level: 'required',
    writes: true,
    async run (ctx) {
      const hook = await hookMode(ctx)
      hook.script({ status: 500, body: { error: 'first' } }, { status: 503, body: { error: 'second' } })
      const id = await firstAttempt(ctx, hook)
      await ctx.elapse(2000)
      const second = await nth(hook, 2, 'a second attempt after the endpoint answered 500', 1500)
      expectEqual(second.json?.id, id, 'the second attempt is the same event')
      await records(ctx, id, 2)
      await ctx.elapse(5000)
      expectThat(await hook.quiet(2, QUIET_MS), 'no third attempt', '2 deliveries', hook.deliveries.length)
      const log = await records(ctx, id, 2)
      expectEqual(log.map((r) => ({ attempt: r.attempt, status: r.status, delivered: r.outcome === 'delivered' })), [{ attempt: 1, status: 500, delivered: false }, { attempt: 2, status: 503, delivered: false }], 'the delivery log records both attempts')
    }
  }),
  defineCase<OrbBotClient>({
    id: 'ORB-094',
    title: 'any 2xx (200, 201, 202, 204) counts as delivered: no retry',
    level: 'required',
    writes: true,
    async run (ctx) {
      const hook = await hookMode(ctx)
      const statuses = [200, 201, 202, 204]
      const made: string[] = []
      for (const [i, status] of statuses.entries()) {
        hook.script(status === 204 ? { status } : { status, body: {} })
        made.push(await testEvent(ctx))
        await nth(hook, i + 1, `the delivery answered ${status}`)
      }
      for (const id of made) await records(ctx, id, 1)
      await ctx.elapse(5000)
      expectThat(
        await hook.quiet(statuses.length, QUIET_MS),
        'no event is sent again after a 2xx',
        statuses.length,
        hook.deliveries.map((d) => [d.json?.id, d.answered.status])
      )
      const log = (await controlled(ctx).control.deliveries(appOf(ctx))).deliveries.filter((r) =>
        made.includes(r.event)
      )
      expectEqual(
        log.map((r) => [r.status, r.outcome]),
        statuses.map((s) => [s, 'delivered']),
        'the delivery log: each delivered at the first attempt'
      )
    }
  }),
  defineCase<OrbBotClient>({
    id: 'ORB-098',
    title: 'a notice returned within 4 s for an application_command is shown to the member; a notice on app.test is ignored',
    level: 'required',
    writes: true,
    async run (ctx) {
      const hook = await pingHook(ctx)
      const hold = held(ctx)
      hook.script(
        { status: 200, body: { notice: 'after 3 s' }, until: hold.promise },
        { status: 200, body: { notice: 'on a test event' } }
      )
      const id = await typePing(ctx)
      await nth(hook, 1, 'the typed command is delivered')
      await ctx.elapse(3000)
      hold.release()
      await records(ctx, id, 1)
      const shown = { content: 'after 3 s', via: 'inline' } as const
      await expectAnswer(ctx, id, shown, 'a notice 3 s after the command is shown to the member')
      const test = await testEvent(ctx)
      await nth(hook, 2, 'the test event is delivered')
      const [record] = await records(ctx, test, 1)
      expectEqual(record?.notice?.result, 'ignored', 'a notice in the answer to app.test is ignored')
      expectOrbError(await respond(ctx, test, { content: 'x' }), 400, 'app.test is still no interaction')
    }
  })
]

/** ORB-A11: delivery timeouts and retries. */
export const webhookDecisions: Array<ConformanceCase<OrbBotClient>> = [
  defineCase<OrbBotClient>({
    id: 'ORB-A11',
    title: 'deliveries: JSON, time out after 10 s (4 s for a command), retry about 2 s after a failure with the same body and event id, a new delivery id, t and signature',
    level: 'decision',
    writes: true,
    async run (ctx) {
      await virtualOnly(ctx, 'delivery timeouts to the millisecond')
      const hook = await pingHook(ctx)
      // A 500 is retried 2 s later, not before.
      hook.script({ status: 500 })
      const failed = await firstAttempt(ctx, hook)
      await ctx.elapse(1999)
      expectThat(await hook.quiet(1, QUIET_MS), 'no retry before 2 s', 1, hook.deliveries.length)
      await ctx.elapse(1)
      await nth(hook, 2, 'the retry 2 s after the failure')
      await records(ctx, failed, 2)
      // app.test held: a timeout at 10 s (a failure), then the retry 2 s later.
      const hold = holdNext(ctx, hook, {})
      const slow = await testEvent(ctx)
      const first = await nth(hook, 3, 'the held test event')
      await timesOut(ctx, slow, 10_000, 'still in flight', 'an app.test delivery unanswered for 10 s fails')
      hold.release()
      await ctx.elapse(2000)
      const second = await nth(hook, 4, 'the retry of the timed-out delivery')
      for (const d of [first, second]) {
        expectThat(
          /^application\/json\b/i.test(header(d, 'content-type')),
          'Content-Type: application/json',
          'application/json',
          header(d, 'content-type')
        )
      }
      expectThat(
        first.raw.equals(second.raw),
        'the retry sends the same body bytes',
        first.raw.toString('utf8').slice(0, 200),
        second.raw.toString('utf8').slice(0, 200)
      )
      expectEqual(header(second, 'x-orb-event'), slow, "the retry's X-Orb-Event")
      expectThat(
        /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(header(second, 'x-orb-delivery')) &&
          header(second, 'x-orb-delivery') !== header(first, 'x-orb-delivery'),
        'the retry has a new X-Orb-Delivery (a UUID)',
        'a new UUID',
        [header(first, 'x-orb-delivery'), header(second, 'x-orb-delivery')]
      )
      expectThat(
        second.signature.ok && first.signature.t !== undefined && second.signature.t === first.signature.t + 12_000,
        'the retry has a new t (12 s later) and a valid new signature',
        `t=${(first.signature.t ?? 0) + 12_000}, valid`,
        second.signature
      )
      // A command held: a timeout at 4 s; the member stops waiting at 6 s, so there is no retry.
      const holdCommand = holdNext(ctx, hook, { notice: 'too slow' })
      const typed = await typePing(ctx)
      await nth(hook, 5, 'the held command')
      await timesOut(ctx, typed, 4000, 'the command is still in flight', 'a command delivery unanswered for 4 s fails')
      holdCommand.release()
      await ctx.elapse(5000)
      expectThat(
        await hook.quiet(5, QUIET_MS),
        'no retry of a command once its member stopped waiting',
        5,
        hook.deliveries.length
      )
    }
  })
]
