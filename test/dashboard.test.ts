import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { scratch } from './helpers/fake.js'
import { readPng } from './helpers/png.js'
import { httpRequest } from './helpers/client.js'
import { OrbClient, DEMO } from './helpers/orb.js'
import { adapterCalls, browser, openDashboard, rgb } from './helpers/browser.js'
import { takeScreenshots } from '../scripts/screenshots.js'
import { defaultWorld } from '../src/orb-mock/index.js'

// The dashboard in a real browser (Debian's chromium, driven by playwright-core), against every fake of `orbtest up`
// over their real transports: the adapter on the Unix socket, the bot over loopback HTTP, the page over the control
// server. What the page shows is read from the DOM and computed styles; what it does is read back from the fakes.

// The page's globals, for the functions that run in the browser (page.evaluate and the like): the tests' tsconfig
// has no DOM lib, and giving it one would hide a stray `document` in src/.
declare const document: any
declare const getComputedStyle: (el: unknown) => { backgroundColor: string, opacity: string, animationName: string }
declare const innerWidth: number
type HTMLInputElement = { labels: { length: number } | null }

const ballOf = (session: string) => `[data-session="${session}"] .ball`

t.test("DASH-01 an adapter registers and posts a session: its orb appears, live, in the palette snapshot's colour for the activity, moving as it does", async (t) => {
  const setup = await openDashboard(t, { motion: true })
  const { page, fakes } = setup
  const agent = adapterCalls(setup)
  await agent.register()
  t.equal((await agent.post('s1', { title: 'Fix the build', activity: 'thinking', project: 'orbtest' })).status, 200)
  await page.waitForSelector(ballOf('s1'))
  const palette = fakes.orbtile!.control.adapter(agent.id)!.palette!
  t.equal(await page.$eval(ballOf('s1'), (el) => getComputedStyle(el).backgroundColor), rgb(palette.colours.thinking))
  t.match(await page.textContent('[data-session="s1"]'), /Fix the build.*thinking/s, 'the activity is written too')
  t.equal(await page.getAttribute('[data-session="s1"] .orb', 'data-activity'), 'thinking', 'and drives the motion')
  t.equal(await page.$eval(ballOf('s1'), (el) => getComputedStyle(el).animationName), 'breathe', 'thinking breathes')
  t.ok(await page.getByRole('region', { name: 'Project orbtest' }).isVisible(), 'grouped under its project')

  // Every activity change arrives without a reload, in that activity's colour.
  for (const [activity, extra] of [['tool', { toolKind: 'shell', toolLabel: 'npm test' }], ['streaming',
    { message: { id: 'm1', text: 'All green.' } }], ['error', {}]] as const) {
    const posted = await agent.post('s1', { activity, ...extra })
    t.equal(posted.status, 200, posted.text)
    const want = rgb(palette.colours[activity]!)
    await page.waitForFunction(([sel, colour]) => {
      const el = document.querySelector(sel!)
      return el !== null && getComputedStyle(el).backgroundColor === colour
    }, [ballOf('s1'), want])
    t.pass(`${activity}: ${want}`)
  }
  t.match(await page.textContent('[data-session="s1"]'), /error/)
  // A session gone offline is dimmed, and says so.
  await fakes.orbtile!.control.advance(11 * 60_000)
  await page.waitForSelector('[data-session="s1"] .orb[data-activity="offline"]')
  t.equal(await page.$eval('[data-session="s1"] .orb', (el) => getComputedStyle(el).opacity), '0.45')
  t.equal(await page.$eval(ballOf('s1'), (el) => getComputedStyle(el).backgroundColor), rgb(palette.colours.offline!))
  t.same(setup.errors, [], 'the page logged no error')
})

t.test('DASH-02 clicking Allow on a pending approval delivers the approval event to the adapter\'s held long poll', async (t) => {
  const setup = await openDashboard(t)
  const { page } = setup
  const agent = adapterCalls(setup)
  await agent.register({}, { allowed: true, keypad: true })
  const approval = { id: 'r1', toolName: 'Bash', commandSummary: 'make deploy' }
  await agent.post('s1', { title: 'Deploy', activity: 'waitingPermission', approval })
  const allow = page.getByRole('region', { name: 'Approval for Deploy' }).getByRole('button', { name: 'Allow' })
  await allow.waitFor()
  const poll = agent.poll()
  await t.resolves(page.waitForFunction(() => document.body.textContent!.includes('a poll is waiting')))
  await allow.click()
  const reply = await poll
  t.equal(reply.status, 200)
  t.match(reply.json.events, [{ type: 'approval', decision: 'allow', requestId: 'r1', sessionId: 's1' }])
  await page.waitForSelector('text=Allow: done')
  t.equal(await page.getByRole('region', { name: 'Approval for Deploy' }).count(), 0, 'the request leaves the page')
})

