import { request, type IncomingMessage } from 'node:http'
import { join } from 'node:path'
import t from 'tap'
import { startOrbtest } from '../src/orbtest.js'
import { dashboardAssets } from '../src/control/dashboard/assets.js'
import { FRAME_TIMING, MAX_STREAMS } from '../src/control/dashboard/hub.js'
import { SocketClient } from './helpers/client.js'
import { scratch, type Teardown } from './helpers/fake.js'

// The dashboard's feed without a browser: Server-Sent Events read off loopback HTTP as EventSource reads them.

async function setup (t: Teardown) {
  const dir = scratch(t)
  const fakes = await startOrbtest({
    clockMode: 'virtual',
    controlPort: 0,
    orbtile: { discoveryPath: join(dir, 'd.json'), socketPath: join(dir, 'o.sock'), pidCheck: 'off', rateLimit: 'off' },
    orb: { port: 0, rateLimit: 'off' }
  })
  t.teardown(() => fakes.close())
  const adapter = new SocketClient(fakes.orbtile!.socketPath, fakes.orbtile!.token)
  t.teardown(() => adapter.close())
  fakes.orbtile!.control.setUser('dev.orbtest.feed', { allowed: true })
  const body = { name: 'Feed', palette: { baseHue: 200 } }
  const registered = await adapter.request({ method: 'PUT', path: '/adapters/dev.orbtest.feed', body })
  const headers = { 'x-orbtile-adapter-token': registered.json.adapterToken as string }
  const post = (title: string) => adapter.request({
    method: 'POST', path: '/adapters/dev.orbtest.feed/sessions/s1', body: { title, activity: 'thinking' }, headers
  })
  return { fakes, post }
}

