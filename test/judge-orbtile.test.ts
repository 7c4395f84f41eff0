// The Orbtile client checks judged on journals written by hand, at explicit times: each clause held, broken beyond
// doubt (fail for a MUST, non-strict for one that rests on a decision), and broken within the judge's measurement
// error (inconclusive); and the finding read live is the finding read at the end.
import t from 'tap'
import { CheckRun, compareTwins, findingOf, KEPT, Tally } from '../conformance/client/core/check.js'
import type { JournalEntry, Millis } from '../conformance/client/core/journal.js'
import { Serving } from '../conformance/client/core/served.js'
import { CHECKS } from '../conformance/client/orbtile/checks/index.js'
import { EXTRA_FIELDS_NOTE } from '../conformance/client/orbtile/checks/life.js'
import { OrbtileModel } from '../conformance/client/orbtile/model.js'
import { clause, judge, Journal } from './helpers/journal.js'

const DISCOVERY = 'discovery-token-0123456789'
const LEASE = 'adapter-token-0123456789'
const ID = 'com.example.judge'
const HEADERS = { host: 'localhost', 'content-type': 'application/json', authorization: `Bearer ${DISCOVERY}` }
const check = (id: string): (typeof CHECKS)[number] => CHECKS.find((c) => c.id === id)!

/**
 * A model whose judge stalled `lag` ms in every interval (0: a judge always on time), and whose client waited for a
 * CPU `clientWait` ms and was busy (running or waiting) `clientBusy` ms in each.
 */
function model (lag = 0, clientWait = 0, clientBusy = clientWait): OrbtileModel {
  const m = new OrbtileModel(DISCOVERY, Date.now(), () => lag)
  m.clientWait = () => clientWait
  m.clientBusy = () => clientBusy
  return m
}

/** A journal that starts with a registration (its reply at 10 ms gives the lease). */
function registered (): Journal {
  const j = new Journal(HEADERS)
  j.action(0, 'harness', 'start')
  j.exchange({
    method: 'PUT',
    path: `/a/v1/adapters/${ID}`,
    body: { name: 'Judge', palette: { baseHue: 250 }, capabilities: ['approvals', 'questions'] },
    reply: { adapter: { id: ID }, enabled: true, keypadDecisions: true, warnings: [], adapterToken: LEASE },
    at: 5,
    end: 10
  })
  return j
}

const withLease = { 'x-orbtile-adapter-token': LEASE }
const session = (j: Journal, at: Millis, body: Record<string, unknown> = {}, sid = 's1', connection = 1): void => {
  j.exchange({
    path: `/a/v1/adapters/${ID}/sessions/${sid}`,
    headers: withLease,
    body,
    reply: { session: {} },
    at,
    connection
  })
}
const poll = (
  j: Journal, at: Millis, end: Millis, body: Record<string, unknown>, events: unknown[] = [], connection = 2
): void => {
  j.exchange({
    path: `/a/v1/adapters/${ID}/events`,
    headers: withLease,
    body,
    reply: { events, lastSequence: 0, acknowledged: 0 },
    at,
    end,
    connection
  })
}

t.test('OT-113 a gap past ttlSeconds fails; past it by less than the measurement error is inconclusive', async (t) => {
  const gap = (silence: Millis, lag: number): string => {
    const j = registered()
    session(j, 100, { ttlSeconds: 10 })
    session(j, 100 + silence)
    j.action(100 + silence + 1000, 'harness', 'stop')
    return judge(check('OT-113'), model(lag), j.entries, 100 + silence + 1000).verdict
  }
  t.equal(gap(9000, 0), 'pass', 'a heartbeat 9 s after the last, ttlSeconds 10')
  t.equal(gap(11_000, 0), 'fail', '11 s of silence, the judge on time')
  t.equal(gap(11_000, 2000), 'inconclusive', '11 s, but the judge stalled 2 s in between: it may have stamped late')
  const j = registered()
  session(j, 100, { ttlSeconds: 10 })
  j.action(5000, 'harness', 'stop')
  t.equal(judge(check('OT-113'), model(), j.entries, 5000).verdict, 'not-exercised',
    'a session that lived 5 s of its 10')
})

