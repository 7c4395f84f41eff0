/**
 * Model-based tests: random sequences of what an adapter and its user do, run against the fake over its socket and
 * against a plain in-memory model of the spec written here from the ledger, comparing every reply and the state.
 * The model is deliberately small and independent of the fake's code: sessions with TTLs, one approval per session,
 * the request-id namespace, and the event cursor.
 */
import t from 'tap'
import fc from 'fast-check'
import { fcParams } from './helpers/fc.js'
import { agentSetup, approval, newSession } from './helpers/orbtile.js'
import type { Reply } from './helpers/client.js'

type Agent = Awaited<ReturnType<typeof agentSetup>>

interface Model {
  now: number
  sessions: Map<string, { ttl: number, lastContact: number, approval: string | null }>
  pending: Map<string, { sessionId: string, expiresAt: number, decided: boolean }>
  retired: Set<string>
  events: Array<{ sequence: number, expiresAt?: number }>
  nextSequence: number
  acknowledged: number
  delivered: number
}

const TTLS = [10, 30, 120]
const SIDS = ['a', 'b', 'c']
const RIDS = ['r1', 'r2', 'r3', 'r4']

// The ledger's clocks, applied to the model after time moves (OT-112, OT-129, OT-A21).
function settle (m: Model): void {
  for (const [id, s] of m.sessions) {
    if (s.lastContact + s.ttl * 1000 + 600_000 <= m.now) {
      if (s.approval !== null) retire(m, s.approval)
      m.sessions.delete(id)
    }
  }
  for (const [id, r] of m.pending) {
    if (r.expiresAt * 1000 <= m.now) {
      retire(m, id)
      const s = m.sessions.get(r.sessionId)
      if (s !== undefined && s.approval === id) s.approval = null
    }
  }
  m.events = m.events.filter((e) => e.expiresAt === undefined || e.expiresAt * 1000 > m.now)
}

function retire (m: Model, id: string): void {
  if (m.pending.delete(id)) m.retired.add(id)
}

const offline = (m: Model, s: { ttl: number, lastContact: number }) => s.lastContact + s.ttl * 1000 <= m.now

type Cmd = fc.AsyncCommand<Model, Agent, boolean>

const expectStatus = (reply: Reply, status: number, what: string): void => {
  if (reply.status !== status) throw new Error(`${what}: expected ${status}, got ${reply.status} ${reply.text}`)
}

class Post implements Cmd {
  constructor (readonly sid: string, readonly ttl: number) {}
  check = () => true
  async run (m: Model, a: Agent): Promise<void> {
    const reply = await a.post(this.sid, newSession({ ttlSeconds: this.ttl }))
    expectStatus(reply, 200, this.toString())
    const s = m.sessions.get(this.sid)
    m.sessions.set(this.sid, { ttl: this.ttl, lastContact: m.now, approval: s?.approval ?? null })
  }

  toString = () => `post(${this.sid}, ttl ${this.ttl})`
}

class Heartbeat implements Cmd {
  constructor (readonly sid: string) {}
  check = () => true
  async run (m: Model, a: Agent): Promise<void> {
    const reply = await a.post(this.sid, {})
    const s = m.sessions.get(this.sid)
    if (s === undefined) return expectStatus(reply, 400, this.toString())
    expectStatus(reply, 200, this.toString())
    s.lastContact = m.now
  }

  toString = () => `heartbeat(${this.sid})`
}

class Batch implements Cmd {
  constructor (readonly sids: string[]) {}
  check = () => true
  async run (m: Model, a: Agent): Promise<void> {
    const reply = await a.batch(this.sids.map((id) => ({ id, ...newSession({ ttlSeconds: 30 }) })))
    expectStatus(reply, 200, this.toString())
    const ended = [...m.sessions.keys()].filter((id) => !this.sids.includes(id)).sort()
    if (JSON.stringify([...reply.json.ended].sort()) !== JSON.stringify(ended)) {
      throw new Error(`${this}: ended ${reply.json.ended}, model ${ended}`)
    }
    for (const id of ended) {
      const s = m.sessions.get(id)!
      if (s.approval !== null) retire(m, s.approval)
      m.sessions.delete(id)
    }
    for (const id of this.sids) {
      m.sessions.set(id, { ttl: 30, lastContact: m.now, approval: m.sessions.get(id)?.approval ?? null })
    }
  }

