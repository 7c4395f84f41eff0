import { ORB_A02_REFUSALS as REFUSED, ORB_A03_WINDOWS, ORB_LIMITS } from '../../spec/orb.js'
import { orbErrors, refusal } from '../errors.js'
import { reachChannel, requireRight, requireVisible } from '../gates.js'
import type { ChannelState, StoredMessage } from '../records.js'
import type { OrbRoute, RouteCall, RouteContext } from '../route.js'
import type { OrbStore } from '../store.js'
import type { WindowLimit } from '../throttle.js'

/** ORB-031, ORB-A03: posts a minute per app across communities, and per app and channel. */
const PER_APP = ORB_A03_WINDOWS.postsPerApp
const PER_CHANNEL = ORB_A03_WINDOWS.postsPerChannel

// ORB-A02: content of nothing but white space and invisible characters (zero-width spaces and joiners, BOM) is blank.
const BLANK = /^[\s\u200b-\u200d\u2060\ufeff]*$/u

// ORB-026, ORB-A02: @everyone as a token of its own, in any case. @here is allowed.
const EVERYONE = /(?<![\w@])@everyone(?!\w)/i

/** `POST`, `GET /api/bot/v1/messages` and `DELETE /api/bot/v1/messages/{id}` (ORB-023..042). */
export function messageRoutes ({ store, rateLimit }: RouteContext): OrbRoute[] {
  return [
    {
      method: 'POST',
      path: '/api/bot/v1/messages',
      auth: 'bot',
      scope: 'messages:write',
      handler: ({ app, body }: RouteCall<unknown, { channel: string, content: string, reply_to?: number }>) => {
        // ORB-A02: content that says nothing is a bad request, whatever the channel.
        if (BLANK.test(body.content)) throw refusal(REFUSED.blankContent, 'body.content is empty; send some text')
        const reached = reachChannel(store, app, body.channel)
        const { channel } = reached
        // ORB-028, ORB-A02: text in a voice channel is a bad request.
        if (channel.kind !== 'text') throw refusal(REFUSED.voiceChannel, `${channel.id} is a voice channel; channel must be a text channel`)
        // ORB-030, ORB-029, ORB-A02: the allow-list and the role's sight (403), then read-only channels, then the right
        // to post (ORB-A08).
        requireVisible(reached)
        if (channel.readOnly) throw refusal(REFUSED.readOnly, `${channel.id} is read-only`)
        requireRight(reached, 'send_messages')
        // ORB-026, ORB-027, ORB-A20: @everyone and cards.
        if (EVERYONE.test(body.content) && !store.faults.has('everyone-allowed')) {
          throw refusal(REFUSED.everyone, 'apps may not mention @everyone')
        }
        if (store.cardPattern.test(body.content)) throw refusal(REFUSED.card, 'onchain trade, signal and market cards are not allowed from apps')
        let replyTo: number | null = null
        if (body.reply_to !== undefined) {
          const target = store.messages.get(body.reply_to)
          // ORB-025: the message replied to must stand in the same channel.
          if (target === undefined || target.deleted || target.channel !== channel.id) {
            throw orbErrors.bad(`body.reply_to ${body.reply_to} is not a message in ${channel.id}`)
          }
          replyTo = target.id
        }
        if (rateLimit === 'on') {
          const verdict = store.throttles.take(postLimits(app.id, channel.id))
          if (!verdict.ok) {
            const inChannel = verdict.key.startsWith('posts:channel:')
            const which = inChannel
              ? `${PER_CHANNEL.limit} posts a minute in ${channel.id}`
              : `${PER_APP.limit} posts a minute`
            throw orbErrors.throttled(verdict.retryAfterSeconds, which)
          }
        }
        const message = store.addMessage(channel, store.authorOf(app.id), body.content, { encrypted: false, replyTo })
        return posted(message)
      }
    },
    {
      method: 'GET',
      path: '/api/bot/v1/messages',
      auth: 'bot',
      scope: 'messages:read',
      handler: ({ app, query }: RouteCall<{ channel: string, before?: number, limit?: number }>) => {
        const reached = reachChannel(store, app, query.channel)
        // ORB-A20: a voice channel holds no messages to read.
        if (reached.channel.kind !== 'text') throw orbErrors.bad(`${reached.channel.id} is a voice channel; channel must be a text channel`)
        requireVisible(reached)
        const shifted = query.before !== undefined && store.faults.has('paging-includes-before')
        const before = shifted ? query.before! + 1 : query.before
        // ORB-033: the schema fills in the spec's default.
        return page(store, reached.channel, before, query.limit ?? ORB_LIMITS.messagePage.default)
      }
    },
    {
      method: 'DELETE',
      path: '/api/bot/v1/messages/{id}',
      auth: 'bot',
      scope: 'messages:write',
      handler: ({ app, params, request }: RouteCall<unknown, unknown, { id: number }>) => {
        const message = store.messages.get(params.id)
        const asSent = (request.params as { id: string }).id
        const installed = message !== undefined && store.installOf(message.community, app.id) !== undefined
        // ORB-042, ORB-A21: unknown and deleted ids are 404, and so is a message the app could never have seen.
        if (message === undefined || message.deleted || (!installed && message.author.id !== app.memberId)) {
          throw orbErrors.notFound(`No message ${asSent} for this app`)
        }
        // ORB-040: no moderation for apps; ORB-041: not even of its own words once it is uninstalled.
        if (message.author.id !== app.memberId) throw orbErrors.forbidden('apps may delete only their own messages')
        if (!installed) throw orbErrors.forbidden(`${message.community} no longer has this app installed`)
        message.deleted = true
        return { ok: true, id: message.id }
      }
    }
  ]
}

