// The CLI the tests spawn: the built bundle (dist/cli/orbtest.js), what the package ships and what a user runs. It
// starts in a fraction of the time a source run through tsx takes, and that start is paid at every spawn. The build
// is brought up to date first (nothing to do when `npm test` has just built).
import { execFileSync } from 'node:child_process'
import { join } from 'node:path'
import { ROOT } from './root.js'

const root = ROOT

execFileSync(process.execPath, [join(root, 'scripts', 'build-if-stale.js')], { stdio: 'inherit' })

/** The built CLI's entry, to run as `node CLI …`. */
export const CLI = join(root, 'dist', 'cli', 'orbtest.js')