  toString = () => `batch([${this.sids}])`
}

class Approve implements Cmd {
  constructor (readonly sid: string, readonly rid: string) {}
  check = () => true
  async run (m: Model, a: Agent): Promise<void> {
    const reply = await a.post(this.sid, { approval: approval(this.rid) })
    const s = m.sessions.get(this.sid)
    if (s === undefined) return expectStatus(reply, 400, `${this} (no session: title needed)`)
    if (s.approval === this.rid) {
      expectStatus(reply, 200, `${this} (identical re-send)`)
      s.lastContact = m.now // any update is contact (OT-A18)
      return
    }
    if (m.pending.has(this.rid) || m.retired.has(this.rid)) {
      return expectStatus(reply, 400, `${this} (id in use or retired)`)
    }
    expectStatus(reply, 200, this.toString())
    if (s.approval !== null) retire(m, s.approval)
    s.approval = this.rid
    s.lastContact = m.now
    m.pending.set(this.rid, { sessionId: this.sid, expiresAt: Math.ceil((m.now + 600_000) / 1000), decided: false })
  }

  toString = () => `approve(${this.sid}, ${this.rid})`
}

class Clear implements Cmd {
  constructor (readonly sid: string) {}
  check = (m: Readonly<Model>) => m.sessions.has(this.sid)
  async run (m: Model, a: Agent): Promise<void> {
    expectStatus(await a.post(this.sid, { approval: null }), 200, this.toString())
    const s = m.sessions.get(this.sid)!
    if (s.approval !== null) retire(m, s.approval)
    s.approval = null
    s.lastContact = m.now
  }

  toString = () => `clear(${this.sid})`
}

class Decide implements Cmd {
  constructor (readonly rid: string) {}
  check = () => true
  async run (m: Model, a: Agent): Promise<void> {
    const r = m.pending.get(this.rid)
    let decided = true
    try { a.fake.control.decide(a.id, this.rid, { decision: 'allow' }) } catch { decided = false }
    const expected = r !== undefined && !r.decided
    if (decided !== expected) throw new Error(`${this}: fake ${decided ? 'decided' : 'refused'}, model ${expected ? 'decides' : 'refuses'}`)
    if (r !== undefined && expected) {
      r.decided = true
      m.events.push({ sequence: m.nextSequence++, expiresAt: r.expiresAt })
    }
  }

  toString = () => `decide(${this.rid})`
}

class Tap implements Cmd {
  constructor (readonly sid: string) {}
  check = () => true
  async run (m: Model, a: Agent): Promise<void> {
    let tapped = true
    try {
      a.fake.control.tap(a.id, this.sid)
    } catch {
      tapped = false
    }
    if (tapped !== m.sessions.has(this.sid)) {
      throw new Error(`${this}: fake ${tapped}, model ${m.sessions.has(this.sid)}`)
    }
    if (tapped) m.events.push({ sequence: m.nextSequence++ })
  }

  toString = () => `tap(${this.sid})`
}

class Poll implements Cmd {
  constructor (readonly ackAll: boolean) {}
  check = () => true
  async run (m: Model, a: Agent): Promise<void> {
    const after = m.delivered
    const ack = this.ackAll ? after : m.acknowledged
    const reply = await a.poll({ after, ack })
    expectStatus(reply, 200, this.toString())
    m.acknowledged = Math.max(m.acknowledged, ack)
    m.events = m.events.filter((e) => e.sequence > m.acknowledged)
    const expected = m.events.filter((e) => e.sequence > Math.max(after, m.acknowledged)).map((e) => e.sequence)
    const got = reply.json.events.map((e: { sequence: number }) => e.sequence)
    if (JSON.stringify(got) !== JSON.stringify(expected)) throw new Error(`${this}: events ${JSON.stringify(got)}, model ${JSON.stringify(expected)}`)
    if (reply.json.lastSequence !== m.nextSequence - 1 || reply.json.acknowledged !== m.acknowledged) {
      throw new Error(`${this}: cursor ${reply.json.lastSequence}/${reply.json.acknowledged}, model ${m.nextSequence - 1}/${m.acknowledged}`)
    }
    if (expected.length > 0) m.delivered = Math.max(m.delivered, expected[expected.length - 1]!)
  }