t.test('OT-027 the rate is a MUST; the back-off after a 429 rests on OT-A20 and is non-strict; a request on its way is not judged', async (t) => {
  const refusal = (j: Journal, at: Millis, connection = 1): void => {
    j.exchange({
      path: `/a/v1/adapters/${ID}/sessions/s1`,
      headers: withLease,
      body: {},
      status: 429,
      replyHeaders: { 'retry-after': '2' },
      reply: { error: { code: 'rate_limited' } },
      wire: ['429 injected, Retry-After 2'],
      at,
      end: at + 1,
      connection
    })
  }
  const backoff = (after: Millis, connection: number, wait = 0): string => {
    const j = registered()
    refusal(j, 1000)
    session(j, 1001 + after, {}, 's1', connection)
    return judge(check('OT-027'), model(0, wait), j.entries, 5000).verdict
  }
  t.equal(backoff(2100, 1), 'pass', 'after its Retry-After')
  t.equal(backoff(500, 1), 'non-strict', '0.5 s after Retry-After: 2 on the same connection: OT-A20 broken')
  t.equal(backoff(100, 2), 'inconclusive', '0.1 s after, on another connection: it may have left before the 429 was read')
  t.equal(backoff(500, 2, 600), 'inconclusive', 'on another connection, the client kept 0.6 s from a CPU in between')
  const flood = registered()
  for (let i = 0; i < 90; i++) session(flood, 1000 + i * 5)
  flood.exchange({
    path: `/a/v1/adapters/${ID}/sessions/s1`,
    headers: withLease,
    body: {},
    status: 429,
    replyHeaders: { 'retry-after': '1' },
    reply: { error: { code: 'rate_limited' } },
    at: 1460
  })
  const f = judge(check('OT-027'), model(), flood.entries, 3000)
  t.equal(f.verdict, 'fail', '91 requests in 0.46 s, refused by the app: over 60 + 20·t')
  t.same(clause(f, 'rate').slice(1), [1, 0], 'the rate clause is the one broken')
  const few = registered()
  few.exchange({
    path: `/a/v1/adapters/${ID}/sessions/s1`,
    headers: withLease,
    body: {},
    status: 429,
    replyHeaders: { 'retry-after': '1' },
    reply: { error: { code: 'rate_limited' } },
    at: 1000
  })
  t.equal(judge(check('OT-027'), model(), few.entries, 3000).verdict, 'inconclusive',
    'the app refused, but the journal shows no excess')
})

t.test('OT-134 two polls that overlap fail; an overlap inside the measurement error is inconclusive', async (t) => {
  const overlap = (by: Millis, lag: number): string => {
    const j = registered()
    poll(j, 100, 2100, { after: 0, ack: 0, waitSeconds: 2 })
    poll(j, 2100 - by, 2200, { after: 0, ack: 0, waitSeconds: 0 }, [], 3)
    return judge(check('OT-134'), model(lag), j.entries, 3000).verdict
  }
  t.equal(overlap(-5, 0), 'pass', 'the next poll after the last was answered')
  t.equal(overlap(1000, 0), 'fail', 'a poll sent 1 s before the last was answered')
  t.equal(overlap(20, 100), 'inconclusive', '20 ms of overlap, with the judge 100 ms late')
})

