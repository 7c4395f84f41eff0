// Runs the raw lane's scenarios: one fresh connection each, and for each the answer HTTP/1.1 and the APIs require.
import { materialize } from './draft.js'
import { ADAPTER_POOL, pollerRegistration } from './gen-orbtile.js'
import {
  BAD_CHUNKS, BAD_CODINGS, bodyOfSize, headOf, malformedHead, oversizedHead, pieces, unframedHead
} from './raw-bytes.js'
import type { RawContext, RawOutcome, RawPlan, RawScenario } from './raw.js'
import { serialize, type HttpRequest } from './request.js'
import { sleep } from './server.js'
import type { Target } from './targets.js'
import { header, preview, WireSession, type WireResponse } from './wire.js'

/** Runs one raw scenario on a fresh connection, and closes it. */
export async function runRaw (plan: RawPlan, ctx: RawContext): Promise<RawOutcome> {
  const target = ctx.targets[plan.server]
  const session = await WireSession.open(target.address)
  const out: RawOutcome = { responses: [], failures: [], drops: [], malformed: undefined, left: false }
  const fail = (check: string, detail: string): void => { out.failures.push({ check, detail }) }
  try {
    await SCENARIOS[plan.scenario](session, plan, target, ctx, fail, out)
  } finally {
    session.destroy()
    out.responses = session.parser.responses
    out.malformed = session.parser.malformed
  }
  return out
}

type Fail = (check: string, detail: string) => void
type Scenario = (s: WireSession, plan: RawPlan, target: Target, ctx: RawContext, fail: Fail, out: RawOutcome) =>
Promise<void>

/** What came back, for a report: the statuses and what was left over, or why nothing did. */
function seen (s: WireSession): string {
  if (s.received === 0) return `nothing (${s.error ?? (s.closed ? 'closed' : 'still open')})`
  const statuses = s.parser.responses.map((r) => r.status).join(',')
  return `${statuses === '' ? 'no whole answer' : statuses} ${preview(s.parser.rest, 80)}${s.error === undefined ? '' : ` (${s.error})`}`
}

async function answered (s: WireSession, ms: number, check: string, fail: Fail, what: string): Promise<boolean> {
  if (await s.responses(1, ms) === 'ok' && s.parser.responses.length > 0) return true
  fail(check, `${what}: no answer within ${ms} ms; saw ${seen(s)}`)
  return false
}

/**
 * A request every server takes a body on, with the run's tokens (the over-limit and long-poll scenarios); on the
 * Orbtile, for the adapter `which` names (or picks from the pool).
 */
function bodyRoute (target: Target, ctx: RawContext, which: number | string): HttpRequest {
  const headers: Array<[string, string]> = [['Host', target.host], ['Content-Type', 'application/json']]
  if (target.name === 'orbtile') {
    const id = typeof which === 'string' ? which : ADAPTER_POOL[which % ADAPTER_POOL.length]!
    const lease = ctx.state.leases.get(id)
    headers.push(['Authorization', `Bearer ${ctx.state.orbtileToken}`])
    if (lease !== undefined) headers.push(['X-Orbtile-Adapter-Token', lease])
    return { method: 'PUT', target: `${target.base}/adapters/${id}`, headers }
  }
  if (target.name === 'orb') {
    headers.push(['Authorization', `Bearer ${ctx.state.orbToken('app_demo')}`])
    return { method: 'POST', target: '/api/bot/v1/messages', headers }
  }
  return { method: 'POST', target: '/control/orb/messages', headers }
}

/** The sizes an over-limit body takes: just over, 10 % over, twice and four times the limit. */
const OVER = [(limit: number) => limit + 1, (limit: number) => Math.ceil(limit * 1.1), (limit: number) => limit * 2,
  (limit: number) => limit * 4]

/** For each server, what may answer an over-limit body before its size is looked at (the earlier pipeline steps). */
const EARLIER = { orbtile: [401, 429], orb: [401], control: [] as number[] }

/** Sends requests in one write and expects an answer to each, up to one that closes the connection. */
async function pipeline (s: WireSession, requests: HttpRequest[], ctx: RawContext, out: RawOutcome): Promise<void> {
  for (const request of requests) s.parser.expect(request.method)
  s.write(Buffer.concat(requests.map(serialize)))
  const closes = (r: WireResponse): boolean => /close/i.test(header(r, 'connection') ?? '')
  const hold = Math.max(...requests.map((r) => ctx.realHoldMs(r.holdMs ?? 0)))
  await s.until(() => s.parser.responses.length >= requests.length || s.parser.malformed !== undefined ||
    s.parser.responses.some(closes), ctx.silentMs + hold)
  const got = s.parser.responses
  const closing = got.findIndex(closes)
  if (got.length < (closing < 0 ? requests.length : closing + 1)) {
    const sent = requests.map((r) => `${r.method} ${r.target.slice(0, 40)}`).join('; ')
    out.drops.push(`${requests.length} pipelined (${sent}): ${got.length} answered; saw ${seen(s)}`)
  }
}

