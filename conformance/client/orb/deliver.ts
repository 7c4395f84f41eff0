// Sending the bot a webhook delivery from a scenario, and journalling what it did: when it went, the marks only it
// carries (OBC-04), and the bot's reply.
import type { OrbObserver } from './observer.js'
import { isObject, parseJson } from './model.js'
import { hasNotice, sendDelivery, type WebhookDelivery } from './webhook-kit.js'
import { windowMs } from '../core/windows.js'

/** How long a delivery waits for the bot's reply: past ORB-097's 4 s, short of ORB-A11's 10 s for other events. */
export const DELIVERY_TIMEOUT_MS = windowMs('delivery-timeout')

/** Sends one delivery and journals when it went (what the bot does from then on, it caused) and its reply. */
export async function send (
  o: OrbObserver,
  url: string,
  d: WebhookDelivery,
  signal: AbortSignal,
  data: {
    genuine: boolean
    kind: string
    type: string
    duplicate?: boolean
    encrypted?: boolean
    event?: Record<string, unknown>
  }
): Promise<void> {
  const sentAt = o.now()
  o.action('wire', 'delivery-sent', `a ${data.duplicate === true ? 'second (retried) ' : ''}${data.kind} ${data.type} delivery: ${d.what}`, {
    genuine: data.genuine,
    kind: data.kind,
    type: data.type,
    duplicate: data.duplicate === true,
    eventId: d.event,
    marks: marksOf(d),
    encrypted: data.encrypted === true
  })
  const result = await sendDelivery(url, d, DELIVERY_TIMEOUT_MS, signal)
  const reply = 'error' in result
    ? { error: result.error }
    : { status: result.status, notice: hasNotice(result.body), reply: result.body.slice(0, 300) }
  o.action('wire', 'delivery', `the ${data.kind} ${data.type} delivery: ${'error' in result ? result.error : `${result.status} in ${result.ms} ms`}`, {
    ...data,
    ...reply,
    ms: result.ms,
    sentAt,
    ...(result.written === undefined ? {} : { writtenAt: sentAt + result.written })
  })
}

/**
 * What a call can carry only from this delivery: its event id (as sent, and as its body says), its message's id and
 * the word that ends its text.
 */
export function marksOf (d: Pick<WebhookDelivery, 'event' | 'body'>): string[] {
  const marks = new Set<string>([d.event])
  // A body that is not JSON carries no mark but the event id its header names.
  const event = parseJson(d.body)
  if (!isObject(event)) return [...marks]
  if (typeof event.id === 'string') marks.add(event.id)
  const message = isObject(event.data) && isObject(event.data.message) ? event.data.message : undefined
  if (typeof message?.id === 'number') marks.add(String(message.id))
  const word = typeof message?.body === 'string' ? /hello (\S+)$/.exec(message.body)?.[1] : undefined
  if (word !== undefined) marks.add(word)
  return [...marks]
}
