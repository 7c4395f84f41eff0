import { seconds, type Outcomes } from '../../core/check.js'
import type { JournalEntry, JournalExchange, Millis, ScenarioReport } from '../../core/journal.js'
import { windowMs, WINDOWS } from '../../core/windows.js'
import { isObject, routeOf, view, type RouteKind } from '../model.js'
import { at, judged, onItsWay, type OrbtileCheck } from './define.js'

/** What the wire adds to a reply with unknown fields, and what it did to a proof: the notes the tap journals. */
export const EXTRA_FIELDS_NOTE = 'unknown fields added'
export const PROOF_NOTE = 'proof replaced (an impostor)'

/** The requests an adapter makes over and over (heartbeats, by session or by batch, and polls). */
export const RECURRING: readonly RouteKind[] = ['session', 'batch', 'events']

const OTC_03: OrbtileCheck = {
  id: 'OTC-03',
  title: 'the adapter stays up until it is stopped',
  level: 'decision',
  ledger: 'OTC-03: an adapter runs until orbtest sends SIGTERM; the spec sets no lifetime, but one that ends by itself cannot be judged.',
  clauses: [{ key: 'up', text: 'running until SIGTERM', level: 'decision', basis: 'OTC-03', exercise: 'any scenario' }],
  windows: [],
  reads: {},
  judge: () => ({
    observe (entry, _model, out) {
      if (entry.kind !== 'action' || entry.name !== 'exit') return
      if (entry.data?.how !== 'exited' && entry.data?.how !== 'not-started') {
        out.exercised('up')
        return
      }
      out.violation('up', {
        seq: entry.seq,
        at: entry.at,
        message: entry.data.how === 'not-started'
          ? `the command could not start: ${String(entry.data.error)}`
          : `the adapter exited on its own after ${seconds(entry.at)}`,
        expected: 'running until orbtest sends SIGTERM',
        actual: entry.text
      })
    }
  })
}

const OTC_05: OrbtileCheck = {
  id: 'OTC-05',
  title: 'the adapter exits within 10 s of SIGTERM',
  level: 'decision',
  ledger: 'OTC-05: an adapter exits after SIGTERM within the grace a process manager gives it.',
  clauses: [
    {
      key: 'exit',
      text: 'an exit within 10 s of SIGTERM',
      level: 'decision',
      basis: 'stop-grace',
      exercise: 'any scenario'
    }
  ],
  windows: ['stop-grace'],
  reads: {},
  judge: () => ({
    observe (entry, _model, out) {
      if (entry.kind !== 'action' || entry.name !== 'exit') return
      if (entry.data?.how === 'stopped') out.exercised('exit')
      if (entry.data?.how !== 'killed') return
      out.violation('exit', {
        seq: entry.seq,
        at: entry.at,
        message: `still running ${seconds(windowMs('stop-grace'))} after SIGTERM: killed`,
        expected: 'an exit after SIGTERM',
        actual: entry.text
      })
    }
  })
}

const OT_022: OrbtileCheck = {
  id: 'OT-022',
  title: 'the adapterToken never appears in stdout, stderr, or a file under HOME or TMPDIR',
  level: 'MUST',
  ledger: 'The adapter never logs adapterToken and never persists it: no file, keychain, environment variable or log line. It keeps the token in memory only.',
  clauses: [{
    key: 'secret',
    text: 'no adapter token in the output or a file under HOME or TMPDIR',
    level: 'MUST',
    exercise: 'a registration'
  }],
  windows: [],
  reads: {},
  judge: () => ({
    observe (entry, model, out) {
      if (entry.kind === 'action' && entry.name === 'scanned' && model.adapterTokens.size > 0) out.exercised('secret')
      if (entry.kind !== 'action' || entry.name !== 'secret-found') return
      out.violation('secret', {
        seq: entry.seq,
        at: entry.at,
        message: `${String(entry.data?.label)} found in ${String(entry.data?.where)}`,
        expected: 'the adapter token in memory only: never logged, never written',
        actual: `in ${String(entry.data?.where)}`
      })
    }
  })
}

/** OT-039: a nonce's length, and a nonce as the spec has it. */
const NONCE_LENGTH = WINDOWS['nonce-length'].bounds
const NONCE = new RegExp(`^[0-9A-Fa-f]{${NONCE_LENGTH.min},${NONCE_LENGTH.max}}$`)

