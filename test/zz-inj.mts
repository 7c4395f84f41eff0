import Fastify from 'fastify'
import { startOrbMock } from '../src/orb-mock/index.js'

const N = Number(process.env.N ?? 30000)
const body = JSON.stringify({ channel: 'ch_general', content: 'tick' })
const headers = { authorization: 'Bearer orb_demo_0000000000000000000000000000000000', 'content-type': 'application/json' }
async function time (label: string, app: { inject: Function }) {
  for (let i = 0; i < 3000; i++) await app.inject({ method: 'POST', url: '/api/bot/v1/messages', headers, payload: body })
  const t = performance.now()
  for (let i = 0; i < N; i++) {
    const r = await app.inject({ method: 'POST', url: '/api/bot/v1/messages', headers, payload: body })
    if (r.statusCode !== 200) throw new Error(r.body)
  }
  console.log(label, ((performance.now() - t) * 1000 / N).toFixed(2), 'µs')
}
const base = Fastify()
let id = 1
const author = { id: 'app_demo', name: 'Demo Bot', bot: true }
base.post('/api/bot/v1/messages', async (request) => ({ id: id++, channel: (request.body as any).channel, server: 'srv_orbit', created: Date.now(), author }))
await base.ready()
const orb = await startOrbMock({ port: 0, rateLimit: 'off' })
for (let r = 0; r < 3; r++) {
  await time('baseline', base)
  await time('orb', orb.app)
}
await orb.close()
