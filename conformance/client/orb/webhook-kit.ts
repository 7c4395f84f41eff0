import { createHash, createHmac, randomBytes } from 'node:crypto'
import { httpTarget } from '../../../src/shared/http-target.js'
import { windowMs } from '../core/windows.js'

/**
 * The webhook attack kit: genuine deliveries of an event, and the forged ones a webhook bot must refuse (ORB-095,
 * ORB-A12). Each is the exact bytes and headers to POST; nothing here sends anything (the `orbtest webhook` tools and
 * the bot suite do). Times are milliseconds since the epoch, as `t` is (ORB-091).
 */

/** ORB-A12: a bot refuses a `t` more than this far from its own clock, in either direction. */
export const TOLERANCE_MS = windowMs('signature-tolerance')

/**
 * How far outside the tolerance the stale and future forgeries sit, and how far inside it the delivery that is
 * later replayed starts: far enough that a bot's clock a little off ours still judges them alike (OBC-01).
 */
export const CLOCK_MARGIN_MS = windowMs('forgery-margin')

/** How long before it leaves the tolerance the delivery to be replayed is signed. */
export const REPLAY_LEAD_MS = 2000

/** How long after its t has left the tolerance the replay is sent (bots on one machine share its clock). */
export const REPLAY_MARGIN_MS = 1000

/**
 * Every kind of delivery the kit makes. The genuine ones a bot must accept (ORB-A12: any order, spaces, unknown keys,
 * any matching `v1`); each other one it must refuse with 401 and take no action (ORB-095, ORB-A12).
 */
export const DELIVERY_KINDS = {
  genuine: 'a genuine delivery, signed as Orb signs',
  'genuine-rotated':
    'genuine, with two v1 values (the first under another key, as in a rotation), keys reordered, spaces, an unknown key',
  'wrong-key': 'signed with the key of another token',
  reserialised: 'signed over the body parsed and serialised again, while the bytes sent keep their own spacing',
  tampered: "a genuine signature, over bytes other than those sent (the body's text changed after signing)",
  stale: `signed with a t ${(TOLERANCE_MS + CLOCK_MARGIN_MS) / 60000} minutes in the past, outside the tolerance`,
  future: `signed with a t ${(TOLERANCE_MS + CLOCK_MARGIN_MS) / 60000} minutes in the future, outside the tolerance`,
  unsigned: 'no X-Orb-Signature header',
  malformed: 'an X-Orb-Signature that is not t=<ms>,v1=<hex> (no t)',
  replayed: "an earlier genuine delivery's exact bytes and headers again, once its t has left the tolerance"
} as const

export type DeliveryKind = keyof typeof DELIVERY_KINDS
export const FORGERIES = (Object.keys(DELIVERY_KINDS) as DeliveryKind[]).filter((k) => !k.startsWith('genuine'))

export function isGenuine (kind: DeliveryKind): boolean {
  return kind === 'genuine' || kind === 'genuine-rotated'
}

/** The three event types the spec names (ORB-052), each as a sample a bot can act on. */
export const EVENT_TYPES = ['app.test', 'message.mention', 'application_command'] as const
export type EventType = typeof EVENT_TYPES[number]

/** Who and where a sample event is about; the defaults are the fake Orb's seeded demo app and community. */
export interface EventContext {
  appId: string
  appName: string
  server: string
  channel: string
  member: { id: string, name: string }
  /** The command a sample `application_command` types, and its options. */
  command: { id: string, name: string, options: Record<string, unknown> }
  /** The mention's text. */
  text: string
  /**
   * The mention's message id: by default the demo world's first message (in ch_general, by mem_ada), so that a bot
   * that answers with `reply_to` names a message the fake Orb has.
   */
  messageId: number
}

export const DEFAULT_CONTEXT: EventContext = {
  appId: 'app_demo',
  appName: 'Demo Bot',
  server: 'srv_orbit',
  channel: 'ch_general',
  member: { id: 'mem_ada', name: 'Ada' },
  command: { id: 'cmd_ping', name: 'ping', options: {} },
  text: 'hello <@app_demo>',
  messageId: 1
}

/** A new event id, as Orb makes them (ORB-A10: an opaque unique string). */
export function eventId (): string {
  return `evt_${randomBytes(12).toString('hex')}`
}