t.test('DASH-03 a member\'s post with a mention, typed on the dashboard, reaches the bot\'s events poll', async (t) => {
  const { page, fakes } = await openDashboard(t)
  const bot = new OrbClient(fakes.orb!.url, DEMO.token)
  const before = (await bot.get('/api/bot/v1/events')).json.next
  await page.getByRole('tab', { name: 'Orb', exact: true }).click()
  await page.getByLabel('Speak as').selectOption({ label: 'Bo' })
  await page.getByRole('button', { name: 'Mention Demo Bot' }).click()
  await page.getByRole('textbox', { name: 'Message' }).pressSequentially('can you roll?')
  await page.getByRole('button', { name: 'Send', exact: true }).click()
  await page.waitForSelector('text=post: done')
  const reply = await bot.get(`/api/bot/v1/events?after=${before}`)
  t.equal(reply.status, 200)
  const mention = reply.json.events.find((e: { type: string }) => e.type === 'message.mention')
  t.match(mention?.data,
    { message: { channel: 'ch_general', author: { id: 'mem_bo' }, body: '<@app_demo> can you roll?' } })
  // The channel shows it, the mention written as the app's name.
  const channel = page.getByRole('list', { name: 'Messages in #general' })
  await t.resolves(channel.getByText('@Demo Bot can you roll?').waitFor())
})

t.test('DASH-04 the hue override changes the orb\'s colour: set by typing, by the wheel as a slider, and cleared', async (t) => {
  const setup = await openDashboard(t)
  const { page, fakes } = setup
  const agent = adapterCalls(setup)
  await agent.register({ palette: { baseHue: 200 } })
  await agent.post('s1', { title: 'Refactor', activity: 'thinking' })
  await page.waitForSelector(ballOf('s1'))
  const colour = () => page.$eval(ballOf('s1'), (el) => getComputedStyle(el).backgroundColor)
  const thinking = () => rgb(fakes.orbtile!.control.adapter(agent.id)!.palette!.colours.thinking)
  const before = await colour()
  t.equal(before, thinking())

  await page.getByLabel('Hue override', { exact: true }).fill('140')
  await page.getByRole('button', { name: 'Set hue' }).click()
  await page.waitForFunction(([sel, old]) => getComputedStyle(document.querySelector(sel!)!).backgroundColor !== old,
    [ballOf('s1'), before])
  t.equal(fakes.orbtile!.control.adapter(agent.id)!.user.baseHue, 140)
  t.equal(await colour(), thinking(), 'the orb now has the new palette\'s colour')
  t.not(await colour(), before)

  // The wheel is a slider: focus it, move with the arrows (Shift: 15 degrees), set with Enter.
  const wheel = page.getByRole('slider', { name: `Hue override for ${agent.id}` })
  await wheel.focus()
  await page.keyboard.press('Shift+ArrowRight')
  await page.keyboard.press('ArrowRight')
  t.equal(await wheel.getAttribute('aria-valuenow'), '156')
  await page.keyboard.press('Enter')
  await page.waitForFunction(() => document.querySelector('.wheel-text')?.textContent === '156°')
  t.equal(fakes.orbtile!.control.adapter(agent.id)!.user.baseHue, 156)
  t.equal(await colour(), thinking())

  await page.getByRole('button', { name: 'Clear' }).click()
  await page.waitForFunction(([sel, old]) => getComputedStyle(document.querySelector(sel!)!).backgroundColor === old,
    [ballOf('s1'), before])
  t.equal(fakes.orbtile!.control.adapter(agent.id)!.user.baseHue, null, 'back to the registered hue')
})

t.test('DASH-05 changes arrive by the event stream alone: the page polls nothing, and a burst of changes comes as fewer frames', async (t) => {
  const setup = await openDashboard(t)
  const { page, requests, url, fakes } = setup
  const agent = adapterCalls(setup)
  await agent.register()
  const loaded = requests.length
  for (let i = 0; i < 20; i++) await agent.post('s1', { title: `Step ${i}`, activity: 'thinking' })
  await page.waitForSelector('text=Step 19')
  await fakes.advance(1000)
  await page.waitForTimeout(300)
  t.same(requests.slice(loaded), [], 'no request after load: no polling')
  t.ok(requests.includes(`GET ${url}/control/dashboard/stream`), 'the one stream')
  t.ok(requests.every((r) => r.split(' ')[1]!.startsWith(`${url}/`)), 'nothing fetched from another host')
  t.equal(fakes.control.dashboard.streams, 1)
  // Twenty posts in a row are coalesced: fewer frames than changes, and the last one drawn.
  const frames = Number(await page.evaluate(() => document.body.dataset.frames))
  t.ok(frames >= 2 && frames < 22, `${frames} frames for the registration, 20 posts and a clock move`)
})