t.test('OT-005 a request refused for a stale token and sent again with it is non-strict (OT-A04), on another connection only past 5 s; another request that has not met the refusal is not judged', async (t) => {
  const NEW = 'discovery-token-after-0123456789'
  const stale = { authorization: `Bearer ${DISCOVERY}` }
  const refusal = { error: { code: 'unauthorized', message: 'the bearer token does not match the discovery file' } }
  const again = (connection: number, at: Millis, path = `/a/v1/adapters/${ID}/sessions/s1`) => (j: Journal): void => {
    j.exchange({ path, headers: { ...stale, ...withLease }, body: {}, status: 401, reply: refusal, at, connection })
  }
  const replay = (then: (j: Journal) => void): { verdict: string, reread: [number, number, number] } => {
    const j = registered()
    j.action(1000, 'app', 'regenerate', { token: NEW })
    again(1, 1100)(j)
    then(j)
    const f = judge(check('OT-005'), model(), j.entries, 5000)
    return { verdict: f.verdict, reread: clause(f, 'reread') }
  }
  t.equal(replay(again(1, 2000)).verdict, 'non-strict', 'the refused request again, with the stale token, on its connection')
  t.equal(replay(again(2, 6200)).verdict, 'non-strict', 'the same on another connection, 5.1 s after')
  t.equal(replay(again(2, 3000)).verdict, 'inconclusive', 'on another connection 1.9 s after: it may have been built before')
  t.equal(replay(again(2, 6200, `/a/v1/adapters/${ID}/sessions/s2`)).verdict, 'not-exercised',
    'another request with the stale token (another thread\'s): it meets the refusal itself')
  const fresh = replay((j) => {
    const headers = { authorization: `Bearer ${NEW}`, ...withLease }
    j.exchange({ path: `/a/v1/adapters/${ID}/sessions/s1`, headers, body: {}, reply: {}, at: 1500, connection: 1 })
  })
  t.same([fresh.verdict, fresh.reread], ['pass', [1, 0, 0]], 'sent again with the token the file holds now')
})

t.test('OT-019 OTC-25 a missing adapter token fails once the adapter surely had it; before anything showed it had, or while it was busy since, on another connection, it may not have', async (t) => {
  const sent = (at: Millis, connection: number, shownAt?: Millis, reused = false, busy = 0): string => {
    const j = registered()
    if (shownAt !== undefined) session(j, shownAt, {}, 's1', 3)
    if (reused) j.exchange({ method: 'GET', path: '/a/v1/info', reply: {}, at: 1000, connection: 1 })
    j.exchange({ path: `/a/v1/adapters/${ID}/sessions/s1`, body: {}, reply: {}, at, connection })
    return judge(check('OT-019'), model(0, 0, busy), j.entries, 3000).verdict
  }
  t.equal(sent(2000, 1), 'fail', 'on the registration\'s own connection, after its reply: it read the reply')
  t.equal(sent(2000, 2, 1000), 'fail', 'on another connection, 2 s after, once a request had carried the token')
  t.equal(sent(2000, 2), 'inconclusive', 'on another connection, and no request had carried the token: the reply may be unread')
  t.equal(sent(100, 2, 50), 'inconclusive', 'on another connection, 50 ms after a request carried the token')
  t.equal(sent(2000, 2, 1000, false, 900), 'inconclusive',
    'on another connection, 1 s after, the adapter busy (running or waiting for a CPU) 0.9 s of it: it may have been built before')
  t.equal(sent(2000, 2, 1000, false, 600), 'fail', 'the same, busy only 0.6 s: it was idle long enough to have sent it')
  t.equal(sent(2000, 2, undefined, true), 'fail',
    'on another connection, once the registration\'s own connection carried another request: its reply was read')
})

t.test('OT-019 a re-registration without the token that the app answers with a new token found no live lease (a restart the journal did not see): not judged; one refused 401 fails', async (t) => {
  const reRegistered = (status: number, reply: unknown): string => {
    const j = registered()
    session(j, 100, {}, 's1', 1)
    const body = { name: 'Judge', palette: { baseHue: 250 } }
    j.exchange({ method: 'PUT', path: `/a/v1/adapters/${ID}`, body, reply, status, at: 5000, connection: 4 })
    return judge(check('OT-019'), model(), j.entries, 6000).verdict
  }
  const fresh = {
    adapter: { id: ID }, enabled: true, keypadDecisions: true, warnings: [], adapterToken: 'adapter-token-new-01234567'
  }
  t.equal(reRegistered(200, fresh), 'pass', 'a new token given: the lease had ended unseen, the adapter had none to send')
  t.equal(reRegistered(200, { ...fresh, adapterToken: LEASE }), 'fail', 'the same token given back: the lease was live')
  const refused = { error: { code: 'unauthorized', message: 'm', field: 'X-Orbtile-Adapter-Token' } }
  t.equal(reRegistered(401, refused), 'fail', 'refused: the lease was live and the token missing')
})

