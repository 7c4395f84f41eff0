import fc from 'fast-check'
import { defineCase, type ConformanceCase } from '../../../core/case.js'
import { expectOk, expectOrbError, expectThat } from '../../expect.js'
import { channel } from '../../orb-case.js'
import type { OrbBotClient } from '../../transport.js'
import { POST, anyCase, postBudget, readPage, remove, send } from './messages-support.js'

/*
 * Refused posts (ORB-026, ORB-028..030): @everyone in any form, and channels the app may not post to (voice,
 * read-only, off the allow-list, hidden). A refused post leaves nothing to clean.
 */

/** Harmless words around a mention (never a slash at a line start, never `everyone`). */
const words = fc
  .array(fc.constantFrom('hi', 'team', 'update', 'ok', '🚀', 'today', 'read this', 'ünïcode'), { maxLength: 3 })
  .map((w) => w.join(' '))
/** What stands before a mention: the start, or words and a separator that is not a word character. */
const lead = fc
  .tuple(words, fc.constantFrom(' ', '\n', ' (', ': ', ' "', '\n> ', ' *', ', '))
  .map(([w, sep]) => (w === '' ? sep.trimStart() : `${w}${sep}`))
/** What follows: the end, punctuation or white space, then maybe words. */
const trail = fc
  .tuple(fc.constantFrom('', ' ', '!', '?', ',', '.', ')', '\n', '"', '*', ':'), words)
  .map(([p, w]) => (w === '' ? p : `${p}${/\s$/.test(p) ? '' : ' '}${w}`))
/** ORB-026: `@everyone` as a token of its own, in any case, anywhere in the content. */
const everyoneContent = fc.tuple(lead, anyCase('everyone'), trail).map(([a, word, b]) => `${a}@${word}${b}`)
const hereContent = fc.tuple(lead, anyCase('here'), trail).map(([a, word, b]) => `${a}@${word}${b}`)

/** The cases of refused posts, in the suite's order. */
export const refusedPostCases: Array<ConformanceCase<OrbBotClient>> = [
  defineCase<OrbBotClient>({
    id: 'ORB-026',
    title: 'content with @everyone, in any case and anywhere, is refused; @here is accepted',
    level: 'required',
    writes: true,
    async run (ctx) {
      const text = channel(ctx, 'text')
      const content = fc.oneof(
        { weight: 4, arbitrary: everyoneContent.map((c) => ({ everyone: true, c })) },
        { weight: 1, arbitrary: hereContent.map((c) => ({ everyone: false, c })) }
      )
      // Refused posts cost no window slot (ORB-A03); on a real clock the accepted @here posts are few (ORB-031).
      const virtual = await ctx.virtualTime()
      const budget = postBudget(virtual, 3)
      let refused = 0
      let here = 0
      await fc.assert(
        fc.asyncProperty(content, async ({ everyone, c }) => {
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
        }),
        virtual ? ctx.fc() : ctx.fc({ endOnFailure: true })
      )
      // The plainest form, whatever the generator drew.
      expectOrbError(await send(ctx, { channel: text, content: '@everyone' }), 403, 'POST /messages "@everyone"', {
        decided: true
      })
      ctx.note(
        `${refused} generated @everyone posts refused, ${here} @here posts accepted${virtual ? '' : ` (real clock: at most ${budget})`}`
      )
    }
  }),

  defineCase<OrbBotClient>({
    id: 'ORB-028',
    title: 'text posted to a voice channel is refused',
    level: 'required',
    writes: true,
    async run (ctx) {
      const voice = channel(ctx, 'voice')
      expectOrbError(
        await send(ctx, { channel: voice, content: `into the voice channel ${ctx.uid('v')}` }),
        400,
        `POST /messages to voice channel ${voice}`,
        { decided: true }
      )
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
      expectOrbError(
        await send(ctx, { channel: readOnly, content }),
        403,
        `POST /messages to read-only channel ${readOnly}`,
        { decided: true }
      )
      const page = await readPage(ctx, readOnly)
      expectThat(
        !page.messages.some((m) => m.body === content),
        'the refused post is not in the read-only channel',
        'no such message',
        page.messages.slice(-3)
      )
    }
  }),

  defineCase<OrbBotClient>({
    id: 'ORB-030',
    title: "posting to a channel left out of the app's allow-list is 403",
    level: 'required',
    writes: true,
    async run (ctx) {
      const outside = channel(ctx, 'outsideAllowList')
      expectOrbError(
        await send(ctx, { channel: outside, content: `outside ${ctx.uid('o')}` }),
        403,
        `POST /messages to ${outside}, not on the allow-list`
      )
      // ORB-009: a channel hidden from the app's role is out of reach too (the status is ORB-A02's).
      const hidden = ctx.client.target.channels.hidden
      if (hidden !== undefined) {
        expectOrbError(
          await send(ctx, { channel: hidden, content: `hidden ${ctx.uid('o')}` }),
          403,
          `POST /messages to ${hidden}, hidden from the app's role`,
          { decided: true }
        )
      }
    }
  })
]