const SCENARIOS: Record<RawScenario, Scenario> = {
  'malformed-head': async (s, plan, target, ctx, fail) => {
    const { bytes, method } = malformedHead(plan.variant >> 2, plan.variant % 3 === 0 ? 'HEAD' : 'GET', target.host)
    s.write(bytes, method)
    const what = `sent ${preview(bytes, 60)}`
    if (!await answered(s, ctx.silentMs, 'parse-error-answered', fail, what)) return
    await s.serverClose(200)
    if (method === 'HEAD' && (s.parser.rest.length > 0 || s.parser.malformed !== undefined)) {
      fail('head-error-without-body', `${what}: ${s.parser.rest.length} bytes followed the head: ${preview(s.parser.rest)}`)
    }
  },
  'header-overflow': async (s, plan, target, ctx, fail) => {
    s.write(oversizedHead(plan.variant, target.host), 'GET')
    await answered(s, ctx.silentMs, 'parse-error-answered', fail, `a head over 16 KiB (variant ${plan.variant % 2})`)
  },
  'bad-chunk': async (s, plan, target, ctx, fail) => {
    const request = materialize(plan.drafts[0]!, target, ctx.state)
    s.write(unframedHead(request, 'Transfer-Encoding: chunked\r\n'), request.method)
    if (plan.variant % 2 === 0) await sleep(30)
    const chunk = BAD_CHUNKS[plan.variant % BAD_CHUNKS.length]!
    s.write(Buffer.from(chunk, 'latin1'))
    await answered(s, ctx.silentMs, 'framing-error-answered', fail, `${request.method} ${request.target} chunks ${JSON.stringify(chunk)}`)
  },
  'bad-coding': async (s, plan, target, ctx, fail) => {
    const request = materialize(plan.drafts[0]!, target, ctx.state)
    const coding = BAD_CODINGS[plan.variant % BAD_CODINGS.length]!
    s.write(unframedHead(request, coding.headers), request.method)
    if (plan.variant % 2 === 0) await sleep(30)
    s.write(Buffer.from(coding.body, 'latin1'))
    await answered(s, ctx.silentMs, 'framing-error-answered', fail, `${request.method} ${request.target} with ${JSON.stringify(coding.headers)}`)
  },
  'left-mid-body': async (s, plan, target, ctx, fail, out) => {
    const request = materialize(plan.drafts[0]!, target, ctx.state)
    const body = request.body ?? Buffer.from('{}')
    const full = Buffer.concat([headOf({ ...request, body }), body])
    const head = full.indexOf('\r\n\r\n') + 4
    s.write(full.subarray(0, head + Math.floor(plan.pick * (full.length - head - 1))), request.method)
    await sleep(plan.variant % 50)
    out.left = s.parser.responses.length === 0
    // One in three leaves outright: only the socket count at the end can tell whether the server let go.
    if (plan.variant % 3 === 0) return
    s.end()
    if (await s.serverClose(ctx.silentMs) !== 'ok') {
      fail('left-mid-body-closed', `${request.method} ${request.target}: the client half-closed mid-body; the connection was still open ${ctx.silentMs} ms later; saw ${seen(s)}`)
    }
  },
  'slow-head': async (s, plan, target, ctx, _fail, out) => {
    const request = materialize(plan.drafts[0]!, target, ctx.state)
    const parts = pieces(serialize(request), 4 + (plan.variant % 12))
    s.parser.expect(request.method)
    for (const part of parts) {
      s.write(part)
      await sleep(10 + (plan.variant % 60))
    }
    if (await s.responses(1, ctx.silentMs + ctx.realHoldMs(request.holdMs ?? 0)) !== 'ok') {
      out.drops.push(`${request.method} ${request.target} sent in ${parts.length} slow pieces: ${seen(s)}`)
    }
  },
  'over-limit': async (s, plan, target, ctx, fail) => {
    const request = bodyRoute(target, ctx, plan.variant)
    const body = bodyOfSize(OVER[plan.variant % OVER.length]!(target.bodyLimit))
    // Head and body in one write, as a client that does not wait for an early answer sends them.
    s.write(serialize({ ...request, body }), request.method)
    const what = `${request.method} ${request.target} with ${body.length} bytes (limit ${target.bodyLimit})`
    if (await s.responses(1, ctx.silentMs) !== 'ok' || s.parser.responses.length === 0) {
      fail('over-limit-413', `${what}: no answer read; saw ${seen(s)}`)
      return
    }
    const answer = s.parser.responses[0]!
    if (answer.status !== 413 && !EARLIER[target.name].includes(answer.status)) {
      fail('over-limit-413', `${what}: ${answer.status}, not 413: ${preview(answer.body)}`)
    }
  },
  pipelined: async (s, plan, target, ctx, _fail, out) => {
    await pipeline(s, plan.drafts.map((draft) => materialize(draft, target, ctx.state)), ctx, out)
  },
  // RFC 9110 §7.8: a server that ignores Upgrade answers in HTTP/1.1 and goes on reading HTTP/1.1.
  'ignored-upgrade': async (s, plan, target, ctx, _fail, out) => {
    const upgrade = materialize(plan.drafts[0]!, target, ctx.state)
    upgrade.headers.push(['Connection', 'Upgrade'], ['Upgrade', plan.variant % 2 === 0 ? 'websocket' : 'h2c'])
    await pipeline(s, [upgrade, materialize(plan.drafts[0]!, target, ctx.state)], ctx, out)
  },
  'expect-continue': async (s, plan, target, ctx, fail, out) => {
    const request = materialize(plan.drafts[0]!, target, ctx.state)
    const body = request.body ?? Buffer.from('{}')
    s.write(headOf({ ...request, body }, [['Expect', '100-continue']]), request.method)
    const got = await s.until(() => s.parser.informational.length > 0 || s.parser.responses.length > 0, ctx.continueMs)
    if (s.parser.responses.length > 0) return
    if (got !== 'ok') {
      fail('expect-100-continue', `${request.method} ${request.target}: neither 100 Continue nor an answer within ${ctx.continueMs} ms; saw ${seen(s)}`)
    }
    s.write(body)
    if (await s.responses(1, ctx.silentMs + ctx.realHoldMs(request.holdMs ?? 0)) !== 'ok') {
      out.drops.push(`${request.method} ${request.target} after Expect: 100-continue and its body: ${seen(s)}`)
    }
  },
  'duplicate-host': async (s, plan, target, ctx, fail) => {
    const request = materialize(plan.drafts[0]!, target, ctx.state)
    const second = plan.variant % 2 === 0 ? target.host : 'evil.example'
    request.headers.splice(1, 0, ['Host', second])
    s.write(serialize(request), request.method)
    if (!await answered(s, ctx.silentMs, 'duplicate-host-400', fail, `${request.method} ${request.target}`)) return
    const status = s.parser.responses[0]!.status
    if (status !== 400) {
      fail('duplicate-host-400', `${request.method} ${request.target} with Host: ${target.host} and Host: ${second}: ${status}, not 400`)
    }
  },
  'absolute-form': async (s, plan, target, ctx, fail, out) => {
    const request = materialize(plan.drafts[0]!, target, ctx.state)
    request.target = `http://evil.example${request.target}`
    s.write(serialize(request), request.method)
    if (await s.responses(1, ctx.silentMs + ctx.realHoldMs(request.holdMs ?? 0)) !== 'ok') {
      out.drops.push(`${request.method} ${request.target}: ${seen(s)}`)
      return
    }
    const status = s.parser.responses[0]!.status
    // The target's authority is the request's host (RFC 9112 §3.2.2). The Orbtile must refuse it at its first step
    // (OT-A05: 400); the control server may say forbidden_host; the Orb does not look at hosts.
    const refused = target.name === 'orbtile' ? status === 400 : status >= 400 && status < 500
    if (target.name !== 'orb' && !refused) {
      fail('absolute-form-refused', `${request.method} ${request.target} (Host: ${target.host}): ${status}`)
    }
  },
  'long-poll-cut': async (s, plan, target, ctx, _fail, out) => {
    // The control server holds no polls: there, this is a connection opened and left.
    out.left = true
    if (target.name === 'control') return
    if (target.name === 'orbtile') {
      // A poller of its own, registered with every capability, then a poll held until the client leaves.
      const id = `dev.fuzz.poller-${'abc'[plan.variant % 3]}`
      const put = { ...bodyRoute(target, ctx, id), body: Buffer.from(JSON.stringify(pollerRegistration())) }
      s.write(serialize(put), 'PUT')
      if (await s.responses(1, ctx.silentMs) !== 'ok') return
      ctx.state.learn('orbtile', put, s.parser.responses[0]!)
      if (!ctx.state.leases.has(id)) return
      const poll = { ...bodyRoute(target, ctx, id), method: 'POST', target: `${target.base}/adapters/${id}/events` }
      s.write(serialize({ ...poll, body: Buffer.from('{"waitSeconds":2}') }), 'POST')
    } else {
      // A cursor past every event: the poll is held for its whole wait.
      const poll = { ...bodyRoute(target, ctx, 0), method: 'GET', target: `/api/bot/v1/events?wait=25&after=${1e9}` }
      s.write(serialize(poll), 'GET')
    }
    await sleep(20 + (plan.variant % 200))
    if (plan.variant % 4 === 0) s.end()
  },
  idle: async (_s, plan, _target, _ctx, _fail, out) => {
    await sleep(plan.variant % 200)
    out.left = true
  },
  http10: async (s, plan, target, ctx, _fail, out) => {
    const request = materialize(plan.drafts[0]!, target, ctx.state)
    const bytes = serialize(request)
    const line = bytes.indexOf('\r\n')
    const requestLine = bytes.subarray(0, line).toString('latin1').replace(/HTTP\/1\.1$/, 'HTTP/1.0')
    s.write(Buffer.concat([Buffer.from(requestLine, 'latin1'), bytes.subarray(line)]), request.method)
    if (await s.responses(1, ctx.silentMs + ctx.realHoldMs(request.holdMs ?? 0)) !== 'ok') {
      out.drops.push(`HTTP/1.0 ${request.method} ${request.target}: ${seen(s)}`)
    }
  }
}
