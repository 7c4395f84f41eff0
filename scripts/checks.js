#!/usr/bin/env node
// `npm test`'s first step: the build (when a source changed) with the type check, and the linter, at once (each keeps
// a core busy for 10 to 20 s), their output shown whole, one after the other, and a failure of either fails the step.
// The tests run on the build, after this step. With them, tap is built with the plugins package.json names when it
// is not (after an install): tap rebuilds itself when it finds another build, but only after it has chosen the
// loaders of that run's test files, so the first run would load the TypeScript and mock loaders it leaves out into
// every test file (a third of a CPU second each).
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'
const run = (script, command = [npm, 'run', '--silent', script]) => new Promise((resolve) => {
  const child = spawn(command[0], command.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  child.stdout.on('data', (chunk) => { out += chunk })
  child.stderr.on('data', (chunk) => { out += chunk })
  child.on('error', (err) => resolve({ script, code: 1, out: `${out}${err.message}\n` }))
  child.on('close', (code) => resolve({ script, code: code ?? 1, out }))
})

// With --build, one compile of the whole tree is both the build and the type check (each is a full tsc run of 12 s
// or more, and they checked the same sources twice).
const BUILD = new URL('build-if-stale.js', import.meta.url)
const results = await Promise.all([
  process.argv.includes('--build')
    ? run('build and typecheck', [process.execPath, fileURLToPath(BUILD), '--whole-tree'])
    : run('typecheck'),
  run('lint'),
  ...(await tapBuilt() ? [] : [run('tap build', [npm, 'exec', '--no', '--', 'tap', 'build'])])
])
for (const r of results) {
  process.stdout.write(`> ${r.script}: ${r.code === 0 ? 'ok' : `failed (exit ${r.code})`}\n${r.out}`)
}
process.exitCode = results.every((r) => r.code === 0) ? 0 : 1

/**
 * Whether tap is built with the plugins package.json names (tap's own test: its build's signature, its config's). The
 * config is read as TapConfig.load reads it, but with no arguments: this script's own are not tap's. Where tap's
 * classes are not as this expects (another version of tap), tap is built anyway: a few seconds, never a wrong run.
 */
async function tapBuilt () {
  try {
    const [{ signature }, { TapConfig }] = await Promise.all([import('@tapjs/test'), import('@tapjs/config')])
    const config = await new TapConfig().loadPluginConfigFields().loadConfigFile()
    return config.parse([]).pluginSignature === signature
  } catch (err) {
    process.stderr.write(`checks: cannot tell how tap is built (${err.message}); building it\n`)
    return false
  }
}
