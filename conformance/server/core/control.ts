import { request } from 'node:http'
import { TargetError } from './errors.js'

/** The answer of a control call. */
export interface ControlReply { status: number, json: any }

/**
 * The user's side of a target that offers orbtest's control API (`--control <url>`): allow an adapter, switch keypad
 * decisions on, tap, decide, move a virtual clock. Cases that need it are skipped without it.
 */
export class ControlClient {
  readonly url: string
  /** What every view of one control API shares: its clock mode, and the messages members posted through it. */
  readonly #shared: { virtual?: boolean; memberMessages: number[] }
  readonly #guard: () => void

  constructor (
    url: string,
    shared: { virtual?: boolean; memberMessages: number[] } = { memberMessages: [] },
    guard: () => void = () => {}
  ) {
    this.url = url.replace(/\/+$/, '')
    this.#shared = shared
    this.#guard = guard
  }

  /** A view for one case: `guard` runs before each call (it throws once the case is halted). */
  scoped (guard: () => void): ControlClient {
    return new ControlClient(this.url, this.#shared, guard)
  }

  async call (method: string, path: string, body?: unknown): Promise<ControlReply> {
    this.#guard()
    const target = new URL(`${this.url}${path}`)
    const payload = body === undefined ? undefined : JSON.stringify(body)
    return new Promise((resolve, reject) => {
      const req = request(
        {
          host: target.hostname,
          port: target.port,
          method,
          path: target.pathname + target.search,
          headers: {
            host: target.host,
            ...(payload === undefined
              ? {}
              : { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(payload)) })
          }
        },
        (res) => {
          let text = ''
          res.on('data', (chunk) => {
            text += chunk
          })
          res.on('end', () => {
            let json: unknown
            try {
              json = JSON.parse(text)
            } catch {
              json = undefined
            }
            resolve({ status: res.statusCode ?? 0, json })
          })
        }
      )
      req.on('error', reject)
      req.end(payload)
    })
  }

  /** Fails with the control API's own words when a call that must work does not. */
  async must (method: string, path: string, body?: unknown): Promise<any> {
    const reply = await this.call(method, path, body)
    if (reply.status !== 200) throw new Error(`control ${method} ${path} answered ${reply.status}: ${JSON.stringify(reply.json)}`)
    return reply.json
  }

  /** The user allows the adapter and sets keypad decisions (works before the id ever registers). */
  user (
    adapterId: string,
    change: { allowed?: boolean; keypad?: boolean; baseHue?: number | null; anchorAttention?: boolean }
  ): Promise<any> {
    return this.must('PUT', `/control/orbtile/adapters/${encodeURIComponent(adapterId)}/user`, change)
  }

  /** The fake forgets an id it no longer serves (its user settings): what a case leaves behind, cleaned. */
  forget (adapterId: string): Promise<ControlReply> {
    return this.call('DELETE', `/control/orbtile/adapters/${encodeURIComponent(adapterId)}`)
  }

  adapter (adapterId: string): Promise<any> {
    return this.must('GET', `/control/orbtile/adapters/${encodeURIComponent(adapterId)}`)
  }

  tap (adapterId: string, sessionId: string): Promise<ControlReply> {
    return this.call(
      'POST',
      `/control/orbtile/adapters/${encodeURIComponent(adapterId)}/sessions/${encodeURIComponent(sessionId)}/tap`
    )
  }

  decide (
    adapterId: string,
    requestId: string,
    answer: { decision?: 'allow' | 'deny'; picks?: number[][] }
  ): Promise<ControlReply> {
    return this.call(
      'POST',
      `/control/orbtile/adapters/${encodeURIComponent(adapterId)}/requests/${encodeURIComponent(requestId)}/decide`,
      answer
    )
  }

  // The fake Orb's people (ORB-A04): members post and type commands, the developer sets the endpoint, rotates the
  // token and sends test events, admins install and uninstall.

