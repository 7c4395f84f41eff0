import fc from 'fast-check'
import { CaseFailure, CaseSkip, defineCase, type ConformanceCase } from '../../../core/case.js'
import { expectEqual, expectOk, expectOrbError, expectRetryAfter, expectThat } from '../../expect.js'
import { DIRECTORY, type OrbContext } from '../../orb-case.js'
import type { OrbBotClient, OrbReply } from '../../transport.js'
import { ORB_A03_WINDOWS } from '../../../../../src/spec/orb.js'
import { DIRECTORY_LIMIT } from './access-support.js'

/** ORB-A03: the directory's window. */
const DIRECTORY_WINDOW_MS = ORB_A03_WINDOWS.directoryPerAddress.windowMs
/** A required case gives up looking for the directory's throttle after this many back-to-back requests. */
const THROTTLE_SEARCH = 300

/** One directory request as anybody; a 429 is returned, not waited out. */
const hitDirectory = (ctx: OrbContext): Promise<OrbReply> =>
  ctx.client.request({ path: DIRECTORY, as: null, retryThrottled: false })

/**
 * SUITE-02: `n` directory requests sent at once (the client keeps up to 16 connections), their replies in the order
 * sent. A burst is as back to back as requests can be: on a virtual clock its requests all come at one instant, so
 * which of them the throttle admits may vary, but not how many, nor the Retry-After of those it refuses. Sent one
 * after another, the throttle cases' 2,300 requests were a quarter of the Orb suite's time.
 */
const hitBurst = (ctx: OrbContext, n: number): Promise<OrbReply[]> =>
  Promise.all(Array.from({ length: n }, () => hitDirectory(ctx)))

/** How many requests at once while looking for the throttle: past the first 429, a burst's rest is refused too. */
const SEARCH_BURST = 8

/** With a virtual clock: a full window passes now (the count starts afresh) and again when the case ends. */
async function freshDirectoryWindow (ctx: OrbContext): Promise<boolean> {
  if (!(await ctx.virtualTime())) return false
  await ctx.elapse(DIRECTORY_WINDOW_MS)
  ctx.cleanup(async () => {
    await ctx.elapse(DIRECTORY_WINDOW_MS)
  })
  return true
}

/** One directory reply while counting: a 200 directory, or the spec's 429 (ORB-099); returns Retry-After or 0. */
function throttleReply (reply: OrbReply, what: string): number {
  if (reply.status === 429) {
    expectOrbError(reply, 429, what)
    return expectRetryAfter(reply, what)
  }
  expectOk(reply, what)
  expectThat(Array.isArray(reply.json?.apps), `${what}: a directory`, '{"apps":[…],…}', reply.text.slice(0, 200))
  return 0
}

/**
 * Requests the directory in bursts until a 429 (at most THROTTLE_SEARCH requests); returns the first 429 sent and how
 * many requests were admitted (SUITE-02).
 */
async function untilThrottled (ctx: OrbContext, what: string): Promise<{ reply: OrbReply, admitted: number }> {
  let admitted = 0
  for (let sent = 0; sent < THROTTLE_SEARCH; sent += SEARCH_BURST) {
    const replies = await hitBurst(ctx, Math.min(SEARCH_BURST, THROTTLE_SEARCH - sent))
    let refused: OrbReply | undefined
    replies.forEach((reply, i) => {
      if (throttleReply(reply, `${what}, request ${sent + i + 1}`) > 0) refused ??= reply
      else admitted++
    })
    if (refused !== undefined) return { reply: refused, admitted }
  }
  throw new CaseFailure(`${what}: ${THROTTLE_SEARCH} directory requests back to back, none throttled (ORB-019)`, 'a 429 with Retry-After', `${THROTTLE_SEARCH} × 200`)
}

/**
 * The directory's throttle (ORB-019, ORB-099, ORB-A03). Each case starts a fresh window on a virtual clock and leaves
 * one; on a real clock the directory may stay throttled for this address until Retry-After has passed.
 */
