// A plain byte relay: each connection's bytes passed on both ways, none of them read. The proxy rows measure it beside
// `orbtest proxy`, so that their ratio comes with its ceiling from the same run: any relay that shares the fake's core
// pays at least this much for each exchange.
//
//   node plain-relay.js LISTEN UPSTREAM READY_FILE
//
// LISTEN and UPSTREAM are each a Unix socket's path or, when all digits, a port on 127.0.0.1 (LISTEN 0 picks one).
// The ready file says where it listens: {"socket"} or {"url"}.
import { renameSync, writeFileSync } from 'node:fs'
import { connect, createServer, type AddressInfo } from 'node:net'

const [listen = '', upstream = '', ready = ''] = process.argv.slice(2)
const port = (s: string): number | undefined => /^\d+$/.test(s) ? Number(s) : undefined
const to = port(upstream)
const target = to === undefined ? { path: upstream } : { host: '127.0.0.1', port: to }

const server = createServer({ allowHalfOpen: true }, (client) => {
  const up = connect({ ...target, allowHalfOpen: true })
  client.pipe(up)
  up.pipe(client)
  client.on('error', () => up.destroy())
  up.on('error', () => client.destroy())
})
const onListening = (): void => {
  const address = server.address()
  const where = typeof address === 'string'
    ? { socket: address }
    : { url: `http://127.0.0.1:${(address as AddressInfo).port}` }
  // Written whole, then renamed: the bench reads the file as soon as it is there.
  writeFileSync(`${ready}.tmp`, JSON.stringify(where))
  renameSync(`${ready}.tmp`, ready)
}
const at = port(listen)
if (at === undefined) server.listen(listen, onListening)
else server.listen(at, '127.0.0.1', onListening)
process.on('SIGTERM', () => { server.close(); process.exit(0) })
