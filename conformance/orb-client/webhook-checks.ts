import { seconds, Tally } from '../client/check.js'
import type { JournalAction, JournalEntry } from '../client/journal.js'
import { at, check, type OrbCheck } from './check.js'
import { isWrite, view, type OrbModel } from './model.js'

/** OBC-04: how long after a delivery the suite listens for what it made the bot do. */
export const QUIET_MS = 1000

/** The checks of a webhook bot: what it does with the deliveries the suite sends it (ORB-095..097). */
export const WEBHOOK_CHECKS: readonly OrbCheck[] = [
  check({
    id: 'ORB-095',
    title: 'a webhook bot verifies before it acts: a forged delivery gets 401 and causes no call (OBC-04)',
    level: 'required',
    exercise: 'forged webhook deliveries (tour:attack, --webhook)'
  }, (info) => new class extends Quiet {
    onSent (a: JournalAction): void {
      if (a.data?.genuine !== false) return
      this.applied()
      this.listen(a, `the ${String(a.data.kind)} delivery`)
    }

    override onResult (a: JournalAction): void {
      if (a.data?.genuine !== false || a.data.status === 401) return
      this.violate({
        ...at(a),
        message: `a ${String(a.data.kind)} delivery was answered ${String(a.data.status ?? a.data.error)}`,
        expected: '401 (ORB-A12)',
        actual: String(a.data.status ?? a.data.error)
      })
    }
  }(info)),

  check({
    id: 'ORB-096',
    title: 'an event delivered twice (a retry: the same X-Orb-Event, a new delivery) is acted on once',
    level: 'required',
    exercise: 'a genuine delivery sent again (tour:attack, --webhook)'
  }, (info) => new class extends Quiet {
    onSent (a: JournalAction): void {
      if (a.data?.duplicate !== true) return
      this.applied()
      this.listen(a, 'the second delivery of the same event')
    }
  }(info)),

  check({
    id: 'ORB-097',
    title: 'a typed command delivered by webhook is answered within 4 s with a 2xx {"notice"}; other events without one',
    level: 'required',
    exercise: 'genuine webhook deliveries (--webhook)'
  }, (info) => new class extends Tally<OrbModel> {
    observe (entry: JournalEntry): void {
      if (entry.kind !== 'action' || entry.name !== 'delivery') return
      if (entry.data?.genuine !== true || entry.data.duplicate === true) return
      this.applied()
      const status = typeof entry.data.status === 'number' ? entry.data.status : undefined
      const command = entry.data.type === 'application_command'
      const notice = entry.data.notice === true
      const ms = Number(entry.data.ms ?? 0)
      const ok = status !== undefined && status >= 200 && status < 300 && (command ? notice && ms <= 4000 : !notice)
      if (ok) return
      this.violate({
        ...at(entry),
        message: `a genuine ${String(entry.data.type)} delivery answered ${status ?? String(entry.data.error)} in ${ms} ms${notice ? ' with a notice' : ''}`,
        expected: command ? 'a 2xx with {"notice": "..."} within 4 s' : 'a 2xx without notice',
        actual: `${status ?? 'no reply'}${notice ? ', notice' : ', no notice'}, ${ms} ms`
      })
    }
  }(info)),

]

/** OBC-13: how long after a genuine mention's delivery a write may still be the reply it asked for. */
export const OWED_MS = 5000

/**
 * A check that listens after a delivery is sent: any write call the bot starts within QUIET_MS of it, before the
 * next delivery, is what that delivery made it do (OBC-04). Deliveries are sent SPACING_MS apart.
 *
 * OBC-13: a genuine mention asks for a reply in its channel, and a bot slowed down (a loaded machine, an HTTP client's
 * first use) may post it after the next delivery has been sent. So each genuine first delivery of a mention is owed
 * one write, for OWED_MS: a write goes first to the oldest mention still owed one, and only a write no mention is owed
 * is what the delivery listened after made the bot do. A bot that acts on a forgery as well as on the mention before
 * it still makes one write more than it was owed.
 */
abstract class Quiet extends Tally<OrbModel> {
  #listening: { a: JournalAction, what: string } | undefined
  /** When each genuine mention still owed its reply was sent, oldest first. */
  #owed: number[] = []
  abstract onSent (a: JournalAction): void
  onResult (_a: JournalAction): void {}

  protected listen (a: JournalAction, what: string): void {
    this.#listening = { a, what }
  }

  observe (entry: JournalEntry): void {
    if (entry.kind === 'action' && entry.name === 'delivery-sent') {
      this.#listening = undefined
      const d = entry.data
      if (d?.genuine === true && d.duplicate !== true && d.type === 'message.mention') this.#owed.push(entry.at)
      this.onSent(entry)
      return
    }
    if (entry.kind === 'action' && entry.name === 'delivery') this.onResult(entry)
    if (entry.kind !== 'exchange' || !isWrite(entry)) return
    while (this.#owed.length > 0 && entry.at > this.#owed[0]! + OWED_MS) this.#owed.shift()
    if (this.#owed.length > 0 && entry.at >= this.#owed[0]!) {
      this.#owed.shift()
      return
    }
    const l = this.#listening
    if (l === undefined) return
    if (entry.at < l.a.at || entry.at > l.a.at + QUIET_MS) return
    this.#listening = undefined
    this.violate({
      ...at(entry),
      message: `${entry.method} ${entry.target} ${seconds(entry.at - l.a.at)} after ${l.what}`,
      expected: 'no action',
      actual: `${entry.method} ${view(entry).path}`
    })
  }
}
