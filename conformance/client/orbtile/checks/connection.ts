import { seconds, type Outcomes } from '../../core/check.js'
import type { JournalExchange, Millis } from '../../core/journal.js'
import { windowMs } from '../../core/windows.js'
import { BASE_PATH } from '../../../../src/spec/orbtile.js'
import { view, type OrbtileModel } from '../model.js'
import { at, judged, perRequest, type OrbtileCheck } from './define.js'

const JSON_TYPE = /^application\/json\s*(;.*)?$/i
const UTF8_ONLY = /^application\/json\s*(?:;\s*charset\s*=\s*"?utf-8"?\s*)?$/i
const LOCALHOST = /^localhost$/i
const LOCALHOST_PORT = /^localhost:\d{1,5}$/i

/** OT-002: requests over HTTP/1.1 reach the socket the file names, a moved one included (OTC-12). */
const OT_002: OrbtileCheck = {
  id: 'OT-002',
  title: 'the adapter speaks HTTP/1.1 on the socket the discovery file names, and finds a moved one',
  level: 'MUST',
  ledger: 'Transport is HTTP/1.1 over the Unix-domain socket named by socketPath in the discovery file. The client connects to that socket, never to TCP.',
  clauses: [
    { key: 'http', text: 'every request is well-formed HTTP/1.1', level: 'MUST', exercise: 'any request' },
    {
      key: 'reach',
      text: 'requests reach the socket the discovery file names',
      level: 'decision',
      basis: 'start-allowance',
      why: 'the spec sets no time for a first request; a scenario waits 10 s for one, a bound of orbtest\'s',
      exercise: 'any scenario'
    },
    {
      key: 'moved',
      text: 'after the app restarts on a new socket, an adapter that was polling reaches it (OTC-12)',
      level: 'decision',
      basis: 'reconnect',
      why: 'the spec says when to read the discovery file first, not when again; 4 s is orbtest\'s bound',
      exercise: 'a restart of the app on a new socket while the adapter polls (tour:app)'
    }
  ],
  windows: ['start-allowance', 'reconnect', 'recent-poll', 'measurement-error'],
  reads: {},
  judge: () => {
    let any = false
    let started = false
    /** When the adapter's last poll that has completed ended (a poll cut by the app ends with the cut). */
    let lastPoll = -Infinity
    /** When the app last came back on a new socket. */
    let move: Millis | undefined
    /** That time, once the adapter is known to have been polling then and has not reached the new socket yet. */
    let movedAt: Millis | undefined
    const late = (model: OrbtileModel, out: Outcomes, moved: Millis, now: Millis, seq?: number): void => {
      const limit = windowMs('reconnect')
      if (now - moved <= limit) return
      judged(out, 'moved', {
        ...(seq === undefined ? {} : { seq }),
        at: moved,
        message: 'after the app restarted on a new socket, the adapter did not reach it in time',
        expected: `a request on the new socket within ${seconds(limit)} (socketPath read afresh)`,
        actual: seq === undefined ? `none in ${seconds(now - moved)}` : `the first after ${seconds(now - moved)}`
      }, now - moved <= limit + model.error(moved, now) ? 'within the judge\'s measurement error' : undefined)
    }
    /** A request after the move, or a poll that tells the adapter was polling at it. */
    const reached = (entry: JournalExchange, model: OrbtileModel, out: Outcomes): void => {
      if (move !== undefined && entry.at > move) {
        // The first request after the move (only the new socket is there to take it).
        if (movedAt !== undefined) {
          out.exercised('moved')
          late(model, out, movedAt, entry.at, entry.seq)
        }
        move = movedAt = undefined
      }
      if (view(entry).route !== 'events') return
      lastPoll = Math.max(lastPoll, entry.end)
      // A poll that was open when the app moved: the adapter was polling then, whenever the journal files its end.
      if (move !== undefined && movedAt === undefined && entry.at <= move && entry.end >= move) movedAt = move
    }
    return {
      observe (entry, model, out) {
        if (entry.kind === 'action' && entry.name === 'start') started = true
        if (entry.kind === 'action' && typeof entry.data?.socketPath === 'string') {
          move = entry.at
          movedAt = entry.at - lastPoll <= windowMs('recent-poll') ? entry.at : undefined
        }
        if (entry.kind === 'action' && entry.name === 'stop' && movedAt !== undefined) {
          out.exercised('moved')
          late(model, out, movedAt, entry.at)
          move = movedAt = undefined
        }
        if (entry.kind === 'malformed') {
          any = true
          out.violation('http', {
            seq: entry.seq,
            at: entry.at,
            message: `bytes that are not an HTTP/1.1 request on connection ${entry.connection}`,
            expected: 'an HTTP/1.1 request',
            actual: `${entry.reason}: ${entry.bytes.slice(0, 80)}`
          })
        }
        if (entry.kind !== 'exchange') return
        any = true
        if (entry.httpVersion === '1.1') out.exercised('http')
        else {
          out.violation('http', at(entry, {
            message: 'not HTTP/1.1',
            expected: 'HTTP/1.1',
            actual: `HTTP/${entry.httpVersion}`
          }))
        }
        reached(entry, model, out)
      },
      open (_model, end, out) {
        if (!started) return
        if (any) out.exercised('reach')
        else {
          out.violation('reach', {
            message: 'no request reached the socket the discovery file names',
            expected: 'requests on the socket at socketPath',
            actual: `nothing in ${seconds(end)} (the scenario waited up to ${seconds(windowMs('start-allowance'))} for the first)`
          })
        }
      }
    }
  }
}

