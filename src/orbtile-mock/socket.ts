import { chmodSync, lstatSync, unlinkSync } from 'node:fs'
import { makeDirectory } from '../shared/make-dir.js'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { StartupError, startupFault } from '../shared/startup-error.js'

/**
 * The longest socket path the OS takes: `sun_path` holds 108 bytes on Linux and 104 on macOS, its terminating NUL
 * included. Longer paths fail deep in libuv with an unhelpful error, so they are refused first.
 */
export const MAX_SOCKET_PATH_BYTES = process.platform === 'darwin' ? 103 : 107

/**
 * A short private default: the per-user runtime folder when there is one, else a per-user folder in the temp dir.
 * Either way the socket sits in a folder only its owner can enter (OT-A04).
 */
export function defaultSocketPath (env: NodeJS.ProcessEnv = process.env): string {
  const runtime = env.XDG_RUNTIME_DIR
  const folder = runtime !== undefined && runtime !== ''
    ? join(runtime, 'orbtest')
    : join(tmpdir(), `orbtest-${process.getuid?.() ?? 'user'}`)
  return join(folder, 'orbtile.sock')
}

/** What lives at `path`: nothing, a socket, or something else. A path that cannot be looked at is a startup fault. */
function pathKind (path: string): 'none' | 'socket' | 'other' {
  try {
    return lstatSync(path).isSocket() ? 'socket' : 'other'
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 'none'
    throw startupFault(`cannot look at ${path}`, err)
  }
}

/**
 * Makes `socketPath` ready to bind: the path fits the OS limit, its folder exists, and nothing lives at the path.
 * Folders it creates are 0700. The default folder must also belong to us and is made 0700 (it sits in a shared
 * place where someone else could have made it first); a folder the user chose is theirs and is left as it is.
 * A socket file left by a dead process is removed; a live one is an error.
 */
export async function prepareSocketPath (socketPath: string, isDefault = false): Promise<void> {
  const bytes = Buffer.byteLength(socketPath)
  if (bytes > MAX_SOCKET_PATH_BYTES) {
    throw new StartupError('ORBTEST_SOCKET_PATH_TOO_LONG',
      `socket path is ${bytes} bytes; the OS allows ${MAX_SOCKET_PATH_BYTES}. Pick a shorter one with --socket: ${socketPath}`)
  }
  const folder = dirname(socketPath)
  try {
    makeDirectory(folder, 0o700)
  } catch (err) {
    throw startupFault(`cannot create the socket folder ${folder}`, err)
  }
  if (isDefault) ensurePrivateFolder(folder)
  const kind = pathKind(socketPath)
  if (kind === 'other') {
    throw new StartupError('ORBTEST_SOCKET_PATH_TAKEN', `${socketPath} exists and is not a socket; refusing to replace it`)
  }
  if (kind === 'socket') {
    if (await isListening(socketPath)) {
      throw new StartupError('ORBTEST_SOCKET_IN_USE',
        `another process is listening on ${socketPath}; stop it or pick another path with --socket`)
    }
    unlinkSync(socketPath) // stale: its owner died without cleaning up
  }
}

/**
 * Binds with a umask that leaves the socket 0600 from its first instant, then sets the mode exactly (OT-A04).
 * `bind` is one synchronous call inside `listen`, so the umask is only changed for that call.
 */
export function listenPrivately (listen: () => void): void {
  const previous = process.umask(0o177)
  try {
    listen()
  } finally {
    process.umask(previous)
  }
}

/** Restricts a socket that was just bound to its owner (OT-A04). */
export function makeSocketPrivate (socketPath: string): void {
  chmodSync(socketPath, 0o600)
}

function ensurePrivateFolder (folder: string): void {
  // lstat, not stat: a symlink planted in a shared place must not lead the fake to chmod someone else's folder.
  const stat = lstatSync(folder)
  if (!stat.isDirectory()) {
    throw new StartupError('ORBTEST_SOCKET_FOLDER_NOT_OURS', `the socket folder ${folder} is not a plain folder (a symlink?); pick another path with --socket`)
  }
  const uid = process.getuid?.()
  if (uid !== undefined && stat.uid !== uid) {
    throw new StartupError('ORBTEST_SOCKET_FOLDER_NOT_OURS', `the socket folder ${folder} belongs to another user; pick another path with --socket`)
  }
  if ((stat.mode & 0o077) !== 0) chmodSync(folder, 0o700)
}

function isListening (socketPath: string): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = connect({ path: socketPath })
    probe.once('connect', () => { probe.destroy(); resolve(true) })
    probe.once('error', () => { resolve(false) })
  })
}
