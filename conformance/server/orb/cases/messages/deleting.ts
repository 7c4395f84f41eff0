import fc from 'fast-check'
import { CaseSkip, defineCase, type ConformanceCase } from '../../../core/case.js'
import { expectEqual, expectOk, expectOrbError, expectThat } from '../../expect.js'
import { channel, controlled, type OrbContext } from '../../orb-case.js'
import type { OrbBotClient } from '../../transport.js'
import {
  DELETE,
  deleteTwice,
  deleteWhileUninstalled,
  expectShown,
  highestId,
  postOk,
  readAll,
  readPage,
  remove
} from './messages-support.js'

/*
 * Deleting (ORB-039..042): the app's own message goes, a member's stays, an uninstalled app's stays, and unknown or
 * malformed ids are refused.
 */

/** A member's (not an app's) message in the text channel: one already there, else (control) one a member posts now. */
async function memberMessage (ctx: OrbContext): Promise<any> {
  const text = channel(ctx, 'text')
  const found = (await readAll(ctx, text, 4)).find((m) => m.author?.bot === false)
  if (found !== undefined) return found
  if (ctx.control === undefined || ctx.client.target.controlled === undefined) {
    throw new CaseSkip(
      `the text channel ${text} holds no member's message, and without the control API no member can post one`
    )
  }
  if (ctx.readOnly) {
    throw new CaseSkip(
      `the text channel ${text} holds no member's message, and --read-only forbids a member posting one`
    )
  }
  const { control, world, target } = controlled(ctx)
  ctx.note("no member's message in the channel: a member posted one through the control API")
  return await control.memberPost({
    server: target.community,
    channel: text,
    member: world.member,
    content: `a member's words ${ctx.uid('m')}`
  })
}

/** The cases of deleting, in the suite's order. */
export const deletingCases: Array<ConformanceCase<OrbBotClient>> = [
  defineCase<OrbBotClient>({
    id: 'ORB-039',
    title: 'DELETE of the app\'s own message answers 200 {ok: true, id} and the message no longer appears in GET /messages',
    level: 'required',
    writes: true,
    async run (ctx) {
      const text = channel(ctx, 'text')
      const mine = await postOk(ctx, text, `to take back ${ctx.uid('d')}`)
      await expectShown(ctx, text, mine.id, 'the message is there before the delete')
      const body = expectOk(await remove(ctx, mine.id), `DELETE /messages/${mine.id}`, DELETE)
      expectEqual(
        { ok: body.ok, id: body.id },
        { ok: true, id: mine.id },
        `DELETE /messages/${mine.id} answers {"ok":true,"id":${mine.id}}`
      )
      const after = await readPage(ctx, text, { before: mine.id + 1, limit: 50 })
      expectThat(
        !after.messages.some((m) => m.id === mine.id),
        `message ${mine.id} is gone from GET /messages`,
        'absent',
        after.messages.map((m) => m.id)
      )
      const latest = await readPage(ctx, text)
      expectThat(
        !latest.messages.some((m) => m.id === mine.id),
        `message ${mine.id} is gone from the newest page`,
        'absent',
        latest.messages.map((m) => m.id)
      )
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
      await expectShown(ctx, text, theirs.id, 'the member\'s message is still there')
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
      const mine = await deleteTwice(ctx, true)
      const top = await highestId(ctx, text, mine.id)
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
  })
]