t.test('OT-011 OT-012 a form the spec does not write (a port, a parameter) is non-strict; another value fails', async (t) => {
  const verdict = (id: string, headers: Record<string, string>): string => {
    const j = new Journal({ ...HEADERS, ...headers })
    j.exchange({ method: 'GET', path: '/a/v1/info', reply: {}, at: 5 })
    return judge(check(id), model(), j.entries, 100).verdict
  }
  t.equal(verdict('OT-011', { host: 'LOCALHOST' }), 'pass', 'Host is case-insensitive')
  t.equal(verdict('OT-011', { host: 'localhost:80' }), 'non-strict', 'with a port')
  t.equal(verdict('OT-011', { host: '127.0.0.1' }), 'fail', 'another host')
  t.equal(verdict('OT-012', { 'content-type': 'application/json; charset=utf-8' }), 'pass', 'charset utf-8')
  t.equal(verdict('OT-012', { 'content-type': 'application/json; v=2' }), 'non-strict', 'another parameter')
  t.equal(verdict('OT-012', { 'content-type': 'text/plain' }), 'fail', 'another type')
})

t.test('OT-002 a client that never reached the socket is non-strict (the window is orbtest\'s); malformed bytes fail', async (t) => {
  const j = new Journal()
  j.action(0, 'harness', 'start')
  t.equal(judge(check('OT-002'), model(), j.entries, 12_000).verdict, 'non-strict', 'nothing in 12 s')
  const m = new Journal()
  m.entries.push({ kind: 'malformed', seq: 0, at: 10, connection: 1, reason: 'HPE_INVALID_METHOD', bytes: 'GARBAGE' })
  t.equal(judge(check('OT-002'), model(), m.entries, 100).verdict, 'fail', 'bytes that are not HTTP')
})

t.test('OT-002 OTC-12 an adapter polling when the app moved must reach the new socket: a poll the app cut counts as polling, and so does one open across the move', async (t) => {
  const moved = (polls: Array<[Millis, Millis]>, after?: Millis): number[] => {
    const j = registered()
    const move = 2900
    // The journal files each poll at its end: one cut by the move comes after the move's action.
    for (const [at, end] of polls.filter(([, end]) => end < move)) poll(j, at, end, { after: 0, ack: 0 })
    j.action(move, 'app', 'move', { socketPath: '/run/new.sock' })
    for (const [at, end] of polls.filter(([, end]) => end >= move)) poll(j, at, end, { after: 0, ack: 0 })
    if (after !== undefined) session(j, after)
    j.action(12_000, 'harness', 'stop')
    return clause(judge(check('OT-002'), model(), j.entries, 12_100), 'moved')
  }
  t.same(moved([[100, 1300]]), [1, 1, 0], 'a poll the app ended 1.6 s before it (its lease ended), then nothing: late')
  t.same(moved([[2000, 2905]]), [1, 1, 0], 'a poll open across the move, then nothing: late')
  t.same(moved([[2000, 2905]], 3500), [1, 0, 0], 'a poll open across the move, then a request 0.6 s after it')
  t.same(moved([[100, 300]]), [0, 0, 0], 'the last poll ended 2.6 s before: not known to be polling, not judged')
})

/** A question pending on s2 (id q1) and its decision delivered at `at`, with the picks given. */
function decided (picks: unknown, at: Millis): Journal {
  const j = registered()
  const questions = [{ text: 'Which?', options: [{ label: 'A' }, { label: 'B' }] }]
  session(j, 100, { question: { id: 'q1', questions } }, 's2')
  poll(j, 200, at, { after: 0, ack: 0, waitSeconds: 2 }, [{
    sequence: 1,
    type: 'question',
    sessionId: 's2',
    host: 'h',
    requestId: 'q1',
    picks,
    expiresAt: Date.now() / 1000 + 600
  }])
  return j
}

