// How long a client under test was ready to run but had no CPU, and how long it was busy (OTC-25). On a loaded
// machine a client can be kept off the CPU for half a second between deciding to send a request and sending it, or
// between a reply arriving and its reading it. A request it sent on another connection in that time was already on
// its way when the refusal came (OTC-11, OTC-14), and the judge widens that excuse instead of blaming the client for
// the scheduler.
//
// Linux keeps, for every thread, the time it has spent running and the time it has spent runnable but waiting on a
// run queue (the first and second fields of /proc/PID/task/TID/schedstat, in nanoseconds). A request the client
// built before it read a refusal goes out once the thread has worked through what was ahead of it: while the thread
// runs or waits to, the request may still be on its way; only time it spent idle shows it could have sent it. The
// watch reads both for every thread of every process in the client's process group, every SAMPLE_MS, through
// descriptors it keeps open (a read at offset 0 is about 3 µs a thread). Where that file does not exist (another
// system, a kernel without it), the watch reads nothing and excuses nothing: only the judge's own stalls count.
import { closeSync, openSync, readdirSync, readFileSync, readSync } from 'node:fs'

/**
 * How often the threads are read, and how often the process group is looked for new processes and threads: at
 * every read in the first seconds (a shell starts its child), then every RESCAN_MS.
 */
const SAMPLE_MS = 50
const RESCAN_MS = 250
const EAGER_MS = 2000
/** Samples kept: a check's window is seconds, a scenario tens of seconds (4096 × 50 ms is over three minutes). */
const KEPT = 4096

interface Thread {
  fd: number
  /** Its column in each sample. */
  slot: number
}

/** A thread's totals so far, in ms: time spent waiting for a CPU, and time spent running or waiting. */
interface Times { wait: number, busy: number }

interface Sample {
  /** `performance.now()` milliseconds. */
  at: number
  /** Each thread's totals, by its slot; `undefined` where it did not exist yet or had gone. */
  times: Array<Times | undefined>
}

const buffer = Buffer.alloc(256)

/** A thread's totals, or undefined when they do not read as two numbers. */
function readTimes (fd: number): Times | undefined {
  const text = buffer.toString('latin1', 0, readSync(fd, buffer, 0, buffer.length, 0))
  const [run, wait] = text.split(' ').map(Number)
  return Number.isFinite(run) && Number.isFinite(wait) ? { wait: wait! / 1e6, busy: (run! + wait!) / 1e6 } : undefined
}

/** The process group of a process, from /proc/PID/stat (the field after the state, which follows the name). */
function groupOf (pid: string): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'latin1')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return Number(fields[2])
}

/**
 * The codes of a /proc read that found nothing to read: the process or thread ended between its listing and its
 * read, or the system has no /proc.
 */
const ENDED: ReadonlySet<string> = new Set(['ENOENT', 'ESRCH'])
/**
 * For a process's stat, also another user's process that a mount with hidepid=1 keeps from us (EPERM; hidepid=2
 * lists none): none of the client's group.
 */
const ENDED_OR_HIDDEN: ReadonlySet<string> = new Set([...ENDED, 'EPERM'])

/** How the watch tells of a read that failed otherwise, by default: a warning on stderr. */
function warn (problem: string): void {
  process.emitWarning(problem, 'RunQueueWatch')
}

/**
 * Watches the run-queue waits of one client's process group (the client is started as a group's leader, so its
 * `sh -c`, `npm run` and their children are in it). Start it once the client is spawned; stop it when it has ended.
 */
export class RunQueueWatch {
  readonly #group: number
  readonly #threads = new Map<string, Thread>()
  readonly #samples: Sample[] = []
  /** Each thread's totals when it was first read, by slot. */
  readonly #first: Times[] = []
  #slots = 0
  #started = 0
  #timer: NodeJS.Timeout | undefined
  #lastScan = -Infinity
  /** The processes found in the group (the leader first), and the processes /proc listed at the last look. */
  readonly #members = new Set<string>()
  #listed = new Set<string>()
  #stopped = false
  readonly #report: (problem: string) => void
  /** The error codes already reported: a failing read fails again at every sample. */
  readonly #reported = new Set<string>()

  /**
   * `report` is told of a /proc read that failed other than for an ended process (what the watch cannot read, it
   * cannot excuse): the suite's journal, or a warning on stderr.
   */
  constructor (group: number | undefined, report: (problem: string) => void = warn) {
    this.#report = report
    this.#group = group ?? 0
    if (group !== undefined) this.#members.add(String(group))
    this.#started = performance.now()
    // Nothing to read: no process, or no schedstat on this system.
    if (group !== undefined) this.#find()
    if (this.#threads.size === 0) {
      this.#stopped = true
      return
    }
    this.#sample()
    this.#timer = setInterval(() => { this.#sample() }, SAMPLE_MS)
    this.#timer.unref()
  }

  /** Whether there is anything to read on this system. */
  get watching (): boolean {
    return this.#samples.length > 0
  }

