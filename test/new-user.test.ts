// What a new user meets first, in this repository: `npm install` against the committed lockfile, `npm start` and its
// Ctrl-C, and the build that the first start runs.
import { spawn, spawnSync } from 'node:child_process'
import { copyFileSync, existsSync, mkdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { scratch } from './helpers/fake.js'
import { ROOT } from './helpers/root.js'

const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'
const readJson = (path: string): any => JSON.parse(readFileSync(path, 'utf8'))

t.test('PKG-02 the committed package-lock.json is in step with package.json, so that npm ci installs what it names', async (t) => {
  const pkg = readJson(join(ROOT, 'package.json'))
  const lock = readJson(join(ROOT, 'package-lock.json'))
  t.equal(lock.name, pkg.name, 'name')
  t.equal(lock.version, pkg.version, 'version')
  const root = lock.packages['']
  for (const key of ['name', 'version', 'bin', 'dependencies', 'devDependencies', 'engines']) {
    t.same(root[key], pkg[key], `the root entry's ${key}`)
  }
  for (const name of [...Object.keys(pkg.dependencies), ...Object.keys(pkg.devDependencies)]) {
    t.ok(lock.packages[`node_modules/${name}`], `${name} is locked`)
  }
})

interface NpmStart {
  pid: number
  output: () => string
  exit: Promise<number | null>
}

/** `npm start -- FLAGS` in its own process group, with HOME, the discovery file and the socket inside `dir`. */
function npmStart (t: { teardown(fn: () => unknown): void }, dir: string, flags: string[]): NpmStart {
  const child = spawn(npm, ['start', '--', ...flags], {
    cwd: ROOT,
    detached: true,
    env: {
      ...process.env,
      HOME: dir,
      ORBTILE_DISCOVERY: join(dir, 'adapter-api.json'),
      XDG_RUNTIME_DIR: dir,
      npm_config_update_notifier: 'false'
    },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let output = ''
  child.stdout.on('data', (chunk) => { output += chunk })
  child.stderr.on('data', (chunk) => { output += chunk })
  const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
  t.teardown(() => signalGroup(child.pid!, 'SIGKILL'))
  return { pid: child.pid!, output: () => output, exit }
}

/** Signals every process of a group; false when none is left (ESRCH). */
function signalGroup (pgid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pgid, signal)
    return true
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ESRCH') return false
    throw err
  }
}

async function readyFile (path: string, run: NpmStart): Promise<any> {
  const exited = run.exit.then(() => 'exited')
  for (let waited = 0; waited < 60_000; waited += 50) {
    if (existsSync(path)) return readJson(path)
    const next = await Promise.race([exited, new Promise((resolve) => setTimeout(() => resolve('waiting'), 50))])
    if (next === 'exited') throw new Error(`npm start exited before it was ready:\n${run.output()}`)
  }
  throw new Error(`npm start was not ready after 60 s:\n${run.output()}`)
}

/** Whether something answers HTTP at `url`. */
async function answers (url: string): Promise<boolean> {
  try {
    await fetch(url, { signal: AbortSignal.timeout(2000) })
    return true
  } catch {
    return false
  }
}

// A signal to npm's own process (what `kill $(pgrep npm)` does) and one to the whole group (what Ctrl-C at a terminal
// does): npm hands it to the fakes, which the start script runs with `exec`, and they clean up as they stop.
for (const [how, toGroup] of [['npm\'s pid', false], ['its process group, as Ctrl-C', true]] as const) {
  t.test(`PKG-03 npm start stops on SIGINT sent to ${how}: nothing is left running or listening, no socket, no discovery file`, async (t) => {
    const dir = scratch(t)
    const ready = join(dir, 'ready.json')
    const run = npmStart(t, dir, ['--control-port', '0', '--orb-port', '0', '--ready-file', ready])
    const where = await readyFile(ready, run)
    t.ok(await answers(`${where.control.url}/control/clock`), 'the control server answers')
    const files = [where.orbtile.socketPath, where.orbtile.discovery]
    t.ok(files.every((file: string) => existsSync(file)), 'the socket and the discovery file are there')
    if (toGroup) signalGroup(run.pid, 'SIGINT')
    else process.kill(run.pid, 'SIGINT')
    t.equal(await run.exit, 0, 'npm start exits with 0')
    for (let i = 0; i < 40 && signalGroup(run.pid, 0); i++) await new Promise((resolve) => setTimeout(resolve, 50))
    t.notOk(signalGroup(run.pid, 0), 'no process of the group is left')
    t.notOk(await answers(`${where.control.url}/control/clock`), 'the control server is gone')
    t.notOk(await answers(`${where.orb.url}/api/orb/directory`), 'the fake Orb is gone')
    t.notOk(existsSync(where.orbtile.socketPath), 'the socket is removed')
    t.notOk(existsSync(where.orbtile.discovery), 'the discovery file is removed')
    t.notOk(existsSync(ready), 'the ready file is removed')
  })
}

/**
 * A copy of scripts/build-if-stale.js in `dir`, which it takes for the project's root, with package.json as its one
 * input and a compiler that says it ran and fails: the script's own messages are seen without building anything.
 */
function buildScriptCopy (dir: string): string {
  mkdirSync(join(dir, 'scripts'))
  copyFileSync(join(ROOT, 'scripts', 'build-if-stale.js'), join(dir, 'scripts', 'build-if-stale.js'))
  writeFileSync(join(dir, 'package.json'), '{ "type": "module" }\n')
  const tsc = join(dir, 'node_modules', 'typescript', 'bin')
  mkdirSync(tsc, { recursive: true })
  writeFileSync(join(dir, 'node_modules', 'typescript', 'package.json'), '{}\n') // CommonJS, as the real one is
  writeFileSync(join(tsc, 'tsc'), "process.stderr.write('the compiler ran\\n')\nprocess.exit(3)\n")
  return join(dir, 'scripts', 'build-if-stale.js')
}

t.test('PKG-04 a build says it is building before it starts, so that a first npm start is not taken for a hang', async (t) => {
  const dir = scratch(t)
  const script = buildScriptCopy(dir)
  const build = () => spawnSync(process.execPath, [script], { cwd: dir, encoding: 'utf8' })
  const first = build()
  t.equal(first.stderr, 'orbtest: building dist/ (the first time; about 15 s)\nthe compiler ran\n', 'the first build')
  t.equal(first.status, 1, 'a compiler that fails fails the build')
  const stamp = join(dir, 'dist', '.build-stamp')
  writeFileSync(stamp, 'built\n')
  const past = new Date(Date.now() - 60_000)
  utimesSync(join(dir, 'package.json'), past, past)
  const fresh = build()
  t.same([fresh.status, fresh.stderr], [0, ''], 'nothing changed since the last build: silent, nothing built')
  utimesSync(stamp, new Date(past.getTime() - 60_000), new Date(past.getTime() - 60_000))
  const changed = build()
  const again = 'orbtest: building dist/ (a source changed; about 15 s)\nthe compiler ran\n'
  t.equal(changed.stderr, again, 'a source changed since the last build')
})