t.test('OT-139 OT-148 what rests on OTC-01 (the order of an ack against a write) is non-strict, never a failure', async (t) => {
  const ackFirst = decided([[0]], 1000)
  poll(ackFirst, 1005, 3000, { after: 1, ack: 1, waitSeconds: 2 })
  session(ackFirst, 1500, { question: null }, 's2')
  const f = judge(check('OT-139'), model(), ackFirst.entries, 4000)
  t.equal(f.verdict, 'non-strict', 'acknowledged before the write that cleared it')
  const applied = decided([[0]], 1000)
  session(applied, 1002, { question: null }, 's2')
  poll(applied, 1010, 3000, { after: 1, ack: 1, waitSeconds: 2 })
  t.equal(judge(check('OT-139'), model(), applied.entries, 4000).verdict, 'pass', 'applied, then acknowledged')
  const bad = decided([[7]], 1000)
  session(bad, 1002, { question: null }, 's2')
  poll(bad, 1010, 3000, { after: 1, ack: 1, waitSeconds: 2 })
  const b = judge(check('OT-148'), model(), bad.entries, 4000)
  t.equal(b.verdict, 'non-strict', 'tampered picks applied: non-strict, and says why it is not failed')
  t.same(clause(b, 'picks').slice(1), [1, 0])
  const none = decided([[0]], 1000)
  t.equal(judge(check('OT-148'), model(), none.entries, 4000).verdict, 'not-exercised',
    'valid picks: OT-148\'s situation did not arise')
})

t.test('OT-139 OT-147 a request the adapter withdrew before its decision came: discarding and acknowledging it is no ack on receipt', async (t) => {
  const j = registered()
  session(j, 100, { approval: { id: 'a1', toolName: 'Bash', commandSummary: 'ls' } })
  // The withdrawal was sent before the poll's reply, and is filed after it.
  poll(j, 200, 1000, { after: 0, ack: 0, waitSeconds: 2 }, [{
    sequence: 1,
    type: 'approval',
    sessionId: 's1',
    host: 'h',
    requestId: 'a1',
    decision: 'allow',
    expiresAt: Date.now() / 1000 + 600
  }])
  j.exchange({
    path: `/a/v1/adapters/${ID}/sessions/s1`,
    headers: withLease,
    body: { approval: null },
    reply: {},
    at: 990,
    end: 1003
  })
  poll(j, 1010, 3000, { after: 1, ack: 1, waitSeconds: 2 })
  t.equal(judge(check('OT-139'), model(), j.entries, 4000).verdict, 'not-exercised',
    'not OT-139\'s: the decision was stale')
  const f = judge(check('OT-147'), model(), j.entries, 4000)
  t.equal(f.verdict, 'pass', 'OT-147: discarded and acknowledged')
  t.same(clause(f, 'withdrawn'), [1, 0, 0], 'its "no longer pending" clause was exercised')
})

t.test('OT-147 a decision for a withdrawn request applied to the request pending now is non-strict; a stale one never acked too', async (t) => {
  const j = registered()
  session(j, 100, { approval: { id: 'a1', toolName: 'Bash', commandSummary: 'ls' } })
  session(j, 3000, { approval: null })
  session(j, 3300, { approval: { id: 'a2', toolName: 'Bash', commandSummary: 'ls' } })
  poll(j, 3400, 3500, { after: 0, ack: 0, waitSeconds: 2 }, [{
    sequence: 1,
    type: 'approval',
    sessionId: 's1',
    host: 'h',
    requestId: 'a1',
    decision: 'allow',
    expiresAt: Date.now() / 1000 + 600
  }])
  session(j, 3502, { approval: null, activity: 'tool' })
  poll(j, 3510, 5500, { after: 1, ack: 1, waitSeconds: 2 })
  const f = judge(check('OT-147'), model(), j.entries, 6000)
  t.equal(f.verdict, 'non-strict')
  t.same(clause(f, 'withdrawn').slice(1), [1, 0], 'a2 cleared right after a1\'s decision came: applied to it')
  const k = registered()
  session(k, 100, { approval: { id: 'a1', toolName: 'Bash', commandSummary: 'ls' } })
  poll(k, 200, 1000, { after: 0, ack: 0, waitSeconds: 2 }, [{
    sequence: 1,
    type: 'approval',
    sessionId: 's1',
    host: 'h',
    requestId: 'a1',
    decision: 'allow',
    expiresAt: Date.now() / 1000 - 1
  }])
  for (const at of [1001, 2500, 4600]) poll(k, at, at + 2000, { after: 1, ack: 0, waitSeconds: 2 })
  const g = judge(check('OT-147'), model(), k.entries, 7000)
  t.equal(g.verdict, 'non-strict', 'an expired decision never acknowledged')
  t.same(clause(g, 'ack').slice(1), [1, 0])
})