t.test('DASH-06 no other site can drive the control server from a browser, and the Orbtile tokens never reach the page', async (t) => {
  const setup = await openDashboard(t)
  const { page, url, fakes } = setup
  const agent = adapterCalls(setup)
  const registration = await agent.register()
  await agent.post('s1', { title: 'Secret work', activity: 'thinking' })
  await page.waitForSelector(ballOf('s1'))

  // The page's own headers: nothing from another origin, no framing.
  const head = await fetch(`${url}/`)
  t.match(head.headers.get('content-security-policy'), /default-src 'none'.*connect-src 'self'.*frame-ancestors 'none'/)
  t.equal(head.headers.get('x-frame-options'), 'DENY')

  // A page on another origin (another loopback port) tries every way a browser offers to change state.
  const other = await page.context().newPage()
  const foreign = `http://localhost:${fakes.orb!.port}`
  await other.goto(`${foreign}/api/orb/directory`)
  const outcomes = await other.evaluate(async (control) => {
    const restart = `${control}/control/orbtile/restart`
    const tries: Array<Promise<string>> = [
      fetch(restart, { method: 'POST', mode: 'no-cors' }).then(() => 'sent', () => 'blocked'),
      fetch(restart, { method: 'POST', mode: 'no-cors', headers: { 'content-type': 'text/plain' }, body: '{}' })
        .then(() => 'sent', () => 'blocked'),
      fetch(restart, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })
        .then((r) => String(r.status), () => 'blocked'),
      new Promise((resolve) => {
        const source = new EventSource(`${control}/control/dashboard/stream`)
        source.onerror = () => { source.close(); resolve('stream refused') }
        source.onmessage = () => { source.close(); resolve('stream read') }
      })
    ]
    return await Promise.all(tries)
  }, url)
  // A form of the other site, posted as text/plain (no preflight for that either): the page it lands on is refused.
  const landed = other.waitForNavigation()
  await other.evaluate((control) => {
    const form = document.createElement('form')
    form.method = 'POST'
    form.action = `${control}/control/orbtile/token/regenerate`
    form.enctype = 'text/plain'
    const field = Object.assign(document.createElement('input'), { name: '{"a":"', value: '"}' })
    form.append(field)
    document.body.append(form)
    form.submit()
  }, url)
  t.equal((await landed)?.status(), 403, 'the form post is refused')
  t.equal(outcomes[2], 'blocked', 'a JSON request needs a preflight, which is never granted')
  t.equal(outcomes[3], 'stream refused')
  const state = fakes.orbtile!.control.state()
  t.equal(state.restarts, 0, 'no restart happened')
  t.equal(state.tokenRegenerations, 0)
  // And what the server answers such requests (as the browser sent them: a foreign Origin, or the page's own
  // Origin without the JSON type).
  const foreignPost = await fetch(`${url}/control/orbtile/restart`, { method: 'POST', headers: { origin: foreign } })
  t.equal(foreignPost.status, 403)
  const restart = `${url}/control/orbtile/restart`
  const formPost = await fetch(restart,
    { method: 'POST', headers: { origin: url, 'content-type': 'text/plain' }, body: '{}' })
  t.equal(formPost.status, 415)
  t.equal(((await formPost.json()) as { error: { code: string } }).error.code, 'unsupported_media_type')
  const untyped = await fetch(`${url}/control/orbtile/restart`, { method: 'POST', headers: { origin: url } })
  t.equal(untyped.status, 415, 'a page must send the JSON type even without a body')
  const noOrigin = await fetch(restart,
    { method: 'POST', headers: { 'sec-fetch-site': 'cross-site', 'content-type': 'application/json' } })
  t.equal(noOrigin.status, 403, 'a browser\'s request without an Origin is refused')
  const rebound = await httpRequest(url, { path: '/control/dashboard/stream', headers: { host: 'evil.example' } })
  t.equal(rebound.status, 403, 'a rebound Host is refused for the stream as for every route')
  const curl = await fetch(`${url}/control/orbtile/adapters/${agent.id}/sessions/s1/tap`, { method: 'POST' })
  t.equal(curl.status, 200, 'a script (no Origin, no Sec-Fetch) may still POST without a body')

  // Neither the discovery token nor the adapter's lease token is anywhere the page can read.
  const seen = [
    await page.content(),
    await (await fetch(`${url}/control/dashboard`)).text(),
    ...(await Promise.all(['main.js', 'orbtile.js', 'api.js']
      .map(async (f) => (await fetch(`${url}/dashboard/${f}`)).text())))
  ].join('\n')
  t.notOk(seen.includes(fakes.orbtile!.token), 'no discovery token')
  t.notOk(seen.includes(registration.adapterToken), 'no adapter token')
})

