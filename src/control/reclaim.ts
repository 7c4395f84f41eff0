import { createRequire } from 'node:module'
import type { Changes } from '../shared/changes.js'

/**
 * CTL-D01: after `POST /control/reset` the process gives back the memory a run made it grow by, once the fakes have
 * been quiet for a while. V8 keeps a young generation it has grown to 32 MiB under load, and the pages of an old space
 * the run filled, until it collects while allocation is slow; an idle server seldom collects at all, so without this
 * a fake that two suites ran against stays 45 MiB bigger after its reset (bench/memory.ts).
 *
 * Two full collections: the first once the fakes have been quiet for `firstQuietTicks`, which frees what the run left
 * and starts a quiet sample; the second after `secondQuietTicks` more, when V8 sees a low allocation rate and shrinks
 * the young generation too. Any request in between starts the wait again. Ticks are real time (like the dashboard's
 * pacing, DASH-D02): this is the process's housekeeping, not the fakes' behaviour, and a virtual clock that nobody
 * advances must not keep the memory. The timer is unref'd, so it never holds a process open.
 */
export interface ReclaimOptions {
  /** What collects: by default V8's own `gc`, asked for once when first needed. */
  collect?: () => void
  /**
   * What calls `tick` while a reclaim is armed, and how that stops: by default every 500 ms of real time, on an
   * unref'd interval. A test ticks by hand.
   */
  ticker?: (tick: () => void) => () => void
  firstQuietTicks?: number
  secondQuietTicks?: number
}

export class Reclaimer {
  readonly #sources: readonly Changes[]
  readonly #collect: () => void
  readonly #ticker: (tick: () => void) => () => void
  readonly #first: number
  readonly #second: number
  #seen = 0
  #quiet = 0
  #collected = 0
  #stop: (() => void) | undefined
  #unwatch: Array<() => void> = []

  constructor (sources: readonly Changes[], options: ReclaimOptions = {}) {
    this.#sources = sources
    this.#collect = options.collect ?? collectGarbage
    this.#ticker = options.ticker ?? everyHalfSecond
    this.#first = options.firstQuietTicks ?? 2
    this.#second = options.secondQuietTicks ?? 11
  }

  /** After a reset: reclaim once the fakes are quiet. Arming again while armed starts the wait again. */
  arm (): void {
    this.#quiet = 0
    this.#collected = 0
    if (this.#stop !== undefined) return
    this.#seen = 0
    this.#unwatch = this.#sources.map((changes) => changes.watch(() => { this.#seen++ }))
    this.#stop = this.#ticker(() => { this.#tick() })
  }

  dispose (): void {
    this.#stop?.()
    this.#stop = undefined
    for (const unwatch of this.#unwatch) unwatch()
    this.#unwatch = []
  }

  #tick (): void {
    if (this.#stop === undefined) return
    if (this.#seen > 0) {
      // A request since the last tick: the run goes on, and the quiet sample the second collection needs is spoilt.
      this.#seen = 0
      this.#quiet = 0
      this.#collected = 0
      return
    }
    this.#quiet++
    const due = this.#collected === 0 ? this.#first : this.#second
    if (this.#quiet < due) return
    this.#quiet = 0
    this.#collected++
    try {
      this.#collect()
    } finally {
      if (this.#collected === 2) this.dispose()
    }
  }
}

function everyHalfSecond (tick: () => void): () => void {
  const timer = setInterval(tick, 500)
  timer.unref()
  return () => { clearInterval(timer) }
}

let v8: { gc: () => void, setFlags: (flags: string) => void, compactsAlways: boolean } | undefined

/**
 * V8's `gc`, which Node gives only under `--expose-gc`: the flag is set on the running V8, and a new context is made,
 * whose global then has it (the way the `expose-gc` package does it). Asked for once, when a reclaim first collects.
 *
 * Each collection compacts the old space (`--compact-on-every-full-gc`, set for it alone and cleared after, unless
 * Node was started with it): a run leaves its pages a fifth free, scattered, and V8 moves objects off only the worst
 * of them on its own. With it, and with the allocator settings the CLI starts with (cli/malloc.ts), a fake both
 * suites ran against comes back to within 10% of its RSS before them (docs/benchmarks.md, eighth session).
 */
function collectGarbage (): void {
  if (v8 === undefined) {
    // Required here, not imported: a start that never resets loads neither module.
    const require = createRequire(import.meta.url)
    const { setFlagsFromString } = require('node:v8') as typeof import('node:v8')
    const given = (globalThis as { gc?: unknown }).gc
    let gc: () => void
    if (typeof given === 'function') {
      gc = given as () => void
    } else {
      const { runInNewContext } = require('node:vm') as typeof import('node:vm')
      setFlagsFromString('--expose-gc')
      gc = runInNewContext('gc') as () => void
    }
    // Node started with the flag: every full collection compacts already, and clearing it would change that.
    const compactsAlways = process.execArgv.some((arg) => /^--compact[-_]on[-_]every[-_]full[-_]gc$/.test(arg))
    v8 = { gc, setFlags: setFlagsFromString, compactsAlways }
  }
  if (v8.compactsAlways) {
    v8.gc()
    return
  }
  v8.setFlags('--compact-on-every-full-gc')
  try {
    v8.gc()
  } finally {
    v8.setFlags('--no-compact-on-every-full-gc')
  }
}
