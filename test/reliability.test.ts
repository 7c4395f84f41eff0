// What a misbehaving client cannot do to a fake: leave a socket behind, get no answer, hold its stop. Every check
// runs over the real transports (the Orbtile's Unix socket, the Orb's and the control server's loopback ports).
import { spawn } from 'node:child_process'
import { request as httpRequest } from 'node:http'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { connect, type Socket } from 'node:net'
import { join } from 'node:path'
import t from 'tap'
import { startOrbtest, type Orbtest } from '../src/orbtest.js'
import { removeStaleTemps } from '../src/orbtile-mock/discovery.js'
import { DEMO } from './helpers/orb.js'
import { readDiscovery, scratch, type Teardown } from './helpers/fake.js'
import { CLI } from './helpers/cli.js'

interface Target {
  name: string
  open: () => Socket
  head: (path: string, extra?: string) => string
  server: () => Orbtest['control']['app']['server']
}

async function setup (tt: Teardown): Promise<{ fakes: Orbtest, targets: Target[] }> {
  const dir = scratch(tt)
  const fakes = await startOrbtest({
    orbtile: { discoveryPath: join(dir, 'd.json'), socketPath: join(dir, 'o.sock'), pidCheck: 'off' },
    orb: { port: 0 },
    controlPort: 0,
    clockMode: 'virtual'
  })
  tt.teardown(() => fakes.close())
  const token = readDiscovery(fakes.orbtile!.discoveryPath).token
  const orbPort = fakes.orb!.port
  const controlPort = fakes.control.port
  const targets: Target[] = [
    {
      name: 'orbtile',
      open: () => connect(fakes.orbtile!.socketPath),
      head: (path, extra = '') => `PUT /a/v1${path} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${token}\r\n${extra}`,
      server: () => fakes.orbtile!.app.server
    },
    {
      name: 'orb',
      open: () => connect(orbPort, '127.0.0.1'),
      head: (path, extra = '') =>
        `POST /api/bot/v1${path} HTTP/1.1\r\nHost: 127.0.0.1:${orbPort}\r\nAuthorization: Bearer ${DEMO.token}\r\n${extra}`,
      server: () => fakes.orb!.app.server
    },
    {
      name: 'control',
      open: () => connect(controlPort, '127.0.0.1'),
      head: (path, extra = '') => `POST /control/orb${path} HTTP/1.1\r\nHost: 127.0.0.1:${controlPort}\r\n${extra}`,
      server: () => fakes.control.app.server
    }
  ]
  return { fakes, targets }
}

/** Sends bytes, and resolves with what came back once the server closed, or after `ms`. */
function exchange (
  socket: Socket,
  bytes: string,
  ms = 2000
): Promise<{ text: string; closed: boolean; firstByteMs: number }> {
  const started = Date.now()
  let firstByteMs = -1
  return new Promise((resolve) => {
    let text = ''
    const timer = setTimeout(() => { socket.destroy(); resolve({ text, closed: false, firstByteMs }) }, ms)
    socket.on('data', (chunk) => {
      if (firstByteMs < 0) firstByteMs = Date.now() - started
      text += chunk.toString('latin1')
    })
    socket.on('error', () => {})
    socket.on('close', () => { clearTimeout(timer); resolve({ text, closed: true, firstByteMs }) })
    socket.write(bytes)
  })
}

const connections = (server: Target['server'] extends () => infer S ? S : never): Promise<number> =>
  new Promise((resolve, reject) =>
    server.getConnections((err, n) => {
      if (err !== null) reject(err)
      else resolve(n)
    })
  )