  /**
   * The longest any one thread of the client waited for a CPU within [from, to] (`performance.now()` ms), as read
   * by the samples around that interval (so a little before and after it too: at most SAMPLE_MS each side). The
   * longest thread's and not the sum: a single-threaded client is late by its thread's wait, and summing a many-
   * threaded runtime's helpers would excuse more than any request was delayed. A thread first found after `from`
   * counts from when it was found: what it waited before is not known to have been in the interval.
   */
  waited (from: number, to: number): number {
    return this.#longest(from, to, 'wait')
  }

  /** The longest any one thread of the client was running or waiting for a CPU within [from, to], read so. */
  busy (from: number, to: number): number {
    return this.#longest(from, to, 'busy')
  }

  #longest (from: number, to: number, field: keyof Times): number {
    const samples = this.#samples
    if (samples.length === 0 || to <= from) return 0
    if (!this.#stopped && samples[samples.length - 1]!.at < to) this.#sample()
    let before = 0
    for (let i = samples.length - 1; i >= 0; i--) {
      if (samples[i]!.at <= from) {
        before = i
        break
      }
    }
    let after = samples.length - 1
    for (let i = before; i < samples.length; i++) {
      if (samples[i]!.at >= to) {
        after = i
        break
      }
    }
    const a = samples[before]!.times
    const b = samples[after]!.times
    let longest = 0
    for (let slot = 0; slot < b.length; slot++) {
      const end = b[slot]
      const start = a[slot] ?? this.#first[slot]!
      if (end !== undefined) longest = Math.max(longest, end[field] - start[field])
    }
    // Samples taken late (a busy judge) span more than the interval; no thread waited longer than the interval in it.
    return Math.min(longest, to - from)
  }

  /** Stops reading (the client has ended) and closes the descriptors; what was read stays for the checks. */
  stop (): void {
    if (this.#timer !== undefined) clearInterval(this.#timer)
    this.#timer = undefined
    this.#stopped = true
    for (const thread of this.#threads.values()) this.#close(thread)
    this.#threads.clear()
  }

  /**
   * Opens the threads of the group not yet open. Only a process not listed at the last look can have joined the group
   * since (a child is born in its parent's group), so of /proc's listing only those are read: a look costs one
   * listing and the new processes' stat, not a read of every process on the machine, which made each watch's cost
   * grow with the machine's load. (A process id freed and taken again between two looks goes unwatched: ids are
   * handed out in turn, so that takes the whole id space being used up in a quarter of a second.)
   */
  #find (): void {
    this.#lastScan = performance.now()
    const listed = new Set<string>()
    for (const name of this.#attempt('/proc', () => readdirSync('/proc')) ?? []) {
      if (name.charCodeAt(0) > 57) continue
      listed.add(name)
      if (this.#listed.has(name)) continue
      const group = this.#attempt(`/proc/${name}/stat`, () => groupOf(name), ENDED_OR_HIDDEN)
      if (group === this.#group) this.#members.add(name)
    }
    this.#listed = listed
    for (const pid of this.#members) {
      const tasks = this.#attempt(`/proc/${pid}/task`, () => readdirSync(`/proc/${pid}/task`))
      if (tasks === undefined) this.#members.delete(pid)
      for (const tid of tasks ?? []) {
        const key = `${pid}/${tid}`
        if (this.#threads.has(key)) continue
        const path = `/proc/${pid}/task/${tid}/schedstat`
        const fd = this.#attempt(path, () => openSync(path, 'r'))
        if (fd !== undefined) this.#threads.set(key, { fd, slot: this.#slots++ })
      }
    }
  }

  #sample (): void {
    const at = performance.now()
    if (at - this.#lastScan >= (at - this.#started < EAGER_MS ? 0 : RESCAN_MS)) this.#find()
    const times: Array<Times | undefined> = new Array(this.#slots)
    for (const [key, thread] of this.#threads) {
      const read = this.#attempt(`the schedstat of thread ${key}`, () => readTimes(thread.fd))
      if (read === undefined) {
        this.#close(thread)
        this.#threads.delete(key)
      } else {
        times[thread.slot] = read
        this.#first[thread.slot] ??= read
      }
    }
    this.#samples.push({ at, times })
    if (this.#samples.length > KEPT) this.#samples.splice(0, this.#samples.length - KEPT)
  }

  #close (thread: Thread): void {
    closeSync(thread.fd)
  }

  /**
   * What `read` reads in /proc, or undefined when it fails: for an ended process (a code of `expected`) quietly, as
   * nothing is left to read; otherwise reported, once a code. A report goes out after the read, on a microtask: a
   * read may come in the middle of a check's reading of an entry (`waited`, `busy`), where no journal entry may cut
   * in.
   */
  #attempt<T> (what: string, read: () => T, expected = ENDED): T | undefined {
    try {
      return read()
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? 'error'
      if (!expected.has(code) && !this.#reported.has(code)) {
        this.#reported.add(code)
        const problem = `the run-queue watch could not read ${what}: ${(err as Error).message}`
        queueMicrotask(() => { this.#report(problem) })
      }
      return undefined
    }
  }
}
