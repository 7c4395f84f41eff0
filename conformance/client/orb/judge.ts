// `orbtest proxy orb --judge FILE`: the bot rules judged live on whatever the bot sends through the proxy, with no
// scenario: no member talks, no delivery is forged, nothing restarts the bot.
import { judgedRun, judgedSummaries, writeJudgedReport, type JudgedVia } from '../core/judged.js'
import type { CheckSummary, ServerFinding } from '../core/journal.js'
import { stalls } from '../core/stall.js'
import type { DeliveryAnswer, DeliveryIn, DeliveryListener } from '../../../src/proxy/orb.js'
import type { WireTap } from '../../../src/shared/tap.js'
import { ORB_CLIENT_CHECKS } from './checks.js'
import { marksOf } from './deliver.js'
import { isObject, parseJson } from './model.js'
import { OrbObserver } from './observer.js'
import { hasNotice } from './webhook-kit.js'
import { verifySignature } from '../../server/orb/receiver.js'

/**
 * Checks that need what only a scenario knows, left out when judging traffic alone: the bot's process (whether an
 * encrypted message crashed it, ORB-036; which process acted on an event, across a restart, ORB-048; how it stops,
 * OBC-06), the forgeries the suite makes (ORB-095: a delivery the proxy cannot verify may be the Orb's, signed with
 * a token the proxy was not given) and the duplicates it sends (ORB-096: a real Orb sends an event again only after
 * its first attempt failed, when acting on it again may be right).
 */
export const ORB_SCENARIO_ONLY = ['ORB-036', 'ORB-048', 'OBC-06', 'ORB-095', 'ORB-096']
/** Checks of the deliveries a webhook bot answers: judged only when the proxy hands the Orb's deliveries on. */
export const ORB_DELIVERY_CHECKS = ['ORB-097']

/** The checks a judged run applies. */
function judgedChecks (deliveries: boolean): typeof ORB_CLIENT_CHECKS {
  return ORB_CLIENT_CHECKS.filter((c) =>
    !ORB_SCENARIO_ONLY.includes(c.id) && (deliveries || !ORB_DELIVERY_CHECKS.includes(c.id)))
}

/** The bot rules judged live: the tap to read the traffic with, the verdicts so far, and the report at the end. */
export interface OrbJudge {
  tap: WireTap
  /** Journals each delivery the proxy hands on to the bot, and the bot's answer. */
  deliveries: DeliveryListener
  /** The bot's process, when the proxy runs it: started, and stopped (a delivery then in flight is not its fault). */
  bot(event: 'start' | 'stop'): void
  state(): { checks: CheckSummary[], requests: number, since: string }
  /** Ends the run: writes the report (its form by FILE's extension); whether every required bot rule held. */
  finish(server?: readonly ServerFinding[]): { passed: boolean, requests: number }
}

/**
 * Starts judging. `token` is the app's token (the bot's ORB_TOKEN): what ORB-002 holds the bot's Authorization to,
 * and what the report never shows. The channels are not known (the bot API lists none): a post's channel clause of
 * ORB-032 is judged only on what Orb answered.
 */
export function startOrbJudge (file: string, token: string, via: JudgedVia, webhook = false): OrbJudge {
  const JUDGED = judgedChecks(webhook)
  const release = stalls.hold()
  const observer = new OrbObserver(token, new Map(), JUDGED.map((c) => c.id))
  let requests = 0
  const run = judgedRun('orb', 'Orb bot API', via, JUDGED)
  return {
    tap: {
      now: () => observer.now(),
      request: () => {
        requests++
        return undefined
      },
      exchange: (x) => {
        learnSecrets(observer, token, x.headers.authorization, x.reply)
        observer.exchange(x)
      },
      malformed: (connection, reason, bytes) => { observer.malformed(connection, reason, bytes) },
      failed: (part, message) => { observer.tapFailed(part, message) }
    },
    deliveries: deliveryJournal(observer, token),
    bot: (event) => {
      if (event === 'start') observer.action('harness', 'bot-start', 'the proxy started the bot')
      else observer.action('harness', 'stop', 'the proxy stopped the bot (SIGTERM)')
    },
    state: () => ({ checks: judgedSummaries(run, observer.peek()), requests, since: run.since }),
    finish: (server) => {
      release()
      const end = observer.now()
      const judged = {
        findings: observer.findings(end),
        journal: observer.journal.entries(),
        dropped: observer.journal.dropped
      }
      return { passed: writeJudgedReport(file, run, judged, server), requests }
    }
  }
}

