import { randomBytes } from 'node:crypto'
import { closeSync, openSync, readdirSync, readFileSync, renameSync, writeSync, chmodSync } from 'node:fs'
import { basename, dirname, join } from 'node:path'
import { makeDirectory } from '../shared/make-dir.js'
import { removeLeftover } from '../shared/remove-leftover.js'
import { API_VERSION, BASE_PATH } from '../spec/orbtile.js'

/** OT-A04: what the discovery file holds. */
export interface DiscoveryFile {
  api: number
  basePath: string
  socketPath: string
  token: string
}

export { resolveDiscoveryPath, SPEC_DISCOVERY_SUFFIX } from '../spec/orbtile.js'

/** OT-A04: the file's contents for a socket and the current token (made by newToken in src/shared/secrets.ts). */
export function discoveryContents (socketPath: string, token: string): DiscoveryFile {
  return { api: API_VERSION, basePath: BASE_PATH, socketPath, token }
}

/**
 * OT-A04: writes the file atomically with mode 0600. The bytes go to a private temp file in the same folder,
 * are flushed, and the temp file is renamed over the target, so a reader sees the old file or the new one, never
 * a half-written one. Folders it creates are 0700.
 */
export function writeDiscoveryFile (path: string, contents: DiscoveryFile): void {
  makeDirectory(dirname(path), 0o700)
  removeStaleTemps(path)
  const temp = join(dirname(path), `.${basename(path)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`)
  // No fsync: rename is atomic for readers, and the file means nothing after a crash of the machine anyway.
  const fd = openSync(temp, 'wx', 0o600)
  try {
    writeSync(fd, `${JSON.stringify(contents, null, 2)}\n`)
  } finally {
    closeSync(fd)
  }
  try {
    // The creation mode is masked by the umask; set it exactly.
    chmodSync(temp, 0o600)
    renameSync(temp, path)
  } catch (err) {
    removeLeftover(temp, 'the discovery temp file')
    throw err
  }
}

/**
 * Removes temp files a killed writer left beside the discovery file (`.<name>.<pid>.<hex>.tmp`, each holding a
 * token): those of processes that no longer run. A live writer's temp file is its own, and left alone.
 */
export function removeStaleTemps (path: string): void {
  const prefix = `.${basename(path)}.`
  let names: string[]
  try {
    names = readdirSync(dirname(path))
  } catch {
    // A folder that cannot be listed shows no temp file to remove; the write that follows reports a folder it cannot
    // use.
    return
  }
  for (const name of names) {
    if (!name.startsWith(prefix) || !name.endsWith('.tmp')) continue
    const pid = Number(name.slice(prefix.length).split('.', 1)[0])
    // This process's own temps are never left between writes (each write renames or removes its own).
    if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid || alive(pid)) continue
    removeLeftover(join(dirname(path), name), 'a stale discovery temp file')
  }
}

/** Whether a process with this id runs (signal 0 checks without sending; EPERM means it runs as another user). */
function alive (pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/** Reads and parses a discovery file; undefined when it is missing or not a discovery file. */
export function readDiscoveryFile (path: string): DiscoveryFile | undefined {
  try {
    const parsed = JSON.parse(readFileSync(path, 'utf8')) as Partial<DiscoveryFile>
    if (typeof parsed.socketPath !== 'string' || typeof parsed.token !== 'string') return undefined
    return parsed as DiscoveryFile
  } catch {
    return undefined
  }
}

/**
 * Removes the discovery file, but only while it still points at our socket: another instance that has since
 * written its own file keeps it.
 */
export function removeDiscoveryFile (path: string, socketPath: string): void {
  const current = readDiscoveryFile(path)
  if (current === undefined || current.socketPath !== socketPath) return
  removeLeftover(path, 'the discovery file')
}
