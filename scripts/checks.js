#!/usr/bin/env node
// `npm test`'s first step: the build (when a source changed) with the type check, and the linter, at once (each keeps
// a core busy for 10 to 20 s), their output shown whole, one after the other, and a failure of either fails the step.
// The tests run on the build, after this step.
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
  run('lint')
])
for (const r of results) {
  process.stdout.write(`> ${r.script}: ${r.code === 0 ? 'ok' : `failed (exit ${r.code})`}\n${r.out}`)
}
process.exitCode = results.every((r) => r.code === 0) ? 0 : 1
