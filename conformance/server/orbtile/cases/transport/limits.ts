import fc from 'fast-check'
import { adapterId, CaseFailure, defineCase, type CaseContext, type ConformanceCase } from '../../orbtile-case.js'
import { forget, leaseGone, minimal, register, type Registered } from '../../adapters.js'
import { expectEqual, expectError, expectSchema, expectStatus, expectThat } from '../../expect.js'
import type { Reply, RequestOptions } from '../../transport.js'
import {
  burst, hasVirtualClock, isRateLimited, pollsHeld, refillBuckets, windowProblem, within
} from '../../support-transport.js'
import { capped, infoBody, LIMITS, poll, SESSION, session, tapAdapter, withEvents } from './transport-support.js'

/** An approval under the given request id (OT-032). */
const approval = (id: string): Record<string, string> => ({ id, toolName: 'Bash', commandSummary: 'ls -la' })

/** An allowed adapter with the tap capability, one session, and `n` taps queued through the control API. */
async function tapped (ctx: CaseContext, n: number): Promise<Registered> {
  const a = await tapAdapter(ctx, 'taps')
  expectStatus(await session(ctx, a, 's1', SESSION), 200, 'creating the session to tap')
  for (let i = 0; i < n; i += 10) {
    const taps = await Promise.all(Array.from({ length: Math.min(10, n - i) }, () => ctx.control!.tap(a.id, 's1')))
    for (const tap of taps) if (tap.status !== 200) throw new Error(`control tap answered ${tap.status}: ${JSON.stringify(tap.json)}`)
  }
  return a
}

/**
 * Five adapters with the tap capability, the first four holding a long poll (waitSeconds 2) each. `release` ends the
 * polls (advancing a virtual clock, or waiting) and returns their replies; it also runs when the case ends.
 */
async function fourHeld (ctx: CaseContext): Promise<{ adapters: Registered[], release: () => Promise<Reply[]> }> {
  const adapters: Registered[] = []
  for (let i = 0; i < 5; i++) adapters.push(await tapAdapter(ctx, 'long'))
  const virtual = await hasVirtualClock(ctx)
  const held = adapters.slice(0, 4).map((a) => poll(ctx, a, { waitSeconds: 2 }, { retryRateLimited: false }))
  // Awaited by `release`; until then a failed poll must not count as an unhandled rejection.
  for (const p of held) p.catch(() => {})
  let released: Promise<Reply[]> | undefined
  const release = (): Promise<Reply[]> => {
    released ??= (async () => {
      if (virtual) await ctx.elapse(2000)
      return Promise.all(held)
    })()
    return released
  }
  ctx.cleanup(release)
  await pollsHeld(ctx, adapters.slice(0, 4).map((a) => a.id))
  return { adapters, release }
}

/**
 * Limits: body size and framing, the rate limit, sessions, events, request ids and long polls (OT-024..033, OT-A20's
 * shared bucket).
 */