export const throttleCases: Array<ConformanceCase<OrbBotClient>> = [
  defineCase<OrbBotClient>({
    id: 'ORB-019',
    title: 'the directory throttles a caller: back-to-back requests end in 429 with Retry-After and an Error body; waiting it out admits again',
    level: 'required',
    async run (ctx) {
      const virtual = await freshDirectoryWindow(ctx)
      const { reply, admitted } = await untilThrottled(ctx, 'the directory')
      const wait = expectRetryAfter(reply, 'the directory\'s 429')
      ctx.note(`${admitted} requests admitted, then 429 with Retry-After ${wait}`)
      // Waiting Retry-After out is the other half of the rule. A virtual clock passes it at once; a real one waits for
      // real (the case's point), which over 15 s needs --slow: without it the retry is not checked.
      try {
        await ctx.elapse(wait * 1000)
      } catch (err) {
        if (!(err instanceof CaseSkip)) throw err
        ctx.note(`Retry-After ${wait} s is too long to wait in real time without --slow: the retry after it was not checked, and the directory stays throttled for this address until then`)
        return
      }
      expectOk(await hitDirectory(ctx), `the directory after waiting Retry-After (${wait} s)`)
      if (!virtual) ctx.note('real clock: Retry-After was waited out for real')
    }
  }),

  defineCase<OrbBotClient>({
    id: 'ORB-099',
    title:
      'property: whatever the pattern of calls and pauses, a throttled directory call is 429 + integer Retry-After + Error, and waiting it out admits the call',
    level: 'required',
    needs: ['slow'],
    async run (ctx) {
      const virtual = await ctx.virtualTime()
      ctx.cleanup(async () => {
        await ctx.elapse(DIRECTORY_WINDOW_MS)
      })
      const steps = fc.array(
        fc.oneof(
          fc.record({ hits: fc.integer({ min: 1, max: 40 }) }),
          fc.record({ pause: fc.integer({ min: 1, max: 70 }) })
        ),
        { minLength: 0, maxLength: 5 }
      )
      await fc.assert(
        fc.asyncProperty(steps, async (plan) => {
          await ctx.elapse(DIRECTORY_WINDOW_MS)
          for (const step of plan) {
            if ('pause' in step) {
              await ctx.elapse(step.pause * 1000)
              continue
            }
            for (const reply of await hitBurst(ctx, step.hits)) {
              throttleReply(reply, `the directory during the plan ${JSON.stringify(plan)}`)
            }
          }
          const { reply } = await untilThrottled(ctx, `the directory after the plan ${JSON.stringify(plan)}`)
          const wait = expectRetryAfter(reply, "the directory's 429")
          await ctx.elapse(wait * 1000)
          expectOk(
            await hitDirectory(ctx),
            `the directory after waiting Retry-After (${wait} s) at the end of the plan ${JSON.stringify(plan)}`
          )
        }),
        ctx.fc(virtual ? {} : { numRuns: 2 })
      )
    }
  }),

  defineCase<OrbBotClient>({
    id: 'ORB-A03.directory',
    title: 'the directory admits 60 requests in any sliding 60 s (the 61st is 429) and Retry-After is the ceiling of the wait for a slot',
    level: 'decision',
    needs: ['control'],
    async run (ctx) {
      if (!await ctx.virtualTime()) throw new CaseSkip('a model of the window needs the target\'s virtual clock')
      ctx.cleanup(async () => { await ctx.elapse(DIRECTORY_WINDOW_MS) })
      const steps = fc.array(fc.oneof(
        fc.record({ hits: fc.integer({ min: 1, max: 30 }) }),
        fc.record({ pause: fc.integer({ min: 1, max: 75_000 }) })
      ), { minLength: 1, maxLength: 8 })
      await fc.assert(fc.asyncProperty(steps, async (plan) => {
        await ctx.elapse(DIRECTORY_WINDOW_MS)
        // The model: times (ms since the fresh window) of admitted requests; a request 60 000 ms old has left.
        let now = 0
        const times: number[] = []
        // A burst of `n` at one instant (SUITE-02): as many admitted as the window has room for, the rest refused,
        // each with the wait for the oldest of the 60 then in the window.
        const burst = async (n: number, what: string): Promise<void> => {
          const live = times.filter((t) => t > now - DIRECTORY_WINDOW_MS)
          const replies = await hitBurst(ctx, n)
          const room = Math.min(n, Math.max(0, DIRECTORY_LIMIT - live.length))
          const admitted = replies.filter((reply) => reply.status === 200).length
          if (admitted !== room) {
            throw new CaseFailure(`${what}: ${live.length} admitted in the last 60 s and ${n} more at once, yet ${admitted} of them admitted`, `${room} × 200`, replies.map((reply) => reply.status))
          }
          for (let i = 0; i < admitted; i++) {
            live.push(now)
            times.push(now)
          }
          const oldest = live[live.length - DIRECTORY_LIMIT]
          for (const reply of replies) {
            if (reply.status === 200) continue
            expectOrbError(reply, 429, `${what}: past the ${DIRECTORY_LIMIT} a window admits`)
            const want = Math.max(1, Math.ceil((oldest! + DIRECTORY_WINDOW_MS - now) / 1000))
            expectEqual(expectRetryAfter(reply, what), want, `${what}: Retry-After (seconds until a slot frees)`)
          }
        }
        // A fresh window: 60 pass, the 61st does not.
        await burst(DIRECTORY_LIMIT + 1, 'a fresh window')
        for (const step of plan) {
          if ('pause' in step) {
            await ctx.elapse(step.pause)
            now += step.pause
          } else {
            await burst(step.hits, `at ${now} ms of the plan ${JSON.stringify(plan)}`)
          }
        }
      }), ctx.fc({ numRuns: Math.min(10, ctx.fc().numRuns ?? 10) }))
    }
  })
]
