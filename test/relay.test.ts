// The relay under `orbtest proxy`, in this process, in front of a plain Node server on a Unix socket: what a client
// receives through it is byte for byte what it receives straight, and each exchange is reported as a fake's tap
// reports it.
import { once } from 'node:events'
import { createServer as createHttpServer } from 'node:http'
import { connect, createServer } from 'node:net'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { relay } from '../src/proxy/relay.js'
import type { TapExchange, WireTap } from '../src/shared/tap.js'
import { scratch } from './helpers/fake.js'

/** An upstream that answers by path: a length, a chunked body, a 204, an echo of the body. No Date: bytes compare. */
async function upstream (path: string): Promise<() => Promise<void>> {
  const server = createHttpServer((req, res) => {
    res.sendDate = false
    // As the fake does: Node reads nothing more on a connection after an Upgrade header, so it is closed.
    if (req.headers.upgrade !== undefined) res.setHeader('connection', 'close')
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      if (req.url === '/chunked') {
        res.write('one,')
        res.end('two')
      } else if (req.url === '/empty') {
        res.writeHead(204).end()
      } else {
        const text = req.url === '/up' ? '{"up":true}' : '{"ok":true}'
        const body = req.url === '/echo' ? Buffer.concat(chunks) : Buffer.from(text)
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length })
        res.end(req.method === 'HEAD' ? undefined : body)
      }
    })
  })
  // As the fake does: an expectation is ignored, and the request answered as any other.
  server.on('checkExpectation', (req, res) => server.emit('request', req, res))
  server.listen(path)
  await once(server, 'listening')
  return async () => { await new Promise((resolve) => server.close(resolve)) }
}

/**
 * Writes `bytes` (then ends its side, if asked) and resolves with everything read until the server closes, or until
 * what was read ends with `last` (Node's server keeps a connection open after an Upgrade header, reading no more).
 */
async function exchangeBytes (path: string, bytes: string, end = false, last?: string): Promise<string> {
  const socket = connect({ path, allowHalfOpen: true })
  const got: Buffer[] = []
  socket.on('data', (c: Buffer) => {
    got.push(c)
    if (last !== undefined && Buffer.concat(got).toString('latin1').endsWith(last)) socket.destroy()
  })
  // The server ended its side: so does the client (half-open only while it waits for the reply).
  socket.once('end', () => socket.end())
  socket.write(bytes)
  if (end) socket.end()
  // A server that keeps the connection open fails the test instead of hanging it.
  const timer = setTimeout(() => socket.destroy(), 3000)
  await once(socket, 'close')
  clearTimeout(timer)
  return Buffer.concat(got).toString('latin1')
}

interface Seen { exchanges: TapExchange[], malformed: string[], connections: Array<[number, boolean]> }

async function setup (t: Test): Promise<{ direct: string, proxied: string, seen: Seen }> {
  const dir = scratch(t)
  const direct = join(dir, 'up.sock')
  const proxied = join(dir, 'relay.sock')
  const closeUpstream = await upstream(direct)
  const seen: Seen = { exchanges: [], malformed: [], connections: [] }
  const tap: WireTap = {
    request: () => undefined,
    exchange: (x) => { seen.exchanges.push(x) },
    malformed: (_c, reason) => { seen.malformed.push(reason) },
    connection: (id, open) => { seen.connections.push([id, open]) }
  }
  const server = createServer({ allowHalfOpen: true })
  const relayed = relay(server, { upstream: () => ({ path: direct }), tap })
  server.listen(proxied)
  await once(server, 'listening')
  t.teardown(async () => {
    await relayed.close()
    await closeUpstream()
  })
  return { direct, proxied, seen }
}

const PIPELINED = [
  'GET /len HTTP/1.1\r\nHost: x\r\n\r\n',
  'HEAD /len HTTP/1.1\r\nHost: x\r\n\r\n',
  'GET /chunked HTTP/1.1\r\nHost: x\r\n\r\n',
  'GET /empty HTTP/1.1\r\nHost: x\r\n\r\n',
  'POST /echo HTTP/1.1\r\nHost: x\r\nExpect: something\r\nContent-Length: 5\r\n\r\nhello',
  'GET /up HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n'
].join('')

t.test('PROXY-07 the relay passes pipelined requests and their replies on byte for byte, and reports each exchange', async (t) => {
  const { direct, proxied, seen } = await setup(t)
  const straight = await exchangeBytes(direct, PIPELINED, false, '{"up":true}')
  const through = await exchangeBytes(proxied, PIPELINED, false, '{"up":true}')
  t.equal(through, straight, 'the client reads through the relay exactly what it reads straight')
  await new Promise((resolve) => setTimeout(resolve, 50))
  t.same(seen.exchanges.map((x) => `${x.method} ${x.target} ${x.status}`),
    ['GET /len 200', 'HEAD /len 200', 'GET /chunked 200', 'GET /empty 204', 'POST /echo 200', 'GET /up 200'],
    'six exchanges, in order: a length, a HEAD, a chunked body, a 204, an expectation, an Upgrade header')
  const replies = ['{"ok":true}', '', 'one,two', '', 'hello', '{"up":true}']
  t.same(seen.exchanges.map((x) => x.reply), replies, 'each reply\'s body')
  t.equal(seen.exchanges[4]!.body?.toString(), 'hello', 'the request\'s body')
  t.equal(seen.exchanges[0]!.body, undefined, 'no body where none was sent, as the fake\'s tap says')
  t.ok(seen.exchanges.every((x) => x.finished && x.notes.length === 0), 'every reply whole')
  t.same(seen.malformed, [], 'nothing read as malformed')
  t.same(seen.connections, [[1, true], [1, false]], 'one connection, opened and closed')
})

t.test('PROXY-07 a client ending its side after a request gets the reply; bytes not HTTP are reported, passed on', async (t) => {
  const { direct, proxied, seen } = await setup(t)
  const reply = await exchangeBytes(proxied, 'GET /len HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n', true)
  t.match(reply, /^HTTP\/1\.1 200 OK\r\n[\s\S]*\{"ok":true\}$/, 'the reply, after the client\'s FIN')
  const straight = await exchangeBytes(direct, 'GARBAGE\r\n\r\n')
  const through = await exchangeBytes(proxied, 'GARBAGE\r\n\r\n')
  t.equal(through, straight, 'the upstream answered the garbage itself, through the relay')
  await new Promise((resolve) => setTimeout(resolve, 50))
  t.same(seen.malformed, ['HPE_INVALID_METHOD'], 'reported as malformed')
  t.equal(seen.exchanges.length, 1, 'and no exchange made up for it')
})