async function settles (check: () => Promise<boolean>, ms = 3000): Promise<boolean> {
  const end = Date.now() + ms
  while (Date.now() < end) {
    if (await check()) return true
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  return check()
}

t.test(
  'REL-01 a client that leaves half-way through its body leaves no socket open on any of the three servers',
  async (t) => {
    const { targets } = await setup(t)
    for (const target of targets) {
      const before = await connections(target.server())
      const sockets = Array.from({ length: 25 }, () => target.open())
      await Promise.all(
        sockets.map(
          (socket, i) =>
            new Promise<void>((resolve) => {
              socket.on('error', () => {})
              const path = target.name === 'orbtile' ? `/adapters/org.example.r${i}` : '/messages'
              socket.write(`${target.head(path)}Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"a":`)
              setTimeout(() => {
                socket.destroy()
                resolve()
              }, 50)
            })
        )
      )
      t.ok(
        await settles(async () => (await connections(target.server())) === before),
        `${target.name}: back to ${before} connections`
      )
    }
  }
)

t.test(
  "REL-02 a framing error inside a body is answered at once with the API's JSON 400, and the connection closes",
  async (t) => {
    const { targets } = await setup(t)
    for (const target of targets.filter((x) => x.name !== 'orbtile')) {
      for (const [what, tail] of [
        ['a bad chunk size', 'Transfer-Encoding: chunked\r\n\r\nzz\r\n'],
        ['Transfer-Encoding: gzip', 'Transfer-Encoding: gzip\r\n\r\n{}'],
        ['Transfer-Encoding: identity', 'Transfer-Encoding: identity\r\n\r\n{}']
      ]) {
        const got = await exchange(
          target.open(),
          `${target.head('/messages')}Content-Type: application/json\r\n${tail}`
        )
        t.match(got.text, /^HTTP\/1\.1 400 /, `${target.name}, ${what}: 400`)
        const body = got.text.slice(got.text.indexOf('\r\n\r\n') + 4)
        t.doesNotThrow(() => JSON.parse(body), `${target.name}, ${what}: a JSON body`)
        t.ok(got.closed, `${target.name}, ${what}: closed (not left open until the client goes)`)
      }
    }
    // The Orbtile takes no chunked body at all (OT-025): 411, as before.
    const got = await exchange(
      targets[0]!.open(),
      `${targets[0]!.head('/adapters/org.example.x')}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n`
    )
    t.match(got.text, /^HTTP\/1\.1 411 /)
  }
)

t.test(
  'REL-03 Expect: 100-continue gets 100 Continue once the head has passed its checks, and never for a refused head',
  async (t) => {
    const { targets } = await setup(t)
    for (const target of targets) {
      const path = target.name === 'orbtile' ? '/adapters/org.example.cont' : '/messages'
      const invited = await exchange(
        target.open(),
        `${target.head(path)}Content-Type: application/json\r\nContent-Length: 2\r\nExpect: 100-continue\r\n\r\n`,
        300
      )
      t.match(invited.text, /^HTTP\/1\.1 100 Continue\r\n/, `${target.name}: 100 Continue`)
      t.ok(invited.firstByteMs >= 0 && invited.firstByteMs < 250, `${target.name}: at once (${invited.firstByteMs} ms)`)
    }
    const orb = targets[1]!
    const refused = await exchange(
      orb.open(),
      orb.head('/messages').replace(DEMO.token, 'orb_nobody') +
        'Content-Type: application/json\r\nContent-Length: 2\r\nExpect: 100-continue\r\n\r\n',
      500
    )
    t.match(refused.text, /^HTTP\/1\.1 401 /, 'a bad token is refused without inviting the body')
  }
)

t.test(
  'REL-04 the control server refuses an ambiguous authority: two Host headers, or an absolute-form target',
  async (t) => {
    const { fakes } = await setup(t)
    const port = fakes.control.port
    for (const [what, bytes] of [
      ['two Host headers', `GET /control/clock HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nHost: evil.example\r\n\r\n`],
      ['an absolute-form target', `GET http://evil.example/control/clock HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`]
    ] as Array<[string, string]>) {
      const got = await exchange(connect(port, '127.0.0.1'), `${bytes}`, 500)
      t.match(got.text, /^HTTP\/1\.1 400 /, what)
      t.match(got.text, /"code":"bad_request"/, `${what}: the control API's body`)
    }
    const fine = await exchange(
      connect(port, '127.0.0.1'),
      `GET /control/clock HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n`
    )
    t.match(fine.text, /^HTTP\/1\.1 200 /, 'one loopback Host and a path still pass')
  }
)

t.test('REL-05 HEAD with a malformed request line gets the 400 status and headers, without a body', async (t) => {
  const { targets } = await setup(t)
  for (const target of targets) {
    const got = await exchange(target.open(), 'HEAD /x HTTP/1.1 junk\r\nHost: localhost\r\n\r\n')
    t.match(got.text, /^HTTP\/1\.1 400 /, target.name)
    t.equal(got.text.slice(got.text.indexOf('\r\n\r\n') + 4), '', `${target.name}: no body`)
  }
})

t.test(
  'REL-06 close() ends every fake within 2 s whatever clients do: half-sent bodies, slow headers, held polls, idle connections',
  async (t) => {
    const { fakes, targets } = await setup(t)
    const sockets: Socket[] = []
    for (const target of targets) {
      for (let i = 0; i < 5; i++) {
        const s = target.open()
        s.on('error', () => {})
        s.write(`${target.head('/messages')}Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{`)
        sockets.push(s)
        const slow = target.open()
        slow.on('error', () => {})
        slow.write('GET /a')
        sockets.push(slow)
      }
      for (let i = 0; i < 300; i++) {
        const idle = target.open()
        idle.on('error', () => {})
        sockets.push(idle)
      }
    }
    // A held long poll on the Orb (wait=20 on a virtual clock waits until the clock moves).
    const poll = connect(fakes.orb!.port, '127.0.0.1')
    poll.on('error', () => {})
    poll.write(
      `GET /api/bot/v1/events?wait=20 HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${DEMO.token}\r\n\r\n`
    )
    sockets.push(poll)
    await new Promise((resolve) => setTimeout(resolve, 300))
    const started = Date.now()
    await fakes.close()
    t.ok(Date.now() - started < 2000, `closed in ${Date.now() - started} ms`)
    for (const s of sockets) s.destroy()
  }
)

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  t.test(
    `REL-07 ${signal} stops \`orbtest up\` within 2 s with exit code 0: half-sent bodies, slow headers, a held poll, 1000 idle connections`,
    async (t) => {
      const dir = scratch(t)
      const ready = join(dir, 'ready.json')
      const args = ['up', '--orb-port', '0', '--control-port', '0', '--discovery', join(dir, 'd.json'),
        '--socket', join(dir, 'o.sock'), '--ready-file', ready]
      const child = spawn(process.execPath, [CLI, ...args], { stdio: 'ignore' })
      const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
      t.teardown(() => child.kill('SIGKILL'))
      for (let i = 0; i < 400 && !existsSync(ready); i++) await new Promise((resolve) => setTimeout(resolve, 25))
      const info = JSON.parse(readFileSync(ready, 'utf8'))
      const open = (url: URL): Socket => {
        const s = connect(Number(url.port), '127.0.0.1')
        s.on('error', () => {})
        return s
      }
      const urls = [new URL(info.orb.url), new URL(info.control.url)]
      const sockets: Socket[] = []
      for (const url of urls) {
        const half = open(url)
        half.write(`POST /x HTTP/1.1\r\nHost: ${url.host}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{`)
        const slow = open(url)
        slow.write('GET /api/bot/v1/app HTTP/1.1\r\nHo')
        sockets.push(half, slow, ...Array.from({ length: 500 }, () => open(url)))
      }
      const poll = open(urls[0]!)
      poll.write(`GET /api/bot/v1/events?wait=25 HTTP/1.1\r\nHost: ${urls[0]!.host}\r\nAuthorization: Bearer ${DEMO.token}\r\n\r\n`)
      sockets.push(poll)
      await new Promise((resolve) => setTimeout(resolve, 300))
      const started = Date.now()
      child.kill(signal)
      t.equal(await exit, 0, 'exit code')
      t.ok(Date.now() - started < 2000, `stopped in ${Date.now() - started} ms`)
      t.notOk(existsSync(join(dir, 'o.sock')), 'the socket is removed')
      t.notOk(existsSync(join(dir, 'd.json')), 'the discovery file is removed')
      for (const s of sockets) s.destroy()
    }
  )
}

