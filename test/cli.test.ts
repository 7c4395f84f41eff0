import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import t from 'tap'
import { COMMANDS } from '../src/cli/commands.js'
import type { FlagSpecs } from '../src/cli/flags.js'
import { run as runInProcess } from '../src/cli/main.js'
import { readDiscovery, scratch } from './helpers/fake.js'
import { SocketClient } from './helpers/client.js'
import { CLI } from './helpers/cli.js'
import { ROOT } from './helpers/root.js'

interface Run {
  child: ChildProcess
  stdout: () => string
  stderr: () => string
  exit: Promise<number | null>
}

function run (args: string[], env: Record<string, string> = {}): Run {
  const child = spawn(process.execPath, [CLI, ...args], {
    env: { ...process.env, ORBTILE_DISCOVERY: '', XDG_RUNTIME_DIR: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let out = ''
  let err = ''
  child.stdout!.on('data', (chunk) => { out += chunk })
  child.stderr!.on('data', (chunk) => { err += chunk })
  const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
  return { child, stdout: () => out, stderr: () => err, exit }
}

/** Starts the CLI with a ready file, kills it when the test ends, and waits until it is ready. */
async function started (
  t: { teardown(fn: () => unknown): void },
  args: string[],
  ready: string,
  env: Record<string, string> = {}
): Promise<Run> {
  const r = run([...args, '--ready-file', ready], env)
  t.teardown(() => r.child.kill('SIGKILL'))
  await waitForFile(ready, r)
  return r
}

async function waitForFile (path: string, child: Run): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (existsSync(path)) return
    if (child.child.exitCode !== null) throw new Error(`exited early: ${child.stderr()}`)
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
  throw new Error(`no ${path}; stderr: ${child.stderr()}`)
}

t.test('CLI-02 --help on the CLI and on each command exits 0 and lists the flags', async (t) => {
  const top = run(['--help'])
  t.equal(await top.exit, 0)
  t.match(top.stdout(), /Usage: orbtest <command>/)
  const common = ['--control-port', '--clock', '--log-level', '--ready-file', '--rate-limit']
  const orbtile = ['--discovery', '--socket', '--api', '--auto-allow', '--lease-silence', '--pid-check']
  const orb = ['--orb-port', '--world']
  const expected: Record<string, string[]> = {
    up: [...common, ...orbtile, ...orb],
    orbtile: [...common, ...orbtile],
    orb: [...common, ...orb]
  }
  for (const [command, flags] of Object.entries(expected)) {
    const help = run([command, '--help'])
    t.equal(await help.exit, 0)
    for (const flag of [...common, ...orbtile, ...orb]) {
      if (flags.includes(flag)) t.match(help.stdout(), `${flag} `, `${command} --help lists ${flag}`)
      else t.notMatch(help.stdout(), `${flag} `, `${command} --help does not list ${flag}`)
    }
  }
  const up = run(['up', '-h'])
  t.equal(await up.exit, 0)
  t.match(up.stdout(), '--orb-port')
})

t.test('CLI-03 unknown flags, bad values and unknown commands are refused with one line and exit code 2', async (t) => {
  for (const args of [
    ['up', '--bogus'], ['up', '--clock', 'fast'], ['up', '--control-port', '70000'], ['up', '--control-port', 'x'],
    ['orbtile', '--log-level', 'loud'], ['orbtile', '--orb-port', '1'], ['up', '--api', 'maybe'], ['up', 'stray'],
    ['up', '--discovery'], ['nonsense']
  ]) {
    const r = run(args)
    t.equal(await r.exit, 2, args.join(' '))
    t.equal(r.stderr().trim().split('\n').length, 1, `one line: ${r.stderr().trim()}`)
    t.match(r.stderr(), /^orbtest: /)
  }
})

t.test(
  'CLI-01 every command words a flag mistake the same way, whether the value follows with "=" or a space',
  async (t) => {
    const cases: Array<[string[], RegExp]> = [
      [
        ['orbtile', '--lease-silence', '-5'],
        /^orbtest: --lease-silence must be whole seconds from 1 to 86400, not "-5"\./
      ],
      [
        ['orbtile', '--lease-silence=-5'],
        /^orbtest: --lease-silence must be whole seconds from 1 to 86400, not "-5"\./
      ],
      [
        ['conformance', '--runs', '-5', '--target', 'orbtile'],
        /^orbtest: --runs must be an integer from 1 to 100000, not "-5"\./
      ],
      [['up', '--bogus'], /^orbtest: unknown flag --bogus\./],
      [['conformance', '--bogus'], /^orbtest: unknown flag --bogus\./],
      [['conformance', '--seed'], /^orbtest: --seed needs a value\./],
      [
        ['conformance', '--target', 'foo'],
        /^orbtest: --target must be orbtile, orbtile:PATH, unix:SOCKET or an Orb's http\(s\):\/\/ origin, not "foo"\./
      ],
      [
        ['conformance', '--target', 'http://127.0.0.1:1/x', '--control', 'http://127.0.0.1:1'],
        /^orbtest: an Orb target is the server's origin/
      ]
    ]
    for (const [args, message] of cases) {
      const r = run(args)
      t.equal(await r.exit, 2, args.join(' '))
      t.match(r.stderr(), message, args.join(' '))
      t.equal(r.stderr().trim().split('\n').length, 1, `one line: ${r.stderr().trim()}`)
    }
    // Nothing listens on port 1; the answer names the refusal, not the fetch standard's list of "bad ports".
    const refused = run(['conformance', '--target', 'http://127.0.0.1:1', '--control', 'http://127.0.0.1:1'])
    t.equal(await refused.exit, 2)
    t.match(refused.stderr(), /^orbtest: the Orb at http:\/\/127\.0\.0\.1:1 cannot be reached: ECONNREFUSED$/m)
  }
)

t.test(
  'CLI-05 a discovery folder the file system cannot make (/proc/nope) fails at once, exit 1, and leaves no socket',
  { skip: existsSync('/proc/self') ? false : 'needs Linux /proc' },
  async (t) => {
    const dir = scratch(t)
    const started = Date.now()
    const r = run([
      'orbtile',
      '--discovery',
      '/proc/nope/d.json',
      '--socket',
      join(dir, 'o.sock'),
      '--control-port',
      '0'
    ])
    const timer = setTimeout(() => r.child.kill('SIGKILL'), 10_000)
    t.equal(await r.exit, 1, 'exit code (a hang is killed after 10 s)')
    clearTimeout(timer)
    t.ok(Date.now() - started < 10_000, `ended in ${Date.now() - started} ms`)
    t.match(r.stderr(), /^orbtest: cannot write the discovery file \/proc\/nope\/d\.json: ENOENT/)
    t.equal(r.stderr().trim().split('\n').length, 1, r.stderr())
    t.notOk(existsSync(join(dir, 'o.sock')), 'no socket left behind')
  }
)

t.test(
  'OT-A04 cli: orbtile starts, writes the ready file, prints where it listens but never the token, logs no token, and SIGTERM removes socket, discovery and ready file',
  async (t) => {
    const dir = scratch(t)
    const ready = join(dir, 'ready.json')
    const discovery = join(dir, 'd', 'adapter-api.json')
    const socket = join(dir, 's', 'o.sock')
    const r = await started(
      t,
      ['orbtile', '--discovery', discovery, '--socket', socket, '--control-port', '0', '--log-level', 'trace'],
      ready
    )
    const info = JSON.parse(readFileSync(ready, 'utf8'))
    t.same(Object.keys(info).sort(), ['control', 'orbtile'])
    t.same(info.orbtile, { discovery, socketPath: socket, basePath: '/a/v1' })
    t.match(info.control.url, /^http:\/\/127\.0\.0\.1:\d+$/)
    const { token } = readDiscovery(discovery)
    const client = new SocketClient(socket, token)
    t.equal((await client.request({ headers: { 'x-orbtile-adapter-token': 'secret-adapter-token' } })).status, 200)
    t.equal((await client.request({ headers: { authorization: 'Bearer wrong-token-xyz' } })).status, 401)
    client.close()
    await new Promise((resolve) => setTimeout(resolve, 100))
    t.match(r.stdout(), socket)
    t.match(r.stdout(), discovery)
    t.match(r.stdout(), info.control.url)
    t.notMatch(r.stdout() + r.stderr(), token, 'the token is never printed or logged')
    t.notMatch(r.stderr(), /secret-adapter-token|wrong-token-xyz/, 'no credential header is logged')
    t.match(r.stderr(), /"level":/, 'trace logging is on, to stderr')
    r.child.kill('SIGTERM')
    t.equal(await r.exit, 0)
    t.notOk(existsSync(socket), 'socket removed')
    t.notOk(existsSync(discovery), 'discovery file removed')
    t.notOk(existsSync(ready), 'ready file removed')
  }
)

t.test(
  "OT-002 cli: without --discovery the file lands at the spec's place under HOME, or at ORBTILE_DISCOVERY",
  async (t) => {
    const dir = scratch(t)
    const home = join(dir, 'home')
    const ready = join(dir, 'ready.json')
    const r = await started(
      t,
      ['up', '--socket', join(dir, 'o.sock'), '--control-port', '0', '--orb-port', '0'],
      ready,
      { HOME: home }
    )
    const expected = join(home, 'Library', 'Application Support', 'Orbtile', 'adapter-api.json')
    t.equal(JSON.parse(readFileSync(ready, 'utf8')).orbtile.discovery, expected)
    t.ok(existsSync(expected))
    r.child.kill('SIGINT')
    t.equal(await r.exit, 0)
    const viaEnv = join(dir, 'env.json')
    const e = await started(t, ['orbtile', '--socket', join(dir, 'e.sock'), '--control-port', '0'], ready, {
      HOME: home,
      ORBTILE_DISCOVERY: viaEnv
    })
    t.ok(existsSync(viaEnv))
    e.child.kill('SIGTERM')
    t.equal(await e.exit, 0)
  }
)

t.test(
  'OT-A04 cli: a live socket, a socket path that is too long, or a busy control port stop start-up with one clear line',
  async (t) => {
    const dir = scratch(t)
    const socket = join(dir, 'o.sock')
    const ready = join(dir, 'ready.json')
    const first = await started(
      t,
      ['orbtile', '--discovery', join(dir, 'd.json'), '--socket', socket, '--control-port', '0'],
      ready
    )
    const second = run(['orbtile', '--discovery', join(dir, 'd2.json'), '--socket', socket, '--control-port', '0'])
    t.equal(await second.exit, 1)
    t.match(second.stderr(), /^orbtest: another process is listening on .*o\.sock/)
    t.notMatch(second.stderr(), /\n\s+at /, 'no stack trace')
    const long = run([
      'orbtile',
      '--discovery',
      join(dir, 'd3.json'),
      '--socket',
      join(dir, 'x'.repeat(110), 's.sock'),
      '--control-port',
      '0'
    ])
    t.equal(await long.exit, 1)
    t.match(long.stderr(), /socket path is \d+ bytes; the OS allows 107/)
    const port = Number(new URL(JSON.parse(readFileSync(ready, 'utf8')).control.url).port)
    const busy = run([
      'orbtile',
      '--discovery',
      join(dir, 'd4.json'),
      '--socket',
      join(dir, 'p.sock'),
      '--control-port',
      String(port)
    ])
    t.equal(await busy.exit, 1)
    t.match(busy.stderr(), new RegExp(`port ${port} .* in use`))
    t.notOk(existsSync(join(dir, 'p.sock')), 'a failed start leaves no socket behind')
    t.notOk(existsSync(join(dir, 'd4.json')), 'nor a discovery file')
    first.child.kill('SIGTERM')
    t.equal(await first.exit, 0)
  }
)

t.test('OT-001 cli: --api off starts with no socket and no discovery file', async (t) => {
  const dir = scratch(t)
  const ready = join(dir, 'ready.json')
  const r = await started(
    t,
    [
      'orbtile',
      '--api',
      'off',
      '--discovery',
      join(dir, 'd.json'),
      '--socket',
      join(dir, 'o.sock'),
      '--control-port',
      '0'
    ],
    ready
  )
  t.notOk(existsSync(join(dir, 'o.sock')))
  t.notOk(existsSync(join(dir, 'd.json')))
  // The ready file can land before the banner's bytes reach this process: wait for them a little.
  for (let i = 0; i < 40 && !/API off/.test(r.stdout()); i++) await new Promise((resolve) => setTimeout(resolve, 50))
  t.match(r.stdout(), /API off/)
  r.child.kill('SIGTERM')
  t.equal(await r.exit, 0)
})

t.test('OT-A04 cli: a second Ctrl-C while stopping still exits through cleanup, leaving no files', async (t) => {
  const dir = scratch(t)
  const ready = join(dir, 'ready.json')
  const socket = join(dir, 'o.sock')
  const discovery = join(dir, 'd.json')
  const r = await started(t, ['orbtile', '--discovery', discovery, '--socket', socket, '--control-port', '0'], ready)
  r.child.kill('SIGINT')
  r.child.kill('SIGINT')
  const code = await r.exit
  t.ok(code === 0 || code === 130, `exited with a code (${code}), not killed by the signal`)
  t.notOk(existsSync(socket))
  t.notOk(existsSync(discovery))
  t.notOk(existsSync(ready))
})

t.test('CLI-04 a file-system fault at start-up is one line, exit 1, no stack trace', async (t) => {
  const dir = scratch(t)
  const r = run([
    'orbtile',
    '--discovery',
    '/etc/passwd/d.json',
    '--socket',
    join(dir, 'o.sock'),
    '--control-port',
    '0'
  ])
  t.equal(await r.exit, 1)
  t.equal(r.stderr().trim().split('\n').length, 1, r.stderr())
  t.match(r.stderr(), /^orbtest: cannot write the discovery file/)
  t.notOk(existsSync(join(dir, 'o.sock')))
  const ready = run([
    'orbtile',
    '--discovery',
    join(dir, 'd.json'),
    '--socket',
    join(dir, 'p.sock'),
    '--control-port',
    '0',
    '--ready-file',
    join(dir, 'no', 'such', 'r.json')
  ])
  t.equal(await ready.exit, 1)
  t.match(ready.stderr(), /^orbtest: cannot write the ready file/)
  t.notOk(existsSync(join(dir, 'p.sock')))
})

t.test(
  'ORB-A04 cli: orb runs the fake Orb alone, prints each demo app with its token, writes orb.url to the ready file',
  async (t) => {
    const dir = scratch(t)
    const ready = join(dir, 'ready.json')
    const r = await started(t, ['orb', '--orb-port', '0', '--control-port', '0'], ready)
    const info = JSON.parse(readFileSync(ready, 'utf8'))
    t.same(Object.keys(info).sort(), ['control', 'orb'])
    t.match(info.orb.url, /^http:\/\/127\.0\.0\.1:\d+$/)
    await new Promise((resolve) => setTimeout(resolve, 100))
    t.match(r.stdout(), /app app_demo\s+Demo Bot\s+token orb_demo_0{34}/)
    t.match(r.stdout(), /app app_lite\s+Lite Bot\s+token orb_lite_/)
    const reply = await fetch(`${info.orb.url}/api/bot/v1/app`, {
      headers: { authorization: 'Bearer orb_demo_0000000000000000000000000000000000' }
    })
    t.equal(reply.status, 200)
    t.equal(((await reply.json()) as { app: { id: string } }).app.id, 'app_demo')
    r.child.kill('SIGTERM')
    t.equal(await r.exit, 0)
    t.notOk(existsSync(ready), 'ready file removed')
  }
)

t.test('ORB-A04 cli: a world file that breaks the schema stops start-up with every bad path named', async (t) => {
  const dir = scratch(t)
  const world = JSON.parse(
    readFileSync(
      join(ROOT, 'fixtures', 'orb-world.json'),
      'utf8'
    )
  )
  world.apps[1].scopes = ['messages:read', 'admin']
  world.installs[0].community = 'srv_nowhere'
  const file = join(dir, 'world.json')
  writeFileSync(file, JSON.stringify(world))
  const bad = run(['orb', '--orb-port', '0', '--control-port', '0', '--world', file])
  t.equal(await bad.exit, 1)
  t.match(bad.stderr(), /apps\[1\]\.scopes\[1\]: must be one of/)
  t.notMatch(bad.stderr(), /\n\s+at /, 'no stack trace')
  world.apps[1].scopes = ['messages:read']
  writeFileSync(file, JSON.stringify(world))
  const dangling = run(['orb', '--orb-port', '0', '--control-port', '0', '--world', file])
  t.equal(await dangling.exit, 1)
  t.match(dangling.stderr(), /installs\[0\]\.community: no community "srv_nowhere"/)
  const missing = run(['orb', '--orb-port', '0', '--control-port', '0', '--world', join(dir, 'nope.json')])
  t.equal(await missing.exit, 1)
  t.match(missing.stderr(), /cannot read the world file .*nope\.json: ENOENT/)
})

t.test('CLI-06 the command is a plain Node script: a #! line for Node, executable, started as a user starts it', async (t) => {
  t.equal(readFileSync(CLI, 'utf8').split('\n')[0], '#!/usr/bin/env node', 'its first line')
  t.ok((statSync(CLI).mode & 0o111) !== 0, 'executable')
  const version = spawnSync(CLI, ['--version'], { encoding: 'utf8' })
  t.equal(version.status, 0, 'run as a command')
  t.match(version.stdout, /^\d+\.\d+\.\d+/, 'it prints its version')
})

t.test('CLI-07 every command of the table answers --help, exit 0, with its usage and each flag it lists', async (t) => {
  for (const command of COMMANDS) {
    const words = [command.name, ...(command.verb === undefined ? [] : [command.verb])]
    const chosen = command.chosenBy === undefined ? [] : [command.chosenBy, 'orbtile']
    let text = ''
    const out = new Writable({
      write (chunk: Buffer, _encoding, done) {
        text += chunk.toString()
        done()
      }
    })
    t.equal(await runInProcess([...words, ...chosen, '--help'], out), 0, `${words.join(' ')} --help`)
    t.ok(text.startsWith(`Usage: ${command.usage}\n`), `${words.join(' ')}: its usage first`)
    for (const [name, spec] of Object.entries(command.flags as FlagSpecs)) {
      if (spec.unlisted !== true) t.match(text, `--${name}`, `${words.join(' ')} --help lists --${name}`)
    }
  }
})
