// PKG-01: the package as a user gets it. `npm pack`, the tarball installed into an empty project (no
// devDependencies, no build on install), and every command started from there, as `npx orbtest` would.
import { execFileSync, spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { ROOT } from './helpers/root.js'

const root = ROOT
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'

const work = mkdtempSync(join(tmpdir(), 'orbtest-pkg-'))
t.teardown(() => rmSync(work, { recursive: true, force: true }))

// The tarball is made from a current build (npm test builds what changed first).
execFileSync(process.execPath, [join(root, 'scripts', 'build-if-stale.js')], { cwd: root, stdio: 'ignore' })
const packed = JSON.parse(
  execFileSync(npm, ['pack', '--ignore-scripts', '--json', '--pack-destination', work], { cwd: root, encoding: 'utf8' })
)[0]
const project = join(work, 'project')
execFileSync('mkdir', ['-p', project])
writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'empty', version: '1.0.0', private: true }))
execFileSync(
  npm,
  ['install', '--prefer-offline', '--no-audit', '--no-fund', '--omit=dev', join(work, packed.filename)],
  { cwd: project, stdio: 'ignore' }
)
const bin = join(project, 'node_modules', '.bin', 'orbtest')

interface Started {
  stdout: () => string
  stderr: () => string
  exit: Promise<number | null>
  kill: (signal: NodeJS.Signals) => void
}

