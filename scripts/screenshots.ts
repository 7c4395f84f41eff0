// `npm run screenshots [-- OUT_DIR]`: the dashboard's pictures for the README, taken in a real browser from a real
// scene: every fake of `orbtest up` (virtual clock, so each run draws the same), two adapters and their sessions on
// the Unix socket, a bot that registered a command, members who spoke and typed it, and the --judge verdicts.
// Writes orbtile.png, orb.png, judge.png and narrow.png (default: docs/screenshots/). Needs Chromium
// (bench/chromium.ts), driven by playwright-core.
import { request } from 'node:http'
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { chromium, type Browser } from 'playwright-core'
import { PNG } from 'pngjs'
import { chromiumPath } from '../bench/chromium.js'
import { startJudge } from '../conformance/client/orbtile/judge.js'
import { defaultWorld } from '../src/orb-mock/index.js'
import { startOrbtest, type Orbtest } from '../src/orbtest.js'

/** A JSON request on the fake Orbtile's socket, as an adapter sends it. */
function adapterCall (fakes: Orbtest, method: string, path: string, body?: unknown, lease?: string): Promise<any> {
  const orbtile = fakes.orbtile!
  const payload = Buffer.from(body === undefined ? '' : JSON.stringify(body))
  return new Promise((resolve, reject) => {
    const req = request({
      socketPath: orbtile.socketPath,
      method,
      path: `${orbtile.basePath}${path}`,
      headers: {
        host: 'localhost',
        authorization: `Bearer ${orbtile.token}`,
        'content-type': 'application/json',
        'content-length': payload.length,
        ...(lease === undefined ? {} : { 'x-orbtile-adapter-token': lease })
      }
    }, (res) => {
      let text = ''
      res.on('data', (chunk) => { text += chunk })
      res.on('end', () => { resolve(text === '' ? {} : JSON.parse(text)) })
    })
    req.on('error', reject)
    req.end(payload)
  })
}

/** A round icon in the adapter's colour, as a PNG in base64. */
function icon (r: number, g: number, b: number): string {
  const size = 64
  const png = new PNG({ width: size, height: size })
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) {
      const i = (y * size + x) * 4
      const inside = (x - 31.5) ** 2 + (y - 31.5) ** 2 < 30 ** 2
      png.data[i] = r
      png.data[i + 1] = g
      png.data[i + 2] = b
      png.data[i + 3] = inside ? 255 : 0
    }
  }
  return PNG.sync.write(png).toString('base64')
}

