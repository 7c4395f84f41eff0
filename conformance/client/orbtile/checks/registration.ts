// The checks of what a registration carries (its palette, icon and the closed objects) and of the optional
// features an adapter uses.
import type { Outcomes } from '../../core/check.js'
import type { JournalExchange } from '../../core/journal.js'
import { API_MINOR, def } from '../../../../src/spec/orbtile.js'
import { WINDOWS } from '../../core/windows.js'
import { isObject, updates, view, type ExchangeView } from '../model.js'
import { at, type OrbtileCheck } from './define.js'

/** A registration's palette, when the request is a registration with one. */
function palette (v: ExchangeView): Record<string, unknown> | undefined {
  return v.route === 'register' && isObject(v.body) && isObject(v.body.palette) ? v.body.palette : undefined
}

const OT_064: OrbtileCheck = {
  id: 'OT-064',
  title: 'an adapter that sent an icon sends it again with every re-registration',
  level: 'MUST',
  ledger: 'An adapter that wants to keep its icon sends icon again with every re-registration (a re-registration without one clears it, OT-063).',
  clauses: [{
    key: 'again',
    text: 'the icon sent again at every re-registration',
    level: 'decision',
    basis: 'OTC-26',
    why: 'the rule binds an adapter that wants to keep its icon, which the wire cannot tell: orbtest takes one that sent an icon as wanting to keep it',
    exercise: 'a registration with an icon, then another (the app ends the lease: tour:app)'
  }],
  windows: [],
  reads: {},
  judge: () => {
    const iconed = new Set<string>()
    return {
      observe (entry, _model, out) {
        if (entry.kind !== 'exchange') return
        const v = view(entry)
        if (v.route !== 'register' || !isObject(v.body)) return
        const hasIcon = isObject(v.body.icon)
        if (iconed.has(v.adapterId!)) {
          if (hasIcon) out.exercised('again')
          else {
            out.violation('again', at(entry, {
              message: `${v.adapterId!} registered again without the icon it sent before (OT-063 clears it)`,
              expected: 'icon again',
              actual: 'icon' in v.body ? `icon: ${JSON.stringify(v.body.icon)}` : 'no icon'
            }))
          }
        }
        if (hasIcon && v.ok) iconed.add(v.adapterId!)
      }
    }
  }
}

/** OT-074: the baseHues where the waiting colour turns. */
const TURN = WINDOWS['base-hue-turn'].bounds

const OT_074: OrbtileCheck = {
  id: 'OT-074',
  title: 'baseHue avoids 205..215, where the waiting colour turns',
  level: 'SHOULD',
  ledger: 'Adapters avoid baseHue 205..215, because the waiting colour changes direction at 210.9. Pick one side.',
  clauses: [
    { key: 'hue', text: 'baseHue outside 205..215', level: 'SHOULD', exercise: 'a registration with a palette' }
  ],
  windows: ['base-hue-turn'],
  reads: {},
  judge: () => ({
    observe (entry, _model, out) {
      if (entry.kind !== 'exchange') return
      const hue = palette(view(entry))?.baseHue
      if (typeof hue !== 'number') return
      if (hue < TURN.from || hue > TURN.to) out.exercised('hue')
      else {
        out.violation('hue', at(entry, {
          message: `baseHue ${hue}`,
          expected: `outside ${TURN.from}..${TURN.to}`,
          actual: String(hue)
        }))
      }
    }
  })
}

/** OT-081: the calm arc of base hues, the alarm arc, and the built-in waiting colours with the clearance from them. */
const ARCS = WINDOWS['attention-arcs'].bounds

/** OT-081's three rules on one registration's attentionHue. */
function attentionHue (e: JournalExchange, out: Outcomes): void {
  const v = view(e)
  const p = palette(v)
  const hue = p?.attentionHue
  if (typeof hue !== 'number') return
  // The adapter's own baseHue, the one it chose: a user's hue override, echoed in the reply, is not its choice.
  const base = p!.baseHue
  const where = { seq: e.seq, at: e.at, actual: `attentionHue ${hue}` }
  const { calmFrom, calmTo, alarmFrom, alarmTo, waiting, clearance } = ARCS
  if (typeof base === 'number' && (base < calmFrom || base > calmTo)) {
    out.violation('calm', { ...where, message: `attentionHue set for baseHue ${base}, whose derived waiting colour is not calm`, expected: `no attentionHue outside the calm arc (${calmFrom}..${calmTo})` })
  } else if (typeof base === 'number') out.exercised('calm')
  // The alarm arc runs through 0: a hue outside it lies between its two ends.
  if (hue > alarmTo && hue < alarmFrom) {
    out.violation('arc', {
      ...where,
      message: `attentionHue ${hue} is outside the alarm arc`,
      expected: `a hue in ${alarmFrom} → 0 → ${alarmTo}`
    })
    return
  }
  const near = waiting.find((c) => Math.min(Math.abs(hue - c), 360 - Math.abs(hue - c)) < clearance)
  if (near === undefined) out.exercised('arc')
  else out.violation('arc', { ...where, message: `attentionHue ${hue} sits on a built-in waiting colour (${near})`, expected: `clear of ${waiting.slice(0, -1).join(', ')} and ${waiting.at(-1)} (the gaps: 72..75, 330, 16..18)` })
}

