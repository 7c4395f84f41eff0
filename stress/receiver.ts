// A webhook receiver on loopback: the endpoint the campaign and the soak give the fake Orb's apps, so that signed
// deliveries go somewhere real and never off this machine.
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'

/** A running receiver. */
export interface Receiver {
  readonly url: string
  /** Deliveries received so far. */
  deliveries(): number
  close(): Promise<void>
}

/**
 * Starts a receiver on 127.0.0.1 that answers every POST 200 with `{}` (an interaction's answer is `{"content"}`
 * now and then, `failEvery` makes every n-th delivery fail with 500 so that retries happen).
 */
export async function startReceiver (options: { failEvery?: number } = {}): Promise<Receiver> {
  let count = 0
  const server: Server = createServer((request, response) => {
    request.resume()
    request.on('end', () => {
      count++
      const fail = options.failEvery !== undefined && count % options.failEvery === 0
      response.writeHead(fail ? 500 : 200, { 'content-type': 'application/json', connection: 'close' })
      response.end(fail ? '{"error":"deliberate"}' : count % 3 === 0 ? '{"content":"answered by the receiver"}' : '{}')
    })
  })
  server.keepAliveTimeout = 1000
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/hook`,
    deliveries: () => count,
    close: () => new Promise((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    })
  }
}
