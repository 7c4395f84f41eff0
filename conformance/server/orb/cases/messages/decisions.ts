import fc from 'fast-check'
import { CaseSkip, defineCase, type ConformanceCase } from '../../../core/case.js'
import { expectEqual, expectOk, expectOrbError, expectRetryAfter, expectThat } from '../../expect.js'
import { channel, fail } from '../../orb-case.js'
import type { OrbBotClient } from '../../transport.js'
import {
  DELETE,
  MESSAGES,
  PER_CHANNEL,
  POST,
  WINDOW_MS,
  anyCase,
  clockRuns,
  deleteTwice,
  deleteWhileUninstalled,
  emptyWindowsAfter,
  freshWindows,
  postOk,
  readAll,
  readPage,
  remove,
  send
} from './messages-support.js'

/*
 * The message decisions (ORB-A02, ORB-A03, ORB-A20, ORB-A21): orbtest's choices where the spec leaves the status,
 * the window arithmetic or the card syntax open. Decision cases hold them exactly.
 */

/** ORB-A02: content of nothing but white space. */
const blankContent = fc
  .array(fc.constantFrom(' ', '\t', '\n', '\r', '\u00a0', '\u2003', '\u3000'), { maxLength: 12 })
  .map((c) => c.join(''))

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

/** The decision cases of messages, in the suite's order. */
export const decisionCases: Array<ConformanceCase<OrbBotClient>> = [
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
        expectOrbError(
          await send(ctx, { channel: id, content }),
          status,
          `POST /messages ${JSON.stringify(content)} to ${what} (${id})`
        )
      }
      await fc.assert(
        fc.asyncProperty(blankContent, async (content) => {
          expectOrbError(
            await send(ctx, { channel: text, content }),
            400,
            `POST /messages with blank content ${JSON.stringify(content)}`
          )
        }),
        clockRuns(ctx, await ctx.virtualTime(), 10, 10)
      )
      expectOk(
        await send(ctx, { channel: text, content: `@here ${ctx.uid('h')}` }),
        'POST /messages "@here …" is not refused',
        POST
      )
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
      await fc.assert(
        fc.asyncProperty(burst, fc.array(step, { minLength: 4, maxLength: 16 }), async (gaps, steps) => {
          await freshWindows(ctx)
          const uid = ctx.uid('w')
          const accepted: number[] = []
          const posted: number[] = []
          let now = 0
          const wait = async (ms: number): Promise<void> => {
            await ctx.elapse(ms)
            now += ms
          }
          const attempt = async (what: string): Promise<{ ok: true } | { ok: false; retryAfter: number }> => {
            const expected = windowVerdict(accepted, now)
            const reply = await ctx.client.request({
              method: 'POST',
              path: MESSAGES,
              body: { channel: text, content: `${uid} ${posted.length}` },
              retryThrottled: false
            })
            const at = `${what} at +${now} ms (${accepted.filter((t) => t > now - WINDOW_MS).length} counted posts in the window)`
            if (expected.ok) {
              if (reply.status !== 200) fail(at, '200: the window has room', reply)
              posted.push(reply.json.id)
              accepted.push(now)
              return expected
            }
            expectOrbError(reply, 429, at)
            expectEqual(
              expectRetryAfter(reply, at),
              expected.retryAfter,
              `${at}: Retry-After is the ceiling of the seconds until the oldest counted post leaves the window`
            )
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
        }),
        ctx.fc({ numRuns: Math.min(ctx.fc().numRuns ?? 20, 12) })
      )
    }
  }),

  defineCase<OrbBotClient>({
    id: 'ORB-A20',
    title:
      'GET /messages of a voice channel is 400; deleted messages are not returned; mentions lists the member ids mentioned; before gives the limit messages just older',
    level: 'decision',
    writes: true,
    async run (ctx) {
      const text = channel(ctx, 'text')
      const voice = ctx.client.target.channels.voice
      if (voice !== undefined) {
        expectOrbError(
          await ctx.client.get(MESSAGES, { channel: voice }),
          400,
          `GET /messages of voice channel ${voice}`
        )
      } else ctx.note('no voice channel in the target: the voice half did not run')
      // mentions: a member id the channel shows (or the control API's member).
      const member =
        ctx.client.target.controlled?.member ??
        ((await readAll(ctx, text, 2)).find((m) => m.author?.bot === false)?.author.id as string | undefined)
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
      const card = fc
        .tuple(
          fc.constantFrom('', 'look:\n', 'hi team\n  ', '\t'),
          anyCase('trade').chain((t) => fc.constantFrom(t, 'signal', 'MARKET', 'Signal')),
          fc.constantFrom('', ' ETH 2x', ' BUY now', '\nmore')
        )
        .map(([a, w, b]) => `${a}/${w}${b}`)
      await fc.assert(
        fc.asyncProperty(card, async (content) => {
          expectOrbError(
            await send(ctx, { channel: text, content }),
            403,
            `POST /messages ${JSON.stringify(content)} (a card)`
          )
        }),
        clockRuns(ctx, await ctx.virtualTime(), 10, 10)
      )
      for (const content of ['we do not /trade here', '/trader joe', '/tradeable']) {
        expectOk(
          await send(ctx, { channel: text, content }),
          `POST /messages ${JSON.stringify(content)} (not a card)`,
          POST
        )
      }
    }
  }),

  defineCase<OrbBotClient>({
    id: 'ORB-A21',
    title: 'a second delete of the same id is 404 exactly; with control, deleting in a community that uninstalled the app is 403 exactly',
    level: 'decision',
    writes: true,
    async run (ctx) {
      await deleteTwice(ctx, false)
      if (ctx.control === undefined || ctx.client.target.controlled === undefined) {
        ctx.note('the uninstalled half needs the control API')
        return
      }
      await deleteWhileUninstalled(ctx, false)
    }
  })
]
