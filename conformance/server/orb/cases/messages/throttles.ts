import { CaseSkip, defineCase, type ConformanceCase } from '../../../core/case.js'
import { expectOrbError, expectRetryAfter, expectThat } from '../../expect.js'
import { channel, controlled, fail, fullAppId, type OrbContext } from '../../orb-case.js'
import type { OrbBotClient } from '../../transport.js'
import { PER_APP, PER_CHANNEL, emptyWindowsAfter, freshWindows, keepInstall, postOk, send } from './messages-support.js'

/*
 * The post throttles (ORB-031): 12 posts a minute in a channel and 30 across the app, each refusal a 429 whose
 * Retry-After is enough. ORB-A03's exact window arithmetic is a decision case (decisions.ts).
 */

/** Waits `wait` seconds (a Retry-After) and fails the case unless a post in `channelId` is then accepted. */
async function postAfterWait (ctx: OrbContext, channelId: string, wait: number): Promise<void> {
  await ctx.elapse(wait * 1000)
  const after = await send(ctx, { channel: channelId, content: `after the wait ${ctx.uid('t')}` }, { retry: false })
  if (after.status !== 200) {
    fail(`a post ${wait} s (Retry-After) after the 429`, '200: waiting Retry-After seconds is enough', after)
  }
}

/** The cases of the post throttles, in the suite's order. */
export const throttleCases: Array<ConformanceCase<OrbBotClient>> = [
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
      await postAfterWait(ctx, text, wait)
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
      const writable = [
        target.channels.text,
        ...(server.channels as any[])
          .filter((c) => c.kind === 'text' && !c.readOnly && c.id !== target.channels.text)
          .map((c) => c.id as string)
      ]
      if (writable.length < 3) {
        throw new CaseSkip(
          `${target.community} has ${writable.length} writable text channels; 30 posts without 12 in one channel need 3`
        )
      }
      const [a, b, c] = writable as [string, string, string]
      const install = await keepInstall(ctx)
      const channelRights = Object.fromEntries(
        Object.entries(install.channelRights).filter(([id]) => ![a, b, c].includes(id))
      )
      await control.install(target.community, app, {
        ...install,
        channels: [...new Set([...install.channels, a, b, c])],
        hidden: install.hidden.filter((id) => ![a, b, c].includes(id)),
        channelRights
      })
      emptyWindowsAfter(ctx)
      await freshWindows(ctx)
      const plan: Array<[string, number]> = [
        [a, PER_CHANNEL],
        [b, PER_CHANNEL],
        [c, PER_APP - 2 * PER_CHANNEL]
      ]
      for (const [id, n] of plan) {
        for (let i = 1; i <= n; i++) await postOk(ctx, id, `tick ${id} ${i} ${ctx.uid('t')}`, { retry: false })
      }
      const over = await send(ctx, { channel: c, content: `the 31st ${ctx.uid('t')}` }, { retry: false })
      expectOrbError(over, 429, `the ${PER_APP + 1}st post in a minute (${PER_APP - 2 * PER_CHANNEL + 1}th in ${c})`)
      const wait = expectRetryAfter(over, 'the 31st post')
      await postAfterWait(ctx, c, wait)
    }
  })
]