t.test('DASH-07 keyboard and labels: every control has a name, a question is answered with the keyboard, colour is never the only signal', async (t) => {
  const setup = await openDashboard(t)
  const { page } = setup
  const agent = adapterCalls(setup)
  await agent.register({}, { allowed: true, keypad: true })
  await agent.post('s2', {
    title: 'Choose',
    activity: 'waitingQuestion',
    question: {
      id: 'q1',
      questions: [{ text: 'Which branch?', options: [{ label: 'main' }, { label: 'dev' }] },
        {
          text: 'Which checks?',
          multiSelect: true,
          options: [{ label: 'lint' }, { label: 'types' }, { label: 'tests' }]
        }
      ]
    }
  })
  const form = page.getByRole('form', { name: 'Question for Choose' })
  await form.waitFor()
  for (const tab of ['Orbtile', 'Orb']) {
    await page.getByRole('tab', { name: tab, exact: true }).click()
    const unnamed = await page.$$eval('button, input, select, textarea, [role="slider"], [role="tab"]', (els) => els
      .filter((el) => {
        const named = (el.getAttribute('aria-label') ?? '').trim() !== '' || (el.textContent ?? '').trim() !== '' ||
          ((el as HTMLInputElement).labels?.length ?? 0) > 0
        return !named
      }).map((el) => el.outerHTML.slice(0, 80)))
    t.same(unnamed, [], `${tab}: every control has an accessible name`)
  }
  await page.getByRole('tab', { name: 'Orbtile' }).click()
  const poll = agent.poll()
  await page.getByRole('radio', { name: 'dev' }).focus()
  await page.keyboard.press('Space')
  await page.getByRole('checkbox', { name: 'lint' }).focus()
  await page.keyboard.press('Space')
  await page.keyboard.press('Tab')
  await page.keyboard.press('Tab')
  await page.keyboard.press('Space')
  await page.getByRole('button', { name: 'Send answer' }).focus()
  await page.keyboard.press('Enter')
  const reply = await poll
  t.match(reply.json.events, [{ type: 'question', picks: [[1], [0, 2]], requestId: 'q1' }])
  // With prefers-reduced-motion (this page's default), nothing moves; the words stay.
  t.equal(await page.$eval('[data-session="s2"] .orb', (el) => getComputedStyle(el).animationName), 'none')
  // The orb says what it is doing in words, not only in its colour and motion.
  t.match(await page.getByRole('button', { name: /^Tap Choose: / }).getAttribute('aria-label'), 'waiting for an answer')
  await page.getByRole('button', { name: /^Tap Choose: / }).press('Enter')
  const tapped = await agent.poll({ after: reply.json.lastSequence, waitSeconds: 2 })
  t.match(tapped.json.events, [{ type: 'tap', sessionId: 's2' }])
})

t.test('DASH-08 the layout reads at 1280x800 and in a narrow window: nothing wider than the screen, both fakes shown', async (t) => {
  for (const [width, height] of [[1280, 800], [390, 844]] as const) {
    const setup = await openDashboard(t, { width, height })
    const agent = adapterCalls(setup)
    await agent.register()
    await agent.post('s1', { title: 'A session with a rather long title that must wrap on a phone', activity: 'tool', toolKind: 'edit' })
    await setup.page.waitForSelector(ballOf('s1'))
    for (const tab of ['Orbtile', 'Orb']) {
      await setup.page.getByRole('tab', { name: tab, exact: true }).click()
      const { scroll, inner } = await setup.page.evaluate(() =>
        ({ scroll: document.documentElement.scrollWidth, inner: innerWidth }))
      t.ok(scroll <= inner, `${width}x${height} ${tab}: ${scroll} <= ${inner} pixels wide`)
    }
  }
})

