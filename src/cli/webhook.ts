import { readFileSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'
import {
  DELIVERY_KINDS,
  EVENT_TYPES,
  expectedReply,
  makeDelivery,
  REPLAY_LEAD_MS,
  REPLAY_MARGIN_MS,
  replay,
  sampleEvent,
  sendDelivery,
  signedHeaders,
  TOLERANCE_MS,
  type DeliveryKind,
  type EventType,
  type WebhookDelivery
} from '../../conformance/client/orb/webhook-kit.js'
import { UsageError } from '../shared/usage-error.js'
import type { CommandInput, Outcome } from './command.js'
import type { SEND_FLAGS, SIGN_FLAGS } from './command-flags.js'
import { unexpectedArgument, type Flags } from './flags.js'

/**
 * `orbtest webhook sign` and `orbtest webhook send`: the hand tools of the webhook attack kit, as `stripe trigger` is
 * for Stripe, except that they send forged deliveries too, and say whether the bot answered as ORB-A12 decides.
 */

type Out = NodeJS.WritableStream

/** `orbtest webhook sign`: prints the headers Orb sends with a body. */
export function sign (flags: Flags<typeof SIGN_FLAGS>, out: Out): Outcome {
  const token = tokenOf(flags.token)
  const body = readFileSync(flags.body !== undefined && flags.body !== '-' ? flags.body : 0, 'utf8')
  const event = flags.event ?? idOf(body)
  if (event === undefined) throw new UsageError('the body has no "id": give --event')
  const headers = signedHeaders(token, body, flags.t ?? Date.now(), {
    event,
    ...(flags.delivery === undefined ? {} : { delivery: flags.delivery })
  })
  out.write(flags.json === true ? `${JSON.stringify(headers)}\n` : headerLines(headers))
  return 'ok'
}

/** `orbtest webhook send`: POSTs a delivery to a bot's endpoint and says whether the reply is a correct bot's. */
export async function send ({ flags, operands }: CommandInput<typeof SEND_FLAGS>, out: Out): Promise<Outcome> {
  if (flags.list === true) {
    for (const [kind, what] of Object.entries(DELIVERY_KINDS) as Array<[DeliveryKind, string]>) {
      out.write(`${kind.padEnd(16)} ${what}\n${''.padEnd(17)}a correct bot answers: ${expectedReply(kind, 'app.test').text}\n`)
    }
    return 'ok'
  }
  const [url, extra] = operands
  if (extra !== undefined) throw new UsageError(unexpectedArgument(extra))
  if (url === undefined) throw new UsageError('send needs the URL of the endpoint')
  const token = tokenOf(flags.token)
  const kind = flags.forge ?? 'genuine'
  const timeout = flags.timeout ?? 10_000
  const event = flags.body === undefined
    ? sampleEvent(flags.type ?? 'app.test', Date.now(), flags.app === undefined ? {} : { appId: flags.app })
    : eventOf(flags.body)
  const type = EVENT_TYPES.includes(event.type as EventType) ? event.type as EventType : 'app.test'
  const first = makeDelivery(kind, token, event, Date.now())
  if (kind !== 'replayed') return await exchange(url, first, type, kind, timeout, out) ? 'ok' : 'failed'
  // The genuine delivery first, then the same bytes once its t has left the tolerance.
  out.write(`# replayed: the genuine delivery first, then its exact bytes again ${(REPLAY_LEAD_MS + REPLAY_MARGIN_MS) / 1000} s later, its t then past the tolerance\n`)
  const accepted = await exchange(url, first, type, 'genuine', timeout, out)
  await sleep(Math.max(0, (first.t ?? 0) + TOLERANCE_MS + REPLAY_MARGIN_MS - Date.now()))
  const refused = await exchange(url, replay(first), type, 'replayed', timeout, out)
  return accepted && refused ? 'ok' : 'failed'
}

/** The event in a --body file. */
function eventOf (file: string): Record<string, unknown> {
  const parsed = parseEvent(readFileSync(file, 'utf8'))
  if (parsed === undefined) throw new UsageError(`${file} is not a JSON object with an "id"`)
  return parsed
}

/** Sends one delivery and prints it, the reply, and the verdict; true when the reply is what a correct bot gives. */
async function exchange (
  url: string,
  d: WebhookDelivery,
  type: EventType,
  judgedAs: DeliveryKind,
  timeout: number,
  out: Out
): Promise<boolean> {
  out.write(`POST ${url}  (${d.kind === judgedAs ? d.what : DELIVERY_KINDS[judgedAs]})\n${headerLines(d.headers)}\n${cut(d.body)}\n`)
  const result = await sendDelivery(url, d, timeout)
  const expected = expectedReply(judgedAs, type)
  if ('error' in result) {
    out.write(`<- no reply: ${result.error}\nexpected: ${expected.text}: NOT as expected\n\n`)
    return false
  }
  const ok = expected.ok(result.status, result.body, result.ms)
  out.write(`<- ${result.status} in ${result.ms} ms\n${cut(result.body)}\nexpected: ${expected.text}: ${ok ? 'as expected' : 'NOT as expected'}\n\n`)
  return ok
}

function tokenOf (given: string | undefined): string {
  const token = given ?? process.env.ORB_TOKEN
  if (token === undefined || token === '') throw new UsageError('give the app\'s token with --token (or ORB_TOKEN)')
  return token
}

function idOf (body: string): string | undefined {
  const id = parseEvent(body)?.id
  return typeof id === 'string' ? id : undefined
}

function parseEvent (text: string): Record<string, unknown> | undefined {
  try {
    const value = JSON.parse(text) as unknown
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined
    return typeof (value as { id?: unknown }).id === 'string' ? value as Record<string, unknown> : undefined
  } catch {
    return undefined
  }
}

function headerLines (headers: Record<string, string>): string {
  const names: Record<string, string> = {
    'content-type': 'Content-Type',
    'x-orb-signature': 'X-Orb-Signature',
    'x-orb-event': 'X-Orb-Event',
    'x-orb-delivery': 'X-Orb-Delivery'
  }
  return Object.entries(headers).map(([k, v]) => `${names[k] ?? k}: ${v}\n`).join('')
}

function cut (text: string): string {
  return text.length > 2000 ? `${text.slice(0, 2000)}… (${text.length - 2000} more characters)` : text
}
