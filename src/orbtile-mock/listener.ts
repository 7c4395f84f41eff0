import type { Server } from 'node:http'
import { removeLeftover } from '../shared/remove-leftover.js'
import { startupFault } from '../shared/startup-error.js'
import { discoveryContents, removeDiscoveryFile, writeDiscoveryFile } from './discovery.js'
import { listenPrivately, makeSocketPrivate, prepareSocketPath } from './socket.js'

/** Where the fake can be reached, as the discovery file tells an adapter. */
export interface OrbtileEndpoint {
  discoveryPath: string
  socketPath: string
  basePath: string
}

/**
 * The fake's socket and its discovery file, which come and go together (OT-001, OT-A03, OT-A04): open binds the
 * socket (0600) and then writes the file (0600, atomically); shut removes the file first, then closes the socket.
 * Opens, shuts and moves run one at a time, in the order asked: a shut asked for while an open is under way closes
 * what that open bound. Once closed, the listener opens no more.
 */
export class OrbtileListener {
  readonly #server: Server
  readonly #endpoint: OrbtileEndpoint
  readonly #token: () => string
  #defaultSocket: boolean
  #listening = false
  #closed = false
  #queue: Promise<void> = Promise.resolve()

  /** `defaultSocket`: the socket path is the fake's own default, whose folder must be private (socket.ts). */
  constructor (server: Server, endpoint: OrbtileEndpoint, token: () => string, defaultSocket: boolean) {
    this.#server = server
    this.#endpoint = endpoint
    this.#token = token
    this.#defaultSocket = defaultSocket
  }

  /** Whether the socket is open. */
  get listening (): boolean {
    return this.#listening
  }

  /** Binds the socket, then writes the discovery file; if any step fails, nothing is left behind. */
  async open (): Promise<void> {
    await this.#serially(async () => { await this.#open() })
  }

  /** Removes the discovery file, then closes the socket and every connection on it. */
  async shut (): Promise<void> {
    await this.#serially(async () => { await this.#shut() })
  }

  /** Shuts the socket for good: an open asked for later does nothing. */
  async close (): Promise<void> {
    this.#closed = true
    await this.shut()
  }

  /**
   * The app comes back on another socket (a restart, as the client suites play it): the file is removed, the old
   * socket closed with its connections, and the new one bound before the file names it.
   */
  async moveTo (socketPath: string): Promise<void> {
    await this.#serially(async () => {
      const was = this.#listening
      await this.#shut()
      this.#endpoint.socketPath = socketPath
      this.#defaultSocket = false
      if (was) await this.#open()
    })
  }

  async #serially (step: () => Promise<void>): Promise<void> {
    const run = this.#queue.then(step)
    // The caller of a step gets its failure; the steps after it run all the same.
    this.#queue = run.catch(() => {})
    await run
  }

  async #open (): Promise<void> {
    if (this.#listening || this.#closed) return
    const server = this.#server
    const { socketPath, discoveryPath } = this.#endpoint
    await prepareSocketPath(socketPath, this.#defaultSocket)
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject)
        listenPrivately(() => server.listen({ path: socketPath }, () => {
          server.off('error', reject)
          resolve()
        }))
      })
    } catch (err) {
      throw startupFault(`cannot listen on ${socketPath}`, err)
    }
    try {
      makeSocketPrivate(socketPath)
      this.#writeDiscovery()
    } catch (err) {
      await new Promise<void>((resolve) => server.close(() => resolve()))
      removeLeftover(socketPath, 'the socket')
      throw startupFault(`cannot write the discovery file ${discoveryPath}`, err)
    }
    this.#listening = true
  }

  async #shut (): Promise<void> {
    if (!this.#listening) return
    this.#listening = false
    // Discovery goes first: a client that finds no file never tries the closing socket.
    removeDiscoveryFile(this.#endpoint.discoveryPath, this.#endpoint.socketPath)
    const closed = new Promise<void>((resolve) => this.#server.close(() => resolve()))
    this.#server.closeAllConnections()
    await closed
  }

  /** OT-023, OT-A04: after a new token, the file says so (while listening; else the next open writes it). */
  tokenChanged (): void {
    if (this.#listening) this.#writeDiscovery()
  }

  /** Connections do not survive a restart of the app (OT-023). */
  dropConnections (): void {
    this.#server.closeAllConnections()
  }

  #writeDiscovery (): void {
    writeDiscoveryFile(this.#endpoint.discoveryPath, discoveryContents(this.#endpoint.socketPath, this.#token()))
  }
}
