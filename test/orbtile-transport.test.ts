import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync
} from 'node:fs'
import { spawn } from 'node:child_process'
import { isAbsolute, join } from 'node:path'
import t from 'tap'
import { startOrbtileMock } from '../src/orbtile-mock/index.js'
import {
  resolveDiscoveryPath,
  writeDiscoveryFile,
  discoveryContents,
  SPEC_DISCOVERY_SUFFIX
} from '../src/orbtile-mock/discovery.js'
import { StartupError } from '../src/shared/startup-error.js'
import { readDiscovery, scratch, startFake } from './helpers/fake.js'
import { SocketClient } from './helpers/client.js'
import { assertSpecError } from './helpers/assert.js'

const mode = (path: string) => statSync(path).mode & 0o777

t.test('OT-002 OT-003 OT-A04 an adapter reads socketPath, basePath and token from the discovery file and talks HTTP/1.1 over the socket', async (t) => {
  const fake = await startFake(t)
  const discovery = readDiscovery(fake.discoveryPath)
  t.same(Object.keys(discovery).sort(), ['api', 'basePath', 'socketPath', 'token'])
  t.equal(discovery.socketPath, fake.socketPath)
  t.ok(lstatSync(discovery.socketPath).isSocket(), 'socketPath names a Unix socket')
  const client = new SocketClient(discovery.socketPath, discovery.token)
  t.teardown(() => client.close())
  const reply = await client.request({ target: `${discovery.basePath}/info` })
  t.equal(reply.status, 200)
  t.equal(reply.json.server, 'orbtile')
})

t.test('OT-004 the discovery file says api 1 and basePath /a/v1', async (t) => {
  const fake = await startFake(t)
  const discovery = readDiscovery(fake.discoveryPath)
  t.equal(discovery.api, 1)
  t.equal(discovery.basePath, '/a/v1')
})

t.test(
  'OT-A04 the discovery file and the socket are 0600, the folders the fake made are 0700; the token is 256 random bits',
  async (t) => {
    const fake = await startFake(t)
    t.equal(mode(fake.discoveryPath), 0o600, 'discovery file 0600')
    t.equal(mode(fake.socketPath), 0o600, 'socket 0600')
    t.equal(mode(join(fake.dir, 'run')), 0o700, 'socket folder 0700')
    t.equal(mode(join(fake.dir, 'home')), 0o700, 'discovery folder 0700')
    const { token } = readDiscovery(fake.discoveryPath)
    t.match(token, /^[A-Za-z0-9_-]{43}$/)
    t.equal(Buffer.from(token, 'base64url').length, 32)
    const other = await startFake(t)
    t.not(readDiscovery(other.discoveryPath).token, token, 'each instance draws its own token')
  }
)

t.test("OT-A04 the discovery path: explicit, else ORBTILE_DISCOVERY, else the spec's place under HOME", async (t) => {
  t.equal(resolveDiscoveryPath('/x/d.json', { ORBTILE_DISCOVERY: '/y/d.json', HOME: '/h' }), '/x/d.json')
  t.equal(resolveDiscoveryPath(undefined, { ORBTILE_DISCOVERY: '/y/d.json', HOME: '/h' }), '/y/d.json')
  t.equal(
    resolveDiscoveryPath(undefined, { HOME: '/h' }),
    join('/h', 'Library/Application Support/Orbtile/adapter-api.json')
  )
  t.equal(SPEC_DISCOVERY_SUFFIX, join('Library', 'Application Support', 'Orbtile', 'adapter-api.json'))
})