/** OT-039: the nonce of an adapter that checks the proof, and no trust in a socket whose proof is wrong. */
const OT_039: OrbtileCheck = {
  id: 'OT-039',
  title: 'an adapter that checks the proof sends a fresh 16..64-hex nonce, and trusts no socket whose proof is wrong',
  level: 'MUST',
  ledger: 'An adapter that checks it is talking to the real Orbtile sends a fresh random nonce of 16 to 64 hex characters, recomputes the HMAC and compares it to proof in constant time, and if proof is missing or different treats the socket as an impostor: no registration, no session data.',
  clauses: [
    { key: 'nonce', text: 'the nonce is 16 to 64 hex characters', level: 'MUST', exercise: 'GET /info with X-Orbtile-Nonce (an adapter that checks the proof)' },
    { key: 'fresh', text: 'a nonce is never sent twice', level: 'MUST', exercise: 'two GET /info with X-Orbtile-Nonce (tour:app: a new token, a restart)' },
    {
      key: 'impostor',
      text: 'after a wrong proof, no registration and no session data',
      level: 'MUST',
      exercise: 'GET /info answered with a wrong proof (tour:impostor)'
    }
  ],
  windows: ['nonce-length', 'on-its-way', 'measurement-error'],
  reads: {},
  judge: () => {
    const nonces = new Set<string>()
    let impostor: { since: Millis, connection: number } | undefined
    const nonce = (e: JournalExchange, value: string, out: Outcomes): void => {
      if (NONCE.test(value)) out.exercised('nonce')
      else {
        out.violation('nonce', at(e, {
          message: `a nonce that is not ${NONCE_LENGTH.min}..${NONCE_LENGTH.max} hex characters`,
          expected: `${NONCE_LENGTH.min} to ${NONCE_LENGTH.max} hex characters`,
          actual: value
        }))
      }
      if (nonces.has(value)) {
        out.violation('fresh', at(e, {
          message: 'a nonce used before',
          expected: 'a fresh random nonce',
          actual: value
        }))
      } else if (nonces.size > 0) out.exercised('fresh')
      // A nonce is spent once the app's proof reached the adapter: one refused before the app saw it (a 429), or whose
      // reply was cut (it may never have arrived), may be sent again, as the same request retried.
      const cut = e.wire?.includes('connection cut before the reply') === true
      if (e.status >= 200 && e.status < 300 && !cut) nonces.add(value)
      // A long judged run remembers the last 10 000 nonces.
      if (nonces.size > 10_000) nonces.delete(nonces.values().next().value!)
      if (e.wire?.includes(PROOF_NOTE) === true) impostor ??= { since: e.end, connection: e.connection }
    }
    return {
      observe (entry, model, out) {
        if (entry.kind === 'action' && ['restart', 'move', 'regenerate'].includes(entry.name)) impostor = undefined
        if (entry.kind !== 'exchange') return
        const v = view(entry)
        const value = entry.headers['x-orbtile-nonce']
        if (v.route === 'info' && value !== undefined) nonce(entry, value, out)
        const trusting = v.route === 'register' || v.route === 'session' || v.route === 'batch'
        if (impostor === undefined || !trusting || entry.at <= impostor.since || !isObject(v.body)) return
        const unsure = entry.connection !== impostor.connection && onItsWay(model, impostor.since, entry.at)
        judged(out, 'impostor', at(entry, {
          message: 'sent after GET /info gave a wrong proof',
          expected: 'no registration and no session data to an impostor',
          actual: `sent ${seconds(entry.at - impostor.since)} after the wrong proof`
        }), unsure ? 'sent on another connection, soon enough to have left before the proof was read' : undefined)
      },
      open (_model, _end, out) {
        if (impostor !== undefined) out.exercised('impostor')
      }
    }
  }
}

/** Where a run's adapter began: its first request, from which both journals of a tour and its twin are timed. */
function firstContact (entries: readonly JournalEntry[]): Millis | undefined {
  return entries.find((e) => e.kind === 'exchange' || e.kind === 'malformed')?.at
}

/** When the harness stopped the adapter (or the scenario ended), on a journal's clock. */
function stopOf (r: ScenarioReport): Millis {
  return r.journal.find((e) => e.kind === 'action' && e.name === 'stop')?.at ?? r.ms
}

