// CLI-D01 (docs/decisions.md): the allocator settings `orbtest` starts Node with.
//
// A fake left running (`orbtest up` beside a dashboard, a CI job's fakes across many runs) should give back what a run
// made it grow by. V8's part it gives back after a reset (CTL-D01); glibc's malloc keeps the rest. Its defaults suit a
// process that stays busy: an arena per thread, and thresholds that rise after the first large block is freed, so
// that the freed middle of the heap is never handed back. A process cannot trim malloc from JavaScript, and glibc reads
// its tunables once, before any JavaScript runs. So the command `orbtest` is a file that both /bin/sh and Node read:
// started as a command, its first lines are a shell script that sets GLIBC_TUNABLES (unless the caller set it) and
// replaces itself with Node, which runs the same file as a module (to Node, the shell's line is a string and a
// comment). That costs one exec of /bin/sh, not a second Node. musl, macOS and `node dist/cli/orbtest.js` ignore it.

/** Two arenas; a block over 128 KiB from mmap, back to the system when freed; a heap trimmed past 128 KiB free. */
export const MALLOC_TUNABLES =
  'glibc.malloc.arena_max=2:glibc.malloc.mmap_threshold=131072:glibc.malloc.trim_threshold=131072'

/** Set beside GLIBC_TUNABLES when the shell set it, so that Node knows it was ours and not the caller's. */
export const MARK = 'ORBTEST_MALLOC_TUNED'

/**
 * The bundle's first lines (scripts/build-if-stale.js writes them in place of `#!/usr/bin/env node`). `':'` is a
 * command to the shell and a string to Node; `//` starts Node's comment and is the shell's argument to `:`.
 */
export function shellHeader (): string {
  return [
    '#!/bin/sh',
    `':' //; if [ -z "\${GLIBC_TUNABLES+set}" ]; then GLIBC_TUNABLES=${MALLOC_TUNABLES} ${MARK}=1; ` +
      `export GLIBC_TUNABLES ${MARK}; else unset ${MARK}; fi; exec node "$0" "$@"`,
    '// The two lines above are for /bin/sh: see src/cli/malloc.ts (CLI-D01).'
  ].join('\n')
}

/**
 * Takes the settings back out of this process's environment when the shell put them there: they are for this
 * process, and a client under test, or anything else the CLI starts, gets GLIBC_TUNABLES as its caller gave it (or
 * none). The mark alone is not enough: the value must be ours too, as glibc left it (up to 2.38 glibc cuts the
 * variable at its first `:` as it parses it; later versions leave it whole), so a caller's own is never taken.
 */
export function forgetTunables (env: NodeJS.ProcessEnv = process.env): void {
  if (env[MARK] === undefined) return
  const value = env.GLIBC_TUNABLES
  if (env[MARK] === '1' && value !== undefined && value !== '' && MALLOC_TUNABLES.startsWith(value)) {
    delete env.GLIBC_TUNABLES
  }
  delete env[MARK]
}