export const limitCases: ConformanceCase[] = [
  defineCase({
    id: 'OT-024',
    title: 'a body over maxBodyBytes is payload_too_large, and the server keeps serving',
    level: 'required',
    async run (ctx) {
      const { client } = ctx
      const info = await infoBody(ctx)
      const limit = info.limits.maxBodyBytes as number
      const reply = await client.request({
        method: 'PUT',
        path: `/adapters/${adapterId(ctx, 'big')}`,
        body: Buffer.alloc(limit + 1, 0x20)
      })
      expectError(reply, 'payload_too_large', `a ${limit + 1}-byte body`)
      expectStatus(await client.request({ path: '/info' }), 200, 'the next request')
    }
  }),
  defineCase({
    id: 'OT-024.b',
    title: 'a body of exactly 65536 bytes passes the size check; any larger body is payload_too_large and the server keeps serving',
    level: 'required',
    async run (ctx) {
      const id = adapterId(ctx, 'exact')
      const text = JSON.stringify(minimal())
      const exact = Buffer.from(text.slice(0, -1) + ' '.repeat(LIMITS.maxBodyBytes - text.length) + '}')
      const accepted = await ctx.client.request({ method: 'PUT', path: `/adapters/${id}`, body: exact })
      if (accepted.status === 200) {
        ctx.cleanup(async () => {
          const reply = await ctx.client.request({
            method: 'DELETE',
            path: `/adapters/${id}`,
            headers: { 'x-orbtile-adapter-token': accepted.json.adapterToken }
          })
          if (leaseGone(reply)) await forget(ctx, id)
        })
      }
      expectStatus(accepted, 200, `a valid registration of exactly ${exact.length} bytes`)
      await fc.assert(
        fc.asyncProperty(fc.integer({ min: LIMITS.maxBodyBytes + 1, max: 4 * LIMITS.maxBodyBytes }), async (size) => {
          expectError(
            await ctx.client.request({
              method: 'PUT',
              path: `/adapters/${adapterId(ctx, 'big')}`,
              body: Buffer.alloc(size, 0x20)
            }),
            'payload_too_large',
            `a ${size}-byte body`
          )
          expectStatus(await ctx.client.request({ path: '/info' }), 200, `the request after a ${size}-byte body`)
        }),
        capped(ctx, 10)
      )
    }
  }),
  defineCase({
    id: 'OT-025',
    title: 'a chunked body without Content-Length is length_required',
    level: 'required',
    async run (ctx) {
      const { client } = ctx
      const head =
        `PUT ${client.target.basePath}/adapters/${adapterId(ctx, 'chunk')} HTTP/1.1\r\nHost: localhost\r\n` +
        'Authorization: Bearer {token}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n'
      const raw = await client.raw(`${head}2\r\n{}\r\n0\r\n\r\n`)
      expectThat(
        /^HTTP\/1\.1 411 /.test(raw) && raw.includes('"length_required"'),
        'a chunked PUT',
        '411 length_required',
        raw.slice(0, 300)
      )
    }
  }),
  defineCase({
    id: 'OT-026',
    title: 'rate 20/s, burst 60: a full bucket admits exactly 60 at once, 20 more a second later; no window of t s admits more than 60 + 20t',
    level: 'required',
    async run (ctx) {
      const info: RequestOptions = { path: '/info' }
      const admittedOf = (replies: Reply[], what: string): number => {
        for (const reply of replies) if (reply.status !== 200) expectError(reply, 'rate_limited', what)
        return replies.filter((r) => r.status === 200).length
      }
      const virtual = await refillBuckets(ctx)
      const started = performance.now()
      const first = admittedOf(await burst(ctx, 100, info), '100 requests at once')
      const took = (performance.now() - started) / 1000
      if (virtual) {
        expectEqual(first, 60, '100 requests at one instant from a full bucket: how many are admitted')
        await ctx.elapse(1000)
        expectEqual(
          admittedOf(await burst(ctx, 30, info), '30 requests a second later'),
          20,
          '30 requests one second after the bucket ran dry: how many are admitted'
        )
        await fc.assert(
          fc.asyncProperty(
            fc.array(fc.record({ advance: fc.integer({ min: 0, max: 3000 }), n: fc.integer({ min: 0, max: 80 }) }), {
              minLength: 1,
              maxLength: 5
            }),
            async (steps) => {
              await ctx.elapse(3000)
              let now = 0
              const admitted: number[] = []
              for (const [i, { advance, n }] of steps.entries()) {
                if (advance > 0) await ctx.elapse(advance)
                now += advance
                const count = admittedOf(await burst(ctx, n, info), `${n} requests at ${now} ms`)
                if (i === 0) {
                  expectThat(
                    count >= Math.min(n, 60),
                    `${n} requests from a full bucket`,
                    `at least ${Math.min(n, 60)} admitted`,
                    count
                  )
                }
                for (let k = 0; k < count; k++) admitted.push(now)
              }
              const problem = windowProblem(admitted)
              if (problem !== undefined) {
                throw new CaseFailure(
                  `the rate limit let too much through: ${problem}`,
                  'at most 60 + 20 t requests within any t seconds',
                  steps
                )
              }
            }
          ),
          capped(ctx, 10)
        )
      } else {
        ctx.note(
          `no virtual clock: checked in real time (100 requests took ${took.toFixed(3)} s); the exact refill needs --control with a virtual clock`
        )
        expectThat(
          first >= 60 && first <= 60 + 20 * took + 1,
          '100 requests at once from a full bucket',
          `60 to ${Math.floor(60 + 20 * took + 1)} admitted`,
          first
        )
        if (took < 1) {
          expectThat(100 - first >= 20, '100 requests in under 1 s', 'at least 20 rate_limited', 100 - first)
        }
        const rested = performance.now()
        await ctx.elapse(1000)
        const again = admittedOf(await burst(ctx, 40, info), '40 requests a second later')
        const span = (performance.now() - rested) / 1000 + took
        expectThat(
          again >= 19 && again <= 20 * span + 1,
          '40 requests about one second after the bucket ran dry',
          `19 to ${Math.floor(20 * span + 1)} admitted`,
          again
        )
      }
    }
  }),
  defineCase({
    id: 'OT-A20.shared',
    title: 'a 429 carries Retry-After (whole seconds, >= 1) and waiting it out succeeds; the bucket refills one token per 50 ms; each adapter has its own bucket',
    level: 'decision',
    async run (ctx) {
      const info: RequestOptions = { path: '/info' }
      const virtual = await refillBuckets(ctx)
      const replies = await burst(ctx, 80, info)
      const refused = replies.find(isRateLimited)
      expectThat(
        refused !== undefined,
        '80 requests at once',
        'some rate_limited',
        replies.map((r) => r.status)
      )
      const retryAfter = String(refused!.headers['retry-after'])
      expectThat(
        /^\d+$/.test(retryAfter) && Number(retryAfter) >= 1,
        'Retry-After of a 429',
        'whole seconds, at least 1',
        retryAfter
      )
      const one = async (): Promise<number> => (await ctx.client.request({ ...info, retryRateLimited: false })).status
      if (virtual) {
        expectEqual(
          replies.filter((r) => r.status === 200).length,
          60,
          '80 requests at one instant from a full bucket: admitted'
        )
        expectEqual(retryAfter, '1', 'Retry-After on an empty bucket: ceil(1 token / 20 per s)')
        await ctx.elapse(49)
        expectEqual(await one(), 429, '49 ms later (less than one token)')
        await ctx.elapse(1)
        expectEqual(await one(), 200, '50 ms later (one token)')
        expectEqual(await one(), 429, 'right after that token was spent')
        await ctx.elapse(Number(retryAfter) * 1000)
        expectEqual(
          (await burst(ctx, 21, info)).filter((r) => r.status === 200).length,
          20,
          `21 requests after waiting Retry-After (${retryAfter} s)`
        )
      } else {
        ctx.note('no virtual clock: Retry-After was waited out in real time; the 50 ms refill step is not checked')
        await ctx.elapse(Number(retryAfter) * 1000)
        expectEqual(await one(), 200, `a request after waiting Retry-After (${retryAfter} s)`)
        await burst(ctx, 40, info)
      }
      // The shared bucket is (nearly) empty now; adapters draw on their own.
      const a = await tapAdapter(ctx, 'bucket-a')
      const b = await tapAdapter(ctx, 'bucket-b')
      for (const adapter of [a, b]) {
        const polls = await burst(ctx, 60, {
          method: 'POST',
          path: `/adapters/${adapter.id}/events`,
          headers: adapter.headers,
          body: {}
        })
        const admitted = polls.filter((r) => r.status === 200).length
        if (virtual) {
          expectEqual(
            admitted,
            59,
            `60 polls of ${adapter.id} (its registration took one token of its own bucket): admitted`
          )
        } else {
          expectThat(
            admitted >= 45,
            `60 polls of ${adapter.id} right after the shared bucket ran dry`,
            'most admitted (a bucket of its own)',
            admitted
          )
        }
      }
      if (virtual) { expectEqual(await one(), 429, "GET /info after the adapters' polls: the shared bucket is still empty") }
    }
  }),
  defineCase({
    id: 'OT-029',
    title: 'an adapter holds 32 sessions; a POST creating a 33rd is limit_exceeded, while updating one of the 32 still works',
    level: 'required',
    async run (ctx) {
      const a = await register(ctx, minimal(), { label: 'sessions' })
      const created = await Promise.all(Array.from({ length: 32 }, (_, i) => session(ctx, a, `s${i}`, SESSION)))
      created.forEach((reply, i) => expectStatus(reply, 200, `creating session ${i + 1} of 32`))
      expectError(await session(ctx, a, 's32', SESSION), 'limit_exceeded', 'creating a 33rd session')
      expectStatus(await session(ctx, a, 's0', { activity: 'thinking' }), 200, 'updating one of the 32')
    }
  }),
  defineCase({
    id: 'OT-031',
    title: 'an EventsReply never holds more than 128 events, even with 130 queued',
    level: 'required',
    needs: ['control'],
    async run (ctx) {
      const a = await tapped(ctx, 130)
      const reply = await poll(ctx, a)
      expectStatus(reply, 200, 'polling 130 queued events')
      expectSchema(reply.json, 'EventsReply', 'the EventsReply')
      expectThat(
        reply.json.events.length <= 128 && reply.json.events.length > 0,
        'events in one reply',
        '1 to 128',
        reply.json.events.length
      )
    }
  }),
  defineCase({
    id: 'OT-032',
    title: '4096 distinct request ids are accepted under one registration; the 4097th is limit_exceeded',
    level: 'required',
    // 4097 requests at 20/s: 3.5 minutes of real time.
    needs: ['slow'],
    async run (ctx) {
      // A wave of 60 after each full refill (60 tokens at 20/s: 3 s, and a little more on a real clock).
      const refill = await hasVirtualClock(ctx) ? 3000 : 3000 + 200
      const a = await register(ctx, withEvents(['approvals']), { label: 'ids' })
      const sessions = 30
      let used = 0
      while (used < LIMITS.maxRequestIDs) {
        await ctx.elapse(refill)
        const wave = Math.min(60, LIMITS.maxRequestIDs - used)
        const chains = Array.from({ length: sessions }, (_, s) => async () => {
          for (let k = s; k < wave; k += sessions) {
            const id = `r${used + k}`
            const reply = await session(ctx, a, `s${s}`, {
              ...SESSION,
              activity: 'waitingPermission',
              approval: approval(id)
            })
            expectStatus(reply, 200, `request id ${used + k + 1} of 4096 (${id})`)
          }
        })
        await Promise.all(chains.map((chain) => chain()))
        used += wave
      }
      expectError(await session(ctx, a, 's0', { approval: approval('r4096') }), 'limit_exceeded', 'a 4097th request id')
    }
  }),
  defineCase({
    id: 'OT-033',
    title: 'at most 4 long polls are held at once: with 4 held (4 adapters), a 5th adapter\'s long poll is not held',
    level: 'required',
    async run (ctx) {
      const { adapters, release } = await fourHeld(ctx)
      const fifth = poll(ctx, adapters[4]!, { waitSeconds: 1 }, { retryRateLimited: false })
      const settled = await within(fifth, 500)
      const held = await release()
      if (!settled.settled) {
        await fifth
        throw new CaseFailure('a 5th long poll was held beside 4 others', 'refused (or answered at once)', 'held')
      }
      held.forEach((reply, i) => {
        expectStatus(reply, 200, `held long poll ${i + 1}`)
        expectSchema(reply.json, 'EventsReply', `held long poll ${i + 1}`)
      })
    }
  })
]
