// The bearer token and the adapter token: the file's token read afresh after a refusal (OT-005, OT-A04), and the
// lease's token on every adapter route (OT-019).
import { seconds, type Outcomes } from '../../core/check.js'
import type { JournalExchange, Millis } from '../../core/journal.js'
import { windowMs } from '../../core/windows.js'
import { isObject, view, type LeaseView, type OrbtileModel } from '../model.js'
import { at, judged, onItsWay, type OrbtileCheck } from './define.js'

/**
 * OT-005, with OT-A04: a request refused for a stale token is not sent again with it. Only the refused request is
 * judged: a client with several threads or connections may send other requests with the token it held until each
 * meets the refusal itself, and reads the file then.
 */
const OT_005: OrbtileCheck = {
  id: 'OT-005',
  title: 'the discovery file is read before the first request, and afresh after its token is refused (OT-A04)',
  level: 'MUST',
  ledger: 'Before its first request, the client reads socketPath, basePath and the bearer token from the discovery file. (OT-A04: after a 401 on the bearer, read the file once more and retry once.)',
  clauses: [{
    key: 'reread',
    text: 'a request refused (401) for a token the file no longer holds is sent again only with the token it holds now',
    level: 'decision',
    basis: 'OT-A04',
    exercise: 'a token regeneration or an app restart (tour:app)'
  }],
  windows: ['measurement-error'],
  reads: {},
  judge: () => {
    /** When, and on which connection, the app refused a stale token, by token, method and target. */
    const refused = new Map<string, { end: Millis, connection: number }>()
    let anyRefused: Millis = Infinity
    return {
      observe (entry, model, out) {
        if (entry.kind !== 'exchange') return
        // With one token in the whole run none is stale, and no refusal needs remembering: most of a busy run.
        if (model.discoveryTokens.length === 1 && refused.size === 0) return
        const v = view(entry)
        const bearer = v.bearer
        if (bearer === undefined) return
        const stale = bearer !== model.discoveryToken && model.discoveryTokens.includes(bearer)
        const key = `${bearer} ${entry.method} ${entry.target}`
        const told = refused.get(key)
        if (stale && told !== undefined && entry.at > told.end) {
          // On another connection it may have been built before the refusal was read, by a client that makes a
          // connection, or a process, per request: what the judge measures of the client does not see that, so
          // only the measurement error's whole bound excuses it.
          const unsure = entry.connection !== told.connection && entry.at - told.end < windowMs('measurement-error')
          judged(out, 'reread', at(entry, {
            message: 'a request the app refused for its stale token, sent again with the same token',
            expected: 'the token the file holds now (read it again after a 401)',
            actual: `the stale token again, ${seconds(entry.at - told.end)} after the refusal`
          }), unsure ? `sent on another connection within ${windowMs('measurement-error') / 1000} s: it may have been built before the refusal was read` : undefined)
        } else if (bearer === model.discoveryToken && entry.at > anyRefused) {
          // The situation arose: a stale token was refused, and this request carries the file's token now.
          out.exercised('reread')
        }
        if (v.code === 'unauthorized' && v.field !== 'X-Orbtile-Adapter-Token' && stale) {
          refused.set(key, { end: entry.end, connection: entry.connection })
          anyRefused = Math.min(anyRefused, entry.end)
        }
      }
    }
  }
}

const OT_019: OrbtileCheck = {
  id: 'OT-019',
  title: 'the adapter sends its adapterToken as X-Orbtile-Adapter-Token on every adapter route',
  level: 'MUST',
  ledger: 'The adapter sends its adapterToken as X-Orbtile-Adapter-Token on every adapter route: session update, batch, events poll, and re-registration.',
  clauses: [{
    key: 'token',
    text: "the live lease's adapterToken on every adapter route",
    level: 'MUST',
    exercise: 'a registration, then any adapter route'
  }],
  windows: ['on-its-way', 'measurement-error'],
  reads: {},
  judge: () => {
    /**
     * When the adapter surely had each lease's token: a request carried it, or the connection its reply came on
     * carried another request (HTTP/1.1 sends one only once the last reply was read). The earliest such request
     * counts, whenever its exchange was journaled (a long poll is journaled when it ends).
     */
    const shown = new Map<string, Millis>()
    const show = (token: string, at: Millis): void => { shown.set(token, Math.min(at, shown.get(token) ?? Infinity)) }
    /** Requests without the live lease's token on another connection: judged once every earlier request is known. */
    const later: Array<{ e: JournalExchange, lease: LeaseView }> = []
    const verdict = (e: JournalExchange, lease: LeaseView, model: OrbtileModel, out: Outcomes): void => {
      const sent = e.headers['x-orbtile-adapter-token']
      judged(out, 'token', at(e, {
        message: "not the live lease's adapter token",
        expected: 'X-Orbtile-Adapter-Token: <the adapterToken of the live lease>',
        actual: sent === undefined ? 'no X-Orbtile-Adapter-Token header' : 'another token'
      }), unsure(lease, shown.get(lease.token), e, model))
    }
    return {
      observe (entry, model, out) {
        if (entry.kind !== 'exchange') return
        // Any request on a lease's own connection after its reply (GET /info included) shows the reply was read.
        for (const l of model.leases.values()) {
          if (l.connection === entry.connection && entry.at > l.since) show(l.token, entry.at)
        }
        const v = view(entry)
        if (v.adapterId === undefined || v.route === 'other') return
        const lease = model.leaseBefore
        // Before its first registration's reply (or once the app ended the lease) the adapter has no token to send.
        if (lease === undefined || lease.ended || entry.at <= lease.since) return
        // A registration given a new token found no live lease (OT-A06): the app had ended it unseen (a restart
        // that kept the discovery token), so the adapter had none to send.
        if (v.route === 'register' && v.ok && isObject(v.reply) && typeof v.reply.adapterToken === 'string' &&
          v.reply.adapterToken !== lease.token) return
        if (entry.headers['x-orbtile-adapter-token'] === lease.token) {
          show(lease.token, entry.at)
          out.exercised('token')
        } else if (entry.connection === lease.connection) {
          verdict(entry, lease, model, out)
        } else {
          later.push({ e: entry, lease })
        }
      },
      open (model, _end, out) {
        for (const { e, lease } of later) verdict(e, lease, model, out)
      }
    }
  }
}

/**
 * Why a request without the live lease's token may not break OT-019, if it may not: a reply read on the same
 * connection is surely read; on another, the adapter surely had the token once it was shown (a request carried it,
 * or the reply's connection was used again), and a request so soon after may have left before the adapter read it.
 */
function unsure (
  lease: LeaseView, shownAt: Millis | undefined, e: JournalExchange, model: OrbtileModel
): string | undefined {
  if (e.connection === lease.connection) return undefined
  if (shownAt === undefined || shownAt >= e.at) {
    return 'nothing had shown the adapter read the reply that gave this token (no request carried it yet)'
  }
  return onItsWay(model, shownAt, e.at) ? 'sent on another connection as the adapter had just read the new token' : undefined
}

export const TOKEN_CHECKS: readonly OrbtileCheck[] = [OT_005, OT_019]