/** The two windows a post by `app` in `channel` counts against (ORB-A03). */
export function postLimits (app: string, channel: string): WindowLimit[] {
  return [
    { key: `posts:app:${app}`, limit: PER_APP.limit, windowMs: PER_APP.windowMs },
    { key: `posts:channel:${app}\u0000${channel}`, limit: PER_CHANNEL.limit, windowMs: PER_CHANNEL.windowMs }
  ]
}

/** ORB-024: the stored message as its poster sees it. */
export function posted (message: StoredMessage): Record<string, unknown> {
  return {
    id: message.id,
    channel: message.channel,
    server: message.community,
    created: message.created,
    author: { ...message.author }
  }
}

/** ORB-037, ORB-035: a message as readers see it; an encrypted one has no body. */
export function rendered (message: StoredMessage): Record<string, unknown> {
  return {
    id: message.id,
    channel: message.channel,
    author: { ...message.author },
    created: message.created,
    replyTo: message.replyTo,
    encrypted: message.encrypted,
    body: message.encrypted ? null : message.content,
    mentions: [...message.mentions]
  }
}

/**
 * ORB-034, ORB-A20: the `limit` newest live messages older than `before`, oldest first; `hasOlder` when a live
 * message older than the page exists.
 */
export function page (
  store: OrbStore,
  channel: ChannelState,
  before: number | undefined,
  limit: number
): { messages: Array<Record<string, unknown>>, hasOlder: boolean } {
  const ids = channel.messages
  // The first index whose id is not below `before`.
  let end = ids.length
  if (before !== undefined) {
    let lo = 0
    let hi = ids.length
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if (ids[mid]! < before) lo = mid + 1
      else hi = mid
    }
    end = lo
  }
  const picked: StoredMessage[] = []
  let i = end - 1
  for (; i >= 0 && picked.length < limit; i--) {
    const message = store.messages.get(ids[i]!)!
    if (!message.deleted) picked.push(message)
  }
  let hasOlder = false
  for (; i >= 0; i--) {
    if (!store.messages.get(ids[i]!)!.deleted) {
      hasOlder = true
      break
    }
  }
  return { messages: picked.reverse().map(rendered), hasOlder }
}