  toString = () => `poll(${this.ackAll ? 'ack' : 'no ack'})`
}

class Advance implements Cmd {
  constructor (readonly ms: number) {}
  check = () => true
  async run (m: Model, a: Agent): Promise<void> {
    await a.advance(this.ms)
    m.now += this.ms
    settle(m)
  }

  toString = () => `advance(${this.ms})`
}

// After every command: the fake's sessions (and their offline flags) and pending requests are the model's.
function compare (m: Model, a: Agent): void {
  const snapshot = a.snapshot()
  const fakeSessions = snapshot.sessions
    .map((s) => `${s.id}:${s.offline ? 'off' : 'on'}:${s.approval?.id ?? '-'}`)
    .sort()
  const modelSessions = [...m.sessions]
    .map(([id, s]) => `${id}:${offline(m, s) ? 'off' : 'on'}:${s.approval ?? '-'}`)
    .sort()
  if (JSON.stringify(fakeSessions) !== JSON.stringify(modelSessions)) {
    throw new Error(`sessions ${fakeSessions}, model ${modelSessions}`)
  }
  const fakeRequests = snapshot.requests.map((r) => `${r.id}@${r.sessionId}${r.decided ? '!' : ''}`).sort()
  const modelRequests = [...m.pending].map(([id, r]) => `${id}@${r.sessionId}${r.decided ? '!' : ''}`).sort()
  if (JSON.stringify(fakeRequests) !== JSON.stringify(modelRequests)) {
    throw new Error(`requests ${fakeRequests}, model ${modelRequests}`)
  }
}

const checked = (cmd: Cmd): Cmd => ({
  check: (m) => cmd.check(m),
  run: async (m, a) => { await cmd.run(m, a); compare(m, a) },
  toString: () => cmd.toString()
})

const sid = fc.constantFrom(...SIDS)
const commands = [
  fc.tuple(sid, fc.constantFrom(...TTLS)).map(([s, ttl]) => checked(new Post(s, ttl))),
  sid.map((s) => checked(new Heartbeat(s))),
  fc.subarray(SIDS).map((list) => checked(new Batch(list))),
  fc.tuple(sid, fc.constantFrom(...RIDS)).map(([s, r]) => checked(new Approve(s, r))),
  sid.map((s) => checked(new Clear(s))),
  fc.constantFrom(...RIDS).map((r) => checked(new Decide(r))),
  sid.map((s) => checked(new Tap(s))),
  fc.boolean().map((ack) => checked(new Poll(ack))),
  fc.constantFrom(1_000, 9_999, 10_000, 30_000, 120_000, 300_000, 600_000).map((ms) => checked(new Advance(ms)))
]

t.test(
  'OT-092 OT-112 OT-114 OT-125 OT-126 OT-129 OT-136 OT-A18 OT-A22 model-based: any sequence of posts, heartbeats, batches, approvals, decisions, taps, polls and clock moves matches the model',
  async (t) => {
    const a = await agentSetup(t, { keypad: true, fake: { leaseSilenceMs: 86_400_000 } })
    let runs = 0
    await fc.assert(
      fc.asyncProperty(fc.commands(commands, { maxCommands: 40 }), async (cmds) => {
        runs++
        // A clean slate each run: the user's settings, a new lease, no sessions.
        await a.fake.control.reset()
        a.fake.control.setUser(a.id, { allowed: true, keypad: true })
        await a.reregister()
        const model: Model = {
          now: a.clock.now(),
          sessions: new Map(),
          pending: new Map(),
          retired: new Set(),
          events: [],
          nextSequence: 1,
          acknowledged: 0,
          delivered: 0
        }
        await fc.asyncModelRun(() => ({ model, real: a }), cmds)
      }),
      fcParams({ numRuns: 60 })
    )
    t.equal(runs >= 60, true, `${runs} runs`)
  }
)
