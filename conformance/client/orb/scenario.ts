import fc from 'fast-check'
import type { Tour } from '../core/engine.js'
import { windowMs } from '../core/windows.js'
import { DELIVERY_KINDS, EVENT_TYPES, type DeliveryKind, type EventType } from './webhook-kit.js'

/** Text channels of the demo world a member talks in (ch_news is read-only, for the bot's posts to avoid). */
export const TALK_CHANNELS = ['ch_general', 'ch_staff', 'ch_vault'] as const
export type TalkChannel = typeof TALK_CHANNELS[number]

/** One thing the world does, at `atMs` from the bot's start. */
export type Step = { atMs: number } & (
  | { actor: 'member', name: 'mention', channel: TalkChannel, encrypted: boolean }
  | { actor: 'member', name: 'reply', channel: TalkChannel }
  | { actor: 'member', name: 'command', channel: TalkChannel, command?: string, options?: Record<string, string> }
  | { actor: 'developer', name: 'test-event' }
  | { actor: 'developer', name: 'rotate' }
  | { actor: 'admin', name: 'allow', channels: TalkChannel[] }
  | { actor: 'admin', name: 'uninstall' }
  | { actor: 'platform', name: 'chain', available: boolean }
  | { actor: 'wire', name: 'slow', ms: number }
  /** `times` writes in a row (1 by default): a retry too early then meets a 429 on a connection it used. */
  | { actor: 'wire', name: 'throttle', retryAfter: number, times?: number }
  | { actor: 'wire', name: 'late-command', ms: number }
  | { actor: 'wire', name: 'cut-poll' | 'repeat' }
  /** OBC-09: with `afterCommandMs`, armed: the kill comes that long after the bot next fetches a typed command. */
  | { actor: 'harness', name: 'restart', afterCommandMs?: number }
  | { actor: 'wire', name: 'deliver', kind: DeliveryKind, type: EventType, encrypted: boolean }
  | { actor: 'wire', name: 'duplicate' }
)

/** The world around one bot for one scenario: how it gets its events, and a schedule of steps. */
export interface Scenario {
  mode: 'events' | 'webhook'
  durationMs: number
  steps: Step[]
  /**
   * OBC-08: once the bot's first voice join succeeds, the scenario ends this long after it, however late the join came
   * (`durationMs` ends it only while the bot has taken no seat).
   */
  seatedMs?: number
}

/** OBC-04: deliveries and events the suite listens after are this far apart. */
export const SPACING_MS = windowMs('spacing')

const mention = (atMs: number, channel: TalkChannel, encrypted = false): Step =>
  ({ atMs, actor: 'member', name: 'mention', channel, encrypted })
const command = (atMs: number, channel: TalkChannel = 'ch_general'): Step => ({
  atMs,
  actor: 'member',
  name: 'command',
  channel
})
/** A member types /verify for a wallet with no evidence in the demo world (passport: count 0, holds false). */
const verify = (atMs: number): Step => ({
  atMs,
  actor: 'member',
  name: 'command',
  channel: 'ch_general',
  command: 'verify',
  options: { address: NO_PASSPORT }
})
export const NO_PASSPORT = '0x3333333333333333333333333333333333333333'
const deliver = (atMs: number, kind: DeliveryKind, type: EventType = 'message.mention', encrypted = false): Step =>
  ({ atMs, actor: 'wire', name: 'deliver', kind, type, encrypted })

/** ORB-077: tour:voice keeps the bot seated this long after it joined, past the 90 s no gap may reach. */
export const VOICE_TOUR_MS = windowMs('voice-seat')
/** OBC-08: how long tour:voice waits for the bot to take its seat (a loaded machine may play the /join late). */
const JOIN_ALLOWANCE_MS = windowMs('seat-allowance')

/** tour:voice: a member types /join, and the bot is watched for 93 s from its seat on (OBC-08). */
export const VOICE_TOUR: Scenario = {
  mode: 'events',
  durationMs: 1500 + JOIN_ALLOWANCE_MS,
  seatedMs: VOICE_TOUR_MS,
  steps: [{ atMs: 1500, actor: 'member', name: 'command', channel: 'ch_general', command: 'join' }]
}

const ENCRYPTED: Scenario = { mode: 'events', durationMs: 6000, steps: [mention(1500, 'ch_general', true)] }

