import type { IncomingMessage, ServerResponse } from 'node:http'
import type { FastifyInstance } from 'fastify'
import type { Clock, TimerHandle } from './clock.js'

/**
 * "Something in this fake may have changed": the signal a watcher such as the dashboard's stream (DASH-D01) waits on
 * instead of polling. It carries no data; a watcher reads the fake's state when it chooses. `notify` is called on the
 * hot path of every request, so with no watcher it costs one check of a set's size.
 * Kept: with the other kept shortcuts, a session update runs at 61% of bare fastify, 48% without (benchmarks.md).
 */
export class Changes {
  readonly #watchers = new Set<() => void>()
  readonly #edges: Array<(watched: boolean) => void> = []

  /** Calls `fn` on every change until the returned function is called. */
  watch (fn: () => void): () => void {
    const first = this.#watchers.size === 0
    this.#watchers.add(fn)
    if (first) for (const edge of this.#edges) edge(true)
    return () => {
      if (this.#watchers.delete(fn) && this.#watchers.size === 0) for (const edge of this.#edges) edge(false)
    }
  }

  /**
   * Calls `fn(true)` when the first watcher comes and `fn(false)` when the last one goes (and `fn(true)` now, if one
   * already watches): a report that costs something on every request is set up only while someone listens.
   */
  whileWatched (fn: (watched: boolean) => void): void {
    this.#edges.push(fn)
    if (this.#watchers.size > 0) fn(true)
  }

  notify (): void {
    if (this.#watchers.size === 0) return
    for (const fn of this.#watchers) fn()
  }
}

/**
 * DASH-D01: every way a fake's state changes, reported. A request may change it from when it arrives (a long poll
 * is held) and has changed it by the time its reply is sent or its connection is cut. Both are heard on the HTTP
 * server, not through fastify's hooks: an `onRequest` hook added after the fake's own never runs for a request
 * those refuse, and an `onResponse` hook makes fastify set up its response timing and listeners on every request.
 * The response's `close` comes once for every request, answered or cut.
 *
 * The server's listener is there only while someone watches: with none, a request would pay for a second `request`
 * listener (Node's emit copies its listener array when there are two) and a `close` listener added and removed, for
 * nothing (about 1 µs a session update). A watcher that comes reads the state afresh, so a request already under
 * way then needs no report of its arrival. Its end has no `close` listener of its own: a held long poll's end is heard
 * when its timer is cancelled or fires (reportingClock); a short request's change lands within milliseconds of the
 * first frame and shows with the next change.
 */
export function reportRequests (app: FastifyInstance, changes: Changes): void {
  const notify = (): void => { changes.notify() }
  const heard = (_request: IncomingMessage, response: ServerResponse): void => {
    changes.notify()
    response.once('close', notify)
  }
  changes.whileWatched((watched) => {
    if (watched) app.server.on('request', heard)
    else app.server.off('request', heard)
  })
}

/**
 * DASH-D01: the clock a fake's services use: `changes` is told after each of their timers fires (an expiry), and after
 * one is cancelled: a service cancels a timer when its plans change (a held poll answered, or left by its client; a
 * lease ended). That is also how the end of a long poll that was held before anyone watched is heard (reportRequests).
 */
export function reportingClock (clock: Clock, changes: Changes): Clock {
  return {
    get mode () { return clock.mode },
    now: () => clock.now(),
    setTimer: (ms: number, fn: () => void): TimerHandle => clock.setTimer(ms, () => {
      try {
        fn()
      } finally {
        changes.notify()
      }
    }),
    clearTimer: (handle: TimerHandle) => {
      clock.clearTimer(handle)
      changes.notify()
    },
    pendingTimers: () => clock.pendingTimers(),
    dispose: () => { clock.dispose() }
  }
}

/**
 * DASH-D01: a fake's control object whose every method but the `reads` tells `changes` once it has returned (or its
 * promise has settled), so that what a test does in-process shows on the dashboard as what the control server does.
 */
export function reportingControl<T extends object> (control: T, changes: Changes, reads: ReadonlyArray<keyof T>): T {
  const quiet = new Set<PropertyKey>(reads)
  return new Proxy(control, {
    get (target, key) {
      const value: unknown = Reflect.get(target, key, target)
      if (typeof value !== 'function') return value
      if (quiet.has(key)) return value.bind(target)
      return (...args: unknown[]): unknown => {
        let result: unknown
        try {
          result = (value as (...a: unknown[]) => unknown).apply(target, args)
        } catch (err) {
          changes.notify()
          throw err
        }
        if (result instanceof Promise) return result.finally(() => { changes.notify() })
        changes.notify()
        return result
      }
    }
  })
}