t.test('OT-138 the cursor\'s bounds are MUSTs; a reply the journal files after a later poll is settled at the end', async (t) => {
  const j = registered()
  poll(j, 100, 500, { after: 0, ack: 0, waitSeconds: 2 }, [{ sequence: 1, type: 'tap', sessionId: 's1', host: 'h' }])
  poll(j, 600, 800, { after: 1, ack: 1, waitSeconds: 0 })
  poll(j, 900, 1000, { after: 1, waitSeconds: 0 })
  const f = judge(check('OT-138'), model(), j.entries, 2000)
  t.equal(f.verdict, 'fail', 'ack left out after acknowledging 1: a decrease')
  t.same(clause(f, 'bounds').slice(1), [1, 0])
  const late = registered()
  poll(late, 600, 700, { after: 3, ack: 0, waitSeconds: 0 }, [], 3)
  poll(late, 100, 500, { after: 0, ack: 0, waitSeconds: 2 }, [{ sequence: 3, type: 'tap', sessionId: 's1', host: 'h' }])
  t.equal(judge(check('OT-138'), model(), late.entries, 2000).verdict, 'pass', 'the reply that gave 3 ended before the poll that used it began')
  const past = registered()
  poll(past, 100, 200, { after: 5, ack: 0, waitSeconds: 0 })
  t.equal(judge(check('OT-138'), model(), past.entries, 2000).verdict, 'fail', 'after 5 with nothing received')
})

t.test('OT-138 a cursor of the last lease, refused invalid_cursor under a new one, sets no floor for its ack', async (t) => {
  const j = registered()
  poll(j, 100, 500, { after: 0, ack: 0, waitSeconds: 2 }, [{ sequence: 1, type: 'tap', sessionId: 's1', host: 'h' }])
  poll(j, 600, 700, { after: 1, ack: 1, waitSeconds: 0 })
  j.action(1000, 'app', 'restart', { leasesEnd: true })
  const renewed = 'adapter-token-renewed-0123456789'
  j.exchange({
    method: 'PUT',
    path: `/a/v1/adapters/${ID}`,
    body: { name: 'Judge', palette: { baseHue: 250 }, capabilities: ['approvals'] },
    reply: { adapter: { id: ID }, enabled: true, keypadDecisions: true, warnings: [], adapterToken: renewed },
    at: 1500,
    end: 1510
  })
  const again = (at: Millis, body: Record<string, unknown>, refused: boolean): void => {
    j.exchange({
      path: `/a/v1/adapters/${ID}/events`,
      headers: { 'x-orbtile-adapter-token': renewed },
      body,
      status: refused ? 400 : 200,
      reply: refused
        ? { error: { code: 'invalid_cursor', message: 'after is past the last sequence' } }
        : { events: [], lastSequence: 0, acknowledged: 0 },
      at,
      end: at + 5
    })
  }
  again(1600, { after: 1, ack: 1, waitSeconds: 0 }, true)
  again(1700, { after: 0, ack: 0, waitSeconds: 0 }, false)
  t.same(clause(judge(check('OT-138'), model(), j.entries, 3000), 'bounds'), [4, 0, 0],
    'ack 0 after the refused ack 1: no decrease')
  again(1800, { after: 0, ack: 1, waitSeconds: 0 }, true)
  again(1900, { after: 0, ack: 0, waitSeconds: 0 }, false)
  t.same(clause(judge(check('OT-138'), model(), j.entries, 3000), 'bounds').slice(1), [1, 0],
    'ack 1 above after 0 is refused and breaks the bounds itself')
})

