import { ORB_LIMITS } from '../../spec/orb.js'
import { orbErrors } from '../errors.js'
import type { OrbRoute, RouteCall, RouteContext } from '../route.js'

/**
 * `GET /api/bot/v1/events` (ORB-043..051, ORB-A09) and `POST /api/bot/v1/interactions/{event}/respond`
 * (ORB-066..072, ORB-A13, ORB-A14). A valid token is all they need (ORB-A07).
 */
export function eventRoutes ({ events, interactions }: RouteContext): OrbRoute[] {
  return [
    {
      method: 'GET',
      path: '/api/bot/v1/events',
      auth: 'bot',
      handler: async ({ app, query, reply }: RouteCall<{ after?: number, wait?: number, limit?: number }>) => {
        const after = query.after ?? 0
        // ORB-A09: a cursor below 0 names nothing that could ever have been handled.
        if (after < 0) throw orbErrors.bad('query.after must be >= 0')
        // ORB-051, ORB-A09: in webhook mode nothing is queued, `wait` is ignored, and `next` is `after`.
        if (app.endpoint !== null) return { events: [], next: after, mode: 'webhook' }
        // ORB-044: the schema fills in the spec's default.
        const limit = query.limit ?? ORB_LIMITS.eventPage.default
        let found = events.read(app, after, limit)
        if (found.length === 0 && (query.wait ?? 0) > 0) {
          // ORB-050: held until an event arrives or `wait` seconds pass; a client that goes away frees its poll.
          const token = app.token
          found = await events.wait(app, after, limit, query.wait! * 1000, (drop) => reply.raw.once('close', drop))
          // ORB-A22: a token rotated while the poll was held no longer works, not even for this poll.
          if (app.token !== token) throw orbErrors.unauthorized()
          if (app.endpoint !== null) return { events: [], next: after, mode: 'webhook' }
        }
        return { events: found, next: found.at(-1)?.cursor ?? after, mode: 'events' }
      }
    },
    {
      method: 'POST',
      path: '/api/bot/v1/interactions/{event}/respond',
      auth: 'bot',
      handler: ({ app, params, body }: RouteCall<unknown, { content: string }, { event: string }>) => {
        const interaction = interactions.respond(app.id, params.event, body.content, 'respond')
        return { ok: true, event: interaction.event, member: interaction.member }
      }
    }
  ]
}