t.test('DASH-09 the people of the Orb: a command typed with options reaches the bot, an install and a token rotation show at once', async (t) => {
  const world = defaultWorld()
  world.apps.find((a) => a.id === 'app_demo')!.commands =
    [{ name: 'roll', description: 'Roll a die', options: [{ name: 'sides' }] }]
  const { page, fakes } = await openDashboard(t, { world })
  const bot = new OrbClient(fakes.orb!.url, DEMO.token)
  const cursor = (await bot.get('/api/bot/v1/events')).json.next
  await page.getByRole('tab', { name: 'Orb', exact: true }).click()
  await page.getByLabel('Speak as').selectOption({ label: 'Ada' })
  await page.getByLabel('sides').fill('20')
  await page.getByRole('button', { name: 'Type /roll' }).click()
  await page.waitForSelector('text=/roll: done')
  const events = (await bot.get(`/api/bot/v1/events?after=${cursor}`)).json.events
  t.match(events.find((e: { type: string }) => e.type === 'application_command')?.data,
    { command: { name: 'roll', options: { sides: '20' } }, member: { id: 'mem_ada' } })
  await t.resolves(page.getByText('waiting…').waitFor(), 'the member waits on the interaction')

  const relic = page.getByRole('article', { name: 'App Relic Bot' })
  await relic.getByRole('listitem').filter({ hasText: 'Orbit Lounge' }).getByRole('button', { name: 'Install' }).click()
  await relic.getByText('Orbit Lounge: installed').waitFor()
  const installs = fakes.orb!.control.state().installs as Array<{ server: string, app: string }>
  t.ok(installs.some((i) => i.server === 'srv_orbit' && i.app === 'app_relic'), 'installed in the fake')
  await relic.getByRole('button', { name: 'Rotate' }).click()
  await page.waitForFunction((old) =>
    !document.querySelector('[data-app="app_relic"] .token')!.textContent!.includes(old), DEMO.relic)
  const stale = await new OrbClient(fakes.orb!.url, DEMO.relic).get('/api/bot/v1/commands')
  t.equal(stale.status, 401, 'the old token is refused')
})

t.test('DASH-10 the virtual clock moves by the page\'s buttons, and a reset empties the keypad', async (t) => {
  const setup = await openDashboard(t)
  const { page, fakes } = setup
  const before = fakes.clockState().now
  await page.getByRole('button', { name: 'Advance the clock 10 s' }).click()
  await page.waitForSelector('text=clock +10 s: done')
  t.equal(fakes.clockState().now - before, 10_000)
  await page.waitForFunction((iso) => document.querySelector('.clock time')?.getAttribute('datetime') === iso,
    new Date(before + 10_000).toISOString())
  const agent = adapterCalls(setup)
  await agent.register()
  await page.waitForSelector('[data-adapter="dev.orbtest.dash"]')
  await page.getByRole('button', { name: 'Reset all' }).click()
  await page.waitForSelector('text=No adapter has registered yet')
  t.pass('the reset reached the page')
})

t.test("DASH-11 with --judge, the adapter client rules' verdicts are on the page, live, a broken rule first", async (t) => {
  const setup = await openDashboard(t, { judge: true })
  const { page, adapter } = setup
  await page.getByRole('tab', { name: 'Client rules' }).click()
  await page.waitForSelector('[data-check="OT-014"]')
  t.match(await page.textContent('[data-check="OT-014"]'), /not-exercised/)
  const json = { 'content-type': 'application/json' }
  t.equal((await adapter.request({ path: '/info', headers: json })).status, 200)
  await page.waitForFunction(() => /pass/.test(document.querySelector('[data-check="OT-014"]')?.textContent ?? ''))
  t.pass('a clean request: OT-014 passes')
  // An adapter that sends an Origin breaks OT-014: the page shows it, at the top, with what was seen.
  t.equal((await adapter.request({ path: '/info', headers: { ...json, origin: 'http://localhost' } })).status, 403)
  await page.waitForFunction(() => /fail/.test(document.querySelector('[data-check="OT-014"]')?.textContent ?? ''))
  t.match(await page.textContent('tbody tr:first-child'), /fail.*OT-014.*Origin: http:\/\/localhost/s)
  t.match(await page.textContent('#judge-title + .status'), /1 broken/)
})

t.test("DASH-16 the screenshots script (npm run screenshots) draws the README's pictures from a real scene, in a real browser", async (t) => {
  const dir = scratch(t)
  await takeScreenshots(dir, await browser())
  for (const [name, width, height] of [['orbtile.png', 1280, 800], ['orb.png', 1280, 800], ['judge.png', 1280, 800],
    ['narrow.png', 390, 844]] as const) {
    t.same(readPng(readFileSync(join(dir, name))), { width, height }, name)
  }
})