function start (args: string[], home: string): Started {
  const child = spawn(bin, args, {
    cwd: project,
    env: { ...process.env, HOME: home, ORBTILE_DISCOVERY: '', XDG_RUNTIME_DIR: home },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let out = ''
  let err = ''
  child.stdout.on('data', (chunk) => {
    out += chunk
  })
  child.stderr.on('data', (chunk) => {
    err += chunk
  })
  const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
  return { stdout: () => out, stderr: () => err, exit, kill: (signal) => child.kill(signal) }
}

async function ready (file: string, run: Started): Promise<any> {
  for (let i = 0; i < 400; i++) {
    if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8'))
    if (
      (await Promise.race([run.exit, new Promise((resolve) => setTimeout(() => resolve('waiting'), 25))])) !== 'waiting'
    ) {
      throw new Error(`exited before it was ready: ${run.stderr()}`)
    }
  }
  throw new Error(`not ready after 10 s: ${run.stderr()}`)
}

t.test(
  'PKG-01 the tarball ships what it runs: built code, the specs, the schemas and the demo world; no sources, no tests',
  async (t) => {
    const files: string[] = packed.files.map((f: { path: string }) => f.path)
    for (const needed of [
      'dist/cli/orbtest.js',
      'dist/conformance/index.js',
      'specs/orb-bot-api.openapi.json',
      'specs/orbtile-adapter-protocol-v1.2.schema.json',
      'fixtures/orb-world.json',
      'src/control/openapi.json',
      'dist/src/dashboard-ui/main.js',
      'dist/src/dashboard-ui/index.html',
      'dist/src/dashboard-ui/style.css',
      'package.json',
      'LICENSE'
    ]) {
      t.ok(files.includes(needed), `ships ${needed}`)
    }
    t.same(
      files.filter((f) => /\.ts$/.test(f) && !f.endsWith('.d.ts')),
      [],
      'no TypeScript sources'
    )
    t.same(files.filter((f) => f.endsWith('.map')), [], 'no source maps (the sources they map are not shipped)')
    const scripts = Object.keys(JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).scripts as object)
    t.same(scripts.filter((s) => ['preinstall', 'install', 'postinstall', 'prepare'].includes(s)), [],
      'no script runs at install (npm 11 asks before it runs one)')
    t.same(
      files.filter((f) => /^(test|bench|scripts|action|stop|dist\/test|dist\/bench)\//.test(f)),
      [],
      'no tests, benchmarks or scripts'
    )
    t.comment(
      `packed ${(packed.size / 1024).toFixed(0)} kB, unpacked ${(packed.unpackedSize / 1024).toFixed(0)} kB, ${files.length} files`
    )
  }
)

t.test('PKG-01 orbtest --version and --help from the installed package', async (t) => {
  const version = execFileSync(bin, ['--version'], { encoding: 'utf8' }).trim()
  t.equal(version, JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version)
  t.match(execFileSync(bin, ['--help'], { encoding: 'utf8' }), /Usage: orbtest <command>/)
  const signed = execFileSync(bin, ['webhook', 'sign', '--token', 'orb_example_token', '--t', '1700000000000'], {
    encoding: 'utf8',
    input: '{"id":"evt_1","type":"app.test"}'
  })
  const vector = 't=1700000000000,v1=debe46c55152e066937fadf824466cc01e34b2456dbde615c85a6e6cd235a8fb'
  t.ok(signed.includes(`X-Orb-Signature: ${vector}`), 'orbtest webhook sign from the installed package')
})

for (const command of ['up', 'orbtile', 'orb']) {
  t.test(
    `PKG-01 orbtest ${command} starts from the installed package, answers, and stops on SIGTERM with 0`,
    async (t) => {
      const home = mkdtempSync(join(work, 'home-'))
      const file = join(home, 'ready.json')
      const run = start(
        [command, '--orb-port', '0', '--control-port', '0', '--ready-file', file].filter(
          (arg, i, all) => command !== 'orbtile' || (arg !== '--orb-port' && all[i - 1] !== '--orb-port')
        ),
        home
      )
      t.teardown(() => run.kill('SIGKILL'))
      const info = await ready(file, run)
      const clock = await fetch(`${info.control.url}/control/clock`)
      t.equal(clock.status, 200, 'the control server answers')
      // The dashboard is served from the installed package: its page, its modules and the library it imports.
      const page = await (await fetch(`${info.control.url}/`)).text()
      const files = [...page.matchAll(/(?:href|src)="(\/dashboard\/[^"]+)"/g)].map((m) => m[1]!)
      const named = files.includes('/dashboard/vendor/preact.mjs') && files.includes('/dashboard/main.js')
      t.ok(named, 'the page names its files')
      for (const file of files) t.equal((await fetch(`${info.control.url}${file}`)).status, 200, `serves ${file}`)
      const frame = await (await fetch(`${info.control.url}/control/dashboard`)).json() as Record<string, unknown>
      t.equal(frame.orbtile === null, command === 'orb', 'the frame holds the fakes that run')
      if (command !== 'orbtile') {
        const directory = await fetch(`${info.orb.url}/api/orb/directory`)
        t.equal(directory.status, 200, 'the fake Orb answers its directory')
      }
      if (command !== 'orb') t.ok(existsSync(info.orbtile.discovery), 'the discovery file is written')
      run.kill('SIGTERM')
      t.equal(await run.exit, 0, 'exit code after SIGTERM')
    }
  )
}

t.test('PKG-01 orbtest conformance runs from the installed package against its own fake', async (t) => {
  const home = mkdtempSync(join(work, 'home-'))
  const file = join(home, 'ready.json')
  const fake = start(['up', '--orb-port', '0', '--control-port', '0', '--clock', 'virtual', '--ready-file', file], home)
  t.teardown(() => fake.kill('SIGKILL'))
  const info = await ready(file, fake)
  const orbtile = start(
    [
      'conformance',
      '--target',
      `orbtile:${info.orbtile.discovery}`,
      '--control',
      info.control.url,
      '--grep',
      'OT-034',
      '--seed',
      '1'
    ],
    home
  )
  t.equal(await orbtile.exit, 0, orbtile.stdout() + orbtile.stderr())
  t.match(orbtile.stdout(), /^ok 1 - OT-034 /m)
  const orb = start(
    ['conformance', '--target', info.orb.url, '--control', info.control.url, '--grep', 'ORB-003', '--seed', '1'],
    home
  )
  t.equal(await orb.exit, 0, orb.stdout() + orb.stderr())
  t.match(orb.stdout(), /^ok 1 - ORB-003/m)
  fake.kill('SIGTERM')
  t.equal(await fake.exit, 0)
})

// The client suites from the installed package, started at once: they mostly wait on their scenarios' clocks.
const adapter = join(project, 'node_modules', 'orbtest', 'examples', 'orbtile-adapter-node', 'adapter.mjs')
const adapterRun = start(
  ['conformance', '--client', 'orbtile', '--tour', 'basic', '--scenarios', '0', '--', process.execPath, adapter],
  mkdtempSync(join(work, 'home-'))
)
const bot = join(project, 'node_modules', 'orbtest', 'examples', 'orb-bot-events', 'bot.mjs')
const botHome = mkdtempSync(join(work, 'home-'))
const report = join(botHome, 'report.json')
const botRun = start(
  ['conformance', '--client', 'orb', '--tour', 'basic', '--scenarios', '0', '--json', report, '--',
    process.execPath, bot],
  botHome
)

t.test('PKG-01 the client suite runs from the installed package on the reference adapter it ships', async (t) => {
  t.ok(existsSync(adapter), 'the Node reference adapter is in the package')
  const judged = adapterRun
  t.equal(await judged.exit, 0, judged.stdout() + judged.stderr())
  t.match(judged.stdout(), /^ok \d+ - OT-011 /m, 'a check passes')
  t.match(judged.stdout(), /# pass \d+ {2}fail 0 /, 'none fails')
})

t.test('PKG-01 the bot suite and the summary run from the installed package, on the reference bot it ships', async (t) => {
  t.ok(existsSync(bot), 'the events bot is in the package')
  const judged = botRun
  t.equal(await judged.exit, 0, judged.stdout() + judged.stderr())
  t.match(judged.stdout(), /# pass \d+ {2}fail 0 /, 'none fails')
  const summary = execFileSync(bin, ['summary', report], { encoding: 'utf8' })
  const heading = /^## orbtest: Orb bot API: client conformance of a bot that fetches its events \(orbtest\): ✅ passed/m
  t.match(summary, heading, 'orbtest summary reads the report')
})