t.test(
  'OT-A04 the discovery file is written atomically: a concurrent reader never sees a partial file, and no temp file is left',
  async (t) => {
    const dir = scratch(t)
    const path = join(dir, 'adapter-api.json')
    writeDiscoveryFile(path, discoveryContents('/s', 'first'))
    // A reader in another process, so that it really runs while the writes happen.
    const reader = spawn(process.execPath, [
      '-e',
      `
    const fs = require('fs'); let reads = 0, torn = 0; const end = Date.now() + 1500
    while (Date.now() < end) {
      reads++; try { JSON.parse(fs.readFileSync(${JSON.stringify(path)}, 'utf8')) } catch { torn++ }
    }
    console.log(JSON.stringify({ reads, torn }))`
    ])
    let out = ''
    reader.stdout.on('data', (chunk) => {
      out += chunk
    })
    let writes = 0
    let replaced = 0
    const until = Date.now() + 1200
    for (let i = 0; Date.now() < until; i++) {
      const before = statSync(path).ino
      writeDiscoveryFile(path, discoveryContents(`/s/${'x'.repeat((i % 50) * 200)}`, `token-${i}`))
      writes++
      if (statSync(path).ino !== before) replaced++
      await new Promise((resolve) => setImmediate(resolve))
    }
    await new Promise((resolve) => reader.once('exit', resolve))
    const { reads, torn } = JSON.parse(out)
    t.ok(reads > 1000, `the reader ran (${reads} reads)`)
    t.equal(torn, 0, 'never a partial or missing file')
    t.equal(replaced, writes, 'every write is a new file renamed into place, never an edit in place')
    t.same(readdirSync(dir), ['adapter-api.json'], 'no temp files left')
    t.equal(mode(path), 0o600)
  }
)

t.test('OT-A04 relative paths are made absolute: the discovery file always names an absolute socketPath', async (t) => {
  const dir = scratch(t)
  const cwd = process.cwd()
  process.chdir(dir)
  t.teardown(() => process.chdir(cwd))
  const fake = await startOrbtileMock({ socketPath: 'rel.sock', discoveryPath: 'rel.json' })
  t.teardown(() => fake.close())
  t.equal(readDiscovery(join(process.cwd(), 'rel.json')).socketPath, join(process.cwd(), 'rel.sock'))
  t.ok(isAbsolute(fake.socketPath) && isAbsolute(fake.discoveryPath))
})

t.test('OT-A04 a default socket folder that is a symlink is refused, and its target left alone', async (t) => {
  const dir = scratch(t)
  mkdirSync(join(dir, 'victim'), { mode: 0o755 })
  chmodSync(join(dir, 'victim'), 0o755)
  mkdirSync(join(dir, 'rt'))
  symlinkSync(join(dir, 'victim'), join(dir, 'rt', 'orbtest'))
  const saved = process.env.XDG_RUNTIME_DIR
  process.env.XDG_RUNTIME_DIR = join(dir, 'rt')
  t.teardown(() => {
    if (saved === undefined) delete process.env.XDG_RUNTIME_DIR
    else process.env.XDG_RUNTIME_DIR = saved
  })
  const err = await startOrbtileMock({ discoveryPath: join(dir, 'd.json') }).catch((e) => e)
  t.equal(err.code, 'ORBTEST_SOCKET_FOLDER_NOT_OURS')
  t.equal(mode(join(dir, 'victim')), 0o755, "the symlink's target keeps its mode")
  t.same(readdirSync(join(dir, 'victim')), [])
})

t.test('OT-A04 a discovery file that cannot be written stops start-up cleanly: no socket left, nothing listening', async (t) => {
  const dir = scratch(t)
  writeFileSync(join(dir, 'file'), 'x')
  const socketPath = join(dir, 'o.sock')
  const err = await startOrbtileMock({ socketPath, discoveryPath: join(dir, 'file', 'd.json') }).catch((e) => e)
  t.ok(err instanceof StartupError)
  t.match(err.message, /cannot write the discovery file/)
  t.notOk(existsSync(socketPath))
})

