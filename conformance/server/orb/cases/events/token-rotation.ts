import { defineCase, type ConformanceCase } from '../../../core/case.js'
import { expectEqual, expectOk, expectOrbError, expectThat } from '../../expect.js'
import { verifySignature } from '../../receiver.js'
import { BOT, drain } from '../../orb-case.js'
import type { OrbBotClient } from '../../transport.js'
import {
  EVENTS,
  PING,
  appOf,
  fetched,
  hookMode,
  hookable,
  ids,
  nth,
  pingStart,
  testEvent,
  untilHeld,
  within
} from './events-support.js'

// Rotating the full app's token while it polls and receives webhooks (ORB-A22).

/** ORB-A22: rotating the full app's token mid-run. */
export const rotationDecisions: Array<ConformanceCase<OrbBotClient>> = [
  defineCase<OrbBotClient>({
    id: 'ORB-A22',
    title: 'rotating the token: the old one answers 401 at once (a held poll too), queued events, cursor and commands are kept, webhooks are keyed by the new one',
    level: 'decision',
    writes: true,
    async run (ctx) {
      hookable(ctx)
      const { control, target, start } = await pingStart(ctx)
      const app = appOf(ctx)
      const queued = await testEvent(ctx)
      const c1 = (await fetched(ctx, start, queued)).cursor as number
      const old = target.full.token
      const poll = ctx.client.get(EVENTS, { after: c1, wait: 25 }, { token: old })
      await untilHeld(ctx)
      const { token: fresh } = await control.rotateToken(app)
      // The whole run speaks as the full app: the shared target takes the new token at once, and reports mask it.
      target.full.token = fresh
      ctx.client.secret(fresh, '$ORB_TOKEN')
      ctx.note("the full app's token was rotated; the run goes on with the new one")
      expectOrbError(
        await within(poll, 3000, 'a poll held with the old token is answered at once'),
        401,
        'the poll held with the old token'
      )
      expectOrbError(await ctx.client.get(`${BOT}/app`, undefined, { token: old }), 401, 'GET /app with the old token')
      expectOrbError(await ctx.client.get(EVENTS, undefined, { token: old }), 401, 'GET /events with the old token')
      expectOk(await ctx.client.get(`${BOT}/app`), 'GET /app with the new token')
      expectEqual(ids((await drain(ctx, start)).events), [queued], 'the queued event is kept')
      const commands = expectOk(await ctx.client.get(`${BOT}/commands`), 'GET /commands with the new token')
      expectThat(
        (commands.commands as any[]).some((cmd) => cmd.name === PING.name),
        'commands are kept',
        PING.name,
        commands.commands
      )
      const after = await testEvent(ctx)
      expectThat((await fetched(ctx, start, after)).cursor > c1, 'the cursor keeps counting', `> ${c1}`, 'not')
      const hook = await hookMode(ctx)
      hook.token = fresh
      const pushed = await testEvent(ctx)
      const d = await nth(hook, 1, 'a delivery after the rotation')
      expectEqual(d.json?.id, pushed, 'the delivered event')
      expectThat(
        d.signature.ok,
        'the delivery is signed with sha256(new token)',
        'valid under the new token',
        d.signature
      )
      expectThat(
        !verifySignature(d.headers['x-orb-signature'], d.raw, old).ok,
        'the delivery is not signed with the old token',
        'invalid under the old token',
        'valid'
      )
    }
  })
]