t.test('OT-058 an adapter quiet for its sessions\' ttlSeconds while requests wait for a decision: non-strict (OTC-15 is orbtest\'s)', async (t) => {
  const quiet = (ttlSeconds: number, ...heartbeats: Millis[]): string => {
    const j = registered()
    session(j, 100, { ttlSeconds, approval: { id: 'a1', toolName: 'Bash', commandSummary: 'ls' } })
    for (const at of heartbeats) session(j, at)
    return judge(check('OT-058'), model(), j.entries, 9000).verdict
  }
  t.equal(quiet(5, 3000, 6000, 8500), 'pass', 'a heartbeat every 3 s, with a ttlSeconds of 5')
  t.equal(quiet(5, 1000), 'non-strict', 'nothing from 1 s to 9 s, with a ttlSeconds of 5')
  t.equal(quiet(5, 3000), 'non-strict', 'at work at 3 s, then quiet for 6 s')
  t.equal(quiet(10, 1000), 'not-exercised', 'a wait of 6.9 s past its first 2 s shows no stall next to a ttlSeconds of 10')
  const withdrawn = registered()
  session(withdrawn, 100, { ttlSeconds: 5, approval: { id: 'a1', toolName: 'Bash', commandSummary: 'ls' } })
  session(withdrawn, 3000, { approval: null })
  t.equal(judge(check('OT-058'), model(), withdrawn.entries, 9000).verdict, 'not-exercised',
    'withdrawn by the adapter after 2.9 s: nothing waited 6 s, however quiet it was after')
})

t.test('OT-113 OTC-28 a heartbeat late by no more than the app took to answer the adapter\'s other requests is inconclusive', async (t) => {
  const gap = (heldMs: Millis): string => {
    const j = registered()
    session(j, 100, { ttlSeconds: 10 })
    j.exchange({ method: 'GET', path: '/a/v1/info', reply: {}, at: 4000, end: 4000 + heldMs })
    session(j, 10_500)
    return judge(check('OT-113'), model(), j.entries, 12_000).verdict
  }
  t.equal(gap(600), 'inconclusive', '10.4 s between contacts, 0.6 s of it waiting on a held reply')
  t.equal(gap(100), 'fail', '10.4 s between contacts, 0.1 s of it waiting on the app')
})

t.test('OTC-28 the time served within an interval counts overlapping requests once, and only inside it', async (t) => {
  const s = new Serving()
  s.add(100, 600)
  s.add(300, 900)
  s.add(2000, 2500)
  t.equal(s.within(0, 3000), 1300, '100..900 and 2000..2500')
  t.equal(s.within(500, 2200), 600, '500..900 and 2000..2200')
  t.equal(s.within(1000, 1900), 0, 'nothing in between')
})

t.test('OT-027 a MUST case that comes after more than the kept cases of a decision is still the one a fail cites', async (t) => {
  const tally = new Tally()
  const v = (n: number): { at: Millis, message: string, expected: string, actual: string } =>
    ({ at: n, message: `case ${n}`, expected: 'x', actual: 'y' })
  for (let n = 0; n <= KEPT; n++) tally.violation('backoff', v(n))
  tally.violation('rate', v(99))
  const f = findingOf(check('OT-027'), tally)
  t.equal(f.verdict, 'fail', 'the rate, a MUST, was broken')
  t.equal(f.violations[0]?.clause, 'rate', 'and the first case the finding shows is that one')
  t.equal(f.violations[0]?.message, 'case 99')
})

/** A tour's journal and its twin's, as the engine gives them to OT-008: requests at the times given. */
function played (
  polls: Millis[], exited?: Millis, extra = true, sessions: string[] = []
): { journal: JournalEntry[], ms: number } {
  const j = registered()
  j.exchange({
    method: 'GET',
    path: '/a/v1/info',
    reply: {},
    at: 20,
    end: 21,
    ...(extra ? { wire: [EXTRA_FIELDS_NOTE] } : {})
  })
  for (const at of polls) poll(j, at, at + 100, { after: 0, ack: 0, waitSeconds: 0 })
  sessions.forEach((sid, i) => { session(j, 1500 + 2000 * i, { ttlSeconds: 10 }, sid) })
  if (exited !== undefined) j.action(exited, 'client', 'exit', { how: 'exited' })
  j.action(8000, 'harness', 'stop')
  return { journal: j.entries, ms: 8100 }
}
const report = (
  p: { journal: JournalEntry[], ms: number }
): Parameters<NonNullable<(typeof CHECKS)[number]['compare']>>[0] =>
  ({ name: 'tour:unknown-fields', summary: '', ms: p.ms, exit: '', findings: [], journal: p.journal, dropped: 0 })

