// A request as the campaign builds it (any method, any target, any headers, repeats and all), its bytes, and the
// little state a run learns from the answers so that its next requests reach deeper than the token check.
import { readDocument, type ServerName } from './targets.js'
import type { WireResponse } from './wire.js'

/** One HTTP/1.1 request, framed correctly: the raw lane is where framing breaks. */
export interface HttpRequest {
  method: string
  target: string
  /** Sent in order; a name may repeat. Content-Length is added for a body unless a header frames it already. */
  headers: Array<[string, string]>
  body?: Buffer
  /** A long poll: how long (virtual ms) the server may hold it before answering. */
  holdMs?: number
}

/** The bytes of a request; a `Transfer-Encoding: chunked` header gets its body chunked. */
export function serialize (request: HttpRequest): Buffer {
  const names = new Set(request.headers.map(([name]) => name.toLowerCase()))
  const chunked = request.headers.some(([name, value]) => name.toLowerCase() === 'transfer-encoding' &&
    /chunked/i.test(value))
  const lines = [`${request.method} ${headerSafe(request.target).replaceAll(' ', '%20')} HTTP/1.1`]
  for (const [name, value] of request.headers) lines.push(`${headerSafe(name)}: ${headerSafe(value)}`)
  const body = request.body
  if (body !== undefined && !chunked && !names.has('content-length')) lines.push(`Content-Length: ${body.length}`)
  const head = Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1')
  if (body === undefined) return head
  if (!chunked) return Buffer.concat([head, body])
  const parts: Buffer[] = [head]
  for (let at = 0; at < body.length; at += 4096) {
    const piece = body.subarray(at, at + 4096)
    parts.push(Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n'))
  }
  parts.push(Buffer.from('0\r\n\r\n'))
  return Buffer.concat(parts)
}

/**
 * Keeps a generated header or target on its line: CR and LF become spaces, and characters beyond Latin-1 (which
 * would be cut to one byte, maybe a CR) become `?`. Other control bytes stay: the server must answer them.
 */
export function headerSafe (text: string): string {
  return text.replace(/[\r\n]/g, ' ').replace(/[\u0100-\uffff]/g, '?')
}

/** The world's apps and their tokens (fixtures/orb-world.json): the demo tokens `orbtest up` prints. */
export const WORLD = readDocument<{
  apps: Array<{ id: string, token: string }>
  members: Array<{ id: string }>
  communities: Array<{ id: string, channels: Array<{ id: string }> }>
}>('fixtures/orb-world.json')

/** Ids of the demo world, for requests that should name real things. */
export const WORLD_IDS = {
  apps: WORLD.apps.map((app) => app.id),
  members: WORLD.members.map((member) => member.id),
  servers: WORLD.communities.map((community) => community.id),
  channels: WORLD.communities.flatMap((community) => community.channels.map((channel) => channel.id))
}

/** How many typed commands' ids a run keeps to answer (the most recent ones). */
const KEPT_INTERACTIONS = 64

/** What a run has learnt: the tokens that open each door, and ids the servers handed out. */
export class RunState {
  orbtileToken: string
  readonly leases = new Map<string, string>()
  readonly orbTokens = new Map<string, string>()
  readonly interactions: string[] = []
  /** Re-reads the discovery file's token (the one the run has when the file cannot be read). */
  readonly refreshToken: () => string

  constructor (readToken: () => string) {
    this.orbtileToken = readToken()
    // A discovery file gone for a moment (the API switched off, a folder removed) keeps the token the run has.
    this.refreshToken = () => {
      try {
        return readToken()
      } catch {
        return this.orbtileToken
      }
    }
    this.resetOrb()
  }

  resetOrb (): void {
    this.orbTokens.clear()
    for (const app of WORLD.apps) this.orbTokens.set(app.id, app.token)
  }

  /** The Orb token of an app (a made-up one for an app the run never saw). */
  orbToken (app: string): string {
    return this.orbTokens.get(app) ?? `orb_${app}_unknown`
  }

  /** Learns from one answer: lease tokens, rotated app tokens, a regenerated discovery token, a reset. */
  learn (server: ServerName, request: HttpRequest, response: WireResponse): void {
    if (response.status !== 200 || response.head) return
    const path = request.target.split('?', 1)[0]!
    let json: any
    try {
      json = JSON.parse(response.body.toString('utf8'))
    } catch {
      return
    }
    if (server === 'orbtile') this.learnLease(path, request.method, json)
    else if (server === 'orb') this.learnInteractions(json)
    else this.learnControl(path, json)
  }

  /** A registration's lease token, or the end of a lease. */
  private learnLease (path: string, method: string, json: any): void {
    const adapter = /^\/a\/v1\/adapters\/([^/]+)$/.exec(path)
    if (adapter !== null && method === 'PUT' && typeof json?.adapterToken === 'string') {
      this.leases.set(decodeURIComponent(adapter[1]!), json.adapterToken)
    } else if (adapter !== null && method === 'DELETE') this.leases.delete(decodeURIComponent(adapter[1]!))
  }

  /** The ids of typed commands an events page holds, the most recent of them kept for answers. */
  private learnInteractions (json: any): void {
    for (const event of Array.isArray(json?.events) ? json.events : []) {
      if (event?.type === 'application_command' && typeof event.id === 'string') {
        this.interactions.push(event.id)
        if (this.interactions.length > KEPT_INTERACTIONS) this.interactions.shift()
      }
    }
  }

  /** A reset, a new discovery token, or an app's new token, from the control API. */
  private learnControl (path: string, json: any): void {
    if (path === '/control/reset') {
      this.leases.clear()
      this.resetOrb()
      this.orbtileToken = this.refreshToken()
    } else if (path === '/control/orbtile/token/regenerate' || path === '/control/orbtile/restart') {
      this.leases.clear()
      this.orbtileToken = this.refreshToken()
    } else if (typeof json?.token === 'string' && typeof (json.app ?? json.id) === 'string') {
      this.orbTokens.set(json.app ?? json.id, json.token)
    }
  }
}
