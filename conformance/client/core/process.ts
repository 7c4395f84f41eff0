import { spawn } from 'node:child_process'
import { lstatSync, readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { windowMs } from './windows.js'

/** How the client's run ended. */
export interface ClientExit {
  /** `stopped`: it exited after SIGTERM; `killed`: SIGKILL after the grace; `exited`: on its own, before the stop. */
  how: 'stopped' | 'killed' | 'exited' | 'not-started'
  code: number | null
  signal: string | null
  /** When it ended, on the journal's clock (ms). */
  at: number
  /** The spawn error (`ENOENT`), when the command could not start. */
  error?: string
}

/** What is kept of an output stream for the secret scan: everything up to this many bytes, then a count. */
const OUTPUT_LIMIT = 8 * 1024 * 1024

/**
 * A client under test: its own process group (so `sh -c`, `npm run` and their children stop together), its output
 * read line by line, stopped with SIGTERM and then SIGKILL after the grace period.
 */
export class ClientProcess {
  readonly #exited: Promise<ClientExit>
  readonly #pid: number | undefined
  #exit: ClientExit | undefined
  #stopping = false
  readonly #output: { stdout: string[], stderr: string[] } = { stdout: [], stderr: [] }
  #bytes = 0

  constructor (
    command: readonly string[],
    env: NodeJS.ProcessEnv,
    now: () => number,
    onLine: (stream: 'stdout' | 'stderr', line: string) => void
  ) {
    const child = spawn(command[0]!, command.slice(1), { env, stdio: ['ignore', 'pipe', 'pipe'], detached: true })
    this.#pid = child.pid
    for (const stream of ['stdout', 'stderr'] as const) {
      let partial = ''
      child[stream].setEncoding('utf8')
      child[stream].on('data', (chunk: string) => {
        if (this.#bytes < OUTPUT_LIMIT) this.#output[stream].push(chunk)
        this.#bytes += chunk.length
        const lines = (partial + chunk).split('\n')
        partial = lines.pop()!
        for (const line of lines) onLine(stream, line.replace(/\r$/, ''))
      })
      child[stream].on('end', () => { if (partial !== '') onLine(stream, partial) })
    }
    this.#exited = new Promise((resolve) => {
      child.once('error', (err: NodeJS.ErrnoException) => {
        resolve(
          (this.#exit ??= { how: 'not-started', code: null, signal: null, at: now(), error: err.code ?? err.message })
        )
      })
      child.once('exit', (code, signal) => {
        const how = this.#stopping ? (signal === 'SIGKILL' ? 'killed' : 'stopped') : 'exited'
        resolve(this.#exit ??= { how, code, signal, at: now() })
      })
    })
  }

  /** Its process id, which is also its process group's (undefined when it could not start). */
  get pid (): number | undefined {
    return this.#pid
  }

  /** Resolves when the process has ended, however. */
  get exited (): Promise<ClientExit> {
    return this.#exited
  }

  /** Whether it ended on its own before being stopped. */
  get ended (): ClientExit | undefined {
    return this.#exit
  }

  /** Everything it wrote (up to a bound), for the secret scan. */
  output (stream: 'stdout' | 'stderr'): string {
    return this.#output[stream].join('')
  }

  /** SIGTERM to its group, then SIGKILL once `graceMs` pass; resolves with how it ended. */
  async stop (graceMs: number): Promise<ClientExit> {
    if (this.#exit !== undefined) return this.#exit
    this.#stopping = true
    this.#signal('SIGTERM')
    let timer: NodeJS.Timeout | undefined
    const killed = new Promise<void>((resolve) => {
      timer = setTimeout(() => {
        this.#signal('SIGKILL')
        resolve()
      }, graceMs)
    })
    await Promise.race([this.#exited, killed])
    clearTimeout(timer)
    const exit = await this.#exited
    // Children that outlived their parent go with the group.
    this.#signal('SIGKILL')
    return exit
  }

  #signal (signal: NodeJS.Signals): void {
    if (this.#pid === undefined) return
    try {
      process.kill(-this.#pid, signal)
    } catch (err) {
      // ESRCH: every process of the group has ended, which is what a stop waits for; macOS answers EPERM for a group
      // left with zombies only. Anything else is a fault.
      const code = (err as NodeJS.ErrnoException).code
      if (code !== 'ESRCH' && code !== 'EPERM') throw err
    }
  }
}

/** A secret found where it must not be: a file under the client's HOME or TMPDIR. */
export interface SecretFound {
  /** `$HOME/…` or `$TMPDIR/…`. */
  where: string
  label: string
}

/**
 * Looks for each secret in the files below the given folders (skipping `skip`, the discovery file orbtest itself
 * wrote): at most `maxFiles` files of at most 1 MiB each, symbolic links not followed.
 */
export function scanFiles (
  roots: ReadonlyArray<{ name: string, path: string }>,
  secrets: ReadonlyMap<string, string>,
  skip: ReadonlySet<string>,
  maxFiles = 500
): SecretFound[] {
  const found: SecretFound[] = []
  let files = 0
  const walk = (root: { name: string, path: string }, dir: string, depth: number): void => {
    let names: string[]
    try {
      names = readdirSync(dir)
    } catch {
      return
    }
    for (const name of names) {
      const path = join(dir, name)
      if (skip.has(path) || files >= maxFiles) continue
      let stat
      try {
        stat = lstatSync(path)
      } catch {
        continue
      }
      if (stat.isDirectory() && depth < 12) walk(root, path, depth + 1)
      if (!stat.isFile() || stat.size > 1024 * 1024) continue
      files++
      let text: string
      try {
        text = readFileSync(path, 'latin1')
      } catch {
        continue
      }
      for (const [value, label] of secrets) {
        if (text.includes(value)) found.push({ where: `$${root.name}/${relative(root.path, path)}`, label })
      }
    }
  }
  for (const root of roots) walk(root, root.path, 0)
  return found
}

/** How long a client has to exit after SIGTERM before SIGKILL (OTC-05, OBC-06: the window `stop-grace`). */
export const STOP_GRACE_MS = windowMs('stop-grace')

/** How a client's run ended, in words, for the reports. */
export function exitText (exit: ClientExit): string {
  const how = exit.code === null ? `signal ${exit.signal ?? '?'}` : `code ${exit.code}`
  switch (exit.how) {
    case 'stopped': return `stopped by SIGTERM (${how})`
    case 'killed': return `killed with SIGKILL ${STOP_GRACE_MS / 1000} s after SIGTERM`
    case 'exited': return `exited on its own with ${how} at ${(exit.at / 1000).toFixed(3)} s`
    case 'not-started': return `could not start: ${exit.error ?? 'unknown error'}`
  }
}

/** A promise that resolves when `signal` aborts (at once if it has), and `dispose` to stop listening to it. */
export function whenAborted (signal: AbortSignal | undefined): { aborted: Promise<undefined>, dispose: () => void } {
  let onAbort: (() => void) | undefined
  const aborted = new Promise<undefined>((resolve) => {
    onAbort = () => resolve(undefined)
    if (signal?.aborted === true) resolve(undefined)
    signal?.addEventListener('abort', onAbort, { once: true })
  })
  return {
    aborted,
    dispose: () => {
      if (onAbort !== undefined) signal?.removeEventListener('abort', onAbort)
    }
  }
}
