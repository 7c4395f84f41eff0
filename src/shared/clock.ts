/**
 * The one source of time for a fake instance. Every clock read and every timer in a fake goes through a Clock,
 * so that a virtual clock can make TTLs, expiries, rate windows and long-poll deadlines testable in milliseconds.
 */
export interface Clock {
  /** `real` follows the wall clock; `virtual` moves only when advanced. */
  readonly mode: 'real' | 'virtual'
  /** Milliseconds since the Unix epoch, as this clock sees it. */
  now(): number
  /** Runs `fn` once `ms` milliseconds of this clock's time have passed. */
  setTimer(ms: number, fn: () => void): TimerHandle
  /** Cancels a timer; cancelling one that already fired or was cancelled does nothing. */
  clearTimer(handle: TimerHandle): void
  /** Number of timers waiting to fire. */
  pendingTimers(): number
  /** Cancels every pending timer. A fake calls this when it closes. */
  dispose(): void
}

/** An opaque timer reference. */
export interface TimerHandle {
  readonly due: number
}

/** `real` or `virtual`. */
export type ClockMode = Clock['mode']

/** Builds a clock by mode. `startAt` (epoch ms) applies to a virtual clock only; it defaults to the wall clock. */
export function createClock (mode: ClockMode, startAt?: number): Clock {
  return mode === 'virtual' ? new VirtualClock(startAt) : new RealClock()
}

interface RealTimer extends TimerHandle {
  timeout: NodeJS.Timeout
}

// setTimeout fires at once (with a warning) past 2^31-1 ms; longer waits are taken in steps.
const MAX_TIMEOUT = 2 ** 31 - 1

/** Wall-clock time; timers are unref()ed so that they never keep a process alive on their own. */
export class RealClock implements Clock {
  readonly mode = 'real' as const
  readonly #timers = new Set<RealTimer>()

  now (): number {
    return Date.now()
  }

  setTimer (ms: number, fn: () => void): TimerHandle {
    const due = Date.now() + Math.max(0, ms)
    const timer = { due } as RealTimer
    const arm = (): void => {
      const left = Math.max(0, due - Date.now())
      timer.timeout = setTimeout(() => {
        if (Date.now() < due) return arm()
        this.#timers.delete(timer)
        fn()
      }, Math.min(left, MAX_TIMEOUT))
      timer.timeout.unref()
    }
    arm()
    this.#timers.add(timer)
    return timer
  }

  clearTimer (handle: TimerHandle): void {
    const timer = handle as RealTimer
    if (this.#timers.delete(timer)) clearTimeout(timer.timeout)
  }

  pendingTimers (): number {
    return this.#timers.size
  }

  dispose (): void {
    for (const timer of this.#timers) clearTimeout(timer.timeout)
    this.#timers.clear()
  }
}

interface VirtualTimer extends TimerHandle {
  readonly seq: number
  readonly fn: () => void
}

/**
 * Time that stands still until advanced. Advancing fires every timer that falls due, in order of due time
 * (ties in the order they were set), with `now()` reading each timer's own due time while it runs, so a
 * callback sees the instant it was scheduled for. Timers set by a callback fire in the same advance if due.
 */
export class VirtualClock implements Clock {
  readonly mode = 'virtual' as const
  #now: number
  #seq = 0
  // A sorted array is plenty: fakes hold at most a few thousand timers, and inserts are rare next to reads.
  #timers: VirtualTimer[] = []

  constructor (startAt: number = Date.now()) {
    this.#now = startAt
  }

  now (): number {
    return this.#now
  }

  setTimer (ms: number, fn: () => void): TimerHandle {
    const timer: VirtualTimer = { due: this.#now + Math.max(0, ms), seq: this.#seq++, fn }
    let i = this.#timers.length
    while (i > 0 && this.#timers[i - 1]!.due > timer.due) i--
    this.#timers.splice(i, 0, timer)
    return timer
  }

  clearTimer (handle: TimerHandle): void {
    const i = this.#timers.indexOf(handle as VirtualTimer)
    if (i !== -1) this.#timers.splice(i, 1)
  }

  pendingTimers (): number {
    return this.#timers.length
  }

  /**
   * Moves time forward by `ms` (>= 0), firing due timers in order. Returns the new time. A callback that throws
   * does not stop the others: time still reaches the target, then the first error is thrown.
   */
  advance (ms: number): number {
    if (!Number.isFinite(ms) || ms < 0) throw new RangeError(`cannot advance a clock by ${ms} ms`)
    const target = this.#now + ms
    const failures: unknown[] = []
    for (let next = this.#timers[0]; next !== undefined && next.due <= target; next = this.#timers[0]) {
      this.#timers.shift()
      this.#now = next.due
      try {
        next.fn()
      } catch (err) {
        failures.push(err)
      }
    }
    this.#now = target
    if (failures.length > 0) throw failures[0]
    return target
  }

  dispose (): void {
    this.#timers = []
  }
}

/** What `GET /control/clock` reports. */
export interface ClockState {
  mode: ClockMode
  /** Milliseconds since the Unix epoch. */
  now: number
  iso: string
  pendingTimers: number
}

/** A clock as the control API shows it. */
export function clockState (clock: Clock): ClockState {
  const now = clock.now()
  return { mode: clock.mode, now, iso: new Date(now).toISOString(), pendingTimers: clock.pendingTimers() }
}

/** Thrown when something asks a real clock to move. */
export class ClockNotVirtualError extends Error {
  constructor () {
    super('the clock is real; start with --clock virtual to move time by hand')
    this.name = 'ClockNotVirtualError'
  }
}

/**
 * Advances a virtual clock by `ms`, then yields once to the event loop so that replies released by the timers
 * (long polls, expiries) are written before the caller goes on.
 */
export async function advanceClock (clock: Clock, ms: number): Promise<ClockState> {
  if (!(clock instanceof VirtualClock)) throw new ClockNotVirtualError()
  clock.advance(ms)
  await new Promise((resolve) => setImmediate(resolve))
  return clockState(clock)
}
