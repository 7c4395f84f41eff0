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

/** One adapter's life, over and over, until the soak ends. */
export async function orbtileAdapter (soak: Soak, id: string, pending: PendingRequest[]): Promise<void> {
  const client = soak.client('orbtile')
  const base = soak.targets.orbtile.base
  let cursor = 0
  let raised = 0
  let cycle = 0
  const headers = (): Array<[string, string]> => {
    const lease = soak.state.leases.get(id)
    const out: Array<[string, string]> = [['Authorization', `Bearer ${soak.state.orbtileToken}`]]
    if (lease !== undefined) out.push(['X-Orbtile-Adapter-Token', lease])
    return out
  }
  const call = async (route: string, path: string, body?: unknown, holdMs?: number): Promise<Answer | undefined> => {
    const answer = await soak.call(client, `${route.split(' ')[0]} ${base}${route.split(' ')[1]}`, base + path,
      { body, headers: headers(), ...(holdMs === undefined ? {} : { holdMs }) })
    // OT-026: a 429 says how long to wait; the adapter waits exactly that.
    if (answer?.status === 429) await soak.pause((answer.retryAfter ?? 1) * 1000)
    return answer
  }
  const session = (n: number): Record<string, unknown> => {
    const update: Record<string, unknown> = {
      title: `Task ${n} of ${id}`,
      activity: soak.pick(ACTIVITIES),
      ttlSeconds: n % 4 === 0 ? 10 : 120,
      message: { id: `m${cycle}`, text: 'x'.repeat(Math.floor(soak.random() * 2000)) }
    }
    if (n % 5 === 1) update.approval = { id: `r${++raised}`, toolName: 'shell', commandSummary: 'rm -rf build' }
    if (n % 5 === 2) {
      update.question = {
        id: `r${++raised}`,
        questions: [{ text: 'Which?', options: [{ label: 'this' }, { label: 'that' }] }]
      }
    }
    return update
  }
  while (soak.running()) {
    cycle++
    const body = {
      name: `Soak ${id.slice(-2)}`,
      palette: { baseHue: Math.floor(soak.random() * 359) },
      capabilities: ['tap', 'approvals', 'questions'],
      ...(cycle % 3 === 0 ? { icon: { png: ICON } } : {})
    }
    const registered = await call('PUT /adapters/{adapterId}', `/adapters/${id}`, body)
    if (registered?.status !== 200) {
      await soak.pause(500)
      continue
    }
    await call('GET /info', '/info')
    // Sessions to the limit, and one more (OT-028: limit_exceeded).
    for (let n = 0; n <= LIMITS.maxSessionsPerAdapter && soak.running(); n++) {
      const answer = await call('POST /adapters/{adapterId}/sessions/{sessionId}', `/adapters/${id}/sessions/s${n}`,
        session(n))
      if (answer?.status === 200 && n % 5 === 1) pending.push({ adapter: id, id: `r${raised}`, kind: 'approval' })
      if (answer?.status === 200 && n % 5 === 2) pending.push({ adapter: id, id: `r${raised}`, kind: 'question' })
      if (pending.length > 256) pending.splice(0, pending.length - 256)
    }
    const sessions = Array.from({ length: 16 }, (_, n) => ({ id: `s${n}`, title: `Batch ${n}`, activity: 'idle' }))
    await call('PUT /adapters/{adapterId}/sessions', `/adapters/${id}/sessions`, { sessions })
    // Long polls held until a tap or a decision arrives, or their two seconds pass (OT-140).
    for (let poll = 0; poll < 3 && soak.running(); poll++) {
      const answer = await call('POST /adapters/{adapterId}/events', `/adapters/${id}/events`,
        { after: cursor, ack: cursor, waitSeconds: 2 }, 2000)
      if (answer?.status === 200 && typeof answer.json?.lastSequence === 'number') cursor = answer.json.lastSequence
      if (answer?.status === 400 && answer.json?.error?.code === 'invalid_cursor') cursor = 0
    }
    // A burst past the bucket (burst 60, then 20 a second): the 429s and their Retry-After are the point.
    for (let n = 0; n < LIMITS.burst + 10 && soak.running(); n++) {
      const answer = await call('POST /adapters/{adapterId}/events', `/adapters/${id}/events`, { after: cursor })
      if (answer?.status === 429) break
    }
    if (cycle % 4 === 0) {
      await call('DELETE /adapters/{adapterId}', `/adapters/${id}`)
      soak.state.leases.delete(id)
      cursor = 0
    } else if (cycle % 7 === 0 && id.endsWith('a5')) {
      // Silence: the lease ends after --lease-silence (OT-A08), and the next request finds it gone.
      await soak.pause(25_000)
    }
  }
}