const OT_003 = perRequest({
  id: 'OT-003',
  title: "every request target is the discovery file's basePath followed by a route",
  level: 'MUST',
  ledger: "The request target is the discovery file's basePath followed by the endpoint path.",
  clauses: [
    { key: 'target', text: 'the target is basePath + the endpoint path', level: 'MUST', exercise: 'any request' },
    {
      key: 'absolute-form',
      text: 'the target is a path, not an absolute URI (a form the spec does not write)',
      level: 'decision',
      basis: 'OT-A05',
      exercise: 'any request'
    }
  ],
  windows: []
}, 'target', (e) => {
  if (e.target.startsWith(`${BASE_PATH}/`)) return undefined
  const absolute = /^[a-z][a-z0-9+.-]*:\/\/[^/]*(\/.*)$/i.exec(e.target)?.[1]
  if (absolute?.startsWith(`${BASE_PATH}/`) === true) {
    return {
      clause: 'absolute-form',
      message: 'an absolute URI as the target',
      expected: `${BASE_PATH}/…`,
      actual: e.target
    }
  }
  return { clause: 'target', message: 'outside basePath', expected: `${BASE_PATH}/…`, actual: e.target }
})

const OT_011 = perRequest({
  id: 'OT-011',
  title: 'every request carries Host: localhost',
  level: 'MUST',
  ledger: 'Every request carries Host: localhost.',
  clauses: [
    { key: 'host', text: 'Host: localhost on every request', level: 'MUST', exercise: 'any request' },
    {
      key: 'port',
      text: 'Host: localhost with a port, which the app takes (OT-A05) but the spec does not write',
      level: 'decision',
      basis: 'OT-A05',
      exercise: 'any request'
    }
  ],
  windows: []
}, 'host', (e) => {
  const host = e.headers.host
  if (host !== undefined && LOCALHOST.test(host)) return undefined
  if (host !== undefined && LOCALHOST_PORT.test(host)) {
    return { clause: 'port', message: 'Host with a port', expected: 'Host: localhost', actual: `Host: ${host}` }
  }
  return {
    clause: 'host',
    message: 'wrong Host',
    expected: 'Host: localhost',
    actual: host === undefined ? 'no Host header' : `Host: ${host}`
  }
})

