// The dashboard's rows of `npm run bench`:
// - session updates on one fake with 10 dashboard streams open against the same fake with none, in rotating slices
//   of the same process (each slice's ratio to the "none" slices beside it; the median of them);
// - the page's first paint, and its first frame drawn, in headless Chromium, on a fresh browser context each time;
// - a change on screen: an adapter's update sent, to the DOM showing it (a MutationObserver in the page).
import { request, type ClientRequest } from 'node:http'
import { chromium, type Browser } from 'playwright-core'
import { chromiumPath } from './chromium.js'
import {
  ADAPTER, call, cpuMs, launch, load, median, medianRound, percentile, prepareAdapter, stop, type Load, type Server
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

/** Where the dashboard rows send session updates: the fake, its control URL, the session's path and headers. */
interface Updates {
  server: Server
  url: string
  path: string
  headers: Record<string, string>
}

export async function dashboardRows (dir: string): Promise<DashboardRows> {
  const server = await launch('orbtest', dir, 500)
  const url = server.control!
  try {
    const headers = await prepareAdapter(server)
    const updates: Updates = { server, url, path: `/a/v1/adapters/${ADAPTER}/sessions/s1`, headers }
    await heartbeats(updates, 2, 0)
    const watched = await watchedAgainstAlone(updates)
    const browser = await browserTimings(updates)
    // What one stream received per second it was open (the frames' pace, and their size).
    const perSecond = (n: number): number => n / (watched.openMs / 1000) / STREAMS
    return {
      ratio: median(watched.ratios),
      min: Math.min(...watched.ratios),
      max: Math.max(...watched.ratios),
      watched: medianRound(watched.slices.watched),
      alone: medianRound(watched.slices.alone),
      cpuUs: watched.cpu,
      framesPerSecond: perSecond(watched.seen.frames),
      bytesPerSecond: perSecond(watched.seen.bytes),
      firstPaint: { median: median(browser.firstPaints), max: Math.max(...browser.firstPaints) },
      firstFrame: { median: median(browser.firstFrames), max: Math.max(...browser.firstFrames) },
      onScreen: { median: median(browser.onScreen), p99: percentile(browser.onScreen, 99) }
    }
  } finally {
    await stop(server)
  }
}

/** Session updates for `seconds` after `warm` seconds of warming up. */
function heartbeats (u: Updates, warm: number, seconds: number): Promise<Load> {
  return load(u.server, 'POST', u.path, u.headers, HEARTBEAT, { warm, seconds })
}

type Watch = 'watched' | 'alone'

/** The slices of load with STREAMS dashboards open and with none, their CPU per request, and what the streams got. */
interface WatchedAgainstAlone {
  slices: Record<Watch, Load[]>
  cpu: Record<Watch, number>
  /** Each pair's watched rate as a share of its alone rate. */
  ratios: number[]
  seen: { frames: number, bytes: number }
  /** How long the streams were open in all, ms. */
  openMs: number
}

async function watchedAgainstAlone (u: Updates): Promise<WatchedAgainstAlone> {
  const pid = u.server.child.pid
  const out: WatchedAgainstAlone = {
    slices: { watched: [], alone: [] },
    cpu: { watched: 0, alone: 0 },
    ratios: [],
    seen: { frames: 0, bytes: 0 },
    openMs: 0
  }
  for (let slice = 0; slice < SLICES; slice++) {
    // Alternate which goes first, so that drift within a pair hits both alike.
    const order = slice % 2 === 0 ? ['alone', 'watched'] as const : ['watched', 'alone'] as const
    const got: Partial<Record<Watch, Load>> = {}
    for (const kind of order) {
      const opened = performance.now()
      const open = kind === 'watched' ? Array.from({ length: STREAMS }, () => stream(u.url, out.seen)) : []
      if (open.length > 0) await new Promise((resolve) => setTimeout(resolve, 200))
      const before = cpuMs(pid) ?? 0
      got[kind] = await heartbeats(u, 0, SLICE_S)
      out.cpu[kind] += ((cpuMs(pid) ?? 0) - before) * 1000 / Math.max(1, got[kind].requests) / SLICES
      for (const req of open) req.destroy()
      if (kind === 'watched') out.openMs += performance.now() - opened
      out.slices[kind].push(got[kind])
    }
    out.ratios.push(got.watched!.rps / got.alone!.rps)
  }
  return out
}

/** In headless Chromium: first paints and first frames of fresh contexts, and updates' times to the screen, ms. */
interface BrowserTimings { firstPaints: number[], firstFrames: number[], onScreen: number[] }

async function browserTimings (u: Updates): Promise<BrowserTimings> {
  const firstPaints: number[] = []
  const firstFrames: number[] = []
  const args = ['--no-sandbox', '--disable-dev-shm-usage']
  const browser = await chromium.launch({ executablePath: chromiumPath(), args })
  try {
    for (let i = 0; i < PAINTS; i++) {
      const context = await browser.newContext({ viewport: { width: 1280, height: 800 } })
      const page = await context.newPage()
      await page.goto(`${u.url}/`)
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
    return { firstPaints, firstFrames, onScreen: await changesOnScreen(browser, u) }
  } finally {
    await browser.close()
  }
}

/** CHANGES updates, each from its sending to the page's DOM showing it, ms. */
async function changesOnScreen (browser: Browser, u: Updates): Promise<number[]> {
  const onScreen: number[] = []
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } })
  await page.goto(`${u.url}/`)
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
    await call({ socketPath: u.server.socket, method: 'POST', path: u.path, headers: u.headers, body: { title } })
    onScreen.push((await shown) - sent)
  }
  return onScreen
}
