/**
 * The Orb baseline: a bare fastify server on loopback HTTP that answers the two message routes with bodies of the
 * same shape and size as the fake Orb's (a PostedMessage; a page of 50 Messages), parsing JSON and serialising per
 * request, and writes a ready file once it listens. No auth, no validation, no state.
 */
import { renameSync, writeFileSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { parseArgs } from 'node:util'
import Fastify from 'fastify'

const { values } = parseArgs({ options: { port: { type: 'string' }, 'ready-file': { type: 'string' } } })
const app = Fastify()
let id = 100
const author = { id: 'app_demo', name: 'Demo Bot', bot: true }
const page = Array.from({ length: 50 }, (_, i) => ({
  id: i + 1, channel: 'ch_general', author, created: 1796000000000 + i, replyTo: null, encrypted: false, body: 'tick', mentions: []
}))
app.post('/api/bot/v1/messages', async (request) => {
  const { channel } = request.body as { channel: string }
  return { id: id++, channel, server: 'srv_orbit', created: Date.now(), author }
})
app.get('/api/bot/v1/messages', async () => ({ messages: page, hasOlder: true }))
await app.listen({ port: Number(values.port ?? 0), host: '127.0.0.1' })
const ready = values['ready-file']
if (ready !== undefined) {
  writeFileSync(`${ready}.tmp`, JSON.stringify({ orb: { url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}` } }))
  renameSync(`${ready}.tmp`, ready)
}
const stop = async (): Promise<void> => {
  await app.close()
  process.exit(0)
}
process.once('SIGTERM', stop)
process.once('SIGINT', stop)