/**
 * The requests of each recurring kind in [from, to]: session updates, batches, polls. Session updates are one kind
 * whatever their session: an adapter may name its sessions afresh in each run (a UUID per agent session).
 */
function kinds (entries: readonly JournalEntry[], from: Millis, to: Millis): Map<string, number> {
  const out = new Map<string, number>()
  for (const e of entries) {
    if (e.kind !== 'exchange' || e.at < from || e.at > to || e.status === 429) continue
    const r = routeOf(e.method, e.target)
    if (!RECURRING.includes(r.route)) continue
    out.set(r.route, (out.get(r.route) ?? 0) + 1)
  }
  return out
}

/** An exit of the adapter's own, before orbtest stopped it. */
function exitedOnItsOwn (r: ScenarioReport): JournalEntry | undefined {
  return r.journal.find((e) => e.kind === 'action' && e.name === 'exit' && e.data?.how === 'exited')
}

/**
 * OT-008 (OTC-08): the tour with unknown fields in every reply and its twin without them play the same world at
 * once. What the adapter does after the first unknown field must be what its twin does: it stays up as its twin
 * does, and no recurring kind of request its twin keeps making stops.
 */
function compareUnknownFields (variant: ScenarioReport, twin: ScenarioReport, out: Outcomes): void {
  const first = variant.journal.find((e): e is JournalExchange =>
    e.kind === 'exchange' && e.wire?.includes(EXTRA_FIELDS_NOTE) === true)
  const vStart = firstContact(variant.journal)
  const tStart = firstContact(twin.journal)
  if (first === undefined || vStart === undefined || tStart === undefined) {
    out.note('not judged: no reply with unknown fields reached the adapter, or its twin made no request')
    return
  }
  const exited = exitedOnItsOwn(variant)
  if (exited !== undefined && exitedOnItsOwn(twin) !== undefined) {
    out.inconclusive('up', { message: 'the adapter and its twin both exited on their own: the unknown fields are not what shows', expected: 'both up', actual: 'both exited' })
    return
  }
  if (exited !== undefined && exited.at > first.end) {
    out.violation('up', {
      seq: exited.seq,
      at: exited.at,
      message: 'the adapter exited after replies with unknown fields, where its twin without them stayed up',
      expected: 'unknown reply fields ignored',
      actual: exited.kind === 'action' ? exited.text : 'exited'
    })
    return
  }
  out.exercised('up')
  // The twin's span is the variant's, from the first reply with unknown fields on, timed from each one's first request.
  const from = first.end - vStart + tStart
  const theirs = kinds(twin.journal, from, stopOf(twin))
  const ours = kinds(variant.journal, first.end, stopOf(variant))
  const bar = windowMs('unknown-fields-twin')
  for (const [kind, n] of theirs) {
    if ((ours.get(kind) ?? 0) > 0) out.exercised('same')
    else if (n >= bar) {
      out.violation('same', {
        seq: first.seq,
        at: first.end,
        message: `after the first reply with unknown fields, the adapter made no more ${kind} requests; its twin made ${n}`,
        expected: `${kind} requests, as without unknown fields`,
        actual: `none in ${seconds(stopOf(variant) - first.end)}`
      })
    } else out.note(`${kind}: too few in the twin (${n}) to compare`)
  }
}

const OT_008: OrbtileCheck = {
  id: 'OT-008',
  title: 'replies with unknown fields are handled as without them: the adapter does what its twin does (OTC-08)',
  level: 'MUST',
  ledger: 'Clients ignore unknown response fields. A reply with extra fields must be handled exactly like one without them.',
  clauses: [
    {
      key: 'up',
      text: 'after replies with unknown fields the adapter stays up, as its twin without them does',
      level: 'MUST',
      exercise: 'tour:unknown-fields, played beside its twin'
    },
    {
      key: 'same',
      text: 'after replies with unknown fields the adapter goes on making each kind of request its twin makes',
      level: 'decision',
      basis: 'OTC-08',
      why: 'that a kind of request the twin made three times and the variant never has stopped is orbtest\'s bar',
      exercise: 'tour:unknown-fields, played beside its twin'
    }
  ],
  windows: ['unknown-fields-twin'],
  reads: {},
  judge: () => ({ observe () {} }),
  compare: compareUnknownFields
}

export const LIFE_CHECKS: readonly OrbtileCheck[] = [OT_008, OT_022, OT_039, OTC_03, OTC_05]
