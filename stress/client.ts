// A client that keeps one connection alive to one server and sends whole requests on it, one at a time, as an
// ordinary HTTP client does: a new connection when the server closed the last one, and one retry when a kept-alive
// connection turns out to have been closed under it.
import { serialize, type HttpRequest } from './request.js'
import type { Target } from './targets.js'
import { header, WireSession, type WireResponse } from './wire.js'

/** What became of one request. */
export interface Exchange {
  response: WireResponse | undefined
  /** Why the bytes that came back were not a response. */
  malformed: string | undefined
  /** Why there is no response: `timeout`, `closed (EPIPE)`, `connect: …`. */
  failure: string | undefined
  /** Whether it was sent again on a fresh connection. */
  retried: boolean
}

/** One kept-alive connection to one server. */
export class KeptAliveClient {
  readonly target: Target
  #session: WireSession | undefined

  constructor (target: Target) {
    this.target = target
  }

  /** Sends a request and waits up to `timeoutMs` for its answer. */
  async send (request: HttpRequest, timeoutMs: number, retry = true): Promise<Exchange> {
    // A connection the server has ended (an idle timeout, a restart) takes no more requests.
    const reused = this.#session !== undefined && !this.#session.closed && !this.#session.serverEnded
    if (!reused) {
      this.#session?.destroy()
      try {
        this.#session = await WireSession.open(this.target.address)
      } catch (err) {
        const failure = `connect: ${(err as Error).message}`
        return { response: undefined, malformed: undefined, failure, retried: false }
      }
    }
    const s = this.#session!
    const received = s.received
    s.write(serialize(request), request.method)
    const result = await s.responses(1, timeoutMs)
    const response = s.parser.responses.shift()
    s.parser.informational.length = 0
    const malformed = s.parser.malformed
    if (response !== undefined && malformed === undefined && !/close/i.test(header(response, 'connection') ?? '')) {
      return { response, malformed, failure: undefined, retried: false }
    }
    s.destroy()
    this.#session = undefined
    if (response === undefined && result === 'closed' && reused && retry && s.received === received) {
      const again = await this.send(request, timeoutMs, false)
      return { ...again, retried: true }
    }
    const why = result === 'timeout'
      ? `no answer in ${timeoutMs} ms`
      : `closed (${s.error ?? 'by the server'}) without an answer`
    const failure = response !== undefined ? undefined : why
    return { response, malformed, failure, retried: false }
  }

  close (): void {
    this.#session?.destroy()
    this.#session = undefined
  }
}
