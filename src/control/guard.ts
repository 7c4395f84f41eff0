import { isIP } from 'node:net'
import type { FastifyRequest } from 'fastify'
import { headerCount } from '../shared/http-server.js'
import { ControlError } from './errors.js'

/** True for names that can only mean this machine: `localhost`, 127.0.0.0/8 and ::1. */
export function isLoopbackName (hostname: string): boolean {
  const name = hostname.toLowerCase().replace(/^\[(.*)\]$/, '$1')
  if (name === 'localhost' || name.endsWith('.localhost')) return true
  if (isIP(name) === 4) return name.startsWith('127.')
  if (isIP(name) === 6) return name === '::1' || name === '0:0:0:0:0:0:0:1'
  return false
}

/** Splits a Host header into its name and port; undefined when it is not a host[:port]. */
export function parseHostHeader (host: string): { hostname: string, port: number | undefined } | undefined {
  const match = /^(\[[0-9a-fA-F:.]+\]|[^:[\]]+)(?::(\d{1,5}))?$/.exec(host)
  if (match === null) return undefined
  return { hostname: match[1]!, port: match[2] === undefined ? undefined : Number(match[2]) }
}

/**
 * Refuses requests that did not come from this machine's own tools: a Host that is not a loopback name (which
 * also defeats DNS rebinding) or an Origin other than the control server's own (a web page elsewhere).
 */
export function checkControlRequest (request: FastifyRequest, own: () => { host: string, port: number }): void {
  // RFC 9112 §3.2: several Host headers make the request's authority ambiguous: 400, whatever the first one says.
  if (headerCount(request.raw, 'host') > 1) {
    throw new ControlError('bad_request', 'the request carries more than one Host header')
  }
  // RFC 9112 §3.2.2: an absolute-form target names an authority of its own; the control API takes origin-form only,
  // so a proxy-style request cannot pass a loopback Host beside another target.
  if (!request.raw.url?.startsWith('/')) {
    throw new ControlError('bad_request', 'the request target must be a path (origin-form), not an absolute URL')
  }
  const host = parseHostHeader(request.headers.host ?? '')
  if (host === undefined || !isLoopbackName(host.hostname)) {
    throw new ControlError('forbidden_host', 'the control API answers only requests addressed to a loopback name (localhost, 127.0.0.1, [::1])')
  }
  const origin = request.headers.origin
  if (origin !== undefined && !isOwnOrigin(origin, own())) {
    throw new ControlError('forbidden_origin', `requests from ${JSON.stringify(origin)} are refused; only the control server's own origin may call it`)
  }
  if (!SAFE_METHODS.has(request.method)) checkStateChange(request)
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS'])

/**
 * DASH-D04: what a request that changes state must carry. Its body, if typed, is JSON: a form of another site
 * (urlencoded, multipart, text/plain) is refused, not parsed. A request a browser sends (it has an Origin or a
 * Sec-Fetch-Site header) must also carry the page's own Origin and the JSON type, which no other site can send
 * without a CORS preflight this server never grants. A script's request (curl) carries neither and may omit the type.
 */
function checkStateChange (request: FastifyRequest): void {
  const type = request.headers['content-type']
  if (type !== undefined && !/^application\/json\s*(;|$)/i.test(type)) {
    throw new ControlError('unsupported_media_type', `a request that changes state takes a JSON body (Content-Type: application/json), not ${JSON.stringify(type)}`)
  }
  const browser = request.headers.origin !== undefined || request.headers['sec-fetch-site'] !== undefined
  if (!browser) return
  if (request.headers.origin === undefined) {
    throw new ControlError('forbidden_origin', 'a page\'s request that changes state must carry the Origin of the control server\'s own page')
  }
  if (type === undefined) {
    throw new ControlError('unsupported_media_type', 'a page\'s request that changes state must be sent as application/json, even without a body')
  }
}

/** The server's own origin: plain http, the address it is bound to (or `localhost`), and its port. */
function isOwnOrigin (origin: string, own: { host: string, port: number }): boolean {
  let url: URL
  try {
    url = new URL(origin)
  } catch {
    return false
  }
  const originPort = url.port === '' ? 80 : Number(url.port)
  const name = url.hostname.replace(/^\[(.*)\]$/, '$1')
  return url.protocol === 'http:' && originPort === own.port && (name === own.host || name === 'localhost')
}
