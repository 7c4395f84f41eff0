import { CaseFailure, defineCase, type ConformanceCase } from '../../../core/case.js'
import { exactStatus } from '../../../core/strictness.js'
import { expectThat } from '../../expect.js'
import { BOT, DIRECTORY } from '../../orb-case.js'
import type { OrbBotClient, OrbReply } from '../../transport.js'
import { badRequestProperty } from './bad-requests.js'
import { ORB_ERROR_STATUSES } from '../../../../../src/spec/orb.js'
import { expectErrorBody, short } from './access-support.js'

/** ORB-102: the statuses an error may have, read from the operations' responses in the spec document. */
const TABLE = ORB_ERROR_STATUSES

/** Fails unless the reply is an error of one of `statuses`, with the spec's Error body (ORB-101). */
function expectErrorIn (reply: OrbReply, statuses: readonly number[], what: string): void {
  if (!statuses.includes(reply.status)) {
    throw new CaseFailure(
      `${what}: status ${reply.status}`,
      `one of ${statuses.join(', ')} with an Error body`,
      short(reply)
    )
  }
  expectErrorBody(reply, what)
}

/** Errors: their body (ORB-101) and their statuses (ORB-102), for random bad requests across every route. */
export const errorCases: Array<ConformanceCase<OrbBotClient>> = [
  defineCase<OrbBotClient>({
    id: 'ORB-101',
    title: 'every error is {"error": {"message": string, "code": integer}} as JSON: random bad requests, wrong methods, unknown routes',
    level: 'required',
    async run (ctx) {
      await badRequestProperty(ctx, (reply, _request, _allowed, what) => {
        expectThat(reply.status >= 400 && reply.status < 500, `${what}: an error`, 'a 4xx', short(reply))
        expectErrorBody(reply, what)
      })
      for (const [method, path] of [
        ['PATCH', `${BOT}/app`],
        ['POST', DIRECTORY],
        ['GET', `${BOT}/nope`],
        ['GET', '/api/bot/v2/app']
      ]) {
        const reply = await ctx.client.request({ method: method!, path: path! })
        expectThat(reply.status >= 400, `${method!} ${path!}: an error`, '4xx', short(reply))
        expectErrorBody(reply, `${method!} ${path!}`)
      }
    }
  }),

  defineCase<OrbBotClient>({
    id: 'ORB-102',
    title: 'random bad requests across every route answer only the statuses of the table, each as the rule for it says',
    level: 'required',
    async run (ctx) {
      await badRequestProperty(ctx, (reply, request, allowed, what) => {
        if (allowed.decided && !exactStatus(reply)) {
          // The exact status is orbtest's decision; the spec still allows only its table, and no 401 with a token.
          expectErrorIn(reply, TABLE.filter((s) => s !== 401 && s !== 429), what)
          return
        }
        expectErrorIn(reply, allowed.statuses, `${what} (${request.statuses.join('/')} by the rule)`)
      })
    }
  })
]

/** orbtest's decision that error.code is the HTTP status (ORB-A01). */
export const errorDecisions: Array<ConformanceCase<OrbBotClient>> = [
  defineCase<OrbBotClient>({
    id: 'ORB-A01',
    title: 'error.code equals the HTTP status, for random bad requests across every route',
    level: 'decision',
    async run (ctx) {
      await badRequestProperty(ctx, (reply, _request, _allowed, what) => {
        expectErrorBody(reply, what)
        if (reply.json.error.code !== reply.status) throw new CaseFailure(`${what}: error.code ${String(reply.json.error.code)} under status ${reply.status}`, `code ${reply.status}`, short(reply))
      }, 10)
    }
  })
]
