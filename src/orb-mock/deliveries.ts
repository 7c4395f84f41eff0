import { ORB_LIMITS } from '../spec/orb.js'
import { OrbError } from './errors.js'
import type { EventType } from './interactions.js'

/** Delivery records kept per app, newest kept. */
export const LOG_LIMIT = 1_000

/** What the endpoint's reply said inline, and what came of it (ORB-097, ORB-098, ORB-A13). */
export interface DeliveryNotice {
  content: string
  /**
   * `answered`: shown to the member; `ignored`: the event is not a typed command; `late`: the member had stopped
   * waiting (410); `answered-already`: the interaction had an answer, from `/respond` (409); `too-long`: over the
   * 1800 characters `/respond` allows, so the member sees no more inline than by the route.
   */
  result: 'answered' | 'ignored' | 'late' | 'answered-already' | 'too-long'
}

/** One attempt in an app's delivery log (ORB-093, ORB-A11); the control server shows these. Never holds the token. */
export interface DeliveryRecord {
  /** `X-Orb-Delivery`: a UUID per attempt (ORB-092). */
  delivery: string
  /** `X-Orb-Event`: the event's id. */
  event: string
  type: EventType
  attempt: 1 | 2
  url: string
  /** When the attempt was sent, on the fake's clock (the signature's `t`). */
  at: number
  /** The reply's HTTP status; null on a timeout or a network error. */
  status: number | null
  /** On the fake's clock (0 for a prompt reply under a virtual clock). */
  durationMs: number
  /** `skipped`: not sent, because the member stopped waiting or the app's queue overflowed (see `error`). */
  outcome: 'delivered' | 'failed' | 'timeout' | 'error' | 'skipped'
  error: string | null
  /** `content-type` and the `x-orb-*` headers as sent. */
  requestHeaders: Record<string, string>
  notice: DeliveryNotice | null
}

/** Every app's delivery log (ORB-A11: the API does not expose it; the control server does), at most LOG_LIMIT each. */
export class DeliveryLog {
  #logs = new Map<string, DeliveryRecord[]>()

  /** Adds a finished (or skipped) attempt to the app's log, dropping its oldest past the limit. */
  record (appId: string, record: DeliveryRecord): void {
    let log = this.#logs.get(appId)
    if (log === undefined) this.#logs.set(appId, log = [])
    log.push(record)
    if (log.length > LOG_LIMIT) log.splice(0, log.length - LOG_LIMIT)
  }

  /** The app's log, oldest first (in the order attempts finished), as copies. */
  list (appId: string): DeliveryRecord[] {
    return (this.#logs.get(appId) ?? []).map((r) => ({
      ...r,
      requestHeaders: { ...r.requestHeaders },
      notice: r.notice === null ? null : { ...r.notice }
    }))
  }

  /** Forgets every log (a reset). */
  clear (): void {
    this.#logs = new Map()
  }
}

/** Answers a typed command inline with `content`; throws the interaction's error when it cannot. */
export type Answer = (content: string) => void

/**
 * ORB-097, ORB-098, ORB-A13: what a 2xx reply's `notice` said and what came of it; null when it holds none. On a
 * typed command it is an inline answer (`answer`, which throws the interaction's 409 or 410 as `/respond` would;
 * undefined when the app is gone); on any other event it is ignored. The reply came within the attempt's 4 s, or
 * the attempt would have timed out.
 */
export function noticeOf (body: string, type: EventType, answer: Answer | undefined): DeliveryNotice | null {
  let parsed: unknown
  try {
    parsed = JSON.parse(body)
  } catch {
    return null
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return null
  const content = (parsed as { notice?: unknown }).notice
  if (typeof content !== 'string') return null
  if (type !== 'application_command') return { content, result: 'ignored' }
  // ORB-066: no more inline than `/respond` allows.
  const limit = ORB_LIMITS.answerLength
  if ([...content].length > limit) return { content: content.slice(0, limit), result: 'too-long' }
  if (answer === undefined) return { content, result: 'ignored' }
  try {
    answer(content)
    return { content, result: 'answered' }
  } catch (err) {
    if (err instanceof OrbError && err.kind === 'conflict') return { content, result: 'answered-already' }
    if (err instanceof OrbError && err.kind === 'gone') return { content, result: 'late' }
    return { content, result: 'ignored' }
  }
}