t.test('OT-A04 a stale socket file left by a dead process is replaced', async (t) => {
  const dir = scratch(t)
  const socketPath = join(dir, 'orbtile.sock')
  // A process killed while it listens leaves exactly this behind.
  const child = spawn(process.execPath, ['-e', `require('net').createServer().listen(${JSON.stringify(socketPath)}, () => console.log('up'))`])
  await new Promise((resolve) => child.stdout.once('data', resolve))
  child.kill('SIGKILL')
  await new Promise((resolve) => child.once('exit', resolve))
  t.ok(lstatSync(socketPath).isSocket(), 'a stale socket file exists')
  const fake = await startOrbtileMock({ socketPath, discoveryPath: join(dir, 'd.json') })
  t.teardown(() => fake.close())
  const client = new SocketClient(socketPath, fake.token)
  t.teardown(() => client.close())
  t.equal((await client.request()).status, 200)
})

t.test('OT-A04 a live socket makes start-up fail with a clear message, and the live one keeps working', async (t) => {
  const first = await startFake(t)
  const err = await startOrbtileMock({
    socketPath: first.socketPath,
    discoveryPath: join(first.dir, 'other.json')
  }).catch((e) => e)
  t.ok(err instanceof StartupError)
  t.equal(err.code, 'ORBTEST_SOCKET_IN_USE')
  t.match(err.message, first.socketPath)
  const client = new SocketClient(first.socketPath, first.token)
  t.teardown(() => client.close())
  t.equal((await client.request()).status, 200)
  t.equal(readDiscovery(first.discoveryPath).token, first.token, 'the first fake\'s discovery file is untouched')
})

t.test('OT-A04 a socket path over the OS limit, or a path that is not a socket, is refused clearly', async (t) => {
  const dir = scratch(t)
  const long = join(dir, 'x'.repeat(120), 's.sock')
  const tooLong = await startOrbtileMock({ socketPath: long, discoveryPath: join(dir, 'd.json') }).catch((e) => e)
  t.equal(tooLong.code, 'ORBTEST_SOCKET_PATH_TOO_LONG')
  t.match(tooLong.message, /107/)
  t.notOk(existsSync(join(dir, 'd.json')), 'no discovery file for a fake that did not start')
  const file = join(dir, 'plain')
  writeFileSync(file, 'keep me')
  const taken = await startOrbtileMock({ socketPath: file, discoveryPath: join(dir, 'd.json') }).catch((e) => e)
  t.equal(taken.code, 'ORBTEST_SOCKET_PATH_TAKEN')
  t.equal(readFileSync(file, 'utf8'), 'keep me', 'a user\'s file is never replaced')
})

t.test('OT-A04 close removes the socket and the discovery file, but not a discovery file another instance wrote since', async (t) => {
  const fake = await startFake(t)
  await fake.close()
  t.notOk(existsSync(fake.socketPath))
  t.notOk(existsSync(fake.discoveryPath))
  const dir = scratch(t)
  const discoveryPath = join(dir, 'd.json')
  const a = await startOrbtileMock({ socketPath: join(dir, 'a.sock'), discoveryPath })
  const b = await startOrbtileMock({ socketPath: join(dir, 'b.sock'), discoveryPath })
  await a.close()
  t.equal(readDiscovery(discoveryPath).socketPath, b.socketPath, 'b\'s file survives a\'s close')
  await b.close()
  t.notOk(existsSync(discoveryPath))
})

t.test('OT-A03 the API switched on as the fake closes: the close waits for the open, and nothing is left listening', async (t) => {
  const fake = await startFake(t, { apiEnabled: false })
  const opening = fake.control.setApi({ enabled: true })
  await fake.close()
  await opening
  t.notOk(existsSync(fake.socketPath), 'no socket')
  t.notOk(existsSync(fake.discoveryPath), 'no discovery file')
  t.same((await fake.control.setApi({ enabled: true })).listening, false,
    'once closed, switching the API on opens nothing')
})

