#!/usr/bin/env node
// Builds dist/ only when a source is newer than the last build, so that `npm start` and `npm run conformance` with
// nothing changed cost the fake's own start-up, not a compile. The stamp is written after a build that succeeded.
import { execFileSync } from 'node:child_process'
import {
  chmodSync, copyFileSync, existsSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync
} from 'node:fs'
import { join } from 'node:path'

const root = join(import.meta.dirname, '..')
const stamp = join(root, 'dist', '.build-stamp')
const inputs = [
  'src', 'conformance', 'bench', 'trust', 'fixtures', 'tsconfig.json', 'tsconfig.build.json', 'package.json'
]

/** The newest modification time under `path` (a file or a folder). */
function newest (path) {
  const stat = statSync(path)
  if (!stat.isDirectory()) return stat.mtimeMs
  let latest = stat.mtimeMs
  for (const entry of readdirSync(path)) latest = Math.max(latest, newest(join(path, entry)))
  return latest
}

// One build at a time: test files that start together and find the build stale wait for the first one's build,
// then find it fresh. A lock older than two minutes was left by a build that was killed.
const lock = join(root, 'dist', '.build-lock')
mkdirSync(join(root, 'dist'), { recursive: true })
for (let waited = 0; ; waited += 50) {
  try {
    mkdirSync(lock)
    break
  } catch (err) {
    if (err.code !== 'EEXIST') throw err
    const age = Date.now() - (statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now())
    if (age > 120_000) rmSync(lock, { recursive: true, force: true })
    else Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50)
  }
}
try {
  await buildIfStale()
} catch (err) {
  // tsc has printed its errors: the step fails with them, without this script's stack.
  if (err.status === undefined) throw err
  if (err.signal) process.stderr.write(`build-if-stale: the compiler was stopped by ${err.signal}\n`)
  process.exitCode = 1
} finally {
  rmSync(lock, { recursive: true, force: true })
}

async function buildIfStale () {
  const built = existsSync(stamp) ? statSync(stamp).mtimeMs : 0
  const changed = inputs.map((input) => join(root, input))
    .filter((path) => existsSync(path))
    .some((path) => newest(path) > built)
  const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc')
  const ui = join(root, 'src', 'dashboard-ui')
  // --whole-tree (npm test's first step): the compile covers tsconfig.json, tests and scripts too, so that it is
  // also the type check, and it writes dist/test, which is what tap runs (no TypeScript loader in each test
  // process). With nothing else to build, that compile and the page's type check alone run.
  const whole = process.argv.includes('--whole-tree')
  if (!changed && !process.argv.includes('--force')) {
    if (!whole) return
    execFileSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.json')], { stdio: 'inherit' })
    pruneTests()
    execFileSync(process.execPath, [tsc, '-p', join(ui, 'tsconfig.json'), '--noEmit'], { stdio: 'inherit' })
    return
  }
  // A build takes a while: say so, on stderr, so that a first `npm start` is not taken for a hang.
  process.stderr.write(`orbtest: building dist/ (${built === 0 ? 'the first time' : 'a source changed'}; about 15 s)\n`)
  const project = join(root, whole ? 'tsconfig.json' : 'tsconfig.build.json')
  execFileSync(process.execPath, [tsc, '-p', project], { stdio: 'inherit' })
  if (whole) pruneTests()
  // The CLI as one bundle of our own modules (dist/cli/orbtest.js, with chunks for the commands loaded on demand):
  // Node then reads and compiles a handful of files at start-up, where it read about a hundred. The packages
  // stay outside the bundle, and the library (dist/src) is left as tsc wrote it.
  const { build } = await import('esbuild')
  rmSync(join(root, 'dist', 'cli'), { recursive: true, force: true })
  await build({
    entryPoints: { orbtest: join(root, 'dist', 'src', 'cli', 'index.js') },
    outdir: join(root, 'dist', 'cli'),
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    packages: 'external',
    logLevel: 'warning'
  })
  chmodSync(join(root, 'dist', 'cli', 'orbtest.js'), 0o755)
  // The dashboard's page is compiled for the browser by its own tsconfig; its HTML and CSS are copied beside it.
  execFileSync(process.execPath, [tsc, '-p', join(ui, 'tsconfig.json')], { stdio: 'inherit' })
  const out = join(root, 'dist', 'src', 'dashboard-ui')
  mkdirSync(out, { recursive: true })
  for (const name of readdirSync(ui).filter((n) => /\.(html|css)$/.test(n))) {
    copyFileSync(join(ui, name), join(out, name))
  }
  // The fakes' validators as ajv's standalone code (dist/validators/*.cjs): a run loads functions, compiles nothing.
  const { standaloneModule, VALIDATORS_DIR } = await import(join(root, 'dist', 'src', 'shared', 'ajv.js'))
  const { validatorFamilies } = await import(join(root, 'dist', 'src', 'validator-families.js'))
  rmSync(join(root, VALIDATORS_DIR), { recursive: true, force: true })
  mkdirSync(join(root, VALIDATORS_DIR), { recursive: true })
  for (const family of validatorFamilies()) {
    writeFileSync(join(root, VALIDATORS_DIR, `${family.name}.cjs`), standaloneModule(family))
  }
  // The demo world, checked once here rather than at every start of the fake Orb (its schema is not compiled then).
  const { checkedDefaultWorld, CHECKED_WORLD_FILE } = await import(join(root, 'dist', 'src', 'orb-mock', 'world.js'))
  writeFileSync(join(root, CHECKED_WORLD_FILE), checkedDefaultWorld())
  writeFileSync(stamp, `${new Date().toISOString()}\n`)
}

/** Removes what an earlier build made in dist/test of a source since deleted or renamed: tap would run it. */
function pruneTests (dir = join(root, 'dist', 'test'), source = join(root, 'test')) {
  if (!existsSync(dir)) return
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) {
      pruneTests(path, join(source, entry.name))
      continue
    }
    const stem = entry.name.replace(/\.(js|js\.map|d\.ts)$/, '')
    if (stem !== entry.name && !existsSync(join(source, `${stem}.ts`))) rmSync(path, { force: true })
  }
}
