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
import { parseFlags, UsageError, type FlagSpecs } from './args.js'

/**
 * `orbtest webhook sign` and `orbtest webhook send`: the hand tools of the webhook attack kit, as `stripe trigger` is
 * for Stripe, except that they send forged deliveries too, and say whether the bot answered as ORB-A12 decides.
 */

const SIGN_FLAGS: FlagSpecs = {
  token: {
    type: 'string', placeholder: 'TOKEN', help: "the app's token (its signing key is sha256(token), ORB-091); or ORB_TOKEN"
  },
  body: { type: 'string', placeholder: 'FILE', help: 'the raw body to sign, byte for byte (default: standard input)' },
  t: { type: 'string', placeholder: 'MS', help: 'the signing time, milliseconds since the epoch (default: now)', parse: integer },
  event: { type: 'string', placeholder: 'ID', help: "X-Orb-Event (default: the body's id)" },
  delivery: { type: 'string', placeholder: 'ID', help: 'X-Orb-Delivery (default: a new one)' },
  json: { type: 'boolean', help: 'print the headers as one JSON object' },
  help: { type: 'boolean', help: 'print this help' }
}

const SEND_FLAGS: FlagSpecs = {
  token: { type: 'string', placeholder: 'TOKEN', help: "the app's token; or ORB_TOKEN" },
  type: {
    type: 'string',
    placeholder: 'TYPE',
    help: `the event to send: ${EVENT_TYPES.join(', ')}`,
    default: 'app.test',
    parse: (raw, name) => oneOf(raw, name, EVENT_TYPES)
  },
  forge: {
    type: 'string',
    placeholder: 'KIND',
    help: 'what to send: genuine, or a forgery (see --list)',
    default: 'genuine',
    parse: (raw, name) => oneOf(raw, name, Object.keys(DELIVERY_KINDS))
  },
  body: { type: 'string', placeholder: 'FILE', help: 'send this event (a JSON object) instead of a sample of --type' },
  app: { type: 'string', placeholder: 'ID', help: 'the app id in the sample event (default: app_demo)' },
  timeout: {
    type: 'string',
    placeholder: 'MS',
    help: 'how long to wait for a reply (default: 10000)',
    default: '10000',
    parse: integer
  },
  list: { type: 'boolean', help: 'list the kinds of delivery and what a correct bot answers to each' },
  help: { type: 'boolean', help: 'print this help' }
}

const HELP = `Usage: orbtest webhook sign --token TOKEN [--body FILE] [--t MS] [--event ID] [--delivery ID] [--json]
       orbtest webhook send URL --token TOKEN [--type TYPE] [--forge KIND] [--body FILE] [--app ID] [--timeout MS]
       orbtest webhook send --list

sign prints the headers Orb sends with a body (ORB-091, ORB-092). send POSTs a genuine or forged delivery of an event
to a bot's endpoint, prints what it sent and the reply, and says whether a correct bot answers so (exit 0) or not
(exit 1; 2 for a usage mistake). The token is never printed.
`

/** Runs `orbtest webhook …`; resolves to the exit code. */
export async function webhook (
  argv: readonly string[],
  out: (text: string) => void = (t) => { process.stdout.write(t) }
): Promise<number> {
  const [verb, ...rest] = argv
  if (verb === undefined || verb === '--help' || verb === '-h') {
    out(HELP)
    return verb === undefined ? 2 : 0
  }
  if (verb === 'sign') return sign(rest, out)
  if (verb === 'send') return await send(rest, out)
  throw new UsageError(`unknown webhook command ${JSON.stringify(verb)} (sign or send)`)
}

function sign (argv: readonly string[], out: (text: string) => void): number {
  const flags = parseFlags(argv, SIGN_FLAGS)
  if (flags.help === true) {
    out(`${HELP}\n${flagHelp(SIGN_FLAGS)}`)
    return 0
  }
  const token = tokenOf(flags)
  const body = readFileSync(typeof flags.body === 'string' && flags.body !== '-' ? flags.body : 0, 'utf8')
  const t = typeof flags.t === 'number' ? flags.t : Date.now()
  const event = typeof flags.event === 'string' ? flags.event : idOf(body)
  if (event === undefined) throw new UsageError('the body has no "id": give --event')
  const headers = signedHeaders(token, body, t, {
    event,
    ...(typeof flags.delivery === 'string' ? { delivery: flags.delivery } : {})
  })
  out(flags.json === true ? `${JSON.stringify(headers)}\n` : headerLines(headers))
  return 0
}