/** A sample event of a type, sent at `now` (ORB-052's envelope; `data` as the Event schema describes it). */
export function sampleEvent (
  type: EventType,
  now: number,
  context: Partial<EventContext> = {},
  id = eventId()
): Record<string, unknown> {
  const c = { ...DEFAULT_CONTEXT, ...context }
  const envelope = { id, type, sent_at: now, api: 'orb-bots-v1', app: { id: c.appId, name: c.appName } }
  switch (type) {
    case 'app.test':
      return { ...envelope, server: null, channel: null, data: {} }
    case 'message.mention':
      return {
        ...envelope,
        server: c.server,
        channel: c.channel,
        data: {
          message: {
            id: c.messageId,
            channel: c.channel,
            author: { id: c.member.id, name: c.member.name, bot: false },
            body: c.text
          },
          reason: 'mention'
        }
      }
    case 'application_command':
      return {
        ...envelope,
        server: c.server,
        channel: c.channel,
        data: { command: { ...c.command }, member: { ...c.member }, invoked_at: now }
      }
  }
}

/** One delivery as it goes on the wire: the bytes of the body and every header the kit sets. */
export interface WebhookDelivery {
  kind: DeliveryKind
  /** What was done to it, in words. */
  what: string
  body: string
  headers: Record<string, string>
  /** The event id it carries (X-Orb-Event), and its delivery id. */
  event: string
  delivery: string
  /** The `t` it was signed with (absent when it carries no usable one). */
  t?: number
}

/**
 * ORB-091, written from the spec (not the fake's code, so a fault of the fake's signing cannot hide here): `v1` is
 * the lowercase hex HMAC-SHA256 of `"<t>.<raw body>"`, keyed by sha256(token) as lowercase hex, its 64 ASCII bytes.
 */
export function signature (token: string, t: number, rawBody: string): string {
  const key = createHash('sha256').update(token, 'utf8').digest('hex')
  return createHmac('sha256', key).update(`${t}.${rawBody}`, 'utf8').digest('hex')
}

/** ORB-091, ORB-092: the headers of a delivery of `body`, signed at `t` under `token`. */
export function signedHeaders (
  token: string,
  body: string,
  t: number,
  ids: { event: string, delivery?: string }
): Record<string, string> {
  return {
    'content-type': 'application/json',
    'x-orb-signature': `t=${t},v1=${signature(token, t, body)}`,
    'x-orb-event': ids.event,
    'x-orb-delivery': ids.delivery ?? `dlv_${randomBytes(12).toString('hex')}`
  }
}

/**
 * A delivery of `event` of the given kind, made at `now` under the app's `token`. `replayed` is made as the genuine
 * delivery to be sent first (its `t` REPLAY_LEAD_MS short of leaving the tolerance); `replay()` gives it again.
 */
export function makeDelivery (
  kind: DeliveryKind,
  token: string,
  event: Record<string, unknown>,
  now: number
): WebhookDelivery {
  const id = String(event.id)
  const delivery = `dlv_${randomBytes(12).toString('hex')}`
  const compact = JSON.stringify(event)
  const base = (body: string, t: number, signer = token, signed = body): WebhookDelivery => ({
    kind,
    what: DELIVERY_KINDS[kind],
    body,
    headers: { ...signedHeaders(signer, signed, t, { event: id, delivery }) },
    event: id,
    delivery,
    t
  })
  const outside = TOLERANCE_MS + CLOCK_MARGIN_MS
  switch (kind) {
    case 'genuine':
      return base(compact, now)
    case 'genuine-rotated': {
      const d = base(compact, now)
      const old = signature(`${token}-previous`, now, compact)
      d.headers['x-orb-signature'] = `v1=${old}, t=${now} ,v0=ignored, v1=${signature(token, now, compact)}`
      return d
    }
    case 'wrong-key':
      return base(compact, now, `${token}-not-this-one`)
    case 'reserialised': {
      // The bytes sent are spaced as a pretty-printer would; the signature is over the compact form a bot would get
      // from JSON.stringify(JSON.parse(body)).
      const spaced = JSON.stringify(event, null, 1)
      return base(spaced, now, token, compact)
    }
    case 'tampered': {
      const d = base(compact, now)
      d.body = tamper(compact)
      return d
    }
    case 'stale':
      return base(compact, now - outside)
    case 'future':
      return base(compact, now + outside)
    case 'unsigned': {
      const d = base(compact, now)
      delete d.headers['x-orb-signature']
      delete d.t
      return d
    }
    case 'malformed': {
      const d = base(compact, now)
      d.headers['x-orb-signature'] = `v1=${signature(token, now, compact)}`
      delete d.t
      return d
    }
    case 'replayed':
      return base(compact, now - TOLERANCE_MS + REPLAY_LEAD_MS)
  }
}

/** The same bytes and headers again: what a replaying attacker sends (`replayed`, once its t is old enough). */
export function replay (d: WebhookDelivery): WebhookDelivery {
  return { ...d, headers: { ...d.headers }, what: DELIVERY_KINDS.replayed }
}

