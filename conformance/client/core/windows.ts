import {
  ORB_A03_WINDOWS, ORB_A11_DELIVERY, ORB_A14_MEMBER_WAIT_MS, ORB_PROSE_LIMITS
} from '../../../src/spec/orb.js'
import { LIMITS } from '../../../src/spec/orbtile.js'

/**
 * Every time window, count and threshold the client checks and their scenarios use, in one table: its value and
 * where it comes from. docs/judging.md prints it (scripts/judging-doc.ts), with the checks that cite each row. A
 * spec row's number is the spec module's (src/spec/) where that module holds it, so that the fake and the judge
 * read one value.
 *
 * The kind of a row says what a finding that rests on it can be:
 * - `spec`: a number of the spec itself. A MUST broken beyond it (and beyond the judge's measurement error) fails.
 * - `decision`: a bound orbtest chose where the spec names none, generous for any correct client. A finding that
 *   rests on it is non-strict: it fails the run only with --strict.
 * - `excuse`: a tolerance that only ever spares the client: what falls inside it is inconclusive, never a failure.
 * - `scenario`: how a scenario is paced (when steps come, how long it lasts); it judges nothing by itself.
 */
export type WindowKind = 'spec' | 'decision' | 'excuse' | 'scenario'

export interface Window {
  kind: WindowKind
  /** The value as a person reads it. */
  value: string
  /** Where the number comes from: the spec's words, or why it is generous for any correct client. */
  from: string
  /** The number the code uses (milliseconds for a time, else a count), when the row is a constant. */
  n?: number
  /** The numbers the code uses when the row holds more than one (the ends of an arc, a length's bounds), by name. */
  bounds?: Readonly<Record<string, number | readonly number[]>>
}