async function send (argv: readonly string[], out: (text: string) => void): Promise<number> {
  const url = argv[0] !== undefined && !argv[0].startsWith('-') ? argv[0] : undefined
  const flags = parseFlags(url === undefined ? argv : argv.slice(1), SEND_FLAGS)
  if (flags.help === true) {
    out(`${HELP}\n${flagHelp(SEND_FLAGS)}`)
    return 0
  }
  if (flags.list === true) {
    for (const [kind, what] of Object.entries(DELIVERY_KINDS) as Array<[DeliveryKind, string]>) {
      out(`${kind.padEnd(16)} ${what}\n${''.padEnd(17)}a correct bot answers: ${expectedReply(kind, 'app.test').text}\n`)
    }
    return 0
  }
  if (url === undefined) throw new UsageError('send needs the URL of the endpoint')
  const token = tokenOf(flags)
  const kind = flags.forge as DeliveryKind
  const timeout = flags.timeout as number
  let event: Record<string, unknown>
  if (typeof flags.body === 'string') {
    const parsed = parseEvent(readFileSync(flags.body, 'utf8'))
    if (parsed === undefined) throw new UsageError(`${flags.body} is not a JSON object with an "id"`)
    event = parsed
  } else {
    event = sampleEvent(flags.type as EventType, Date.now(), typeof flags.app === 'string' ? { appId: flags.app } : {})
  }
  const type = EVENT_TYPES.includes(event.type as EventType) ? event.type as EventType : 'app.test'
  const first = makeDelivery(kind, token, event, Date.now())
  if (kind !== 'replayed') return await exchange(url, first, type, kind, timeout, out) ? 0 : 1
  // The genuine delivery first, then the same bytes once its t has left the tolerance.
  out(`# replayed: the genuine delivery first, then its exact bytes again ${(REPLAY_LEAD_MS + REPLAY_MARGIN_MS) / 1000} s later, its t then past the tolerance\n`)
  const accepted = await exchange(url, first, type, 'genuine', timeout, out)
  await sleep(Math.max(0, (first.t ?? 0) + TOLERANCE_MS + REPLAY_MARGIN_MS - Date.now()))
  const refused = await exchange(url, replay(first), type, 'replayed', timeout, out)
  return accepted && refused ? 0 : 1
}

/** Sends one delivery and prints it, the reply, and the verdict; true when the reply is what a correct bot gives. */
async function exchange (
  url: string,
  d: WebhookDelivery,
  type: EventType,
  judgedAs: DeliveryKind,
  timeout: number,
  out: (text: string) => void
): Promise<boolean> {
  out(`POST ${url}  (${d.kind === judgedAs ? d.what : DELIVERY_KINDS[judgedAs]})\n${headerLines(d.headers)}\n${cut(d.body)}\n`)
  const result = await sendDelivery(url, d, timeout)
  const expected = expectedReply(judgedAs, type)
  if ('error' in result) {
    out(`<- no reply: ${result.error}\nexpected: ${expected.text}: NOT as expected\n\n`)
    return false
  }
  const ok = expected.ok(result.status, result.body, result.ms)
  out(`<- ${result.status} in ${result.ms} ms\n${cut(result.body)}\nexpected: ${expected.text}: ${ok ? 'as expected' : 'NOT as expected'}\n\n`)
  return ok
}

function tokenOf (flags: Record<string, unknown>): string {
  const token = typeof flags.token === 'string' ? flags.token : process.env.ORB_TOKEN
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

function integer (raw: string, name: string): number {
  if (!/^\d+$/.test(raw)) throw new UsageError(`--${name} needs a whole number, not ${JSON.stringify(raw)}`)
  return Number(raw)
}

function oneOf (raw: string, name: string, allowed: readonly string[]): string {
  if (!allowed.includes(raw)) throw new UsageError(`--${name} is one of ${allowed.join(', ')}, not ${JSON.stringify(raw)}`)
  return raw
}

function flagHelp (specs: FlagSpecs): string {
  return Object.entries(specs)
    .map(([name, spec]) => {
      const flag = `  --${name}${spec.placeholder === undefined ? '' : ` ${spec.placeholder}`}`
      return `${flag.padEnd(24)}${spec.help}\n`
    })
    .join('')
}