t.test(
  "REL-08 temp files a killed writer left beside the discovery file are removed; a live writer's are kept",
  async (t) => {
    const dir = scratch(t)
    const path = join(dir, 'adapter-api.json')
    const dead = join(dir, '.adapter-api.json.999999999.a1b2c3.tmp')
    const live = join(dir, `.adapter-api.json.${process.ppid}.d4e5f6.tmp`)
    const other = join(dir, '.other.json.999999999.a1b2c3.tmp')
    for (const file of [dead, live, other]) writeFileSync(file, '{"token":"secret"}', { mode: 0o600 })
    removeStaleTemps(path)
    t.notOk(existsSync(dead), "a dead writer's temp file is gone")
    t.ok(existsSync(live), "a running writer's temp file stays")
    t.ok(existsSync(other), "another file's temp file stays")
  }
)

t.test(
  "REL-09 a body over a server's limit gets 413 in the API's shape, from the Orb and from the control server",
  async (t) => {
    const { fakes } = await setup(t)
    const body = JSON.stringify({ channel: 'ch_general', content: 'a'.repeat(1_100_000) })
    for (const [what, url, headers] of [
      ['orb', `${fakes.orb!.url}/api/bot/v1/messages`, { authorization: `Bearer ${DEMO.token}` }],
      ['control', `${fakes.control.url}/control/orb/messages`, {}]
    ] as Array<[string, string, Record<string, string>]>) {
      const reply = await fetch(url, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json' },
        body
      })
      t.equal(reply.status, 413, what)
      const json = (await reply.json()) as { error: { code: unknown } }
      t.equal(json.error.code, what === 'orb' ? 413 : 'payload_too_large', `${what}: its error body`)
    }
  }
)

