import type { ServerResponse } from 'node:http'
import type { Changes } from '../../shared/changes.js'

/**
 * DASH-D02: how often a frame may go out. A change is sent at most `FIRST_MS` after it is reported when the stream
 * has been quiet, and frames are at least `GAP_MS` apart under a steady stream of changes: on screen within 100 ms,
 * and a fake serving thousands of requests a second builds twenty frames a second, not thousands.
 */
export const FRAME_TIMING = { FIRST_MS: 8, GAP_MS: 50 } as const

/** DASH-D03: streams one control server keeps open at most; more are refused (409), so tabs cannot pile up. */
export const MAX_STREAMS = 64

interface Stream {
  response: ServerResponse
  /** A frame was skipped while the socket's buffer was full: send the newest once it drains. */
  behind: boolean
}

/**
 * The dashboard's live feed (Server-Sent Events): one frame of everything the page draws, built once per change
 * for every open stream, and only while a stream is open. The fakes report changes (src/shared/changes.ts); the hub
 * paces frames on the machine's real time, not the fakes' clock: a virtual clock stands still until advanced, and
 * the screen must not (DASH-D02).
 */
export class DashboardHub {
  readonly #sources: readonly Changes[]
  readonly #frame: () => string
  readonly #streams = new Set<Stream>()
  #unwatch: Array<() => void> = []
  #timer: NodeJS.Timeout | undefined
  #lastSent = 0
  #last = ''
  #building = false
  #frames = 0

  /** `frame` builds the JSON of one frame; it is called only when a stream is open. */
  constructor (sources: readonly Changes[], frame: () => string) {
    this.#sources = sources
    this.#frame = frame
  }

  get streams (): number {
    return this.#streams.size
  }

  /** Frames built so far (for the tests). */
  get frames (): number {
    return this.#frames
  }

  /** Starts a stream on `response`, whose head is not yet written: the current frame at once, then every change. */
  open (response: ServerResponse): void {
    response.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
      connection: 'keep-alive'
    })
    // A page that loses the stream tries again after a second (the EventSource default is longer in some browsers).
    response.write('retry: 1000\n\n')
    const stream: Stream = { response, behind: false }
    this.#streams.add(stream)
    if (this.#streams.size === 1) this.#unwatch = this.#sources.map((changes) => changes.watch(() => this.#changed()))
    response.on('close', () => {
      this.#streams.delete(stream)
      if (this.#streams.size === 0) this.#quiet()
    })
    response.on('drain', () => {
      if (stream.behind) this.#write(stream, this.#last)
    })
    this.#write(stream, this.#build())
  }

  /** Ends every stream (the control server is closing). */
  close (): void {
    for (const { response } of this.#streams) response.end()
    this.#streams.clear()
    this.#quiet()
  }

  #quiet (): void {
    for (const unwatch of this.#unwatch) unwatch()
    this.#unwatch = []
    if (this.#timer !== undefined) clearTimeout(this.#timer)
    this.#timer = undefined
  }

  /** Something changed that no fake reports (the control server's own routes: the clock moved, a reset). */
  nudge (): void {
    if (this.#streams.size > 0) this.#changed()
  }

  #changed (): void {
    // Reading the fakes to build a frame must not count as a change of theirs.
    if (this.#building || this.#timer !== undefined) return
    const wait = Math.max(FRAME_TIMING.FIRST_MS, this.#lastSent + FRAME_TIMING.GAP_MS - performance.now())
    this.#timer = setTimeout(() => {
      this.#timer = undefined
      this.#broadcast()
    }, wait)
    this.#timer.unref()
  }

  #broadcast (): void {
    const previous = this.#last
    const frame = this.#build()
    // Nothing the page draws moved (a read, a request refused before it changed anything): no frame.
    if (frame === previous) return
    for (const stream of this.#streams) this.#write(stream, frame)
  }

  #build (): string {
    this.#building = true
    try {
      this.#last = this.#frame()
    } finally {
      this.#building = false
    }
    this.#frames++
    this.#lastSent = performance.now()
    return this.#last
  }

  #write (stream: Stream, frame: string): void {
    if (stream.response.writableNeedDrain) {
      stream.behind = true
      return
    }
    stream.behind = false
    stream.response.write(`event: state\ndata: ${frame}\n\n`)
  }
}
