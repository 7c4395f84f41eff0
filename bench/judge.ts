// The `--judge` observer on its own, without a fake or a socket: CPU per exchange to journal and judge a stream of
// session heartbeats with every check `--judge` runs, against the same stream with no check at all (the journal, the
// model and the views only), in the same run.
import { Observer } from '../conformance/orbtile-client/observer.js'
import { CHECKS } from '../conformance/orbtile-client/checks/index.js'
import { JUDGE_FIRST, JUDGE_KEEP, SCENARIO_ONLY } from '../conformance/orbtile-client/judge.js'
import type { TapExchange } from '../src/orbtile-mock/index.js'

const TOKEN = 'd'.repeat(43)
const LEASE = 'l'.repeat(43)
const TARGET = '/a/v1/adapters/com.bench.agent'

function exchange (request: number, register: boolean): TapExchange {
  const body = register
    ? '{"name":"Bench","palette":{"baseHue":250},"capabilities":["tap"]}'
    : '{"activity":"tool","toolLabel":"npm test","statusDetail":"running"}'
  return {
    request,
    connection: 1 + (request % 10),
    method: register ? 'PUT' : 'POST',
    target: register ? TARGET : `${TARGET}/sessions/s1`,
    httpVersion: '1.1',
    headers: {
      host: 'localhost',
      authorization: `Bearer ${TOKEN}`,
      'x-orbtile-adapter-token': LEASE,
      'content-type': 'application/json',
      'content-length': String(body.length)
    },
    body: Buffer.from(body),
    parsedBody: JSON.parse(body) as unknown,
    contentLength: body.length,
    status: 200,
    replyHeaders: { 'content-type': 'application/json; charset=utf-8' },
    reply: register
      ? `{"adapter":{"id":"com.bench.agent"},"enabled":true,"keypadDecisions":false,"warnings":[],"adapterToken":"${LEASE}"}`
      : '{"session":{"id":"s1","activity":"tool","title":"Bench","ttlSeconds":3600}}',
    finished: true,
    notes: []
  }
}

/** µs per heartbeat through an observer with the given checks, over `n` heartbeats after a registration. */
export function perExchange (only: readonly string[], n: number): number {
  const o = new Observer(TOKEN, { keep: JUDGE_KEEP, first: JUDGE_FIRST, only })
  o.started(0)
  o.sent(0)
  o.exchange(exchange(0, true))
  const pool = Array.from({ length: 1000 }, (_, i) => exchange(i + 1, false))
  const t0 = performance.now()
  for (let i = 1; i <= n; i++) {
    const x = pool[i % 1000]!
    x.request = i
    o.started(i)
    o.sent(i)
    o.exchange(x)
  }
  return ((performance.now() - t0) * 1000) / n
}

export function judgeAlone (n = 200_000): { checks: number, none: number } {
  const judged = CHECKS.map((c) => c.id).filter((id) => !SCENARIO_ONLY.includes(id))
  perExchange(judged, n / 4) // warm-up
  return { checks: perExchange(judged, n), none: perExchange([], n) }
}
