import { ORB_A03_WINDOWS, ORB_LIMITS } from '../../spec/orb.js'
import { orbErrors } from '../errors.js'
import type { AppState, StoredCommand } from '../records.js'
import type { OrbRoute, RouteCall, RouteContext } from '../route.js'
import type { OrbStore } from '../store.js'
import type { WindowLimit } from '../throttle.js'
import type { Right } from '../world.js'

/** ORB-060, ORB-A03: command syncs a minute per app. */
const SYNCS = ORB_A03_WINDOWS.syncsPerApp

// ORB-058, ORB-A15: the spec's pattern for command names, which option names follow too.
const NAME = ORB_LIMITS.commandName

/** One command as `PUT` receives it; the spec's schema has already checked its types and lengths. */
interface CommandInput {
  name: string
  description?: string
  right?: Right
  options?: Array<{ name: string, description?: string, optional?: boolean }>
}

/** `GET`, `PUT` and `DELETE /api/bot/v1/commands` (ORB-055..065; ORB-A07: a valid token is all they need). */
export function commandRoutes ({ store, rateLimit }: RouteContext): OrbRoute[] {
  return [
    {
      method: 'GET',
      path: '/api/bot/v1/commands',
      auth: 'bot',
      handler: ({ app }: RouteCall) => listed(app)
    },
    {
      method: 'PUT',
      path: '/api/bot/v1/commands',
      auth: 'bot',
      handler: ({ app, body }: RouteCall<unknown, { commands: CommandInput[] }>) => {
        checkCommands(store, body.commands)
        // ORB-A03: refused syncs (400 above, 429 here) do not count against the window.
        if (rateLimit === 'on') {
          const verdict = store.throttles.take(syncLimits(app.id))
          if (!verdict.ok) throw orbErrors.throttled(verdict.retryAfterSeconds, `${SYNCS.limit} command syncs a minute`)
        }
        replaceGlobals(store, app, body.commands)
        return listed(app)
      }
    },
    {
      method: 'DELETE',
      path: '/api/bot/v1/commands',
      auth: 'bot',
      handler: ({ app, query }: RouteCall<{ name: string }>) => {
        // ORB-064, ORB-A15: only a global command can be removed; community ones are not the API's to touch.
        const index = app.commands.findIndex((c) => c.community === null && c.name === query.name)
        if (index < 0) throw orbErrors.notFound(`No global command named ${JSON.stringify(query.name)} for this app`)
        app.commands.splice(index, 1)
        return { ok: true, name: query.name }
      }
    }
  ]
}

/** The window a `PUT` by `app` counts against (ORB-A03). */
export function syncLimits (app: string): WindowLimit[] {
  return [{ key: `commands:sync:${app}`, limit: SYNCS.limit, windowMs: SYNCS.windowMs }]
}

/** ORB-055, ORB-062: the calling app's commands, global and community ones, in registration order. */
function listed (app: AppState): { commands: Array<Record<string, unknown>> } {
  return { commands: app.commands.map(rendered) }
}

/** ORB-055: a command as the API shows it. */
function rendered (command: StoredCommand): Record<string, unknown> {
  return {
    id: command.id,
    name: command.name,
    description: command.description,
    args: command.args.map((arg) => ({ ...arg })),
    right: command.right,
    community: command.community
  }
}

/** ORB-058, ORB-059, ORB-A15: what the schema cannot say about a list; the first fault is a 400. */
function checkCommands (store: OrbStore, commands: readonly CommandInput[]): void {
  const seen = new Set<string>()
  commands.forEach((command, i) => {
    const at = `body.commands[${i}]`
    if (store.reservedCommands.has(command.name)) throw orbErrors.bad(`${at}.name ${JSON.stringify(command.name)} belongs to the room player or the administration commands`)
    if (seen.has(command.name)) throw orbErrors.bad(`${at}.name ${JSON.stringify(command.name)} is given twice`)
    seen.add(command.name)
    checkOptions(at, command.options ?? [])
  })
}

/** ORB-A15: option names follow the command-name pattern and are unique; required options come first. */
function checkOptions (at: string, options: NonNullable<CommandInput['options']>): void {
  const seen = new Set<string>()
  let optionalSeen = false
  options.forEach((option, j) => {
    const where = `${at}.options[${j}]`
    if (!NAME.test(option.name)) throw orbErrors.bad(`${where}.name must match ${NAME.source}`)
    if (seen.has(option.name)) throw orbErrors.bad(`${where}.name ${JSON.stringify(option.name)} is given twice`)
    seen.add(option.name)
    if (option.optional === true) optionalSeen = true
    else if (optionalSeen) throw orbErrors.bad(`${where} is required but follows an optional option; required options come first`)
  })
}

/**
 * ORB-056, ORB-A15: the app's global commands become exactly `commands`, in the order given; community commands stay
 * where they were, ahead of them. Ids are kept per name (store.command), even for a name removed and given back.
 */
function replaceGlobals (store: OrbStore, app: AppState, commands: readonly CommandInput[]): void {
  const merges = store.faults.has('sync-merges')
  const kept = app.commands.filter((c) => c.community !== null || (merges && !commands.some((n) => n.name === c.name)))
  // Only the CommandInput fields: a `community` sent in the body is an unknown field, ignored (ORB-A23).
  const globals = commands.map(({ name, description, right, options }) =>
    store.command(app, { name, description, right, options, community: null }))
  app.commands = [...kept, ...globals]
}
