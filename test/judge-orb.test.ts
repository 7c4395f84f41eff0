// The bot checks judged on journals written by hand, at explicit times: each clause held, broken beyond doubt, and
// broken within what the judge cannot be sure of.
import t from 'tap'
import { compareTwins } from '../conformance/client/check.js'
import type { JournalEntry, Millis } from '../conformance/client/journal.js'
import { ORB_CLIENT_CHECKS } from '../conformance/orb-client/checks.js'
import { OrbModel } from '../conformance/orb-client/model.js'
import { clause, judge, Journal } from './helpers/journal.js'

const TOKEN = 'orb-app-token-0123456789'
const AUTH = { authorization: `Bearer ${TOKEN}` }
const check = (id: string): (typeof ORB_CLIENT_CHECKS)[number] => ORB_CLIENT_CHECKS.find((c) => c.id === id)!

function model (lag = 0): OrbModel {
  return new OrbModel(TOKEN, new Map([['ch_general', { kind: 'text', readOnly: false }]]), Date.now(), () => lag)
}

const command = (id: string, cursor: number): Record<string, unknown> =>
  ({ id, type: 'application_command', cursor, channel: 'ch_general', data: { invoked_at: Date.now() } })
const fetch = (j: Journal, at: Millis, end: Millis, after: number, events: unknown[], next: number): void => {
  const path = `/api/bot/v1/events?after=${after}&wait=25`
  j.exchange({ method: 'GET', path, headers: AUTH, reply: { events, next }, at, end })
}
const respond = (j: Journal, at: Millis, event: string, status = 200, connection = 1): void => {
  const path = `/api/bot/v1/interactions/${event}/respond`
  j.exchange({ path, headers: AUTH, body: { content: 'pong' }, status, reply: {}, at, end: at + 2, connection })
}
type Extra = Partial<Parameters<Journal['exchange']>[0]>
const post = (j: Journal, at: Millis, content: string, extra: Extra = {}): void => {
  const body = { channel: 'ch_general', content }
  j.exchange({ path: '/api/bot/v1/messages', headers: AUTH, body, reply: {}, at, ...extra })
}

t.test('ORB-048 a fetch\'s own reply is no cursor given before it, however soon it came; after past every next fails', async (t) => {
  const j = new Journal()
  j.action(0, 'harness', 'bot-start')
  fetch(j, 100, 500, 0, [command('e1', 1)], 1)
  fetch(j, 600, 600, 1, [command('e2', 2)], 2)
  t.equal(judge(check('ORB-048'), model(), j.entries, 2000).verdict, 'pass', 'after=1, the next of the reply before it')
  const past = new Journal()
  past.action(0, 'harness', 'bot-start')
  fetch(past, 100, 500, 0, [command('e1', 1)], 1)
  fetch(past, 600, 700, 6, [], 6)
  const f = judge(check('ORB-048'), model(), past.entries, 2000)
  t.equal(f.verdict, 'fail')
  t.same(clause(f, 'past').slice(1), [1, 0], 'after=6 with nothing past 1 given')
})

t.test('ORB-048 a command answered again: by the same process fails; by a later one fails, unless the first was killed just after its answer', async (t) => {
  const twice = (killAfter: Millis | undefined, lag = 0): string => {
    const j = new Journal()
    j.action(0, 'harness', 'bot-start')
    fetch(j, 100, 500, 0, [command('e1', 1)], 1)
    respond(j, 510, 'e1')
    if (killAfter !== undefined) j.action(512 + killAfter, 'harness', 'bot-start')
    respond(j, 3000, 'e1', 409)
    return judge(check('ORB-048'), model(lag), j.entries, 5000).verdict
  }
  t.equal(twice(undefined), 'fail', 'answered twice by one process')
  t.equal(twice(2000), 'fail', 'killed 2 s after its answer came back, and answered again by the next process')
  t.equal(twice(50), 'inconclusive', 'killed 50 ms after its answer came back: it may not have noted it')
})

t.test('ORB-100 a call again before Retry-After fails on the same connection; on another, so soon, it may have been on its way', async (t) => {
  const again = (after: Millis, connection: number): string => {
    const j = new Journal()
    post(j, 1000, 'a', { status: 429, replyHeaders: { 'retry-after': '3' }, end: 1001 })
    post(j, 1001 + after, 'b', { connection })
    return judge(check('ORB-100'), model(), j.entries, 6000).verdict
  }
  t.equal(again(3100, 1), 'pass', 'after its Retry-After')
  t.equal(again(500, 1), 'fail', '0.5 s after Retry-After: 3, same connection')
  t.equal(again(100, 2), 'inconclusive', '0.1 s after, another connection')
  t.equal(again(1500, 2), 'fail', '1.5 s after, another connection: no longer on its way')
})

t.test('ORB-071 an answer late by the judge\'s own stall is inconclusive; a fallback post counts, whatever Orb answered it', async (t) => {
  const late = (ms: Millis, lag: number): string => {
    const j = new Journal()
    j.action(0, 'harness', 'bot-start')
    fetch(j, 100, 500, 0, [command('e1', 1)], 1)
    respond(j, 500 + ms, 'e1')
    return judge(check('ORB-071'), model(lag), j.entries, 20_000).verdict
  }
  t.equal(late(5000, 0), 'pass', 'answered 5 s after the bot had it')
  t.equal(late(7000, 0), 'fail', '7 s after')
  t.equal(late(6300, 500), 'inconclusive', '6.3 s after, with the judge 0.5 s late')
  const gone = new Journal()
  gone.action(0, 'harness', 'bot-start')
  fetch(gone, 100, 500, 0, [command('e1', 1)], 1)
  respond(gone, 7000, 'e1', 410)
  post(gone, 7030, 'pong', { status: 403 })
  const f = judge(check('ORB-071'), model(), gone.entries, 20_000)
  t.same(clause(f, 'fallback'), [1, 0, 0], 'the post after the 410, refused 403 for a missing scope, is the fallback')
})

t.test('ORB-036 judged against the twin: an exit after the encrypted mention that the twin given it in clear does not make fails', async (t) => {
  const played = (encrypted: boolean, exits: boolean): { journal: JournalEntry[], ms: number } => {
    const j = new Journal()
    j.action(0, 'harness', 'bot-start')
    j.action(1500, 'user', 'mention', { encrypted })
    if (exits) j.action(1600, 'client', 'exit', { how: 'exited' })
    return { journal: j.entries, ms: 6000 }
  }
  const report = (p: { journal: JournalEntry[], ms: number }): Parameters<typeof compareTwins>[1] =>
    ({ name: 'tour:encrypted', summary: '', ms: p.ms, exit: '', findings: [], journal: p.journal, dropped: 0 })
  const verdict = (variant: boolean, twin: boolean): string =>
    compareTwins([check('ORB-036')], report(played(true, variant)), report(played(false, twin)))[0]!.verdict
  t.equal(verdict(false, false), 'pass', 'both up')
  t.equal(verdict(true, false), 'fail', 'the variant exits, the twin does not')
  t.equal(verdict(true, true), 'inconclusive', 'both exit: body null is not what shows')
})

t.test('OBC-06 a bot killed after the stop grace is non-strict: the spec sets no time to stop', async (t) => {
  const j = new Journal()
  j.action(9000, 'client', 'exit', { how: 'killed' })
  t.equal(judge(check('OBC-06'), model(), j.entries, 9000).verdict, 'non-strict')
})
