import { seconds, Tally, type CheckDef, type CheckInfo } from '../../client/check.js'
import type { JournalEntry, JournalExchange, Millis } from '../../client/journal.js'
import { BASE_PATH } from '../../../src/spec/orbtile.js'
import { view, type OrbtileModel, type RouteKind } from '../model.js'

/**
 * A check of this suite, and what it reads: a busy run is mostly one route, and every check a heartbeat skips is
 * time saved.
 * - `routes`, when given, names the only routes whose exchanges it reads.
 * - `others`: it reads the entries that are not exchanges (actions, output, malformed bytes); by default only a check
 *   without `routes` does.
 * - `requestsOnly`: of single session updates it reads only those that set or clear an approval or a question.
 * - `rule`: it is a request rule (RequestRule), run by the observer on every request.
 */
export interface OrbtileCheckDef extends CheckDef<OrbtileModel> {
  routes?: readonly RouteKind[]
  others?: boolean
  requestsOnly?: boolean
  /** A request rule (its tally reads nothing itself: the observer runs the rule on every request). */
  rule?: RequestRule
}

type Reads = Pick<OrbtileCheckDef, 'routes' | 'others' | 'requestsOnly'>

/** Makes a check definition from its info and a class whose instances judge one scenario. */
export function check (
  info: CheckInfo & Reads,
  make: (info: CheckInfo) => Tally<OrbtileModel>
): OrbtileCheckDef {
  const { routes, others, requestsOnly, ...rest } = info
  return {
    ...rest,
    ...(routes === undefined ? {} : { routes }),
    ...(others === undefined ? {} : { others }),
    ...(requestsOnly === undefined ? {} : { requestsOnly }),
    create: () => make(rest)
  }
}

/** What a request rule found wrong with one request. */
export interface Problem { message: string, expected: string, actual: string }

/**
 * A rule judged on each request alone (its headers and target, and the discovery tokens of the run), with no state of
 * its own. The observer runs every rule of a run in one loop over each request and reports what they find to their
 * tallies: no check object is called per rule and request, which a busy `--judge` run would pay for on every one.
 */
export type RequestRule = (e: JournalExchange, model: OrbtileModel) => Problem | undefined

/** The tally of a request rule: told by the observer what the rule found, and how many requests it judged. */
export class RuleTally extends Tally<OrbtileModel> {
  observe (): void {}

  judged (n: number): void {
    this.applied(n)
  }

  report (e: JournalExchange, p: Problem): void {
    const { expected, actual } = p
    this.violate({ seq: e.seq, at: e.at, message: `${e.method} ${e.target}: ${p.message}`, expected, actual })
  }
}

/** Makes the definition of a request rule. */
function rule (info: CheckInfo, test: RequestRule): OrbtileCheckDef {
  return { ...info, routes: [], others: false, rule: test, create: () => new RuleTally(info) }
}

/** A check that looks at each request on its own. */
abstract class PerRequest extends Tally<OrbtileModel> {
  observe (entry: JournalEntry, model: OrbtileModel): void {
    if (entry.kind === 'exchange') this.request(entry, model)
  }

  abstract request (e: JournalExchange, model: OrbtileModel): void

  protected at (e: JournalExchange, message: string, expected: string, actual: string): void {
    this.violate({ seq: e.seq, at: e.at, message: `${e.method} ${e.target}: ${message}`, expected, actual })
  }
}

/** How soon after a refusal a request on another connection may still have been on its way (OTC-11, OTC-14). */
export const IN_FLIGHT_MS = 250

/** The most an excuse for being on its way widens by the stalls of the judge and the client (OTC-17, OTC-25). */
export const MAX_STALL_MS = 5000

/**
 * Whether a request at `at`, on another connection than the reply at `since`, was already on its way: within
 * IN_FLIGHT_MS of it, plus what the judge stalled in between (OTC-17) and what the client waited for a CPU (OTC-25).
 * Stalls are asked for only near `since`.
 */
export function onItsWay (model: OrbtileModel, since: Millis, at: Millis): boolean {
  const after = at - since
  if (after < IN_FLIGHT_MS) return true
  if (after >= IN_FLIGHT_MS + MAX_STALL_MS) return false
  return after < IN_FLIGHT_MS + model.lag(since, at) + model.clientWait(since, at)
}

/** The window after an app restart in which an active adapter must reach the new socket. */
export const RECONNECT_MS = 4000

const JSON_TYPE = /^application\/json\s*(?:;\s*charset\s*=\s*"?utf-8"?\s*)?$/i
const LOCALHOST = /^localhost(?::\d{1,5})?$/i