/** One dashboard stream: its response, every frame parsed as it comes, and a wait for a frame that matches. */
function openStream (url: string, headers: Record<string, string> = {}): Promise<{
  response: IncomingMessage
  frames: any[]
  until(test: (frame: any) => boolean): Promise<any>
  close(): void
}> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}/control/dashboard/stream`, { headers }, (response) => {
      const frames: any[] = []
      const waiters: Array<() => void> = []
      let buffer = ''
      response.setEncoding('utf8')
      response.on('data', (chunk: string) => {
        buffer += chunk
        let end: number
        while ((end = buffer.indexOf('\n\n')) !== -1) {
          const block = buffer.slice(0, end)
          buffer = buffer.slice(end + 2)
          const data = /^data: (.*)$/m.exec(block)
          if (/^event: state$/m.test(block) && data !== null) frames.push(JSON.parse(data[1]!))
        }
        for (const wake of waiters.splice(0)) wake()
      })
      resolve({
        response,
        frames,
        until: (test) => new Promise((resolve) => {
          const look = (): void => {
            const found = frames.find(test)
            if (found !== undefined) resolve(found)
            else waiters.push(look)
          }
          look()
        }),
        close: () => { req.destroy() }
      })
    })
    req.on('error', reject)
    req.end()
  })
}

const title = (frame: any): string | undefined => frame.orbtile.adapters[0]?.sessions[0]?.title

t.test('DASH-12 the stream is text/event-stream: the whole frame at once, then a frame per change, as GET /control/dashboard answers', async (t) => {
  const { fakes, post } = await setup(t)
  const stream = await openStream(fakes.control.url)
  t.teardown(() => stream.close())
  t.equal(stream.response.statusCode, 200)
  t.match(stream.response.headers['content-type'], /^text\/event-stream/)
  t.equal(stream.response.headers['cache-control'], 'no-store')
  const first = await stream.until(() => true)
  t.same(Object.keys(first).sort(), ['clock', 'judge', 'orb', 'orbtile'])
  t.equal(first.orbtile.adapters[0].id, 'dev.orbtest.feed')
  t.equal(first.orb.servers[0].id, 'srv_orbit')
  t.same(first.orbtile.wheel,
    { reserved: { from: 345.9, to: 75.9 }, attention: { from: 18.9, to: 55 }, calm: { from: 116, to: 240 } })
  await post('Build')
  const built = await stream.until((f) => title(f) === 'Build')
  const read = await (await fetch(`${fakes.control.url}/control/dashboard`)).text()
  t.same(built, JSON.parse(read), 'the same frame as the read')
  // The clock moving, a control action, an Orb member's post: each is a change the stream carries.
  const json = { 'content-type': 'application/json' }
  await fetch(`${fakes.control.url}/control/clock/advance`, { method: 'POST', headers: json, body: '{"ms":5000}' })
  await stream.until((f) => f.clock.now === first.clock.now + 5000)
  const where = { server: 'srv_orbit', channel: 'ch_general', member: 'mem_ada' }
  fakes.orb!.control.memberPost({ ...where, content: 'in-process post' })
  await stream.until((f) => f.orb.messages.ch_general.some((m: { body: string }) => m.body === 'in-process post'))
  t.pass('a control call made in-process reaches the stream too')
})

t.test('DASH-13 frames are built only while a stream is open, at most one per 50 ms under a burst, and none for a read', async (t) => {
  const { fakes, post } = await setup(t)
  const hub = fakes.control.dashboard
  // the fakes' servers carry DASH-D01's request listener only while someone watches (fastify's is the other).
  const servers = [fakes.orbtile!.app.server, fakes.orb!.app.server]
  const listening = (): number[] => servers.map((server) => server.listenerCount('request'))
  for (let i = 0; i < 50; i++) await post(`quiet ${i}`)
  t.equal(hub.frames, 0, 'no stream, no frame built')
  t.same(listening(), [1, 1], 'no stream: no request listener of the dashboard on either fake')
  const stream = await openStream(fakes.control.url)
  t.teardown(() => stream.close())
  await stream.until((f) => title(f) === 'quiet 49')
  t.same(listening(), [2, 2], 'a stream open: each fake reports its requests')
  const before = stream.frames.length
  const started = performance.now()
  for (let i = 0; i < 300; i++) await post(`burst ${i}`)
  await stream.until((f) => title(f) === 'burst 299')
  const elapsed = performance.now() - started
  const sent = stream.frames.length - before
  const bound = Math.ceil(elapsed / FRAME_TIMING.GAP_MS) + 2
  t.ok(sent <= bound, `${sent} frames for 300 changes in ${Math.round(elapsed)} ms`)
  t.ok(sent < 300, 'fewer frames than changes')
  const after = stream.frames.length
  for (let i = 0; i < 20; i++) await fetch(`${fakes.control.url}/control/orbtile/state`)
  await fetch(`${fakes.control.url}/control/orb/apps/app_demo/deliveries`)
  await new Promise((resolve) => setTimeout(resolve, FRAME_TIMING.GAP_MS * 3))
  t.equal(stream.frames.length, after, 'reads change nothing, and send nothing')
  stream.close()
  await new Promise((resolve) => setTimeout(resolve, 50))
  const built = hub.frames
  for (let i = 0; i < 20; i++) await post(`after ${i}`)
  await new Promise((resolve) => setTimeout(resolve, FRAME_TIMING.GAP_MS * 2))
  t.equal(hub.frames, built, 'the last stream closed: building stops')
  t.same(listening(), [1, 1], 'the last stream closed: the request listeners are gone')
})

t.test('DASH-14 streams are bounded and guarded: 409 past the limit, a foreign Origin or Host refused, all ended at close', async (t) => {
  const { fakes } = await setup(t)
  const url = fakes.control.url
  const foreign = await openStream(url, { origin: 'http://evil.example' })
  t.equal(foreign.response.statusCode, 403)
  foreign.close()
  const open = []
  for (let i = 0; i < MAX_STREAMS; i++) open.push(await openStream(url))
  t.ok(open.every((s) => s.response.statusCode === 200))
  const refused = await fetch(`${url}/control/dashboard/stream`)
  t.equal(refused.status, 409)
  t.equal(((await refused.json()) as { error: { code: string } }).error.code, 'conflict')
  const ended = open.map((s) => new Promise((resolve) => s.response.on('close', resolve)))
  await fakes.close()
  await Promise.all(ended)
  t.pass(`the ${MAX_STREAMS} streams ended when the server closed`)
})

t.test('DASH-15 the page, its modules and style sheet are served from the package: under 150 KB of JavaScript and CSS, revalidated by ETag', async (t) => {
  const { fakes } = await setup(t)
  const url = fakes.control.url
  const page = await fetch(`${url}/`)
  t.equal(page.status, 200)
  t.match(page.headers.get('content-type'), /^text\/html/)
  const html = await page.text()
  const importMap = /<script type="importmap">(.*?)<\/script>/.exec(html)![1]!
  const map = JSON.parse(importMap) as { imports: Record<string, string> }
  const own = [...html.matchAll(/(?:href|src)="(\/dashboard\/[^"]+)"/g)].map((m) => m[1]!)
  // Every file the server would serve the page, whether the HTML names it or a module imports it.
  const served = [...dashboardAssets().files.keys()].map((name) => `/dashboard/${name}`)
  const files = [...new Set([...Object.values(map.imports), ...own, ...served])]
  let bytes = 0
  for (const file of files) {
    const reply = await fetch(`${url}${file}`)
    t.equal(reply.status, 200, file)
    t.match(reply.headers.get('content-type'), /^text\/(javascript|css)/, file)
    bytes += (await reply.arrayBuffer()).byteLength
    const again = await fetch(`${url}${file}`, { headers: { 'if-none-match': reply.headers.get('etag')! } })
    t.equal(again.status, 304, `${file} revalidates`)
  }
  t.ok(bytes < 150 * 1024, `${files.length} files, ${bytes} bytes of JavaScript and CSS`)
  t.equal((await fetch(`${url}/dashboard/nope.js`)).status, 404)
  t.equal((await fetch(`${url}/dashboard/vendor/../../package.json`)).status, 404)
})