t.test('OT-008 judged against the twin: an exit the twin does not make fails; a kind of request the twin keeps making that the variant stops is non-strict (OTC-08\'s bar is orbtest\'s)', async (t) => {
  const compare = (variant: ReturnType<typeof played>, twin: ReturnType<typeof played>): string =>
    compareTwins([check('OT-008')], report(variant), report(twin))[0]!.verdict
  t.equal(compare(played([1000, 3000, 5000]), played([1000, 3000, 5000], undefined, false)), 'pass', 'the same polls')
  t.equal(compare(played([]), played([1000, 3000, 5000], undefined, false)), 'non-strict',
    'no poll after the first unknown field; the twin made three')
  t.equal(compare(played([], undefined, true, ['a', 'b', 'c']), played([], undefined, false, ['x', 'y', 'z'])), 'pass',
    'session updates, under session ids of its own in each run: the same kind')
  t.equal(compare(played([], 500), played([1000, 3000, 5000], undefined, false)), 'fail',
    'an exit the twin did not make')
  t.equal(compare(played([], 500), played([], 500, false)), 'inconclusive', 'both exited')
  const quiet = compareTwins([check('OT-008')], report(played([])), report(played([1000], undefined, false)))[0]!
  t.equal(quiet.verdict, 'pass', 'a twin too quiet to compare with: up as its twin, nothing more to say')
  t.same(clause(quiet, 'same'), [0, 0, 0], 'the clause about recurring requests not exercised')
  t.match(quiet.note ?? '', /too few in the twin \(1\) to compare/, 'and the note says so')
})

t.test('CLIENT-13 a finding read live is the finding read at the end: judging what is open changes nothing', async (t) => {
  const j = decided([[7]], 1000)
  session(j, 1002, { question: null }, 's2')
  const m = model()
  const runs = CHECKS.filter((c) => c.compare === undefined).map((c) => new CheckRun(c))
  for (const e of j.entries) {
    m.observe(e)
    for (const r of runs) r.observe(e, m)
    const live = runs.map((r) => r.finding(m, e.at))
    t.same(runs.map((r) => r.finding(m, e.at)), live, `after entry #${e.seq}: read twice, the same`)
  }
  const fresh = CHECKS.filter((c) => c.compare === undefined).map((c) => new CheckRun(c))
  const again = model()
  for (const e of j.entries) {
    again.observe(e)
    for (const r of fresh) r.observe(e, again)
  }
  t.same(runs.map((r) => r.finding(m, 5000)), fresh.map((r) => r.finding(again, 5000)),
    'read live all along or only at the end: the same findings')
})

t.test('OT-039 a nonce sent again after a 429 that no proof answered is no reuse; one a proof answered is', async (t) => {
  const nonce = (first: number): string => {
    const j = new Journal(HEADERS)
    const info = (at: Millis, status: number): void => {
      const reply = status === 200 ? { proof: 'p' } : { error: { code: 'rate_limited' } }
      const headers = { 'x-orbtile-nonce': '0123456789abcdef' }
      j.exchange({ method: 'GET', path: '/a/v1/info', headers, status, reply, at })
    }
    info(10, first)
    info(2000, 200)
    return judge(check('OT-039'), model(), j.entries, 3000).verdict
  }
  t.equal(nonce(429), 'pass', 'refused before the app saw it, then sent again')
  t.equal(nonce(200), 'fail', 'answered with a proof, then sent again')
})

t.test('OT-081 judges the adapter\'s own baseHue, not the user\'s override the reply echoes', async (t) => {
  const j = new Journal(HEADERS)
  j.exchange({
    method: 'PUT',
    path: `/a/v1/adapters/${ID}`,
    body: { name: 'Judge', palette: { baseHue: 150, attentionHue: 330 } },
    reply: { adapter: { id: ID, resolvedBaseHue: 300 }, adapterToken: LEASE },
    at: 5
  })
  t.equal(judge(check('OT-081'), model(), j.entries, 100).verdict, 'pass',
    'baseHue 150 is calm; the override to 300 is the user\'s')
})
