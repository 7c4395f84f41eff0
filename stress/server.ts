// `orbtest up` as a child process in a private temp folder (HOME and XDG_RUNTIME_DIR), so that its socket and
// discovery file belong to one run, and so that its open sockets and RSS can be read from /proc.
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { packageRoot } from '../src/shared/paths.js'

/**
 * The repository this file belongs to, found from stress/ (tsx) or dist/stress (the compiled tests): where
 * `src/cli/index.ts` is run from unless told otherwise.
 */
export const REPO_ROOT = packageRoot()

/** How to start the servers. */
export interface ServerOptions {
  /** A checkout to run (default: this repository); another one proves a check bites on an older version. */
  root?: string
  clock?: 'virtual' | 'real'
  rateLimit?: 'on' | 'off'
  /** Flags added after the standard ones. */
  extraArgs?: string[]
  startTimeoutMs?: number
}

/** Where each server listens, from the ready file. */
export interface Endpoints {
  socketPath: string
  basePath: string
  discovery: string
  orbPort: number
  controlPort: number
}

/** What the process holds at one moment. */
export interface ProcessSample {
  atMs: number
  sockets: number
  fds: number
  rssKiB: number
}

/** A running `orbtest up`. */
export interface ServerProcess {
  readonly pid: number
  readonly dir: string
  readonly endpoints: Endpoints
  readonly args: readonly string[]
  /** The discovery file's token, read afresh (the control API can regenerate it). */
  token(): string
  alive(): boolean
  /** How it exited, once it has. */
  exit(): { code: number | null, signal: string | null } | undefined
  /** The last 64 KiB of its stderr. */
  stderr(): string
  sample(): ProcessSample
  stop(): Promise<void>
}

/** Starts `node --import tsx src/cli/index.ts up` with ports picked by the OS and waits for its ready file. */
export async function startServer (options: ServerOptions = {}): Promise<ServerProcess> {
  const root = options.root ?? REPO_ROOT
  const dir = mkdtempSync(join(tmpdir(), 'orbfz-'))
  const ready = join(dir, 'ready.json')
  const args = [
    'up', '--orb-port', '0', '--control-port', '0', '--clock', options.clock ?? 'virtual', '--ready-file', ready,
    '--rate-limit', options.rateLimit ?? 'on', ...(options.extraArgs ?? [])
  ]
  const env: NodeJS.ProcessEnv = { ...process.env, HOME: dir, XDG_RUNTIME_DIR: dir }
  delete env.ORBTILE_DISCOVERY
  const child = spawn(process.execPath, ['--import', 'tsx', join(root, 'src', 'cli', 'index.ts'), ...args], {
    cwd: root,
    env,
    stdio: ['ignore', 'ignore', 'pipe']
  })
  let err = ''
  child.stderr!.on('data', (chunk: Buffer) => { err = (err + chunk.toString('utf8')).slice(-65536) })
  let exited: { code: number | null, signal: string | null } | undefined
  // Never outlive the campaign: a client that exits (Ctrl-C included) takes its server along.
  const orphan = (): void => {
    child.kill('SIGKILL')
    rmSync(dir, { recursive: true, force: true })
  }
  process.once('exit', orphan)
  const gone = new Promise<void>((resolve) => child.once('exit', (code, signal) => {
    exited = { code, signal }
    process.removeListener('exit', orphan)
    resolve()
  }))
  try {
    await waitForFile(ready, child, options.startTimeoutMs ?? 30_000, () => err)
  } catch (error) {
    child.kill('SIGKILL')
    await gone
    rmSync(dir, { recursive: true, force: true })
    throw error
  }
  const info = JSON.parse(readFileSync(ready, 'utf8')) as {
    orbtile: { discovery: string, socketPath: string, basePath: string }
    orb: { url: string }
    control: { url: string }
  }
  const endpoints: Endpoints = {
    socketPath: info.orbtile.socketPath,
    basePath: info.orbtile.basePath,
    discovery: info.orbtile.discovery,
    orbPort: Number(new URL(info.orb.url).port),
    controlPort: Number(new URL(info.control.url).port)
  }
  const pid = child.pid!
  return {
    pid,
    dir,
    endpoints,
    args,
    token: () => (JSON.parse(readFileSync(endpoints.discovery, 'utf8')) as { token: string }).token,
    alive: () => exited === undefined && existsSync(`/proc/${pid}`),
    exit: () => exited,
    stderr: () => err,
    sample: () => sampleProcess(pid),
    stop: async () => {
      if (exited === undefined) {
        child.kill('SIGTERM')
        const timer = setTimeout(() => child.kill('SIGKILL'), 5000)
        await gone
        clearTimeout(timer)
      }
      rmSync(dir, { recursive: true, force: true })
    }
  }
}

async function waitForFile (path: string, child: ChildProcess, ms: number, stderr: () => string): Promise<void> {
  const until = Date.now() + ms
  while (Date.now() < until) {
    if (existsSync(path)) return
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`orbtest up exited before it was ready (${child.exitCode ?? child.signalCode}): ${stderr()}`)
    }
    await sleep(25)
  }
  throw new Error(`orbtest up wrote no ready file within ${ms} ms: ${stderr()}`)
}

/** The process's open descriptors, those of them that are sockets, and its resident memory. */
export function sampleProcess (pid: number): ProcessSample {
  let sockets = 0
  let fds = 0
  const names = unlessGone(() => readdirSync(`/proc/${pid}/fd`), [])
  for (const name of names) {
    // A descriptor closed between the listing and the read is not counted.
    const link = unlessGone(() => readlinkSync(`/proc/${pid}/fd/${name}`), undefined)
    if (link === undefined) continue
    fds++
    if (link.startsWith('socket:')) sockets++
  }
  const status = unlessGone(() => readFileSync(`/proc/${pid}/status`, 'utf8'), '')
  const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(status)
  const rssKiB = match === null ? 0 : Number(match[1])
  return { atMs: Date.now(), sockets, fds, rssKiB }
}

/** What `read` reads from /proc, or `gone` when it is not there: the process ended, or the system has no /proc. */
function unlessGone<T> (read: () => T, gone: T): T {
  try {
    return read()
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return gone
    throw err
  }
}

/**
 * Polls until the server holds no more sockets than `baseline` (its idle count), or `timeoutMs` pass; returns the
 * last sample. Clients that left must not leave sockets behind.
 */
export async function settleSockets (server: ServerProcess, baseline: number, timeoutMs: number):
Promise<ProcessSample> {
  const until = Date.now() + timeoutMs
  let last = server.sample()
  while (last.sockets > baseline && Date.now() < until && server.alive()) {
    await sleep(100)
    last = server.sample()
  }
  return last
}

/** A promise that resolves after `ms`. */
export function sleep (ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}
