import { seconds, Tally } from '../../client/check.js'
import type { JournalEntry, Millis } from '../../client/journal.js'
import { isObject, view, type OrbtileModel, type RouteKind } from '../model.js'
import { check, type OrbtileCheckDef } from './wire.js'

/** What the wire adds to a reply with unknown fields, and what it did to a proof: the notes the tap journals. */
export const EXTRA_FIELDS_NOTE = 'unknown fields added'
export const PROOF_NOTE = 'proof replaced (an impostor)'

/** The requests an adapter makes over and over (heartbeats, by session or by batch, and polls). */
export const RECURRING: readonly RouteKind[] = ['session', 'batch', 'events']

/** The shortest wait, after a reply with unknown fields, for the requests the adapter made before (OTC-08). */
const AFTER_EXTRA_MS = 3000

export const LIFE_CHECKS: readonly OrbtileCheckDef[] = [
  check(
    {
      id: 'OTC-03',
      title: 'the adapter stays up until it is stopped',
      level: 'required',
      exercise: 'any scenario'
    },
    (info) =>
      new class extends Tally<OrbtileModel> {
        observe (entry: JournalEntry): void {
          if (entry.kind !== 'action' || entry.name !== 'exit') return
          this.applied()
          if (entry.data?.how !== 'exited' && entry.data?.how !== 'not-started') return
          this.violate({
            seq: entry.seq,
            at: entry.at,
            message:
              entry.data.how === 'not-started'
                ? `the command could not start: ${String(entry.data.error)}`
                : `the adapter exited on its own after ${seconds(entry.at)}`,
            expected: 'running until orbtest sends SIGTERM',
            actual: entry.text
          })
        }
      }(info)
  ),

  check(
    {
      id: 'OTC-05',
      title: 'the adapter exits within 2 s of SIGTERM',
      level: 'decision',
      exercise: 'any scenario'
    },
    (info) =>
      new class extends Tally<OrbtileModel> {
        observe (entry: JournalEntry): void {
          if (entry.kind !== 'action' || entry.name !== 'exit') return
          if (entry.data?.how === 'stopped' || entry.data?.how === 'killed') this.applied()
          if (entry.data?.how === 'killed') {
            this.violate({
              seq: entry.seq,
              at: entry.at,
              message: 'still running 2 s after SIGTERM: killed',
              expected: 'an exit after SIGTERM',
              actual: entry.text
            })
          }
        }
      }(info)
  ),

  check({
    id: 'OT-022',
    title: 'the adapterToken never appears in stdout, stderr, or a file under HOME or TMPDIR',
    level: 'required',
    exercise: 'a registration'
  }, (info) => new class extends Tally<OrbtileModel> {
    observe (entry: JournalEntry, model: OrbtileModel): void {
      if (entry.kind === 'action' && entry.name === 'scanned') this.applied(model.adapterTokens.size > 0 ? 1 : 0)
      if (entry.kind !== 'action' || entry.name !== 'secret-found') return
      this.violate({
        seq: entry.seq,
        at: entry.at,
        message: `${String(entry.data?.label)} found in ${String(entry.data?.where)}`,
        expected: 'the adapter token in memory only: never logged, never written',
        actual: `in ${String(entry.data?.where)}`
      })
    }
  }(info)),

  check(
    {
      id: 'OT-008',
      title: 'replies with unknown fields are handled as without them: the adapter stays up and goes on alike (OTC-08)',
      level: 'required',
      exercise: 'replies with unknown fields (tour:wire)'
    },
    (info) =>
      new class extends Tally<OrbtileModel> {
        #first: { at: Millis; seq: number } | undefined
        /**
         * Each kind of request: how many came before the first reply with unknown fields, when the last one ended,
         * and its longest gap over the whole run (OTC-24).
         */
        readonly #kinds = new Map<RouteKind, { before: number, last: Millis, end: Millis, gap: Millis }>()
        /** Times the wire kept the adapter waiting (a 429's Retry-After, a reply held): no fault of its own. */
        readonly #blocked: Array<{ from: Millis, to: Millis }> = []
        #exited: { at: Millis; seq: number; text: string } | undefined
        observe (entry: JournalEntry): void {
          if (entry.kind === 'action' && entry.name === 'exit' && entry.data?.how === 'exited') {
            this.#exited = { at: entry.at, seq: entry.seq, text: entry.text }
          }
          if (entry.kind !== 'exchange') return
          const route = view(entry).route
          const seen = this.#kinds.get(route)
          const before = this.#first === undefined ? 1 : 0
          // A request refused 429 is the wire's doing, and its retry no beat of the adapter's own: a wait (OTC-24).
          if (entry.status !== 429 && seen === undefined) {
            this.#kinds.set(route, { before, last: entry.at, end: entry.end, gap: 0 })
          } else if (entry.status !== 429 && seen !== undefined) {
            // In place: every request of a busy run passes here.
            seen.before += before
            seen.gap = Math.max(seen.gap, entry.at - seen.last)
            seen.last = Math.max(seen.last, entry.at)
            seen.end = Math.max(seen.end, entry.end)
          }
          if (entry.wire?.includes(EXTRA_FIELDS_NOTE) === true) {
            this.#first ??= { at: entry.end, seq: entry.seq }
            this.applied()
          }
          if (entry.status === 429) {
            const after = Number(entry.replyHeaders['retry-after'] ?? 1)
            this.#blocked.push({ from: entry.at, to: entry.end + (Number.isFinite(after) ? after : 1) * 1000 })
          } else if (entry.wire?.some((w) => w.startsWith('reply held')) === true) {
            this.#blocked.push({ from: entry.at, to: entry.end })
          }
          if (this.#blocked.length > 64) this.#blocked.shift()
        }

        override finish (model: OrbtileModel, end: Millis): void {
          const first = this.#first
          if (first === undefined) return
          if (this.#exited !== undefined && this.#exited.at > first.at) {
            this.violate({
              seq: this.#exited.seq,
              at: this.#exited.at,
              message: 'the adapter exited after replies with unknown fields',
              expected: 'unknown reply fields ignored',
              actual: this.#exited.text
            })
            return
          }
          // A kind made twice or more before must not fall silent, after the first reply with unknown fields, for
          // twice its longest gap (AFTER_EXTRA_MS at least): silence counted from that kind's last reply (OTC-24)
          // or the wire's last wait, whichever is later; judged when the scenario went on so long.
          const unjudged: string[] = []
          const missing = [...this.#kinds].filter(([route, { before, last, end: lastEnd, gap }]) => {
            if (before < 2 || !RECURRING.includes(route)) return false
            const window = Math.max(AFTER_EXTRA_MS, 2 * gap)
            let from = Math.max(first.at, lastEnd)
            // The app away (off, restarting, moving) keeps it waiting too.
            for (const b of [...this.#blocked, ...model.awayUntil(end)].sort((x, y) => x.from - y.from)) {
              if (b.from <= from + window && b.to > from) from = b.to
            }
            // A machine too busy to run this process on time is too busy to blame the adapter: its requests are
            // slowed by all the CPU it was denied, so the window widens by the sum of the stalls (OTC-17).
            const starved = model.starved(from, end)
            if (end - from >= window + starved) return true
            if (last <= first.at) unjudged.push(`${route} (its window of ${seconds(window)} from ${seconds(from)}, ${seconds(starved)} starved)`)
            return false
          })
          // Silence that the scenario was too short to judge passes, and says so (OTC-23).
          if (missing.length === 0 && unjudged.length > 0) {
            this.note = `not judged: ${unjudged.join(', ')} did not come again, but the scenario ended at ${seconds(end)}`
          }
          if (missing.length > 0) {
            this.violate({
              seq: first.seq,
              at: first.at,
              message: 'after a reply with unknown fields, the adapter stopped making requests it made before',
              expected: `${missing.map(([r]) => r).join(' and ')} requests again`,
              actual: `none after ${missing.map(([r, k]) => `${r} ${seconds(k.end)}`).join(', ')}; end ${seconds(end)}`
            })
          }
        }
      }(info)
  ),

  check(
    {
      id: 'OT-039',
      title:
        'an adapter that checks the proof sends a fresh 16..64-hex nonce, and trusts no socket whose proof is wrong',
      level: 'required',
      exercise: 'GET /info with X-Orbtile-Nonce (only adapters that check the proof are bound)'
    },
    (info) =>
      new class extends Tally<OrbtileModel> {
        readonly #nonces = new Set<string>()
        #impostorSince: Millis | undefined
        observe (entry: JournalEntry): void {
          if (entry.kind === 'action' && ['restart', 'move', 'regenerate'].includes(entry.name)) {
            this.#impostorSince = undefined
          }
          if (entry.kind !== 'exchange') return
          const v = view(entry)
          const nonce = entry.headers['x-orbtile-nonce']
          if (v.route === 'info' && nonce !== undefined) {
            this.applied()
            const at = { seq: entry.seq, at: entry.at }
            if (!/^[0-9A-Fa-f]{16,64}$/.test(nonce)) {
              this.violate({
                ...at,
                message: 'a nonce that is not 16..64 hex characters',
                expected: '16 to 64 hex characters',
                actual: nonce
              })
            }
            if (this.#nonces.has(nonce)) {
              this.violate({ ...at, message: 'a nonce used before', expected: 'a fresh random nonce', actual: nonce })
            }
            this.#nonces.add(nonce)
            // A long judged run remembers the last 10 000 nonces.
            if (this.#nonces.size > 10_000) this.#nonces.delete(this.#nonces.values().next().value!)
            if (entry.wire?.includes(PROOF_NOTE) === true) this.#impostorSince ??= entry.end
          }
          const since = this.#impostorSince
          const trusting = v.route === 'register' || v.route === 'session' || v.route === 'batch'
          if (since !== undefined && trusting && entry.at > since && isObject(v.body)) {
            this.violate({
              seq: entry.seq,
              at: entry.at,
              message: `${entry.method} ${entry.target} after GET /info gave a wrong proof`,
              expected: 'no registration and no session data to an impostor',
              actual: 'sent'
            })
          }
        }
      }(info)
  )
]