const OT_012 = perRequest({
  id: 'OT-012',
  title: 'every request carries Content-Type: application/json, GET /info included',
  level: 'MUST',
  ledger: 'Every request carries Content-Type: application/json. The spec says "all requests", so this includes GET /info.',
  clauses: [
    { key: 'type', text: 'Content-Type: application/json on every request', level: 'MUST', exercise: 'any request' },
    {
      key: 'parameter',
      text: 'no media type parameter other than charset=utf-8 (a form the spec does not write)',
      level: 'decision',
      basis: 'OT-A05',
      exercise: 'any request'
    }
  ],
  windows: []
}, 'type', (e) => {
  const type = e.headers['content-type']
  if (type !== undefined && UTF8_ONLY.test(type)) return undefined
  if (type !== undefined && JSON_TYPE.test(type)) {
    return {
      clause: 'parameter',
      message: 'a media type parameter',
      expected: 'Content-Type: application/json',
      actual: `Content-Type: ${type}`
    }
  }
  return {
    clause: 'type',
    message: 'wrong Content-Type',
    expected: 'Content-Type: application/json',
    actual: type === undefined ? 'no Content-Type header' : `Content-Type: ${type}`
  }
})

const OT_013 = perRequest({
  id: 'OT-013',
  title: 'every request carries Authorization: Bearer with the discovery token',
  level: 'MUST',
  ledger: 'Every request carries Authorization: Bearer <token from the discovery file>.',
  clauses: [{ key: 'bearer', text: 'a bearer token the discovery file held', level: 'MUST', exercise: 'any request' }],
  windows: []
}, 'bearer', (e, model) => {
  const bearer = view(e).bearer
  if (bearer === undefined) {
    const auth = e.headers.authorization
    return {
      clause: 'bearer',
      message: 'no bearer token',
      expected: 'Authorization: Bearer <discovery token>',
      actual: auth === undefined ? 'no Authorization header' : `Authorization: ${auth}`
    }
  }
  // A token the file held before is OT-005's to judge (it was read once; was it read again?).
  if (model.discoveryTokens.includes(bearer)) return undefined
  return {
    clause: 'bearer',
    message: 'a bearer token the discovery file never held',
    expected: 'the token in the discovery file',
    actual: 'another token'
  }
})

const OT_014 = perRequest({
  id: 'OT-014',
  title: 'no request carries an Origin header',
  level: 'MUST',
  ledger: 'No request ever carries an Origin header.',
  clauses: [{ key: 'origin', text: 'no Origin header', level: 'MUST', exercise: 'any request' }],
  windows: []
}, 'origin', (e) => e.headers.origin === undefined
  ? undefined
  : {
      clause: 'origin',
      message: 'an Origin header',
      expected: 'no Origin header',
      actual: `Origin: ${e.headers.origin}`
    })

const OTC_04: OrbtileCheck = {
  id: 'OTC-04',
  title: 'the adapter holds at most 32 connections open at once',
  level: 'decision',
  ledger: 'OTC-04: a local API needs one poll and a few writes at a time; an adapter holds at most 32 connections at once.',
  clauses: [{
    key: 'connections',
    text: 'at most 32 connections open at once',
    level: 'decision',
    basis: 'OTC-04',
    exercise: 'any connection'
  }],
  windows: ['max-connections'],
  reads: {},
  // The model counts connections; the check judges them at the end.
  judge: () => ({
    observe () {},
    open (model, _end, out) {
      const { peak } = model.connections
      if (peak === 0) return
      if (peak <= windowMs('max-connections')) {
        out.exercised('connections')
        return
      }
      out.violation('connections', {
        ...(model.connectionsCited === undefined ? {} : { seq: model.connectionsCited }),
        message: `${peak} connections open at once`,
        expected: `at most ${windowMs('max-connections')}`,
        actual: String(peak)
      })
    }
  })
}

export const WIRE_CHECKS: readonly OrbtileCheck[] = [
  OT_002, OT_003, OT_011, OT_012, OT_013, OT_014, OTC_04
]