t.test('REL-10 RFC 9112 §9.6 a body refused before it is read still lets the uploading client read its 413 (no reset)', async (t) => {
  // The fake runs in a process of its own, as an adapter meets it: in one process the reset rarely shows.
  const dir = scratch(t)
  const ready = join(dir, 'ready.json')
  const child = spawn(process.execPath, [CLI, 'orbtile', '--rate-limit', 'off', '--control-port', '0',
    '--discovery', join(dir, 'd.json'), '--socket', join(dir, 'o.sock'), '--ready-file', ready], { stdio: 'ignore' })
  t.teardown(() => child.kill('SIGKILL'))
  for (let i = 0; i < 400 && !existsSync(ready); i++) await new Promise((resolve) => setTimeout(resolve, 25))
  const token = readDiscovery(join(dir, 'd.json')).token
  const body = Buffer.alloc(4_000_000, 0x20)
  const outcomes: Record<string, number> = {}
  // Before the staged close, about one upload in twenty met EPIPE or ECONNRESET instead of its answer.
  for (let i = 0; i < 150; i++) {
    const outcome = await new Promise<string>((resolve) => {
      const req = httpRequest({
        socketPath: join(dir, 'o.sock'),
        path: '/a/v1/adapters/org.example.big',
        method: 'PUT',
        agent: false,
        headers: { host: 'localhost', authorization: `Bearer ${token}`, 'content-type': 'application/json' }
      }, (res) => {
        res.resume()
        res.on('end', () => resolve(String(res.statusCode)))
      })
      req.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'error'))
      req.end(body)
    })
    outcomes[outcome] = (outcomes[outcome] ?? 0) + 1
  }
  t.same(outcomes, { 413: 150 }, 'every upload reads its refusal')
})

