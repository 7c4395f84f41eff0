import type { Outcomes } from '../../core/check.js'
import type { JournalExchange, Millis } from '../../core/journal.js'
import { isObject, view, type OrbtileModel } from '../model.js'
import { at, type OrbtileCheck } from './define.js'

/** One adapter's cursor under one lease, as its polls and their replies left it (OT-138). */
interface Cursor {
  token: string
  /** The highest sequence each reply delivered, and when the reply was handed to the socket. */
  received: Array<{ upTo: number, at: Millis }>
  ack: number
  ackAt: Millis
  /** The last lease's cursor: a poll that carries an older lease's token is judged by that one's (OTC-21). */
  before: Cursor | undefined
}

/** The highest sequence the adapter had received by `at`. */
function highestBy (c: Cursor | undefined, by: Millis): number {
  let top = 0
  for (const r of c?.received ?? []) if (r.at <= by) top = Math.max(top, r.upTo)
  return top
}

/** The highest sequence received under any lease so far, by `at`. */
function highestEver (c: Cursor | undefined, by: Millis): number {
  let top = 0
  for (let x = c; x !== undefined; x = x.before) top = Math.max(top, highestBy(x, by))
  return top
}

/** The cursor a poll belongs to: the one whose token it carries, whenever its reply ended (OTC-21). */
function cursorOf (cursors: Map<string, Cursor>, adapterId: string, e: JournalExchange, model: OrbtileModel): Cursor {
  const token = model.leaseBefore?.token ?? ''
  let c = cursors.get(adapterId)
  if (c === undefined || c.token !== token) {
    c = { token, received: [], ack: 0, ackAt: -1, before: c }
    cursors.set(adapterId, c)
  }
  const sent = e.headers['x-orbtile-adapter-token']
  for (let x: Cursor | undefined = c; x !== undefined; x = x.before) if (x.token === sent) return x
  return c
}

/**
 * `ack <= after`, and no decrease: a lower ack from a poll sent before a higher one is no decrease, nor is one below
 * an ack the app refused (a cursor of the last lease refused invalid_cursor, OT-A23, is not this lease's ack).
 */
function judgeAck (c: Cursor, e: JournalExchange, body: Record<string, unknown>, out: Outcomes): void {
  const after = typeof body.after === 'number' ? body.after : 0
  const ack = typeof body.ack === 'number' ? body.ack : 0
  let broken = false
  if (ack > after) {
    broken = true
    out.violation('bounds', at(e, { message: `ack ${ack} is above after ${after}`, expected: 'ack <= after', actual: `after ${after}, ack ${ack}` }))
  }
  if (ack < c.ack && e.at > c.ackAt) {
    broken = true
    out.violation('bounds', at(e, {
      message: `ack went down from ${c.ack} to ${ack}${'ack' in body ? '' : ' (left out: its default is 0)'}`,
      expected: `ack >= ${c.ack}`,
      actual: `ack ${ack}`
    }))
  }
  if (!broken) out.exercised('bounds')
  if (ack > c.ack && view(e).ok) {
    c.ack = ack
    c.ackAt = e.at
  }
}

/** A poll whose `after` was past what the journal had shown received when it came. */
interface Unsettled { c: Cursor, e: JournalExchange, after: number }

/**
 * `after` never past the highest sequence received: under this lease (OT-A23) or, at all, under any. Judged once
 * the journal is whole: a reply the app's restart cut can be reported after a poll it came before (OTC-20).
 */
function judgeAfter (unsettled: readonly Unsettled[], out: Outcomes): void {
  const told = new Map<Cursor, number>()
  for (const { c, e, after } of unsettled) {
    const here = highestBy(c, e.at)
    const ever = highestEver(c, e.at)
    if (after <= here) {
      out.exercised('after')
      continue
    }
    if (after > ever) {
      out.violation('after', at(e, { message: `after ${after} is past the highest sequence received, ${ever}`, expected: `after <= ${ever}`, actual: `after ${after}` }))
      continue
    }
    // A cursor carried over from the last lease: one poll refused invalid_cursor is how OT-A23 tells the adapter.
    const refused = view(e).code === 'invalid_cursor'
    const n = (told.get(c) ?? 0) + (refused ? 1 : 0)
    told.set(c, n)
    if (refused && n === 1) {
      out.exercised('lease')
      continue
    }
    out.violation('lease', at(e, {
      message: `after ${after} is past the highest sequence received under this lease, ${here}`,
      expected: `after <= ${here} (a new lease starts its sequences again, OT-A23)`,
      actual: `after ${after}${refused ? ', refused invalid_cursor again' : ''}`
    }))
  }
}

/**
 * The sequences a poll's reply may have delivered: a reply journaled as cut may have reached the adapter all the same
 * (its bytes can be in the kernel when the cut comes), and an `after` up to what it carried is no violation.
 */
function noteReceived (c: Cursor, e: JournalExchange): void {
  const v = view(e)
  if (!v.ok || !isObject(v.reply) || !Array.isArray(v.reply.events)) return
  let top = 0
  for (const ev of v.reply.events) if (isObject(ev) && typeof ev.sequence === 'number') top = Math.max(top, ev.sequence)
  if (top > 0) c.received.push({ upTo: top, at: e.end })
  if (c.received.length > 32) {
    const old = c.received.splice(0, c.received.length - 31)
    c.received.unshift({ upTo: Math.max(...old.map((r) => r.upTo)), at: old.at(-1)!.at })
  }
}

export const OT_138: OrbtileCheck = {
  id: 'OT-138',
  title: 'the cursor: ack <= after, ack never decreases, after never passes the highest sequence received',
  level: 'MUST',
  ledger: 'Cursor rules for the adapter: after is the last locally applied sequence; ack <= after, and ack never decreases; after never goes past the highest sequence received.',
  clauses: [
    {
      key: 'bounds',
      text: 'ack <= after, and ack never decreases (a left-out ack is 0)',
      level: 'MUST',
      exercise: 'an events poll'
    },
    { key: 'after', text: 'after never past the highest sequence received', level: 'MUST', exercise: 'an events poll' },
    {
      key: 'lease',
      text: 'after a new lease, after never past the highest sequence received under it, once told (invalid_cursor)',
      level: 'decision',
      basis: 'OT-A23',
      why: 'that sequences start again with each lease is orbtest\'s reading where the spec is silent',
      exercise: 'a new lease while the adapter polls (tour:app)'
    }
  ],
  windows: [],
  reads: {},
  judge: () => {
    const cursors = new Map<string, Cursor>()
    const unsettled: Unsettled[] = []
    return {
      observe (entry, model, out) {
        if (entry.kind !== 'exchange') return
        const v = view(entry)
        if (v.route !== 'events' || v.adapterId === undefined || !v.bodyRead) return
        const c = cursorOf(cursors, v.adapterId, entry, model)
        const body = isObject(v.body) ? v.body : {}
        judgeAck(c, entry, body, out)
        const after = typeof body.after === 'number' ? body.after : 0
        if (after <= highestBy(c, entry.at)) out.exercised('after')
        else unsettled.push({ c, e: entry, after })
        noteReceived(c, entry)
      },
      open (_model, _end, out) {
        judgeAfter(unsettled, out)
      }
    }
  }
}