const OT_081: OrbtileCheck = {
  id: 'OT-081',
  title: 'an attentionHue is set only for a calm derived colour, in the alarm arc, clear of the built-in colours',
  level: 'SHOULD',
  ledger: 'Rules for adapters choosing an attentionHue: set it only when the derived waiting colour is in the calm arc; choose a hue in the alarm arc 280 -> 0 -> 76, away from 43, 306 and 355.',
  clauses: [
    {
      key: 'calm',
      text: 'set only when the derived waiting colour is in the calm arc',
      level: 'SHOULD',
      exercise: 'a registration with palette.attentionHue'
    },
    {
      key: 'arc',
      text: 'in the alarm arc, clear of 43, 306 and 355',
      level: 'SHOULD',
      exercise: 'a registration with palette.attentionHue'
    }
  ],
  windows: ['attention-arcs'],
  reads: {},
  judge: () => ({
    observe (entry, _model, out) {
      if (entry.kind === 'exchange') attentionHue(entry, out)
    }
  })
}

/** Each closed object a request carries, with the spec's definition it must keep to. */
function closedObjects (v: ExchangeView): Array<{ field: string, value: unknown, name: string }> {
  const found: Array<{ field: string, value: unknown, name: string }> = []
  if (v.route === 'register' && isObject(v.body)) {
    found.push(
      { field: 'palette', value: v.body.palette, name: 'Palette' },
      { field: 'glyph', value: v.body.glyph, name: 'Glyph' }
    )
  }
  for (const u of updates(v)) {
    if (u.body.message !== undefined) found.push({ field: `${u.path}message`, value: u.body.message, name: 'Message' })
  }
  return found.filter((f) => isObject(f.value))
}

const OT_A10: OrbtileCheck = {
  id: 'OT-A10',
  title: 'no unknown keys inside the closed objects (palette, glyph, message)',
  level: 'decision',
  ledger: 'OT-A10: the spec closes Palette, Glyph and Message (additionalProperties: false); an adapter sends no key they do not define.',
  clauses: [{ key: 'closed', text: 'only the keys the spec defines inside palette, glyph and message', level: 'decision', basis: 'OT-A10', exercise: 'a registration' }],
  windows: [],
  reads: {},
  judge: () => ({
    observe (entry, _model, out) {
      if (entry.kind !== 'exchange') return
      for (const { field, value, name } of closedObjects(view(entry))) {
        const known = Object.keys(def(name).properties as object)
        const unknown = Object.keys(value as object).filter((k) => !known.includes(k))
        if (unknown.length === 0) out.exercised('closed')
        else out.violation('closed', at(entry, { message: `${field} has keys the spec does not define`, expected: `only ${known.join(', ')}`, actual: unknown.join(', ') }))
      }
    }
  })
}

const OT_A28: OrbtileCheck = {
  id: 'OT-A28',
  title: 'icon and palette.states are sent only to an app whose GET /info says apiMinor 2 or more',
  level: 'decision',
  ledger: 'OT-A28: an adapter checks apiMinor in GET /info before sending the v1.2 fields (icon, palette.states).',
  clauses: [{ key: 'minor', text: 'no v1.2 fields to an app that says apiMinor below 2', level: 'decision', basis: 'OT-A28', exercise: 'an older app (tour:older-app, where GET /info says apiMinor 1)' }],
  windows: [],
  reads: {},
  judge: () => {
    let minor: number | undefined
    return {
      observe (entry, _model, out) {
        if (entry.kind !== 'exchange') return
        const v = view(entry)
        if (v.route === 'info' && v.ok && isObject(v.reply) && typeof v.reply.apiMinor === 'number') minor = v.reply.apiMinor
        // icon and palette.states are the spec's own minor version's (v1.2): an app of an older minor has neither.
        if (v.route !== 'register' || !isObject(v.body) || minor === undefined || minor >= API_MINOR) return
        const sent = [
          ...(isObject(v.body.icon) ? ['icon'] : []),
          ...(palette(v)?.states !== undefined ? ['palette.states'] : [])
        ]
        if (sent.length === 0) out.exercised('minor')
        else out.violation('minor', at(entry, { message: `v1.2 fields sent to an app that says apiMinor ${minor}`, expected: 'v1.1 fields only', actual: sent.join(', ') }))
      }
    }
  }
}

const OT_010: OrbtileCheck = {
  id: 'OT-010',
  title: 'the optional features the adapter uses (none is required)',
  level: 'info',
  ledger: 'Everything added since v1.0 is optional: event capabilities (v1.1), adapter icons and per-state colours (v1.2), and project. An adapter that never sends them is fully conforming.',
  clauses: [{ key: 'features', text: 'the optional features used', level: 'info', exercise: 'a registration' }],
  windows: [],
  reads: {},
  judge: () => {
    const used = new Set<string>()
    let registered = false
    return {
      observe (entry) {
        if (entry.kind !== 'exchange') return
        const v = view(entry)
        if (v.route === 'register' && isObject(v.body)) {
          registered = true
          if (Array.isArray(v.body.capabilities)) {
            for (const c of v.body.capabilities) used.add(`capability ${String(c)} (v1.1)`)
          }
          if (isObject(v.body.icon)) used.add('icon (v1.2)')
          if (palette(v)?.states !== undefined) used.add('palette.states (v1.2)')
        }
        for (const u of updates(v)) if (u.body.project !== undefined) used.add('project (Orbtile 0.2.17+)')
      },
      open (_model, _end, out) {
        if (!registered) return
        out.exercised('features')
        out.note(used.size === 0 ? 'v1.0 features only' : [...used].sort().join('; '))
      }
    }
  }
}

export const REGISTRATION_CHECKS: readonly OrbtileCheck[] = [OT_010, OT_064, OT_074, OT_081, OT_A10, OT_A28]