t.test('REL-11 one authority on every server: two Host headers are 400 on the Orb too, an absolute-form target is 400 on the Orbtile', async (t) => {
  const { fakes, targets } = await setup(t)
  const orb = targets[1]!
  const twice = await exchange(orb.open(), `GET /api/orb/directory HTTP/1.1\r\nHost: 127.0.0.1:${fakes.orb!.port}\r\nHost: evil.example\r\n\r\n`, 500)
  t.match(twice.text, /^HTTP\/1\.1 400 /, 'orb: two Host headers')
  t.match(twice.text, /"code":400/, 'orb: its error body')
  // No route, and a body over the Orb's limit: the second Host is refused from the head, never a 413 for the body.
  const unrouted = await exchange(orb.open(), `POST /nowhere HTTP/1.1\r\nHost: 127.0.0.1:${fakes.orb!.port}\r\nHost: evil.example\r\nContent-Type: application/json\r\nContent-Length: 2000000\r\n\r\n{}`, 500)
  t.match(unrouted.text, /^HTTP\/1\.1 400 /, 'orb: two Host headers on a path no route takes, with a large body')
  const token = readDiscovery(fakes.orbtile!.discoveryPath).token
  const absolute = await exchange(targets[0]!.open(), `GET http://evil.example/a/v1/info HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${token}\r\n\r\n`, 500)
  t.match(absolute.text, /^HTTP\/1\.1 400 /, 'orbtile: an absolute-form target')
  t.match(absolute.text, /"code":"bad_request"/, 'orbtile: its error body')
})

t.test('REL-12 an expectation other than 100-continue is ignored (RFC 9110 §10.1.1), never Node\'s bodiless 417', async (t) => {
  const { fakes, targets } = await setup(t)
  const token = readDiscovery(fakes.orbtile!.discoveryPath).token
  for (const [target, bytes] of [
    [targets[0]!, `GET /a/v1/info HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${token}\r\nExpect: dance\r\nConnection: close\r\n\r\n`],
    [targets[1]!, 'GET /api/orb/directory HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: dance\r\nConnection: close\r\n\r\n'],
    [targets[2]!, `GET /control/clock HTTP/1.1\r\nHost: 127.0.0.1:${fakes.control.port}\r\nExpect: dance\r\nConnection: close\r\n\r\n`]
  ] as Array<[Target, string]>) {
    const got = await exchange(target.open(), bytes)
    t.match(got.text, /^HTTP\/1\.1 200 /, `${target.name}: served`)
    t.match(got.text, /\r\ncontent-type: application\/json/i, `${target.name}: JSON`)
  }
})

t.test('REL-13 CONNECT is answered and closed whatever its client does next: a reset crashes nothing, more bytes hold no stop', async (t) => {
  const { fakes, targets } = await setup(t)
  const orb = targets[1]!
  for (let i = 0; i < 20; i++) {
    const s = orb.open()
    s.on('error', () => {})
    s.write('CONNECT a:1 HTTP/1.1\r\nHost: a:1\r\n\r\n')
    s.resetAndDestroy()
  }
  const after = orb.open()
  const more = await exchange(after, 'CONNECT a:1 HTTP/1.1\r\nHost: a:1\r\n\r\n', 300)
  t.match(more.text, /^HTTP\/1\.1 400 /, 'CONNECT gets the API\'s 400')
  const leaver = orb.open()
  leaver.on('error', () => {})
  leaver.write('CONNECT a:1 HTTP/1.1\r\nHost: a:1\r\n\r\n')
  await new Promise((resolve) => setTimeout(resolve, 50))
  leaver.write('more bytes after the CONNECT')
  leaver.destroy()
  const directory = await fetch(`${fakes.orb!.url}/api/orb/directory`)
  t.equal(directory.status, 200, 'the fake Orb still serves after 20 resets')
  const started = Date.now()
  await fakes.close()
  t.ok(Date.now() - started < 2000, `closed in ${Date.now() - started} ms`)
})