/** Tours of a bot that fetches its events. */
export const EVENT_TOURS: ReadonlyArray<Tour<Scenario>> = [
  {
    name: 'basic',
    scenario: {
      mode: 'events',
      durationMs: 12_500,
      steps: [
        mention(1500, 'ch_general'),
        command(2800),
        mention(4100, 'ch_staff', true),
        { atMs: 5400, actor: 'developer', name: 'test-event' },
        mention(6700, 'ch_vault'),
        command(8000, 'ch_staff'),
        { atMs: 9300, actor: 'member', name: 'reply', channel: 'ch_general' }
      ]
    }
  },
  {
    name: 'late',
    scenario: {
      mode: 'events',
      durationMs: 20_000,
      steps: [{ atMs: 1000, actor: 'wire', name: 'late-command', ms: 6500 }, command(1500)]
    }
  },
  {
    name: 'throttle',
    scenario: {
      mode: 'events',
      durationMs: 12_000,
      steps: [
        { atMs: 1000, actor: 'wire', name: 'throttle', retryAfter: 3, times: 2 },
        mention(1500, 'ch_general'),
        mention(5500, 'ch_staff')
      ]
    }
  },
  {
    // Killed 0.7 s after a command reached it: a bot that saved the cursor before handling has lost the command.
    name: 'restart',
    scenario: {
      mode: 'events',
      durationMs: 12_000,
      steps: [
        { atMs: 1400, actor: 'harness', name: 'restart', afterCommandMs: 700 },
        command(1500),
        command(4500, 'ch_staff'),
        { atMs: 6000, actor: 'wire', name: 'cut-poll' },
        mention(7500, 'ch_general')
      ]
    }
  },
  {
    // The same wallet checked with the chain up (holds false), then down (holds null), then up again (ORB-088).
    name: 'passport',
    scenario: {
      mode: 'events',
      durationMs: 10_000,
      steps: [
        verify(1500),
        { atMs: 3000, actor: 'platform', name: 'chain', available: false },
        verify(3500),
        { atMs: 7000, actor: 'platform', name: 'chain', available: true }
      ]
    }
  },
  {
    // The community and the developer change things under the bot: replies to its writes come slowly, an admin
    // takes a channel off its allow-list, the developer rotates its token (and restarts it with the new one), and
    // at last an admin uninstalls it. It must stay up, answer where it still may, and act on nothing twice.
    name: 'changes',
    scenario: {
      mode: 'events',
      durationMs: 14_000,
      steps: [
        { atMs: 1000, actor: 'wire', name: 'slow', ms: 2500 },
        command(1500),
        mention(2800, 'ch_general'),
        { atMs: 5500, actor: 'admin', name: 'allow', channels: ['ch_general', 'ch_staff'] },
        mention(6000, 'ch_vault'),
        mention(6500, 'ch_staff'),
        { atMs: 8000, actor: 'developer', name: 'rotate' },
        command(9500, 'ch_staff'),
        { atMs: 12_000, actor: 'admin', name: 'uninstall' }
      ]
    }
  },
  // A member asks the bot into a voice channel and leaves it there for 93 s: its heartbeats must never be 90 s
  // apart (ORB-077). Long: played only when --tour names it.
  { name: 'voice', long: true, scenario: VOICE_TOUR },
  {
    // A command answered, then delivered again: to the same process, and, after a restart, to the next one. It must
    // not be answered twice (ORB-048).
    name: 'repeat',
    scenario: {
      mode: 'events',
      durationMs: 11_000,
      steps: [
        command(1500),
        // The repeat rides on the next reply: the mention after it ends the long poll that carries it.
        { atMs: 3500, actor: 'wire', name: 'repeat' },
        mention(3700, 'ch_staff'),
        { atMs: 5000, actor: 'harness', name: 'restart' },
        { atMs: 6500, actor: 'wire', name: 'repeat' },
        mention(7500, 'ch_general')
      ]
    }
  },
  // An encrypted mention, beside a twin given the same mention in clear: a bot that exits after the one and not the
  // other crashed on body null (ORB-036).
  { name: 'encrypted', scenario: ENCRYPTED, twin: { ...ENCRYPTED, steps: [mention(1500, 'ch_general', false)] } }
]

const ENCRYPTED_DELIVERY: Scenario = {
  mode: 'webhook',
  durationMs: 5000,
  steps: [deliver(1500, 'genuine', 'message.mention', true)]
}

/** Tours of a bot with an endpoint URL: genuine deliveries of every type, then every forgery, then a retry. */
export const WEBHOOK_TOURS: ReadonlyArray<Tour<Scenario>> = [
  // An encrypted mention, beside a twin delivered the same mention in clear (ORB-036).
  { name: 'encrypted', scenario: ENCRYPTED_DELIVERY, twin: { ...ENCRYPTED_DELIVERY, steps: [deliver(1500, 'genuine', 'message.mention', false)] } },
  {
    name: 'deliveries',
    scenario: {
      mode: 'webhook',
      durationMs: 9000,
      steps: [
        deliver(1500, 'genuine', 'app.test'),
        deliver(1500 + SPACING_MS, 'genuine', 'message.mention'),
        deliver(1500 + 2 * SPACING_MS, 'genuine', 'application_command'),
        deliver(1500 + 3 * SPACING_MS, 'genuine', 'message.mention', true),
        deliver(1500 + 4 * SPACING_MS, 'genuine-rotated', 'application_command')
      ]
    }
  },
  {
    name: 'attack',
    scenario: {
      mode: 'webhook',
      durationMs: 20_000,
      steps: [
        ...(Object.keys(DELIVERY_KINDS) as DeliveryKind[])
          .filter((k) => !k.startsWith('genuine') && k !== 'replayed')
          .map((kind, i) => deliver(1500 + i * SPACING_MS, kind)),
        deliver(1500 + 8 * SPACING_MS, 'replayed'),
        deliver(1500 + 8 * SPACING_MS + 4500, 'genuine', 'message.mention'),
        { atMs: 1500 + 8 * SPACING_MS + 4500 + SPACING_MS, actor: 'wire', name: 'duplicate' }
      ]
    }
  }
]

