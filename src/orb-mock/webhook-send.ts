import { request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http'
import { request as httpsRequest } from 'node:https'
import type { DeliveryRecord } from './deliveries.js'
import { httpTarget } from '../shared/http-target.js'

/** Bytes of a reply read at most (enough for any `notice`); past this the reply is complete and its socket closed. */
export const REPLY_CAP = 64 * 1024

/** What became of one POST to an endpoint. */
export interface SendResult {
  outcome: DeliveryRecord['outcome']
  status: number | null
  error: string | null
  /** The reply's text (2xx only), for `notice`. */
  body?: string
}

/** The headers a delivery is sent with (the caller's; length and user agent are added). */
type Headers = Readonly<Record<string, string>>

/** Hears what became of a POST. */
export type Done = (result: SendResult) => void

/**
 * ORB-090, ORB-094, ORB-A11: POSTs `raw` to `url` once, over a socket of its own (`agent: false`, so nothing lingers
 * in a pool), following no redirect (node:http never does). `done` hears the outcome, maybe more than once: the
 * caller keeps the first. Returns the request, for the caller to destroy on a timeout or a reset; undefined when
 * nothing could be sent (`done` has heard why).
 */
export function post (url: string, headers: Headers, raw: string, done: Done): ClientRequest | undefined {
  const target = httpTarget(url)
  if (typeof target === 'string') {
    done({ outcome: 'error', status: null, error: `bad endpoint URL: ${target}` })
    return undefined
  }
  const send = target.protocol === 'https:' ? httpsRequest : httpRequest
  let req: ClientRequest | undefined
  try {
    req = send(target, {
      method: 'POST',
      agent: false,
      headers: { ...headers, 'content-length': String(Buffer.byteLength(raw)), 'user-agent': 'orbtest-orb-webhooks/1' }
    })
    req.on('response', (res) => read(res, done))
    req.on('error', (err) => done({ outcome: 'error', status: null, error: describe(err) }))
    req.end(raw)
  } catch (err) {
    req?.destroy()
    done({ outcome: 'error', status: null, error: describe(err as Error) })
    return undefined
  }
  return req
}

// ORB-094: only a 2xx is delivered; its reply is read (up to the cap) for `notice`. Anything else fails at once.
function read (res: IncomingMessage, done: Done): void {
  const status = res.statusCode ?? 0
  res.on('error', (err) => done({ outcome: 'error', status, error: describe(err) }))
  if (status < 200 || status > 299) {
    const redirect = status >= 300 && status < 400 ? '; redirects are not followed' : ''
    done({ outcome: 'failed', status, error: `the endpoint answered ${status}${redirect}` })
    return
  }
  const chunks: Buffer[] = []
  let size = 0
  let complete = false
  const finish = (): void => {
    complete = true
    done({ outcome: 'delivered', status, error: null, body: Buffer.concat(chunks).toString('utf8') })
  }
  res.on('data', (chunk: Buffer) => {
    if (complete) return
    const room = REPLY_CAP - size
    chunks.push(chunk.length > room ? chunk.subarray(0, room) : chunk)
    size += Math.min(chunk.length, room)
    if (size >= REPLY_CAP) finish()
  })
  res.on('end', finish)
  res.on('close', () => done({ outcome: 'error', status, error: 'the reply was cut off' }))
}

/** A network error as the delivery log says it: its code, then its message. */
function describe (err: Error): string {
  const code = (err as { code?: unknown }).code
  return typeof code === 'string' && !err.message.includes(code) ? `${code}: ${err.message}` : err.message
}
