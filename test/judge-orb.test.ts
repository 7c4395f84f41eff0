// The bot checks judged on journals written by hand, at explicit times: each clause held, broken beyond doubt, and
// broken within what the judge cannot be sure of.
import t from 'tap'
import { compareTwins } from '../conformance/client/core/check.js'
import type { JournalEntry, Millis } from '../conformance/client/core/journal.js'
import { ORB_CLIENT_CHECKS } from '../conformance/client/orb/checks.js'
import { OrbModel } from '../conformance/client/orb/model.js'
import { clause, judge, Journal } from './helpers/journal.js'

const TOKEN = 'orb-app-token-0123456789'
const AUTH = { authorization: `Bearer ${TOKEN}` }
const check = (id: string): (typeof ORB_CLIENT_CHECKS)[number] => ORB_CLIENT_CHECKS.find((c) => c.id === id)!

/** A model whose judge stalled: `lag` its longest stall, `stalled` every stall summed (one stall by default). */
function model (lag = 0, stalled = lag): OrbModel {
  const channels = new Map([['ch_general', { kind: 'text' as const, readOnly: false }]])
  return new OrbModel(TOKEN, channels, Date.now(), () => lag, () => stalled)
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

t.test('ORB-048 a reply that ended after its asker was killed reached no one: the next process may fetch from its own saved cursor', async (t) => {
  const restart = (killed: boolean): string => {
    const j = new Journal()
    j.action(0, 'harness', 'bot-start')
    fetch(j, 100, 500, 0, [command('e1', 1)], 1)
    respond(j, 510, 'e1')
    if (killed) j.action(1000, 'harness', 'kill')
    if (killed) j.action(1200, 'harness', 'bot-start')
    // The poll's bytes reach the fake just after the kill, and its reply ends after the next process started.
    fetch(j, 1001, 2000, 1, [command('e2', 2)], 2)
    fetch(j, 2100, 2200, 1, [command('e2', 2)], 2)
    return judge(check('ORB-048'), model(), j.entries, 3000).verdict
  }
  t.equal(restart(true), 'pass', 'after=1 again: the reply that gave 2 went to a killed process')
  t.equal(restart(false), 'fail', 'no kill: the process that was given 2 fetched after=1')
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

t.test('ORB-048 a second answer on another connection is a retry unless the bot surely read the first reply', async (t) => {
  const again = (then: (j: Journal) => void): string => {
    const j = new Journal()
    j.action(0, 'harness', 'bot-start')
    fetch(j, 100, 500, 0, [command('e1', 1)], 1)
    respond(j, 510, 'e1', 200, 2)
    then(j)
    return judge(check('ORB-048'), model(), j.entries, 9000).verdict
  }
  t.equal(again((j) => respond(j, 5600, 'e1', 409, 3)), 'inconclusive',
    'sent again on a new connection, the first connection never used again: it may have timed out')
  t.equal(again((j) => respond(j, 5600, 'e1', 409, 2)), 'fail',
    'sent again on the connection that carried the first reply')
  t.equal(again((j) => {
    post(j, 1000, 'hello', { connection: 2 })
    respond(j, 5600, 'e1', 409, 3)
  }), 'fail', 'the first connection carried another request: its reply was read')
  t.equal(again((j) => {
    const path = '/api/bot/v1/events?after=1&wait=25'
    const wire = ['an event delivered before, delivered again']
    const reply = { events: [command('e1', 1)], next: 1 }
    j.exchange({ method: 'GET', path, headers: AUTH, reply, at: 2000, end: 2100, wire })
    respond(j, 2200, 'e1', 409, 3)
  }), 'fail', 'answered again after the event was delivered again')
})

t.test('ORB-100 the same call again before Retry-After fails on the 429\'s connection; on another it may have left before the 429 was read; another call is no retry', async (t) => {
  const again = (after: Millis, connection: number, content = 'a'): string => {
    const j = new Journal()
    post(j, 1000, 'a', { status: 429, replyHeaders: { 'retry-after': '3' }, end: 1001 })
    post(j, 1001 + after, content, { connection })
    return judge(check('ORB-100'), model(), j.entries, 6000).verdict
  }
  t.equal(again(3100, 1), 'pass', 'after its Retry-After')
  t.equal(again(500, 1), 'fail', '0.5 s after Retry-After: 3, same connection')
  t.equal(again(100, 2), 'inconclusive', '0.1 s after, another connection')
  t.equal(again(1500, 2), 'inconclusive', '1.5 s after, another connection: it may have left before the 429 was read')
  t.equal(again(500, 1, 'b'), 'not-exercised', 'another post 0.5 s after, same connection: a new call, not that one')
  const j = new Journal()
  post(j, 1000, 'a', { status: 429, replyHeaders: { 'retry-after': '3' }, end: 1001 })
  post(j, 1200, 'a', { connection: 2 })
  post(j, 1600, 'a', { connection: 1 })
  t.same(clause(judge(check('ORB-100'), model(), j.entries, 6000), 'wait').slice(1), [1, 1],
    'one on another connection is not settled, and the call stays closed: the next, on the 429\'s own, fails')
})

t.test('ORB-071 ORB-A14 an answer past 6 s is non-strict (the spec says about 6 s), inconclusive when late by the judge\'s own stall; a fallback post counts, whatever Orb answered it', async (t) => {
  const late = (ms: Millis, lag: number): string => {
    const j = new Journal()
    j.action(0, 'harness', 'bot-start')
    fetch(j, 100, 500, 0, [command('e1', 1)], 1)
    respond(j, 500 + ms, 'e1')
    return judge(check('ORB-071'), model(lag), j.entries, 20_000).verdict
  }
  t.equal(late(5000, 0), 'pass', 'answered 5 s after the bot had it')
  t.equal(late(7000, 0), 'non-strict', '7 s after: exactly 6 s is orbtest\'s')
  t.equal(late(6300, 500), 'inconclusive', '6.3 s after, with the judge 0.5 s late')
  const gone = new Journal()
  gone.action(0, 'harness', 'bot-start')
  fetch(gone, 100, 500, 0, [command('e1', 1)], 1)
  respond(gone, 7000, 'e1', 410)
  post(gone, 7030, 'pong', { status: 403 })
  const f = judge(check('ORB-071'), model(), gone.entries, 20_000)
  t.same(clause(f, 'fallback'), [1, 0, 0], 'the post after the 410, refused 403 for a missing scope, is the fallback')
})

t.test('ORB-071 OBC-16 an answer late by no more than Orb took to answer the bot\'s own calls is inconclusive', async (t) => {
  const late = (passportMs: Millis): string => {
    const j = new Journal()
    j.action(0, 'harness', 'bot-start')
    fetch(j, 100, 500, 0, [command('e1', 1)], 1)
    const path = '/api/bot/v1/passport/0xabc'
    j.exchange({ method: 'GET', path, headers: AUTH, reply: {}, at: 600, end: 600 + passportMs })
    respond(j, 7000, 'e1')
    return judge(check('ORB-071'), model(), j.entries, 20_000).verdict
  }
  t.equal(late(1000), 'inconclusive', '6.5 s after, 1 s of it waiting on Orb\'s passport reply')
  t.equal(late(100), 'non-strict', '6.5 s after, 0.1 s of it waiting on Orb')
})

t.test('ORB-097 ORB-095 a delivery the suite stopped waiting for: a typed command late beyond doubt fails; another event, or a forgery\'s refusal, is not seen', async (t) => {
  type Verdicts = { notice: string, refuse: string }
  const delivered = (data: Record<string, unknown>, lag = 0, stopAt?: Millis, stalled = lag): Verdicts => {
    const j = new Journal()
    j.action(0, 'harness', 'bot-start')
    j.action(1000, 'wire', 'delivery-sent', { eventId: 'evt_1', marks: ['evt_1'], ...data })
    if (stopAt !== undefined) j.action(stopAt, 'harness', 'stop')
    j.action(1000 + Number(data.ms), 'wire', 'delivery', { event: { id: 'evt_1' }, sentAt: 1000, ...data })
    return {
      notice: judge(check('ORB-097'), model(lag, stalled), j.entries, 20_000).verdict,
      refuse: clause(judge(check('ORB-095'), model(lag, stalled), j.entries, 20_000), 'refuse').join()
    }
  }
  const timeout = { error: 'no complete reply within 5000 ms', ms: 5010 }
  const command = { genuine: true, kind: 'genuine', type: 'application_command' }
  t.equal(delivered({ ...command, ...timeout }).notice, 'fail', 'a typed command unanswered after 5 s: past its 4 s')
  t.equal(delivered({ ...command, ...timeout }, 1500).notice, 'inconclusive', 'the same, with the judge 1.5 s late')
  const hangUp = { error: 'socket hang up', ms: 1020 }
  t.equal(delivered({ ...command, ...hangUp }).notice, 'fail', 'the connection closed with no reply')
  t.equal(delivered({ ...command, ...hangUp }, 0, 2000).notice, 'inconclusive',
    'the connection closed with no reply as the bot was stopped, 1 s into its 4 s')
  t.equal(delivered({ ...command, error: 'socket hang up', ms: 4500 }, 0, 5400).notice, 'fail',
    'the connection closed with no reply as the bot was stopped, 4.5 s after the command was sent')
  t.equal(delivered({ ...command, error: 'connect ECONNREFUSED 127.0.0.1:3000', ms: 4500 }, 0, 5400).notice,
    'inconclusive', 'refused as the bot was stopped: it never had the command')
  t.equal(delivered({ ...command, status: 200, notice: true, ms: 4100 }, 200).notice, 'inconclusive',
    'a notice 0.1 s past 4 s, with the judge 0.2 s late')
  t.equal(delivered({ ...command, status: 200, notice: true, ms: 4600 }, 300, undefined, 900).notice, 'inconclusive',
    'a notice 0.6 s past 4 s while the judge stalled 0.9 s in all (0.3 s at most at once), no write seen: every stall counts')
  t.equal(delivered({ ...command, status: 200, notice: true, ms: 4600 }, 300, undefined, 500).notice, 'fail',
    'the same with 0.5 s of stalls in all: late beyond them')
  t.equal(delivered({ ...command, status: 200, notice: false, ms: 100 }).notice, 'fail',
    'a 2xx without a notice, in time')
  t.equal(delivered({ genuine: true, kind: 'genuine', type: 'message.mention', ...timeout }).notice, 'inconclusive',
    'a mention unanswered within the suite\'s 5 s: the spec gives it 10')
  t.equal(delivered({ genuine: false, kind: 'unsigned', type: 'message.mention', ...timeout }).refuse, '0,0,1',
    'a forgery unanswered within 5 s: its refusal is not seen')
  t.equal(delivered({ genuine: false, kind: 'unsigned', type: 'message.mention', status: 200, ms: 10 }).refuse, '0,1,0',
    'a forgery answered 200')
})

t.test('ORB-097 a delivery\'s trip: every stall of the judge until the request was written, then its longest until the reply', async (t) => {
  // The judge stalled 300 ms three times: once before the request was written whole (at 1400), twice after.
  const stalls = [[1050, 1350], [2000, 2300], [3000, 3300]] as const
  const overlap = (from: Millis, to: Millis): number[] =>
    stalls.map(([a, b]) => Math.max(0, Math.min(b, to) - Math.max(a, from)))
  const judged = (ms: number, writtenAt?: Millis): string => {
    const j = new Journal()
    j.action(0, 'harness', 'bot-start')
    const data = { genuine: true, kind: 'genuine', type: 'application_command', status: 200, notice: true, ms }
    j.action(1000, 'wire', 'delivery-sent', { eventId: 'evt_1', marks: ['evt_1'], ...data })
    const written = writtenAt === undefined ? {} : { writtenAt }
    j.action(1000 + ms, 'wire', 'delivery', { event: { id: 'evt_1' }, sentAt: 1000, ...data, ...written })
    const channels = new Map([['ch_general', { kind: 'text' as const, readOnly: false }]])
    const m = new OrbModel(TOKEN, channels, Date.now(), (a, b) => Math.max(0, ...overlap(a, b)),
      (a, b) => overlap(a, b).reduce((x, y) => x + y, 0))
    return judge(check('ORB-097'), m, j.entries, 20_000).verdict
  }
  t.equal(judged(4500, 1400), 'inconclusive', '0.5 s late: within the 0.3 s before the write and the 0.3 s after')
  t.equal(judged(4700, 1400), 'fail', '0.7 s late: beyond them (the two stalls after the write delayed one read at most)')
  t.equal(judged(4700), 'inconclusive', 'the same with no write seen: every stall of the trip counts (0.9 s)')
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
