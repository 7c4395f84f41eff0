import type { DeliveryRecord } from './deliveries.js'
import { rendered } from './routes/messages.js'
import type { OrbServices } from './services.js'

/**
 * DASH-D05: how many of the newest messages per text channel, and attempts per app, a frame carries; the page
 * fetches an app's whole log (GET /control/orb/apps/{app}/deliveries) when asked.
 */
export const DASHBOARD_MESSAGES = 50
export const DASHBOARD_ATTEMPTS = 20

/** What the dashboard shows of the fake Orb beside `GET /control/orb/state`. */
export interface OrbDashboardView {
  /** Per text channel, its newest messages as bots read them, oldest first; removed ones are left out. */
  messages: Record<string, Array<Record<string, unknown>>>
  /** Per app, the commands it registered (global ones have `community` null), in registration order. */
  commands: Record<string, Array<{
    id: string,
    name: string,
    description: string,
    right: string,
    community: string | null,
    args: Array<Record<string, unknown>>
  }>>
  /** Per app with an endpoint or a log: how many attempts its log holds, and the newest, oldest first. */
  deliveries: Record<string, { total: number, newest: DeliveryRecord[] }>
  /** ORB-031, ORB-A03: every throttle window holding events now. */
  throttles: ReturnType<OrbServices['store']['throttles']['windows']>
}

/**
 * The parts of the fake Orb a person at the dashboard reads and the state route does not carry: the channels'
 * conversations, the apps' commands and delivery logs, the throttle windows. Bounded, so that a long-running fake's
 * dashboard frame stays small.
 */
export function orbDashboardView ({ store, webhooks }: OrbServices): OrbDashboardView {
  const messages: OrbDashboardView['messages'] = {}
  for (const channel of store.channels.values()) {
    if (channel.kind !== 'text') continue
    const shown = []
    for (let i = channel.messages.length - 1; i >= 0 && shown.length < DASHBOARD_MESSAGES; i--) {
      const message = store.messages.get(channel.messages[i]!)
      if (message !== undefined && !message.deleted) shown.push(rendered(message))
    }
    messages[channel.id] = shown.reverse()
  }
  const commands: OrbDashboardView['commands'] = {}
  const deliveries: OrbDashboardView['deliveries'] = {}
  for (const app of store.apps.values()) {
    commands[app.id] = app.commands.map((c) => ({
      id: c.id, name: c.name, description: c.description, right: c.right, community: c.community, args: c.args
    }))
    const log = webhooks.deliveries(app.id)
    if (log.length > 0 || app.endpoint !== null) {
      deliveries[app.id] = { total: log.length, newest: log.slice(-DASHBOARD_ATTEMPTS) }
    }
  }
  return { messages, commands, deliveries, throttles: store.throttles.windows() }
}
