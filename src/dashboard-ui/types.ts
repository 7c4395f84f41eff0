// The shapes of a dashboard frame (GET /control/dashboard), as far as the page reads them. The server's OpenAPI
// document and its state routes are the reference; fields the page does not draw are left out.

export interface ClockState { mode: 'real' | 'virtual', now: number, iso: string, pendingTimers: number }

export interface Palette {
  baseHue: number
  resolvedBaseHue: number
  waitingHue: number
  colours: Record<string, string>
  sources: Record<string, 'generated' | 'explicit' | 'fallback' | 'fixed'>
}

export interface QuestionItem {
  text: string
  header?: string
  multiSelect: boolean
  options: Array<{ label: string, description?: string }>
}

export interface Session {
  id: string
  title: string
  activity: string
  project: string | null
  host: string
  toolKind: string | null
  toolLabel: string | null
  message: { text?: string } | null
  statusDetail: string | null
  subagentCount: number
  background: boolean
  offline: boolean
  approval: { id: string, toolName?: string, commandSummary?: string, detail?: string } | null
  question: { id: string, questions: QuestionItem[] } | null
  offlineAt: string | null
  removeAt: string | null
}

export interface PendingRequest {
  id: string
  kind: 'approval' | 'question'
  sessionId: string
  expiresAt: number
  decided: boolean
}

export interface Adapter {
  id: string
  user: { approval: string, keypad: boolean, baseHue: number | null, anchorAttention: boolean }
  enabled: boolean
  reason?: string
  keypadDecisions: boolean
  lease: { startedAt: string, lastActivity: string, silenceDeadline: string } | null
  registration: { name: string, capabilities: string[], palette: { baseHue: number } } | null
  badge: string | null
  palette: Palette | null
  warnings: string[]
  paletteNotes: string[]
  icon: { 28: string, 56: string } | null
  sessions: Session[]
  requests: PendingRequest[]
  /** Null until the adapter has an event log (it polled, or something was queued for it). */
  events: {
    lastSequence: number,
    acknowledged: number,
    highestDelivered: number,
    pollHeld: boolean,
    queued: Array<{ sequence: number, type: string }>
  } | null
}

export interface HueArc { from: number, to: number }

export interface OrbtileFrame {
  api: { enabled: boolean, listening: boolean }
  discovery: { socketPath: string, discoveryPath: string, basePath: string }
  restarts: number
  tokenRegenerations: number
  adapters: Adapter[]
  wheel: { reserved: HueArc, attention: HueArc, calm: HueArc }
}

export interface OrbApp {
  id: string,
  name: string,
  token: string,
  scopes: string[],
  member: string,
  listed: boolean,
  endpoint: string | null,
  installs: number
}
export interface Channel { id: string, name: string, kind: 'text' | 'voice', readOnly: boolean, capacity?: number }
export interface Community {
  id: string,
  name: string,
  channels: Channel[],
  members: Array<{ id: string, name: string, rights: string[] }>
}
export interface Message {
  id: string | number,
  channel: string,
  author: { id: string, name: string, bot: boolean },
  body: string | null,
  encrypted: boolean,
  created: number,
  replyTo: number | null,
  mentions: string[]
}
export interface Command {
  id: string,
  name: string,
  description: string,
  right: string,
  community: string | null,
  args: Array<{ name?: string, description?: string, optional?: boolean }>
}
export interface Attempt {
  delivery: string,
  event: string,
  type: string,
  attempt: number,
  url: string,
  at: number,
  status: number | null,
  durationMs: number,
  outcome: string,
  error: string | null
}
export interface Install {
  server: string,
  app: string,
  role: { name: string, rights: string[] },
  channels: string[],
  hidden: string[]
}

export interface OrbFrame {
  apps: OrbApp[]
  servers: Community[]
  installs: Install[]
  chain: { available: boolean }
  voice: {
    server: boolean,
    url: string | null,
    channels: Array<{
      channel: string,
      server: string,
      capacity: number,
      call: string | null,
      participants: Array<{ id: string, bot: boolean, speaking: boolean, deadline: number | null }>
    }>
  }
  webhooks: { inFlight: number, queued: number, retriesScheduled: number }
  interactions: Array<Record<string, unknown> & {
    id?: string,
    app?: string,
    expired?: boolean,
    answer: { content?: string, via?: string } | null,
    command?: { name?: string }
  }>
  events: Record<string, { queued: number, lastCursor: number, polls: number }>
  music: { players: Array<Record<string, unknown>> }
  messages: Record<string, Message[]>
  commands: Record<string, Command[]>
  deliveries: Record<string, { total: number, newest: Attempt[] }>
  throttles: Array<{ key: string, limit: number, windowMs: number, used: number, freesAt: number }>
}

export interface JudgeFrame {
  requests: number
  since: string
  checks: Array<{
    id: string,
    title: string,
    level: string,
    verdict: string,
    exercised: number,
    violationCount: number,
    expected?: string,
    actual?: string
  }>
}

export interface Frame {
  clock: ClockState
  orbtile: OrbtileFrame | null
  orb: OrbFrame | null
  judge: JudgeFrame | null
}
