// The `--judge` observer on its own, without a fake or a socket: CPU per exchange to journal and judge a stream of
// session heartbeats with every check `--judge` runs, against the same stream with no check at all (the journal, the
// model and the views only), in the same run. Each exchange is made afresh from bytes, as Node's parser and the fake
// make theirs (new strings, new header objects, a new body): a stream of one object reused would measure warm
// hashes and caches that a real run never has.
import { Observer } from '../conformance/client/orbtile/observer.js'
import { CHECKS } from '../conformance/client/orbtile/checks/index.js'
import { JUDGE_FIRST, JUDGE_KEEP, SCENARIO_ONLY } from '../conformance/client/orbtile/judge.js'
import type { TapExchange } from '../src/orbtile-mock/index.js'

const TOKEN = 'd'.repeat(43)
const LEASE = 'l'.repeat(43)
const TARGET = '/a/v1/adapters/com.bench.agent'
const REGISTRATION = '{"name":"Bench","palette":{"baseHue":250},"capabilities":["tap"]}'
const HEARTBEAT = '{"activity":"tool","toolLabel":"npm test","statusDetail":"running"}'

/** Text made anew from bytes: a string no one has hashed or compared yet. */
const fresh = (bytes: Buffer): string => bytes.toString('latin1')
const bytesOf = (text: string): Buffer => Buffer.from(text, 'latin1')

const WIRE = {
  host: bytesOf('localhost'),
  authorization: bytesOf(`Bearer ${TOKEN}`),
  lease: bytesOf(LEASE),
  type: bytesOf('application/json'),
  registerTarget: bytesOf(TARGET),
  sessionTarget: bytesOf(`${TARGET}/sessions/s1`),
  registration: bytesOf(REGISTRATION),
  heartbeat: bytesOf(HEARTBEAT),
  registered: bytesOf(`{"adapter":{"id":"com.bench.agent"},"enabled":true,"keypadDecisions":false,"warnings":[],"adapterToken":"${LEASE}"}`),
  updated: bytesOf('{"session":{"id":"s1","activity":"tool","title":"Bench","ttlSeconds":3600}}')
}

function exchange (request: number, register: boolean, at: number): TapExchange {
  const bytes = register ? WIRE.registration : WIRE.heartbeat
  const body = Buffer.from(bytes)
  return {
    request,
    connection: 1 + (request % 10),
    method: register ? 'PUT' : 'POST',
    target: fresh(register ? WIRE.registerTarget : WIRE.sessionTarget),
    httpVersion: '1.1',
    headers: {
      host: fresh(WIRE.host),
      authorization: fresh(WIRE.authorization),
      'x-orbtile-adapter-token': fresh(WIRE.lease),
      'content-type': fresh(WIRE.type),
      'content-length': String(bytes.length)
    },
    body,
    parsedBody: JSON.parse(body.toString('utf8')) as unknown,
    contentLength: bytes.length,
    status: 200,
    replyHeaders: { 'content-type': 'application/json; charset=utf-8', 'content-length': String(WIRE.updated.length) },
    reply: fresh(register ? WIRE.registered : WIRE.updated),
    finished: true,
    notes: [],
    startedAt: at,
    sentAt: at
  }
}

/**
 * µs per heartbeat through an observer with the given checks, over `n` heartbeats after a registration. Making each
 * exchange is timed apart and taken out.
 */
export function perExchange (only: readonly string[], n: number): number {
  const o = new Observer(TOKEN, { keep: JUDGE_KEEP, first: JUDGE_FIRST, only })
  o.exchange(exchange(0, true, o.now()))
  const batch = 1000
  let judging = 0
  for (let done = 0; done < n; done += batch) {
    const at = o.now()
    const made = Array.from({ length: batch }, (_, i) => exchange(done + i + 1, false, at))
    const t0 = performance.now()
    for (const x of made) o.exchange(x)
    judging += performance.now() - t0
  }
  return (judging * 1000) / n
}

export function judgeAlone (n = 200_000): { checks: number, none: number } {
  const judged = CHECKS.map((c) => c.id).filter((id) => !SCENARIO_ONLY.includes(id))
  perExchange(judged, n / 4) // warm-up
  return { checks: perExchange(judged, n), none: perExchange([], n) }
}
