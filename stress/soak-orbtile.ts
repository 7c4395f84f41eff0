// The soak's adapters on the fake Orbtile: each registers, fills its sessions to the limit and one past it, keeps
// approvals and questions pending, holds a long poll that the user's taps release, bursts past its rate bucket and
// honours Retry-After, and now and then goes silent until its lease ends, or unregisters.
import { b64, makePng } from '../conformance/server/orbtile/arbitrary-registration.js'
import { LIMITS } from '../src/spec/orbtile.js'
import type { Answer, Soak } from './soak-core.js'

const ICON = b64(makePng(32, 32))
const ACTIVITIES = ['thinking', 'tool', 'streaming', 'idle', 'waitingPermission', 'waitingQuestion', 'done']

/** Adapter ids the soak uses: fewer than maxAdapters, so that a re-registration always finds room. */
export const SOAK_ADAPTERS = ['dev.soak.a0', 'dev.soak.a1', 'dev.soak.a2', 'dev.soak.a3', 'dev.soak.a4', 'dev.soak.a5']

/** Requests the user may decide, as the adapters raised them. */
export interface PendingRequest { adapter: string, id: string, kind: 'approval' | 'question' }

/** How many undecided requests the soak keeps for the user to decide (the oldest go first). */
const KEPT_PENDING = 256

/** A request of one adapter: `route` is the row it is counted under, without the base path. */
type Call = (route: string, path: string, body?: unknown, holdMs?: number) => Promise<Answer | undefined>

/** One adapter's state from cycle to cycle. */
interface Adapter {
  soak: Soak
  id: string
  pending: PendingRequest[]
  call: Call
  /** The events cursor. */
  cursor: number
  /** Requests raised so far: the next one's id follows. */
  raised: number
  cycle: number
}

/** One adapter's life, over and over, until the soak ends. */
export async function orbtileAdapter (soak: Soak, id: string, pending: PendingRequest[]): Promise<void> {
  const adapter: Adapter = { soak, id, pending, call: adapterCall(soak, id), cursor: 0, raised: 0, cycle: 0 }
  while (soak.running()) {
    adapter.cycle++
    if (!await register(adapter)) {
      await soak.pause(500)
      continue
    }
    await adapter.call('GET /info', '/info')
    await fillSessions(adapter)
    await pollAndBurst(adapter)
    if (adapter.cycle % 4 === 0) {
      await adapter.call('DELETE /adapters/{adapterId}', `/adapters/${id}`)
      soak.state.leases.delete(id)
      adapter.cursor = 0
    } else if (adapter.cycle % 7 === 0 && id.endsWith('a5')) {
      // Silence: the lease ends after --lease-silence (OT-A08), and the next request finds it gone.
      await soak.pause(25_000)
    }
  }
}

/** The adapter's requests: the discovery token and its lease's, and a 429's Retry-After waited out (OT-026). */
function adapterCall (soak: Soak, id: string): Call {
  const client = soak.client('orbtile')
  const base = soak.targets.orbtile.base
  const headers = (): Array<[string, string]> => {
    const lease = soak.state.leases.get(id)
    const out: Array<[string, string]> = [['Authorization', `Bearer ${soak.state.orbtileToken}`]]
    if (lease !== undefined) out.push(['X-Orbtile-Adapter-Token', lease])
    return out
  }
  return async (route, path, body, holdMs) => {
    const answer = await soak.call(client, `${route.split(' ')[0]} ${base}${route.split(' ')[1]}`, base + path,
      { body, headers: headers(), ...(holdMs === undefined ? {} : { holdMs }) })
    // OT-026: a 429 says how long to wait; the adapter waits exactly that.
    if (answer?.status === 429) await soak.pause((answer.retryAfter ?? 1) * 1000)
    return answer
  }
}

/** Registers (with an icon every third cycle); whether the server took it. */
async function register (adapter: Adapter): Promise<boolean> {
  const { soak, id, cycle } = adapter
  const body = {
    name: `Soak ${id.slice(-2)}`,
    palette: { baseHue: Math.floor(soak.random() * 359) },
    capabilities: ['tap', 'approvals', 'questions'],
    ...(cycle % 3 === 0 ? { icon: { png: ICON } } : {})
  }
  const registered = await adapter.call('PUT /adapters/{adapterId}', `/adapters/${id}`, body)
  return registered?.status === 200
}

/** Session `n`'s update: every fifth raises an approval, the one after it a question. */
function sessionUpdate (adapter: Adapter, n: number): Record<string, unknown> {
  const { soak, id } = adapter
  const update: Record<string, unknown> = {
    title: `Task ${n} of ${id}`,
    activity: soak.pick(ACTIVITIES),
    ttlSeconds: n % 4 === 0 ? 10 : 120,
    message: { id: `m${adapter.cycle}`, text: 'x'.repeat(Math.floor(soak.random() * 2000)) }
  }
  if (n % 5 === 1) update.approval = { id: `r${++adapter.raised}`, toolName: 'shell', commandSummary: 'rm -rf build' }
  if (n % 5 === 2) {
    update.question = {
      id: `r${++adapter.raised}`,
      questions: [{ text: 'Which?', options: [{ label: 'this' }, { label: 'that' }] }]
    }
  }
  return update
}

/** Sessions to the limit, and one more (OT-028: limit_exceeded); then a batch that replaces them. */
async function fillSessions (adapter: Adapter): Promise<void> {
  const { soak, id, pending, call } = adapter
  for (let n = 0; n <= LIMITS.maxSessionsPerAdapter && soak.running(); n++) {
    const answer = await call('POST /adapters/{adapterId}/sessions/{sessionId}', `/adapters/${id}/sessions/s${n}`,
      sessionUpdate(adapter, n))
    const raised = `r${adapter.raised}`
    if (answer?.status === 200 && n % 5 === 1) pending.push({ adapter: id, id: raised, kind: 'approval' })
    if (answer?.status === 200 && n % 5 === 2) pending.push({ adapter: id, id: raised, kind: 'question' })
    if (pending.length > KEPT_PENDING) pending.splice(0, pending.length - KEPT_PENDING)
  }
  const sessions = Array.from({ length: 16 }, (_, n) => ({ id: `s${n}`, title: `Batch ${n}`, activity: 'idle' }))
  await call('PUT /adapters/{adapterId}/sessions', `/adapters/${id}/sessions`, { sessions })
}

/** Long polls a tap or a decision releases, then a burst past the rate bucket. */
async function pollAndBurst (adapter: Adapter): Promise<void> {
  const { soak, id, call } = adapter
  // Long polls held until a tap or a decision arrives, or their two seconds pass (OT-140).
  for (let poll = 0; poll < 3 && soak.running(); poll++) {
    const answer = await call('POST /adapters/{adapterId}/events', `/adapters/${id}/events`,
      { after: adapter.cursor, ack: adapter.cursor, waitSeconds: 2 }, 2000)
    const last = answer?.status === 200 ? answer.json?.lastSequence : undefined
    if (typeof last === 'number') adapter.cursor = last
    if (answer?.status === 400 && answer.json?.error?.code === 'invalid_cursor') adapter.cursor = 0
  }
  // A burst past the bucket (burst 60, then 20 a second): the 429s and their Retry-After are the point.
  for (let n = 0; n < LIMITS.burst + 10 && soak.running(); n++) {
    const answer = await call('POST /adapters/{adapterId}/events', `/adapters/${id}/events`, { after: adapter.cursor })
    if (answer?.status === 429) break
  }
}
