// The dashboard's rows of `npm run bench`:
// - session updates on one fake with 10 dashboard streams open against the same fake with none, in rotating slices
//   of the same process (each slice's ratio to the "none" slices beside it; the median of them);
// - the page's first paint, and its first frame drawn, in headless Chromium, on a fresh browser context each time;
// - a change on screen: an adapter's update sent, to the DOM showing it (a MutationObserver in the page).
import { request, type ClientRequest } from 'node:http'
import { chromium } from 'playwright-core'
import { chromiumPath } from './chromium.js'
import {
  ADAPTER, call, cpuMs, launch, load, median, medianRound, percentile, prepareAdapter, stop, type Load
} from './harness.js'

// The page's globals, for the function that runs in it: the bench's tsconfig has no DOM lib.
declare const document: { body: { textContent: string | null } }
declare class MutationObserver {
  constructor (fn: () => void)
  observe (target: unknown, options: Record<string, boolean>): void
  disconnect (): void
}

const STREAMS = 10
const SLICES = Number(process.env.BENCH_DASH_SLICES ?? 10)
const SLICE_S = Number(process.env.BENCH_SLICE ?? 1)
const PAINTS = 9
const CHANGES = 40
const HEARTBEAT = { activity: 'tool', toolLabel: 'npm test', statusDetail: 'running' }

export interface DashboardRows {
  /** Session updates with STREAMS dashboards open, as a share of the same fake with none (median of slices). */
  ratio: number
  min: number
  max: number
  watched: Load
  alone: Load
  /** Server CPU per request over the slices of each kind, µs. */
  cpuUs: { watched: number, alone: number }
  /** Frames and bytes each stream received per second while the load ran. */
  framesPerSecond: number
  bytesPerSecond: number
  /** Navigation start to first contentful paint, and to the first frame's arrival in the page, ms. */
  firstPaint: { median: number, max: number }
  firstFrame: { median: number, max: number }
  /** An adapter's update sent to the page showing it, ms. */
  onScreen: { median: number, p99: number }
}

/** One SSE client reading the stream as EventSource does, counting what it receives. */
function stream (url: string, seen: { frames: number, bytes: number }): ClientRequest {
  const req = request(`${url}/control/dashboard/stream`, (res) => {
    res.on('data', (chunk: Buffer) => {
      seen.bytes += chunk.length
      for (let i = chunk.indexOf('event: state'); i !== -1; i = chunk.indexOf('event: state', i + 1)) seen.frames++
    })
  })
  req.on('error', () => {})
  req.end()
  return req
}

export async function dashboardRows (dir: string): Promise<DashboardRows> {
  const server = await launch('orbtest', dir, 500)
  const url = server.control!
  try {
    const headers = await prepareAdapter(server)
    const path = `/a/v1/adapters/${ADAPTER}/sessions/s1`
    const heartbeats = (warm: number, seconds: number): Promise<Load> => load(server, 'POST', path, headers, HEARTBEAT,
      { warm, seconds })
    await heartbeats(2, 0)
    const slices: { watched: Load[], alone: Load[] } = { watched: [], alone: [] }
    const cpu = { watched: 0, alone: 0 }
    const ratios: number[] = []
    const seen = { frames: 0, bytes: 0 }
    let openMs = 0
    for (let slice = 0; slice < SLICES; slice++) {
      // Alternate which goes first, so that drift within a pair hits both alike.
      const order = slice % 2 === 0 ? ['alone', 'watched'] as const : ['watched', 'alone'] as const
      const got: Partial<Record<'watched' | 'alone', Load>> = {}
      for (const kind of order) {
        const opened = performance.now()
        const open = kind === 'watched' ? Array.from({ length: STREAMS }, () => stream(url, seen)) : []
        if (open.length > 0) await new Promise((resolve) => setTimeout(resolve, 200))
        const before = cpuMs(server.child.pid) ?? 0
        got[kind] = await heartbeats(0, SLICE_S)
        cpu[kind] += ((cpuMs(server.child.pid) ?? 0) - before) * 1000 / Math.max(1, got[kind].requests) / SLICES
        for (const req of open) req.destroy()
        if (kind === 'watched') openMs += performance.now() - opened
        slices[kind].push(got[kind])
      }
      ratios.push(got.watched!.rps / got.alone!.rps)
    }
    const firstPaints: number[] = []
    const firstFrames: number[] = []
    const onScreen: number[] = []
    const args = ['--no-sandbox', '--disable-dev-shm-usage']
    const browser = await chromium.launch({ executablePath: chromiumPath(), args })
    try {
      for (let i = 0; i < PAINTS; i++) {
        const context = await browser.newContext({ viewport: { width: 1280, height: 800 } })
        const page = await context.newPage()
        await page.goto(`${url}/`)
        await page.waitForSelector('.live-on')
        const timing = await page.evaluate(() => {
          const paint = performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? Number.NaN
          const frame = performance.getEntriesByName('orbtest:first-frame')[0]?.startTime ?? Number.NaN
          return { paint, frame }
        })
        firstPaints.push(timing.paint)
        firstFrames.push(timing.frame)
        await context.close()
      }
      const page = await browser.newPage({ viewport: { width: 1280, height: 800 } })
      await page.goto(`${url}/`)
      await page.waitForSelector(`[data-adapter="${ADAPTER}"]`)
      for (let i = 0; i < CHANGES; i++) {
        const title = `change ${i}`
        const shown = page.evaluate((wanted) => new Promise<number>((resolve) => {
          const observer = new MutationObserver(() => {
            if (document.body.textContent?.includes(wanted) === true) {
              observer.disconnect()
              resolve(performance.timeOrigin + performance.now())
            }
          })
          observer.observe(document.body, { subtree: true, childList: true, characterData: true })
        }), title)
        await new Promise((resolve) => setTimeout(resolve, 100))
        const sent = performance.timeOrigin + performance.now()
        await call({ socketPath: server.socket, method: 'POST', path, headers, body: { title } })
        onScreen.push((await shown) - sent)
      }
    } finally {
      await browser.close()
    }
    // What one stream received per second it was open (the frames' pace, and their size).
    const perSecond = (n: number): number => n / (openMs / 1000) / STREAMS
    return {
      ratio: median(ratios),
      min: Math.min(...ratios),
      max: Math.max(...ratios),
      watched: medianRound(slices.watched),
      alone: medianRound(slices.alone),
      cpuUs: cpu,
      framesPerSecond: perSecond(seen.frames),
      bytesPerSecond: perSecond(seen.bytes),
      firstPaint: { median: median(firstPaints), max: Math.max(...firstPaints) },
      firstFrame: { median: median(firstFrames), max: Math.max(...firstFrames) },
      onScreen: { median: median(onScreen), p99: percentile(onScreen, 99) }
    }
  } finally {
    await stop(server)
  }
}
