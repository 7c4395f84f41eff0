import { join } from 'node:path'
import { chromium, type Browser, type Page } from 'playwright-core'
import tap from 'tap'
import { chromiumPath } from '../../bench/chromium.js'
import { startJudge, type Judge } from '../../conformance/client/orbtile/judge.js'
import { startOrbtest, type Orbtest } from '../../src/orbtest.js'
import type { World } from '../../src/orb-mock/index.js'
import { SocketClient } from './client.js'
import { scratch, type Teardown } from './fake.js'

let launched: Promise<Browser> | undefined

/**
 * One headless browser per test file (bench/chromium.ts finds it; a machine without one fails the tests, never skips
 * them), closed when the file's tests end. Its close hangs on the file (`tap`), not on the test that first asked,
 * so that the file's tests share it (a launch is about a second).
 */
export function browser (): Promise<Browser> {
  if (launched === undefined) {
    const executablePath = chromiumPath()
    launched = chromium.launch({
      executablePath,
      // A container's root user has no sandbox to give; /dev/shm is small there.
      args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu']
    })
    tap.teardown(async () => {
      const done = launched
      launched = undefined
      await (await done!).close()
    })
  }
  return launched
}

/** The hex colour `#rrggbb` as the browser's computed style writes it. */
export function rgb (hex: string): string {
  const n = Number.parseInt(hex.slice(1), 16)
  return `rgb(${n >> 16}, ${(n >> 8) & 255}, ${n & 255})`
}

export interface DashboardSetup {
  fakes: Orbtest
  page: Page
  /** An adapter's client on the fake Orbtile's socket, with the discovery token. */
  adapter: SocketClient
  /** The control server's URL (the page's origin). */
  url: string
  /** Every request the page made, in order, as `METHOD url`. */
  requests: string[]
  /** Errors the page threw or logged. */
  errors: string[]
  /** With `judge: true`: the `--judge` observer, as `orbtest up --judge` runs it. */
  judge: Judge | undefined
}

/**
 * Every fake of `orbtest up` (virtual clock, free ports, no rate limits) and a fresh browser page on its dashboard,
 * at `width`×`height`; all closed when the test ends.
 */
export async function openDashboard (t: Teardown, options: {
  width?: number
  height?: number
  world?: World
  /** Judge the adapter client rules on every request, as `orbtest up --judge` does. */
  judge?: boolean
  /** Let the page move (CSS animations, typing); off by default: the tests read state, not motion. */
  motion?: boolean
} = {}): Promise<DashboardSetup> {
  const dir = scratch(t)
  let fakes: Orbtest | undefined // eslint-disable-line prefer-const -- read by the judge before it is set
  const judge = options.judge === true
    ? startJudge(join(dir, 'judge.json'), () => fakes?.orbtile?.token ?? '')
    : undefined
  fakes = await startOrbtest({
    clockMode: 'virtual',
    clockStart: Date.UTC(2026, 11, 1, 12),
    controlPort: 0,
    orbtile: {
      discoveryPath: join(dir, 'adapter-api.json'),
      socketPath: join(dir, 'orbtile.sock'),
      pidCheck: 'off',
      rateLimit: 'off',
      ...(judge === undefined ? {} : { tap: judge.tap })
    },
    orb: { port: 0, rateLimit: 'off', ...(options.world === undefined ? {} : { world: options.world }) },
    ...(judge === undefined ? {} : { judge: () => judge.state() })
  })
  t.teardown(() => fakes.close())
  const adapter = new SocketClient(fakes.orbtile!.socketPath, fakes.orbtile!.token)
  t.teardown(() => adapter.close())
  const context = await (await browser()).newContext({
    viewport: { width: options.width ?? 1280, height: options.height ?? 800 },
    reducedMotion: options.motion === true ? 'no-preference' : 'reduce'
  })
  t.teardown(() => context.close())
  const page = await context.newPage()
  const requests: string[] = []
  const errors: string[] = []
  page.on('request', (request) => { requests.push(`${request.method()} ${request.url()}`) })
  page.on('pageerror', (err) => { errors.push(err.message) })
  page.on('console', (message) => { if (message.type() === 'error') errors.push(message.text()) })
  const url = fakes.control.url
  await page.goto(`${url}/`)
  await page.waitForSelector('.live-on')
  return { fakes, page, adapter, url, requests, errors, judge }
}

/** An adapter's calls on the socket: register (allowed first, as the user would), post a session, hold a poll. */
export function adapterCalls (setup: DashboardSetup, id = 'dev.orbtest.dash') {
  const { adapter, fakes } = setup
  let token = ''
  const headers = (): Record<string, string> => ({ 'x-orbtile-adapter-token': token })
  return {
    id,
    async register (body: Record<string, unknown> = {}, user: Record<string, unknown> = { allowed: true }) {
      fakes.orbtile!.control.setUser(id, user as never)
      const reply = await adapter.request({
        method: 'PUT',
        path: `/adapters/${id}`,
        body: {
          name: 'Dash agent', palette: { baseHue: 200 }, capabilities: ['tap', 'approvals', 'questions'], ...body
        }

      })
      if (reply.status !== 200) throw new Error(`registration failed: ${reply.status} ${reply.text}`)
      token = reply.json.adapterToken
      return reply.json
    },
    post: (sessionId: string, update: Record<string, unknown>) =>
      adapter.request({
        method: 'POST', path: `/adapters/${id}/sessions/${sessionId}`, body: update, headers: headers()
      }),
    poll: (body: Record<string, unknown> = { waitSeconds: 2 }) =>
      adapter.request({ method: 'POST', path: `/adapters/${id}/events`, body, headers: headers() })
  }
}