export const WINDOWS = {
  'ttl-seconds': {
    kind: 'spec',
    value: "the session's ttlSeconds",
    from: 'SessionUpdate.ttlSeconds: an update or heartbeat more often than every ttlSeconds (OT-113)'
  },
  'ttl-default': {
    kind: 'spec',
    value: '120 s',
    from: 'SessionUpdate.ttlSeconds: a session that names none has 120 (OT-112)',
    n: 120_000
  },
  'orbtile-rate': {
    kind: 'spec',
    value: '20 requests a second, burst 60',
    from: 'limits.requestsPerSecond and limits.burst: more than 60 + 20·t requests in any t seconds (OT-026)',
    n: LIMITS.requestsPerSecond,
    bounds: { burst: LIMITS.burst }
  },
  'nonce-length': {
    kind: 'spec',
    value: '16 to 64 hex characters',
    from: 'Info: X-Orbtile-Nonce, 16..64 hex (OT-037, OT-039)',
    bounds: { min: 16, max: 64 }
  },
  'base-hue-turn': {
    kind: 'spec',
    value: 'baseHue 205..215',
    from: 'Palette.baseHue.description: the waiting colour changes direction at 210.9 (OT-074)',
    bounds: { from: 205, to: 215 }
  },
  'attention-arcs': {
    kind: 'spec',
    value: 'calm 115..235; alarm 280 → 0 → 76; clear of 43, 306 and 355 by 5°',
    from: "Palette.attentionHue.description (OT-081); the 5° clearance is orbtest's reading of \"away from\"",
    // The alarm arc runs from 280 through 0 to 76.
    bounds: { calmFrom: 115, calmTo: 235, alarmFrom: 280, alarmTo: 76, waiting: [43, 306, 355], clearance: 5 }
  },
  'orbtile-retry-after': {
    kind: 'decision',
    value: "the 429's Retry-After",
    from: 'OT-A20: the Orbtile spec names no Retry-After; orbtest\'s fake sends one, and a client that waits it out is never early'
  },
  'max-connections': {
    kind: 'decision',
    value: '32 connections open at once',
    from: 'OTC-04: a local API needs one poll and a few writes at a time; 32 is far above that and far below a leak',
    n: 32
  },
  'stop-grace': {
    kind: 'decision',
    value: '10 s from SIGTERM to exit',
    from: "OTC-05, OBC-06: the tightest common process manager's grace (Docker's stop timeout; Kubernetes allows 30 s, systemd 90 s), time enough to finish a long poll in flight",
    n: 10_000
  },
  'start-allowance': {
    kind: 'scenario',
    value: '10 s to the first contact',
    from: "OTC-19, OBC-10: a scenario's steps wait this long for the client's first request; a client that makes none plays the scenario anyway",
    n: 10_000
  },
  'poll-grace': {
    kind: 'scenario',
    value: '3 s after the adapter\'s first session update or batch, when it has not polled',
    from: "OTC-19: tour:app's clock starts at the adapter's first long poll; one that does not poll has settled by then",
    n: 3000
  },
  reconnect: {
    kind: 'decision',
    value: '4 s to reach a moved socket',
    from: 'OTC-12: an adapter that was polling when the app moved has a request to send at once; 4 s is two long polls',
    n: 4000
  },
  'recent-poll': {
    kind: 'decision',
    value: 'a poll open at the move, or one that ended in the 2.5 s before it',
    from: 'OTC-12: who counts as polling when the socket moves (a long poll lasts at most 2 s)',
    n: 2500
  },
  'keypad-wait': {
    kind: 'decision',
    value: 'no decision for 6 s; from 2 s on, never its sessions\' ttlSeconds without a request',
    from: 'OTC-15: an adapter whose requests go undecided 6 s or more must go on making requests at the pace its sessions\' ttlSeconds asks',
    n: 6000
  },
  'keypad-grace': {
    kind: 'decision',
    value: 'the first 2 s of a wait',
    from: 'OTC-15: an adapter may be busy showing its own UI at first; its pace is judged from then on',
    n: 2000
  },
  'stale-ack': {
    kind: 'decision',
    value: 'two later polls, a second after receipt',
    from: 'OTC-01: a discarded decision is acknowledged; one that two later polls leave unacknowledged was not',
    n: 1000
  },
  'stale-ack-polls': {
    kind: 'decision',
    value: 'two polls',
    from: 'OTC-01: the polls, each a second or more after the decision arrived, that must carry its ack',
    n: 2
  },
  'unknown-fields-twin': {
    kind: 'decision',
    value: '3 requests of a kind in the twin, none in the variant',
    from: 'OTC-08: the variant and its control twin play the same world; a kind the twin made 3 times while the variant made none went silent because of the unknown fields',
    n: 3
  },
  answer: {
    kind: 'decision',
    value: '6 s from receipt to the answer',
    from: 'GET /events description: a bot answers within about 6 s (ORB-071); exactly 6 s is orbtest\'s (ORB-A14), timed from when the bot had the command, not from invoked_at',
    n: ORB_A14_MEMBER_WAIT_MS
  },
  fallback: {
    kind: 'decision',
    value: '5 s from a 410 to the post',
    from: 'OBC-05: the spec says to post instead and names no time; 5 s is most of a member\'s patience',
    n: 5000
  },
  notice: {
    kind: 'spec',
    value: '4 s to answer a typed command inline',
    from: 'webhooks.event.description: an application_command is answered within four seconds (ORB-097)',
    n: ORB_A11_DELIVERY.commandTimeoutMs
  },
  'voice-gap': {
    kind: 'spec',
    value: '90 s between voice heartbeats',
    from: 'POST /voice description: there must never be a 90-second gap (ORB-077)',
    n: ORB_PROSE_LIMITS.seatSilenceMs
  },
  'orb-posts': {
    kind: 'spec',
    value: '30 posts a minute, 12 a minute in one channel',
    from: 'POST /messages description (ORB-031, ORB-032)',
    n: ORB_A03_WINDOWS.postsPerApp.limit
  },
  'orb-retry-after': {
    kind: 'spec',
    value: "the 429's Retry-After",
    from: 'components.responses.Throttled: wait Retry-After seconds (ORB-100)'
  },
  quiet: {
    kind: 'decision',
    value: '1 s after a delivery',
    from: 'OBC-04: a write a delivery causes comes at once; deliveries are 1.3 s apart so that each has its own second',
    n: 1000
  },
  owed: {
    kind: 'decision',
    value: '5 s owed to a genuine mention, from its delivery or from the bot\'s answer to it, whichever is later',
    from: 'OBC-13: a slow bot\'s reply to a genuine mention may follow the next delivery; it is the mention\'s, not the next one\'s',
    n: 5000
  },
  'on-its-way': {
    kind: 'excuse',
    value: '250 ms, widened by the judge\'s stalls and the time the client was busy (running or waiting for a CPU), 5 s at most',
    from: 'OTC-11, OTC-25: a request on another connection so soon after a refusal or a new token may have been built before the client read it',
    n: 250
  },
  'timer-slack': {
    kind: 'excuse',
    value: '50 ms',
    from: 'a client\'s timer and ours are not exact: a wait this much short of a bound is not held against it',
    n: 50
  },
  'session-watch': {
    kind: 'scenario',
    value: '15.5 s from the first session',
    from: 'OTC-27: tour:heartbeat outlasts the shortest ttlSeconds (10) by more than the measurement error can be',
    n: 15_500
  },
  spacing: {
    kind: 'scenario',
    value: '1.3 s between deliveries',
    from: 'OBC-04: each delivery has a second of its own for what it makes the bot do',
    n: 1300
  },
  'delivery-timeout': {
    kind: 'scenario',
    value: '5 s for a delivery\'s reply',
    from: 'OBC-17: past ORB-097\'s 4 s for a notice, short of ORB-A11\'s 10 s: a bot that never answers gets a verdict',
    n: 5000
  },
  'signature-tolerance': {
    kind: 'decision',
    value: '5 minutes between t and the bot\'s clock',
    from: 'ORB-A12: a bot refuses a t further than this from its clock, in the past or the future',
    n: 300_000
  },
  'forgery-margin': {
    kind: 'scenario',
    value: 'a minute beyond the tolerance',
    from: 'OBC-01: the stale and future forgeries sit this far outside it, so that a bot\'s clock a little off ours still refuses them',
    n: 60_000
  },
  'voice-seat': {
    kind: 'scenario',
    value: '93 s from the bot\'s voice join',
    from: 'OBC-08: past the 90 s ORB-077 speaks of, however late the seat was taken',
    n: 93_000
  },
  'seat-allowance': {
    kind: 'scenario',
    value: '20 s for a bot to take a seat',
    from: 'OBC-08: tour:voice waits this long after the /join; a bot that takes no seat leaves ORB-077 not exercised',
    n: 20_000
  },
  served: {
    kind: 'excuse',
    value: 'the time the fake spent answering the client\'s other requests in the interval',
    from: 'OTC-28, OBC-16: a client waiting on the fake\'s own replies is late by that time through no fault of its own; a deadline missed by no more is inconclusive'
  },
  'measurement-error': {
    kind: 'excuse',
    value: 'the judge\'s longest stall (over a webhook delivery, a trip the judge makes itself: every stall until the request was written, then the longest) plus the client\'s longest wait for a CPU in the interval, 5 s at most',
    from: 'OTC-17, OTC-25: a finding within the judge\'s own error is inconclusive, never a failure',
    n: 5000
  }
} as const satisfies Record<string, Window>

export type WindowId = keyof typeof WINDOWS

/** A row's number (a constant of the table). */
export function windowMs (id: WindowId): number {
  const row: Window = WINDOWS[id]
  if (row.n === undefined) throw new Error(`window ${id} has no constant`)
  return row.n
}