  /** Ids of the messages members posted through this control API in the run: the run removes them when it ends. */
  get memberMessages (): number[] {
    return this.#shared.memberMessages
  }

  /** A member posts in a text channel; the answer names the events it made. */
  async memberPost (post: {
    server: string
    channel: string
    member: string
    content: string
    encrypted?: boolean
    replyTo?: number
  }): Promise<any> {
    const posted = await this.must('POST', '/control/orb/messages', post)
    if (Number.isInteger(posted?.id)) this.memberMessages.push(posted.id)
    return posted
  }

  /** A member types an app's command; the answer names the event (or the call fails with the reason none was made). */
  invoke (invocation: {
    server: string
    channel: string
    member: string
    name: string
    options?: Record<string, string>
    app?: string
  }): Promise<ControlReply> {
    return this.call('POST', '/control/orb/commands/invoke', invocation)
  }

  testEvent (app: string): Promise<{ event: string }> {
    return this.must('POST', `/control/orb/apps/${encodeURIComponent(app)}/test-event`)
  }

  /** `count` test events in one call, their ids oldest first (one call each where the target answers no `events`). */
  async testEvents (app: string, count: number): Promise<string[]> {
    const path = `/control/orb/apps/${encodeURIComponent(app)}/test-event`
    const reply = await this.must('POST', path, { count }) as { events?: unknown }
    if (Array.isArray(reply.events) && reply.events.length === count) return reply.events as string[]
    const made: string[] = []
    for (let i = 0; i < count; i++) made.push((await this.testEvent(app)).event)
    return made
  }

  setEndpoint (app: string, url: string | null): Promise<any> {
    return this.must('PUT', `/control/orb/apps/${encodeURIComponent(app)}/endpoint`, { url })
  }

  deliveries (app: string): Promise<{ deliveries: any[] }> {
    return this.must('GET', `/control/orb/apps/${encodeURIComponent(app)}/deliveries`)
  }

  rotateToken (app: string): Promise<{ app: string, token: string }> {
    return this.must('POST', `/control/orb/apps/${encodeURIComponent(app)}/rotate-token`)
  }

  install (server: string, app: string, spec: Record<string, unknown>): Promise<any> {
    return this.must('PUT', `/control/orb/servers/${encodeURIComponent(server)}/apps/${encodeURIComponent(app)}`, spec)
  }

  uninstall (server: string, app: string): Promise<ControlReply> {
    return this.call('DELETE', `/control/orb/servers/${encodeURIComponent(server)}/apps/${encodeURIComponent(app)}`)
  }

  setChain (available: boolean): Promise<any> {
    return this.must('PUT', '/control/orb/chain', { available })
  }

  setVoice (change: { server?: boolean, capacity?: Record<string, number> }): Promise<any> {
    return this.must('PUT', '/control/orb/voice', change)
  }

  orbState (): Promise<any> {
    return this.must('GET', '/control/orb/state')
  }

  /** Whether the target's clock is virtual (time moves only when advanced). */
  async virtualClock (): Promise<boolean> {
    this.#shared.virtual ??= (await this.must('GET', '/control/clock')).mode === 'virtual'
    return this.#shared.virtual
  }

  /** Moves a virtual clock; due timers fire in order. */
  advance (ms: number): Promise<any> {
    return this.must('POST', '/control/clock/advance', { ms })
  }
}

/** Fails with a TargetError unless `control` answers as orbtest's control API does. */
export async function checkControl (control: ControlClient): Promise<void> {
  const clock = await control.call('GET', '/control/clock').catch((err: Error) => {
    throw new TargetError(`the control API at ${control.url} cannot be reached: ${(err as NodeJS.ErrnoException).code ?? err.message}`)
  })
  if (clock.status !== 200) {
    throw new TargetError(`${control.url} does not look like orbtest's control API (GET /control/clock answered ${clock.status})`)
  }
}
