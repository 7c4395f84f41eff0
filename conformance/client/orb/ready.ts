// When a bot under test is up (OBC-10), and a free loopback port for a webhook bot's PORT.
import { createServer, connect } from 'node:net'
import type { ClientProcess } from '../core/process.js'
import type { OrbObserver } from './observer.js'
import { windowMs } from '../core/windows.js'

/** OBC-10: how long a bot may take to be up before the scenario plays anyway (the adapter suite's OTC-19 allowance). */
const READY_ALLOWANCE_MS = windowMs('start-allowance')

/** Waits until the bot is up: its first call, or its port taking connections (webhook); journaled when slow. */
export async function ready (o: OrbObserver, client: ClientProcess, port: number | undefined): Promise<void> {
  const started = Date.now()
  const up = (): void => {
    const ms = Date.now() - started
    if (ms >= 1000) o.action('harness', 'slow-start', `the bot was up ${(ms / 1000).toFixed(1)} s after its start`)
  }
  while (Date.now() - started < READY_ALLOWANCE_MS && client.ended === undefined) {
    if (port === undefined) {
      if (o.journal.entries().some((e) => e.kind === 'exchange')) return up()
    } else if (await accepts(port)) {
      return up()
    }
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  if (client.ended !== undefined) return
  o.action('harness', 'slow-start', `the bot was not up within ${READY_ALLOWANCE_MS / 1000} s: the steps play anyway`)
}

async function accepts (port: number): Promise<boolean> {
  return await new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1')
    socket.once('connect', () => { socket.destroy(); resolve(true) })
    socket.once('error', () => { resolve(false) })
  })
}

export async function freePort (): Promise<number> {
  return await new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })
}