const channel = fc.constantFrom(...TALK_CHANNELS)
const is = <T extends string>(value: T): fc.Arbitrary<T> => fc.constant(value)
type Unplaced = Omit<Step, 'atMs'>

const eventStep = fc.oneof(
  { weight: 4, arbitrary: fc.record({ actor: is('member'), name: is('mention'), channel, encrypted: fc.boolean() }) },
  { weight: 3, arbitrary: fc.record({ actor: is('member'), name: is('command'), channel }) },
  { weight: 1, arbitrary: fc.record({ actor: is('member'), name: is('reply'), channel }) },
  { weight: 1, arbitrary: fc.record({ actor: is('developer'), name: is('test-event') }) },
  {
    weight: 1,
    arbitrary: fc.record({ actor: is('wire'), name: is('throttle'), retryAfter: fc.integer({ min: 1, max: 2 }) })
  },
  { weight: 1, arbitrary: fc.record({ actor: is('wire'), name: fc.constantFrom('cut-poll', 'repeat') }) },
  { weight: 1, arbitrary: fc.record({ actor: is('harness'), name: is('restart') }) },
  { weight: 1, arbitrary: fc.record({ actor: is('developer'), name: is('rotate') }) },
  { weight: 1, arbitrary: fc.record({ actor: is('platform'), name: is('chain'), available: fc.boolean() }) },
  {
    weight: 1,
    arbitrary: fc.record({
      actor: is('member'),
      name: is('command'),
      channel,
      command: is('verify'),
      options: fc.record({ address: fc.constantFrom(NO_PASSPORT, '0x1111111111111111111111111111111111111111') })
    })
  },
  { weight: 1, arbitrary: fc.record({ actor: is('wire'), name: is('slow'), ms: fc.integer({ min: 500, max: 3000 }) }) }
) as fc.Arbitrary<Unplaced>

const GENUINE: DeliveryKind[] = ['genuine', 'genuine-rotated']
const FORGED: DeliveryKind[] = ['wrong-key', 'reserialised', 'tampered', 'stale', 'future', 'unsigned', 'malformed']
const delivery = (kinds: DeliveryKind[]): fc.Arbitrary<Unplaced> => fc.record({
  actor: is('wire'),
  name: is('deliver'),
  kind: fc.constantFrom(...kinds),
  type: fc.constantFrom(...EVENT_TYPES),
  encrypted: fc.boolean()
}) as fc.Arbitrary<Unplaced>

const webhookStep = fc.oneof(
  { weight: 4, arbitrary: delivery(GENUINE) },
  { weight: 3, arbitrary: delivery(FORGED) },
  { weight: 1, arbitrary: fc.record({ actor: is('wire'), name: is('duplicate') }) as fc.Arbitrary<Unplaced> }
)

/** Steps one SPACING_MS apart from 1.5 s, so that what each one causes is told apart (OBC-04). */
function spaced (steps: ReadonlyArray<Omit<Step, 'atMs'>>): Step[] {
  return steps.map((s, i) => ({ ...s, atMs: 1500 + i * SPACING_MS }) as Step)
}

/** Generated scenarios of either mode: up to six steps, and time after the last for its answers. */
export function scenarioArbitrary (mode: Scenario['mode']): fc.Arbitrary<Scenario> {
  return fc.array(mode === 'events' ? eventStep : webhookStep, { minLength: 1, maxLength: 6 }).map((steps) => {
    const placed = spaced(steps)
    return { mode, durationMs: placed.at(-1)!.atMs + 4000, steps: placed }
  })
}

export function describeScenario (s: Scenario): string {
  const steps = s.steps.map((step) => {
    switch (step.name) {
      case 'mention': return `${step.encrypted ? 'encrypted ' : ''}mention in ${step.channel}`
      case 'command': return `${step.command === undefined ? 'command' : `/${step.command}`} in ${step.channel}`
      case 'reply': return `a reply to the bot in ${step.channel}`
      case 'chain': return `chain ${step.available ? 'back' : 'unavailable'}`
      case 'allow': return `allow-list ${step.channels.join(' ')}`
      case 'slow': return `slow replies (${step.ms} ms)`
      case 'throttle': return `429 (Retry-After ${step.retryAfter})`
      case 'late-command': return `a command delivered ${step.ms / 1000} s late`
      case 'deliver': return `${step.kind} ${step.type}${step.encrypted ? ' (encrypted)' : ''}`
      case 'restart': return step.afterCommandMs === undefined ? 'restart' : `restart ${step.afterCommandMs / 1000} s after a fetched command`
      default: return step.name
    }
  })
  const length = s.seatedMs === undefined
    ? `${(s.durationMs / 1000).toFixed(1)} s`
    : `${(s.seatedMs / 1000).toFixed(1)} s after the bot's voice join`
  return `${s.mode} mode, ${length}: ${steps.join(', ') || 'nothing happens'}`
}
