// CLIENT-17: a failure inside the wire tap (a wire plan that throws, a reply rewrite that throws, a listener that
// cannot take bytes that are not HTTP) is reported through the listener's `failed`, and the Orbtile observer
// journals and counts it: the fault the plan asked for did not happen, and the report says so.
import t from 'tap'
import type { TapExchange, TapPart, WireTap } from '../src/shared/tap.js'
import { Observer } from '../conformance/client/orbtile/observer.js'
import type { JournalAction } from '../conformance/client/core/journal.js'
import { rawExchange, SocketClient } from './helpers/client.js'
import { startFake, type Teardown } from './helpers/fake.js'

/** A fake Orbtile with a tap whose listener is `listener`'s, plus one that keeps what the tap reported. */
async function tappedFake (t: Teardown, listener: Partial<WireTap>) {
  const failures: Array<[TapPart, string]> = []
  const exchanges: TapExchange[] = []
  const fake = await startFake(t, {
    tap: {
      request: () => undefined,
      exchange: (x) => { exchanges.push(x) },
      malformed: () => {},
      failed: (part, message) => { failures.push([part, message]) },
      ...listener
    }
  })
  const client = new SocketClient(fake.socketPath, fake.token)
  t.teardown(() => client.close())
  return { fake, client, failures, exchanges }
}

/** Until the tap has reported `n` exchanges (a reply's close is reported a little after the client has it). */
async function reported (exchanges: TapExchange[], n: number): Promise<void> {
  const deadline = performance.now() + 5000
  while (exchanges.length < n && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10))
}

t.test('CLIENT-17 a wire plan that throws is reported as a failure of the tap; the request is served with no fault', async (t) => {
  const { client, failures, exchanges } = await tappedFake(t, {
    request: () => { throw new Error('the plan broke') }
  })
  const reply = await client.request({ path: '/info' })
  t.equal(reply.status, 200, 'served as usual')
  await reported(exchanges, 1)
  t.same(failures, [['request', 'the plan broke']], 'reported once, with what failed and the message')
  t.same(exchanges[0]!.notes, [], 'no fault noted on the exchange')
})

t.test('CLIENT-17 a reply rewrite that throws is reported; the reply goes as the fake made it', async (t) => {
  const { client, failures } = await tappedFake(t, {
    request: () => ({ rewrite: () => { throw new Error('the rewrite broke') }, notes: ['rewritten'] })
  })
  const reply = await client.request({ path: '/info' })
  t.equal(reply.status, 200, 'served')
  t.equal(typeof reply.json.apiMinor, 'number', 'the fake\'s own reply')
  t.same(failures, [['rewrite', 'the rewrite broke']], 'reported')
})

t.test('CLIENT-17 a listener that cannot take bytes that are not HTTP is reported; the fake still answers them', async (t) => {
  const { fake, failures } = await tappedFake(t, {
    malformed: () => { throw new Error('the journal broke') }
  })
  const answer = await rawExchange(fake.socketPath, 'G\x00T / HTTP/1.1\r\n\r\n')
  t.match(answer, /^HTTP\/1\.1 400/, 'answered')
  t.same(failures, [['malformed', 'the journal broke']], 'reported')
})

t.test('CLIENT-17 the Orbtile observer journals each failure of the tap for good and counts them at the end', async (t) => {
  // A journal that keeps the last entry only: the notes of the failures are kept all the same.
  const obs = new Observer('the discovery token of this test', { keep: 1 })
  const { client } = await tappedFake(t, {
    now: () => obs.now(),
    request: () => { throw new Error('the plan broke') },
    exchange: (x) => { obs.exchange(x) },
    malformed: (connection, reason, bytes) => { obs.malformed(connection, reason, bytes) },
    failed: (part, message) => { obs.tapFailed(part, message) }
  })
  await client.request({ path: '/info' })
  await client.request({ path: '/info' })
  obs.findings(obs.now())
  const notes = obs.journal.entries().filter((e): e is JournalAction => e.kind === 'action')
  const failures = notes.filter((e) => e.name === 'tap-failure')
  t.equal(failures.length, 2, 'each failure is kept in the journal')
  const words = /the wire's plan for a request failed.*: the plan broke$/
  t.match(failures[0], { actor: 'harness', text: words }, 'in words, with the message')
  const count = notes.find((e) => e.name === 'tap-failures')
  t.match(count?.text, /^2 failure\(s\) inside the wire tap/, 'counted in the run\'s last notes')
})