/** What a delivery is: its event (by its header), whether its signature holds under the token, its body's event. */
function readDelivery (d: DeliveryIn, token: string): {
  event: string
  genuine: boolean
  type: string
  body: Record<string, unknown> | undefined
} {
  const genuine = verifySignature(d.headers['x-orb-signature'], d.raw, token).ok
  const parsed = parseJson(d.body)
  const body = isObject(parsed) ? parsed : undefined
  return { event: d.headers['x-orb-event'] ?? '', genuine, type: String(body?.type ?? 'unknown'), body }
}

/**
 * Journals the Orb's deliveries as the suite journals its own (deliver.ts): when one went on to the bot, with the
 * marks only it carries, and the bot's answer. A second delivery of an event is a retry.
 */
function deliveryJournal (o: OrbObserver, token: string): DeliveryListener {
  const seen = new Set<string>()
  const open = new Map<DeliveryIn, { at: number, duplicate: boolean }>()
  const dataOf = (d: DeliveryIn, duplicate: boolean): Record<string, unknown> => {
    const r = readDelivery(d, token)
    const kind = r.genuine ? 'genuine' : 'unverified'
    return { genuine: r.genuine, kind, type: r.type, duplicate, ...(r.body === undefined ? {} : { event: r.body }) }
  }
  return {
    sent: (d) => {
      const r = readDelivery(d, token)
      const duplicate = seen.has(r.event)
      seen.add(r.event)
      open.set(d, { at: o.now(), duplicate })
      o.action('wire', 'delivery-sent', `the Orb's ${duplicate ? 'second ' : ''}${r.type} delivery ${r.event}`, {
        genuine: r.genuine,
        kind: r.genuine ? 'genuine' : 'unverified',
        type: r.type,
        duplicate,
        eventId: r.event,
        marks: marksOf({ event: r.event, body: d.body }),
        encrypted: false
      })
    },
    answered: (d, answer: DeliveryAnswer) => {
      const { at, duplicate } = open.get(d) ?? { at: o.now(), duplicate: false }
      open.delete(d)
      // Never written to the bot (it was not listening yet, or any more): it had nothing to answer.
      if ('error' in answer && answer.writtenAt === undefined) {
        o.action('harness', 'delivery-unreached', `the delivery did not reach the bot (${answer.error}): not judged`)
        return
      }
      const reply = 'error' in answer
        ? { error: answer.error }
        : { status: answer.status, notice: hasNotice(answer.body), reply: answer.body.slice(0, 300) }
      const how = 'error' in answer ? answer.error : `${answer.status} in ${Math.round(answer.ms)} ms`
      o.action('wire', 'delivery', `the bot's answer to the delivery: ${how}`, {
        ...dataOf(d, duplicate),
        ...reply,
        ms: answer.ms,
        sentAt: at,
        ...(answer.writtenAt === undefined ? {} : { writtenAt: answer.writtenAt })
      })
    }
  }
}

/** Members of a reply whose values are secrets (a voice grant's token, a rotated token): kept out of the report. */
const SECRET_MEMBER = /"([A-Za-z_]*(?:token|secret)[A-Za-z_]*)"\s*:\s*"([^"\\]{8,})"/gi

/**
 * What the report must not show besides the app's token: a Bearer the bot sent that is not it (ORB_TOKEN mistyped,
 * or another app's), and a secret a reply carried.
 */
function learnSecrets (o: OrbObserver, token: string, authorization: string | undefined, reply: string): void {
  const bearer = /^Bearer\s+(\S+)$/i.exec(authorization ?? '')?.[1]
  if (bearer !== undefined && bearer !== token) o.secrets.add(bearer, 'a token the bot sent')
  if (!/token|secret/i.test(reply)) return
  for (const m of reply.matchAll(SECRET_MEMBER)) o.secrets.add(m[2]!, 'a secret of a reply')
}
