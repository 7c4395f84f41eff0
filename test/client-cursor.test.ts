// OT-138 judged from a journal written by hand: the order in which a restart's cut poll reaches the journal, which
// real runs meet only now and then under load.
import t from 'tap'
import { Observer } from '../conformance/client/orbtile/observer.js'
import type { TapExchange } from '../src/shared/tap.js'

const ID = 'com.example.cursor'
const DISCOVERY = 'd'.repeat(43)
const [OLD, NEW] = ['o'.repeat(43), 'n'.repeat(43)]

/** What an exchange of the hand-written journal says. */
interface Said {
  method: string
  path: string
  token?: string
  body?: unknown
  status: number
  reply: unknown
  startedAt: number
  sentAt?: number
  cut?: true
}

/** One exchange as the fake's tap reports it, with the discovery token and `token` as the adapter token. */
function exchange (n: number, x: Said): TapExchange {
  const text = x.body === undefined ? undefined : JSON.stringify(x.body)
  return {
    request: n,
    connection: n,
    method: x.method,
    target: `/a/v1${x.path}`,
    httpVersion: '1.1',
    headers: {
      host: 'localhost',
      authorization: `Bearer ${DISCOVERY}`,
      'content-type': 'application/json',
      ...(x.token === undefined ? {} : { 'x-orbtile-adapter-token': x.token })
    },
    body: text === undefined ? undefined : Buffer.from(text),
    parsedBody: x.body,
    bodyText: text,
    contentLength: text?.length ?? 0,
    status: x.status,
    replyHeaders: { 'content-type': 'application/json' },
    reply: x.cut === true ? '' : JSON.stringify(x.reply),
    finished: x.cut !== true,
    notes: x.cut === true ? ['connection cut before the reply'] : [],
    startedAt: x.startedAt,
    ...(x.sentAt === undefined ? {} : { sentAt: x.sentAt })
  }
}

const register = (n: number, token: string, at: number): TapExchange => exchange(n, {
  method: 'PUT',
  path: `/adapters/${ID}`,
  body: { name: 'Cursor', capabilities: ['tap'] },
  status: 200,
  reply: { adapter: { id: ID }, enabled: true, keypadDecisions: false, warnings: [], adapterToken: token },
  startedAt: at,
  sentAt: at + 1
})

/**
 * The last lease delivers events 1 and 2; a poll with after 2 is held when the app restarts and is cut; the adapter
 * registers again and polls from 0. The cut poll reaches the journal after the new registration, carrying `sent`.
 */
function judge (sent: string): string[] {
  const observer = new Observer(DISCOVERY, { only: ['OT-138'] })
  observer.exchange(register(1, OLD, 10))
  observer.exchange(exchange(2, {
    method: 'POST',
    path: `/adapters/${ID}/events`,
    token: OLD,
    body: { after: 0, ack: 0, waitSeconds: 2 },
    status: 200,
    reply: {
      events: [{ sequence: 1, type: 'tap', sessionId: 's1' }, { sequence: 2, type: 'tap', sessionId: 's1' }],
      lastSequence: 2,
      acknowledged: 0
    },
    startedAt: 20,
    sentAt: 21
  }))
  observer.action('app', 'restart', 'the app restarts', { leaseEnds: ID })
  observer.exchange(register(3, NEW, 60))
  observer.exchange(exchange(4, {
    method: 'POST',
    path: `/adapters/${ID}/events`,
    token: sent,
    body: { after: 2, ack: 2, waitSeconds: 2 },
    status: 0,
    reply: undefined,
    startedAt: 30,
    cut: true
  }), 70)
  const finding = observer.findings(100).find((f) => f.id === 'OT-138')!
  return finding.violations.map((v) => v.message)
}

t.test('CLIENT-11 OTC-21: a poll belongs to the lease whose token it carries, whenever the journal files its end', async (t) => {
  t.same(judge(OLD), [], 'the last lease\'s cut poll, filed after the new registration, is judged by that lease\'s cursor')
  t.match(judge(NEW), [/after 2 is past the highest sequence received under this lease, 0/],
    'the same poll sent with the new lease\'s token is a cursor carried over, and is found')
})