t.test('OT-001 OT-A03 started with the API off there is no socket and no discovery file; switching it on opens both', async (t) => {
  const fake = await startFake(t, { apiEnabled: false })
  t.notOk(existsSync(fake.socketPath))
  t.notOk(existsSync(fake.discoveryPath))
  await fake.control.setApi({ enabled: true })
  const client = new SocketClient(fake.socketPath, readDiscovery(fake.discoveryPath).token)
  t.teardown(() => client.close())
  t.equal((await client.request()).status, 200)
})

t.test('OT-A03 switched off while listening, requests are api_disabled; with listening off, the socket and file go', async (t) => {
  const fake = await startFake(t)
  const client = new SocketClient(fake.socketPath, fake.token)
  t.teardown(() => client.close())
  t.same(await fake.control.setApi({ enabled: false }), { enabled: false, listening: true })
  assertSpecError(t, await client.request(), 'api_disabled')
  t.same(await fake.control.setApi({ enabled: false, listening: false }), { enabled: false, listening: false })
  t.notOk(existsSync(fake.socketPath))
  t.notOk(existsSync(fake.discoveryPath))
  const newcomer = new SocketClient(fake.socketPath, fake.token)
  t.teardown(() => newcomer.close())
  const refused = await newcomer.request().catch((e) => e)
  t.match(refused.code, /ENOENT|ECONNREFUSED/, 'a client sees the API as off')
  await fake.control.setApi({ enabled: true })
  t.equal((await new SocketClient(fake.socketPath, fake.token).request()).status, 200, 'on again, same token')
})

t.test('OT-023 OT-A04 regenerating the token rewrites the discovery file; the old token is refused', async (t) => {
  const fake = await startFake(t)
  const before = readDiscovery(fake.discoveryPath).token
  const client = new SocketClient(fake.socketPath, before)
  t.teardown(() => client.close())
  fake.control.regenerateToken()
  const after = readDiscovery(fake.discoveryPath).token
  t.not(after, before)
  t.equal(mode(fake.discoveryPath), 0o600)
  assertSpecError(t, await client.request(), 'unauthorized')
  client.token = after
  t.equal((await client.request()).status, 200, 'OT-A04: re-reading the file once recovers')
})

t.test('OT-023 a restart drops connections, writes a new token, and refills the buckets', async (t) => {
  // A virtual clock: on a real one the bucket refills while the 60 requests are sent.
  const fake = await startFake(t, { clockMode: 'virtual' })
  const client = new SocketClient(fake.socketPath, fake.token)
  t.teardown(() => client.close())
  for (let i = 0; i < 60; i++) await client.request()
  t.equal((await client.request()).status, 429)
  await fake.control.restart()
  // The restart closed every connection; an adapter reconnects.
  const again = new SocketClient(fake.socketPath, fake.token)
  t.teardown(() => again.close())
  again.token = client.token
  assertSpecError(t, await again.request(), 'unauthorized')
  again.token = readDiscovery(fake.discoveryPath).token
  t.equal((await again.request()).status, 200)
  t.equal(fake.control.state().restarts, 1)
})

t.test('OT-A04 the default socket folder must be private and ours', async (t) => {
  const dir = scratch(t)
  mkdirSync(join(dir, 'rt', 'orbtest'), { recursive: true, mode: 0o755 })
  const { defaultSocketPath } = await import('../src/orbtile-mock/socket.js')
  const path = defaultSocketPath({ XDG_RUNTIME_DIR: join(dir, 'rt') })
  t.equal(path, join(dir, 'rt', 'orbtest', 'orbtile.sock'))
  const saved = process.env.XDG_RUNTIME_DIR
  process.env.XDG_RUNTIME_DIR = join(dir, 'rt')
  t.teardown(() => {
    if (saved === undefined) delete process.env.XDG_RUNTIME_DIR
    else process.env.XDG_RUNTIME_DIR = saved
  })
  const fake = await startOrbtileMock({ discoveryPath: join(dir, 'd.json') })
  t.teardown(() => fake.close())
  t.equal(fake.socketPath, path)
  t.equal(mode(join(dir, 'rt', 'orbtest')), 0o700, 'an open default folder is made private')
})