export const WIRE_CHECKS: readonly OrbtileCheckDef[] = [
  check({
    id: 'OT-002',
    title: 'the adapter reaches the socket the discovery file names, over HTTP/1.1, and finds a moved one',
    level: 'required',
    exercise: 'any request; a restart of the app on a new socket (tour:app)'
  }, (info) => new class extends PerRequest {
    #any = false
    /** When the app last came back on a new socket, if the adapter was active then and has not reached it yet. */
    #movedAt: Millis | undefined
    #lastPoll: Millis = -Infinity
    #model!: OrbtileModel
    request (e: JournalExchange): void {
      this.#any = true
      this.applied()
      if (e.httpVersion !== '1.1') this.at(e, 'not HTTP/1.1', 'HTTP/1.1', `HTTP/${e.httpVersion}`)
      const moved = this.#movedAt
      if (moved !== undefined && e.at > moved) {
        this.#movedAt = undefined
        if (e.at - moved > RECONNECT_MS + this.#model.lag(moved, e.at)) this.#late(moved, e.at, e.seq)
      }
      if (view(e).route === 'events') this.#lastPoll = Math.max(this.#lastPoll, e.at)
    }

    override observe (entry: JournalEntry, model: OrbtileModel): void {
      this.#model = model
      // OTC-12: judged for an adapter that was polling when the socket moved (a poll in the 2.5 s before): it has
      // requests to send at once. One that only heartbeats may rightly say nothing for most of its ttlSeconds.
      if (entry.kind === 'action' && typeof entry.data?.socketPath === 'string') {
        this.#movedAt = entry.at - this.#lastPoll <= 2500 ? entry.at : undefined
      }
      if (entry.kind === 'action' && entry.name === 'stop' && this.#movedAt !== undefined) {
        if (entry.at - this.#movedAt > RECONNECT_MS + model.lag(this.#movedAt, entry.at)) {
          this.#late(this.#movedAt, entry.at)
        }
        this.#movedAt = undefined
      }
      if (entry.kind === 'malformed') this.#any = true
      super.observe(entry, model)
    }

    override finish (_model: OrbtileModel, end: Millis): void {
      if (!this.#any && end >= 1500) {
        this.violate({
          message: 'no request reached the socket the discovery file names',
          expected: 'requests on the socket at socketPath',
          actual: `nothing in ${seconds(end)}`
        })
      }
    }

    #late (moved: Millis, now: Millis, seq?: number): void {
      this.violate({
        ...(seq === undefined ? {} : { seq }),
        at: moved,
        message: 'after the app restarted on a new socket, the adapter did not reach it in time',
        expected: `a request on the new socket within ${seconds(RECONNECT_MS)} (read socketPath afresh)`,
        actual: seq === undefined ? `none in ${seconds(now - moved)}` : `the first after ${seconds(now - moved)}`
      })
    }
  }(info)),

  check({
    id: 'OTC-02',
    title: 'every request is well-formed HTTP/1.1 (OT-002)',
    level: 'required',
    exercise: 'any request'
  }, (info) => new class extends Tally<OrbtileModel> {
    observe (entry: JournalEntry): void {
      if (entry.kind === 'exchange') this.applied()
      if (entry.kind !== 'malformed') return
      this.applied()
      this.violate({
        seq: entry.seq,
        at: entry.at,
        message: `bytes that are not an HTTP/1.1 request on connection ${entry.connection}`,
        expected: 'an HTTP/1.1 request',
        actual: `${entry.reason}: ${entry.bytes.slice(0, 80)}`
      })
    }
  }(info)),

  rule({
    id: 'OT-003',
    title: "every request target is the discovery file's basePath followed by a route",
    level: 'required',
    exercise: 'any request'
  }, (e) => e.target.startsWith(`${BASE_PATH}/`)
    ? undefined
    : { message: 'outside basePath', expected: `${BASE_PATH}/…`, actual: e.target }),

  rule({
    id: 'OT-011',
    title: 'every request carries Host: localhost',
    level: 'required',
    exercise: 'any request'
  }, (e) => {
    const host = e.headers.host
    // OT-A05: the app takes localhost with a port as well; the name is what the rule is about.
    if (host !== undefined && LOCALHOST.test(host)) return undefined
    const actual = host === undefined ? 'no Host header' : `Host: ${host}`
    return { message: 'wrong Host', expected: 'Host: localhost', actual }
  }),

  rule({
    id: 'OT-012',
    title: 'every request carries Content-Type: application/json, GET /info included',
    level: 'required',
    exercise: 'any request'
  }, (e) => {
    const type = e.headers['content-type']
    if (type !== undefined && JSON_TYPE.test(type)) return undefined
    return {
      message: 'wrong Content-Type',
      expected: 'Content-Type: application/json',
      actual: type === undefined ? 'no Content-Type header' : `Content-Type: ${type}`
    }
  }),

  rule({
    id: 'OT-013',
    title: 'every request carries Authorization: Bearer with the discovery token',
    level: 'required',
    exercise: 'any request'
  }, (e, model) => {
    const bearer = view(e).bearer
    if (bearer === undefined) {
      const auth = e.headers.authorization
      return {
        message: 'no bearer token',
        expected: 'Authorization: Bearer <discovery token>',
        actual: auth === undefined ? 'no Authorization header' : `Authorization: ${auth}`
      }
    }
    if (bearer === model.discoveryToken || model.discoveryTokens.includes(bearer)) return undefined
    return {
      message: 'a bearer token the discovery file never held',
      expected: 'the token in the discovery file',
      actual: 'another token'
    }
  }),

  rule({
    id: 'OT-014',
    title: 'no request carries an Origin header',
    level: 'required',
    exercise: 'any request'
  }, (e) => e.headers.origin === undefined
    ? undefined
    : { message: 'an Origin header', expected: 'no Origin header', actual: `Origin: ${e.headers.origin}` }),

  check({
    id: 'OT-005',
    title: 'the discovery file is read afresh: after a new token, the adapter uses it (one retry, OT-A04)',
    level: 'required',
    exercise: 'a token regeneration or an app restart (tour:app)'
  }, (info) => new class extends PerRequest {
    /** When the adapter was told, by a 401 on the bearer, that a token is stale. */
    /** When (and on which connection) the app refused each stale token. */
    readonly #refused = new Map<string, { end: Millis, connection: number }>()
    request (e: JournalExchange, model: OrbtileModel): void {
      // With one token in the whole run, none is stale and no refusal needs remembering: most of a busy run.
      if (model.discoveryTokens.length === 1 && this.#refused.size === 0) return
      const v = view(e)
      const bearer = v.bearer
      if (bearer === undefined) return
      const stale = bearer !== model.discoveryToken && model.discoveryTokens.includes(bearer)
      if (model.discoveryTokens.length > 1 && e.at > model.fileChangedAt) this.applied()
      const told = this.#refused.get(bearer)
      // A request on another connection that set off within the slack of the refusal was already on its way.
      const inFlight = told !== undefined && e.connection !== told.connection && onItsWay(model, told.end, e.at)
      if (stale && told !== undefined && e.at > told.end && !inFlight) {
        this.at(e, 'the token the discovery file held before, after the app refused it', 'the token the file holds now (read it again after a 401)', 'the stale token, again')
      }
      if (v.code === 'unauthorized' && v.field !== 'X-Orbtile-Adapter-Token' && stale) {
        this.#refused.set(bearer, { end: e.end, connection: e.connection })
      }
    }
  }(info)),

  check({
    id: 'OT-019',
    title: 'the adapter sends its adapterToken as X-Orbtile-Adapter-Token on every adapter route',
    level: 'required',
    exercise: 'a registration, then any adapter route'
  }, (info) => new class extends PerRequest {
    request (e: JournalExchange, model: OrbtileModel): void {
      const v = view(e)
      if (v.adapterId === undefined || v.route === 'other') return
      const lease = model.leaseBefore
      // Before its first registration's reply (or once the app ended the lease) the adapter has no token to send.
      if (lease === undefined || lease.ended || e.at <= lease.since) return
      const sent = e.headers['x-orbtile-adapter-token']
      // Sent on another connection just as the token came back: it was on its way before the adapter knew it.
      if (sent !== lease.token && e.connection !== lease.connection && onItsWay(model, lease.since, e.at)) return
      this.applied()
      if (sent !== lease.token) {
        this.at(e, 'not the live lease\'s adapter token', 'X-Orbtile-Adapter-Token: <the adapterToken of the live lease>', sent === undefined ? 'no X-Orbtile-Adapter-Token header' : 'another token')
      }
    }
  }(info)),

  check(
    {
      id: 'OTC-04',
      title: 'the adapter holds at most 32 connections open at once',
      level: 'decision',
      exercise: 'any connection',
      // The observer's `connections` actions are all it reads.
      routes: [],
      others: true
    },
    (info) =>
      new class extends Tally<OrbtileModel> {
        #peak = 0
        observe (entry: JournalEntry): void {
          if (entry.kind !== 'action' || entry.name !== 'connections') return
          const open = Number(entry.data?.open ?? 0)
          this.applied()
          if (open > 32 && this.#peak <= 32) {
            this.violate({
              seq: entry.seq,
              at: entry.at,
              message: `${open} connections open at once`,
              expected: 'at most 32',
              actual: String(open)
            })
          }
          this.#peak = Math.max(this.#peak, open)
        }
      }(info)
  )
]