async function scene (fakes: Orbtest): Promise<void> {
  const control = fakes.orbtile!.control
  control.setUser('dev.example.claude-like', { allowed: true, keypad: true })
  control.setUser('dev.example.codex-like', { allowed: true })
  const first = await adapterCall(fakes, 'PUT', '/adapters/dev.example.claude-like', {
    name: 'Agent Amber',
    palette: { baseHue: 250, attentionHue: 300 },
    icon: { png: icon(90, 120, 240) },
    capabilities: ['tap', 'approvals', 'questions']
  })
  const second = await adapterCall(fakes, 'PUT', '/adapters/dev.example.codex-like', {
    name: 'Agent Teal', palette: { baseHue: 165 }, icon: { png: icon(20, 170, 150) }, capabilities: ['tap']
  })
  const post = (id: string, lease: string, session: string, update: Record<string, unknown>) =>
    adapterCall(fakes, 'POST', `/adapters/${id}/sessions/${session}`, update, lease)
  const amber = (s: string, u: Record<string, unknown>) => post('dev.example.claude-like', first.adapterToken, s, u)
  const teal = (s: string, u: Record<string, unknown>) => post('dev.example.codex-like', second.adapterToken, s, u)
  await amber('s1', { title: 'Fix the flaky test', activity: 'thinking', project: 'orbtest' })
  await amber('s2',
    { title: 'Ship the release', activity: 'tool', toolKind: 'shell', toolLabel: 'npm publish', project: 'orbtest' })
  await amber('s3', {
    title: 'Clean the cache',
    activity: 'waitingPermission',
    project: 'website',
    approval: { id: 'r1', toolName: 'Bash', commandSummary: 'rm -rf .cache' }
  })
  await amber('s4', {
    title: 'Pick a colour',
    activity: 'waitingQuestion',
    project: 'website',
    question: {
      id: 'q1',
      questions: [{ header: 'Theme', text: 'Which accent?', options: [{ label: 'Blue' }, { label: 'Green' }] }]
    }
  })
  const message = { id: 'm1', text: 'The dashboard shows every orb in its colour.' }
  await teal('t1', { title: 'Write the docs', activity: 'streaming', message })
  await teal('t2', { title: 'Review the PR', activity: 'done', host: 'build-box' })
  await adapterCall(fakes, 'POST', '/adapters/dev.example.claude-like/events', { waitSeconds: 0 }, first.adapterToken)

  const orb = fakes.orb!
  const bot = (method: string, path: string, body?: unknown) => fetch(`${orb.url}/api/bot/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${orb.store.apps.get('app_demo')!.token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body)
  })
  const roll = { name: 'roll', description: 'Roll a die', options: [{ name: 'sides' }] }
  await bot('PUT', '/commands', { commands: [roll] })
  const where = { server: 'srv_orbit', channel: 'ch_general' }
  orb.control.memberPost({ ...where, member: 'mem_bo', content: 'Has anyone seen the new dashboard? <@app_demo>' })
  const content = 'I have: it is live, and every change arrives at once.'
  await bot('POST', '/messages', { channel: 'ch_general', content })
  orb.control.invoke({ ...where, member: 'mem_ada', name: 'roll', options: { sides: '20' } })
  await bot('GET', '/events')
}

/** Plays the scene and writes the four pictures into `out`, with the given browser or one of its own. */
export async function takeScreenshots (out: string, given?: Browser): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'orbtest-shots-'))
  let fakes: Orbtest | undefined // eslint-disable-line prefer-const -- read by the judge before it is set
  const judge = startJudge(join(dir, 'judge.json'), () => fakes?.orbtile?.token ?? '')
  const world = defaultWorld()
  fakes = await startOrbtest({
    clockMode: 'virtual',
    clockStart: Date.UTC(2026, 11, 1, 9, 30),
    controlPort: 0,
    orbtile: { discoveryPath: join(dir, 'd.json'), socketPath: join(dir, 'o.sock'), pidCheck: 'off', tap: judge.tap },
    orb: { port: 0, world },
    judge: () => judge.state()
  })
  const args = ['--no-sandbox', '--disable-dev-shm-usage']
  const browser = given ?? await chromium.launch({ executablePath: chromiumPath(), args })
  try {
    await scene(fakes)
    mkdirSync(out, { recursive: true })
    const shoot = async (name: string, width: number, height: number, tab: string): Promise<void> => {
      const page = await browser.newPage({ viewport: { width, height }, reducedMotion: 'reduce', colorScheme: 'dark' })
      await page.goto(`${fakes!.control.url}/#${tab}`)
      await page.waitForSelector('.live-on')
      await page.waitForTimeout(150)
      await page.screenshot({ path: join(out, name) })
      await page.close()
    }
    await shoot('orbtile.png', 1280, 800, 'orbtile')
    await shoot('orb.png', 1280, 800, 'orb')
    await shoot('judge.png', 1280, 800, 'judge')
    await shoot('narrow.png', 390, 844, 'orbtile')
  } finally {
    if (given === undefined) await browser.close()
    await fakes.close()
    judge.finish()
    rmSync(dir, { recursive: true, force: true })
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const out = resolve(process.argv[2] ?? join(import.meta.dirname, '..', 'docs', 'screenshots'))
  await takeScreenshots(out)
  process.stdout.write(`screenshots written to ${out}\n`)
}
