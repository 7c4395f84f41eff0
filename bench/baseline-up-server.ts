/**
 * The baseline of `orbtest up`'s start-up: three bare fastify servers, as many listeners as orbtest up opens: one on
 * a Unix socket (the fake Orbtile's), two on loopback ports (the fake Orb's and the control server's), each with one
 * route, and a ready file written once all three listen. No pipeline, no validation, no state.
 */
import { renameSync, rmSync, writeFileSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { parseArgs } from 'node:util'
import Fastify from 'fastify'

const { values } = parseArgs({ options: { socket: { type: 'string' }, 'ready-file': { type: 'string' } } })
const socket = values.socket!
const readyFile = values['ready-file']
const orbtile = Fastify()
orbtile.get('/a/v1/info', async () => ({ server: 'orbtile', api: 1, apiMinor: 2 }))
const orb = Fastify()
orb.get('/api/orb/directory', async () => ({ apps: [] }))
const control = Fastify()
control.get('/control', async () => ({ name: 'baseline control' }))
await Promise.all([
  orbtile.listen({ path: socket }),
  orb.listen({ port: 0, host: '127.0.0.1' }),
  control.listen({ port: 0, host: '127.0.0.1' })
])
if (readyFile !== undefined) {
  const port = (app: typeof orb): number => (app.server.address() as AddressInfo).port
  writeFileSync(`${readyFile}.tmp`, JSON.stringify({ socket, orb: port(orb), control: port(control) }))
  renameSync(`${readyFile}.tmp`, readyFile)
}
const stop = async (): Promise<void> => {
  await Promise.all([orbtile.close(), orb.close(), control.close()])
  // The socket may be gone already (closing the server removes it): `force` asks no more than that.
  rmSync(socket, { force: true })
  process.exit(0)
}
process.once('SIGTERM', stop)
process.once('SIGINT', stop)