/** A body whose text differs from the signed one: the event id's last character changed, the JSON still valid. */
function tamper (body: string): string {
  const at = body.indexOf('"id":"evt_')
  if (at < 0) return body.replace('{', '{"tampered":true,')
  const end = body.indexOf('"', at + 6)
  const last = body[end - 1]
  return `${body.slice(0, end - 1)}${last === '0' ? '1' : '0'}${body.slice(end)}`
}

/** What a correct bot answers to a delivery (ORB-095, ORB-097, ORB-A12), in words and as a test of the reply. */
export interface Expected {
  text: string
  ok: (status: number, body: string, ms: number) => boolean
}

/** ORB-097: the command deadline for an inline notice (the window `notice`). */
export const NOTICE_DEADLINE_MS = windowMs('notice')

export function expectedReply (kind: DeliveryKind, type: EventType): Expected {
  if (!isGenuine(kind)) {
    return { text: '401, and no action (ORB-095, ORB-A12)', ok: (status) => status === 401 }
  }
  if (type === 'application_command') {
    return {
      text: 'a 2xx with JSON {"notice": "..."} within 4 s (ORB-097)',
      ok: (status, body, ms) => status >= 200 && status < 300 && ms <= NOTICE_DEADLINE_MS && hasNotice(body)
    }
  }
  return {
    text: 'a 2xx without "notice" (ORB-097: notice is only for application_command)',
    ok: (status, body) => status >= 200 && status < 300 && !hasNotice(body)
  }
}

/** Whether a delivery's reply is JSON with a `notice` (ORB-097). */
export function hasNotice (body: string): boolean {
  try {
    const parsed = JSON.parse(body) as unknown
    return typeof parsed === 'object' && parsed !== null && typeof (parsed as { notice?: unknown }).notice === 'string'
  } catch {
    return false
  }
}

/** What became of one POST of a delivery: the reply (status, text up to REPLY_TEXT_CAP, time) or why none came. */
/**
 * What became of a delivery: its reply, or why there was none; `ms` from the call to the end, and `written`, when
 * the request had been handed to the connection whole (ms from the call), if it was.
 */
export type SendOutcome =
  | { status: number, body: string, ms: number, written?: number }
  | { error: string, ms: number, written?: number }

/** Reply text kept at most (a `notice` is far shorter). */
export const REPLY_TEXT_CAP = 64 * 1024

/** POSTs a delivery to `url` over a connection of its own; gives up after `timeoutMs` or on `signal`. Never rejects. */
export async function sendDelivery (
  url: string,
  d: WebhookDelivery,
  timeoutMs: number,
  signal?: AbortSignal
): Promise<SendOutcome> {
  const started = performance.now()
  const ms = (): number => Math.round(performance.now() - started)
  const target = httpTarget(url)
  if (typeof target === 'string') return { error: `bad URL: ${target}`, ms: 0 }
  const { request } = target.protocol === 'https:' ? await import('node:https') : await import('node:http')
  return await new Promise<SendOutcome>((resolve) => {
    let settled = false
    let written: number | undefined
    const settle = (outcome: SendOutcome): void => {
      if (settled) return
      settled = true
      if (written !== undefined) outcome.written = written
      clearTimeout(timer)
      // A scenario sends many deliveries on one signal: each takes its listener away when it is over.
      signal?.removeEventListener('abort', onAbort)
      req.destroy()
      resolve(outcome)
    }
    const req = request(target, {
      method: 'POST',
      agent: false,
      headers: { ...d.headers, 'content-length': String(Buffer.byteLength(d.body)), 'user-agent': 'orbtest-webhook/1' }
    })
    const timer = setTimeout(() => {
      settle({ error: `no complete reply within ${timeoutMs} ms`, ms: ms() })
    }, timeoutMs)
    const onAbort = (): void => { settle({ error: 'the run ended before a reply came', ms: ms() }) }
    if (signal?.aborted === true) onAbort()
    signal?.addEventListener('abort', onAbort, { once: true })
    req.on('error', (err) => { settle({ error: err.message, ms: ms() }) })
    req.on('finish', () => { written = ms() })
    req.on('response', (res) => {
      const chunks: Buffer[] = []
      let size = 0
      res.on('data', (chunk: Buffer) => {
        if (size < REPLY_TEXT_CAP) chunks.push(chunk.subarray(0, REPLY_TEXT_CAP - size))
        size += chunk.length
      })
      res.on('error', (err) => { settle({ error: err.message, ms: ms() }) })
      res.on('end', () => {
        settle({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), ms: ms() })
      })
    })
    req.end(d.body)
  })
}
