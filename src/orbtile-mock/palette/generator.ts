import { createRequire } from 'node:module'
import type { Color, Oklch } from 'culori'
import { pushAttentionHue } from './arcs.js'
import {
  BUILT_IN_WAITING, CALM_ARC, DEEP_STOP, DERIVED_WAITING_TURN, ERROR_HUE, FAMILY_STOPS, FIXED_COLOURS, LABEL_TEXT,
  PROXIMITY_DELTA_E, SALIENCE_MAX_STEPS, SALIENCE_MIN_CHROMA, SALIENCE_MIN_DELTA_E, SALIENCE_STEP, WAITING_STOPS,
  WCAG_AA, WCAG_LIFT_STEP, type PaletteKey, type Stop
} from './colour-model.js'

/** The state names `palette.states` may colour (the spec's StateColours keys). */
export type StateName = keyof typeof FAMILY_STOPS | keyof typeof WAITING_STOPS

/** What the generator works from: the effective palette after the pushes and the user's settings. */
export interface PaletteInput {
  /** The resolved base hue (after the reserved-arc push, the user's override included). */
  baseHue: number
  chroma: number
  lightness: number
  /** The resolved attention hue, when the adapter sent one. */
  attentionHue?: number
  /** Explicit state colours; the caller passes none when the user's hue override replaces them (OT-085). */
  states?: Partial<Record<StateName, string>> | null
  /** OT-086: the user's setting that ignores the waiting overrides. */
  anchorAttention: boolean
}

/** Where a colour came from. */
export type ColourSource = 'generated' | 'explicit' | 'fallback' | 'fixed'

/** What the generator makes of a palette (OT-A11, OT-A12, OT-A13): every colour, where each came from, notes. */
export interface GeneratedPalette {
  /** Every state colour as lowercase `#rrggbb`, plus the deep stop. */
  colours: Record<PaletteKey, string>
  sources: Record<PaletteKey, ColourSource>
  /** The hue the waiting colours sit on. */
  waitingHue: number
  /** The generator's notes, each `"<kind>: <text>"` (OT-061, OT-A11). */
  notes: string[]
}

// culori's ESM entry loads hundreds of modules (about 45 ms); its bundled CommonJS build loads in a fifth of that,
// and only when the first palette is generated, so start-up pays nothing.
type Culori = typeof import('culori')
let culori: {
  toOklch: (colour: Color | string) => Oklch
  inSrgb: (colour: Color) => boolean
  clip: (colour: Color) => Color
  deltaE: (a: Color | string, b: Color | string) => number
  formatHex: Culori['formatHex']
  wcagContrast: Culori['wcagContrast']
  errorColour: Color
  builtIns: Array<typeof BUILT_IN_WAITING[number] & { oklch: Color }>
} | undefined

function lib (): NonNullable<typeof culori> {
  if (culori !== undefined) return culori
  const c = createRequire(import.meta.url)('culori/require') as Culori
  const clip = c.toGamut('rgb', 'oklch')
  culori = {
    toOklch: c.converter('oklch') as (colour: Color | string) => Oklch,
    inSrgb: c.inGamut('rgb'),
    clip,
    deltaE: c.differenceEuclidean('oklab'),
    formatHex: c.formatHex,
    wcagContrast: c.wcagContrast,
    // As drawn: the guards compare emitted colours with the emitted error colour.
    errorColour: c.converter('oklch')(c.formatHex(clip({ mode: 'oklch', ...FIXED_COLOURS.error })))!,
    builtIns: BUILT_IN_WAITING.map((colour) => ({
      ...colour,
      oklch: clip({ mode: 'oklch', l: colour.l, c: colour.c, h: colour.h })
    }))
  }
  return culori
}

const normalise = (hue: number): number => ((hue % 360) + 360) % 360
const fixed = (n: number, digits = 3): string => String(Number(n.toFixed(digits)))

/** The waiting hue derived from a base hue: turned toward the error hue along the shorter way (OT-074's 210.9 flip). */
export function derivedWaitingHue (baseHue: number): number {
  const towardError = normalise(ERROR_HUE - baseHue) <= 180 ? 1 : -1
  return pushAttentionHue(normalise(baseHue + towardError * DERIVED_WAITING_TURN))
}

/** True when a waiting hue lies in the calm arc, where it would not read as an alarm (OT-079). */
export function inCalmArc (hue: number): boolean {
  return hue > CALM_ARC.from && hue < CALM_ARC.to
}

/** Builds every colour of an adapter's palette, with the notes the spec names. Pure: same input, same output. */
export function generatePalette (input: PaletteInput): GeneratedPalette {
  const { toOklch, inSrgb, clip, formatHex } = lib()
  const notes: string[] = []
  const colours = {} as Record<PaletteKey, string>
  const sources = {} as Record<PaletteKey, ColourSource>
  const waitingHue = input.attentionHue ?? derivedWaitingHue(input.baseHue)
  const explicit = input.states ?? {}
  const waitingExplicit: Partial<Record<StateName, string>> = input.anchorAttention ? {} : explicit

  const generated = (name: string, stop: Stop, hue: number, lightnessShift: number): Oklch => {
    const wanted: Oklch = {
      mode: 'oklch', l: clamp01(stop.l + lightnessShift), c: stop.c * input.chroma, h: normalise(hue + stop.dh)
    }
    if (inSrgb(wanted)) return wanted
    const clipped = toOklch(clip(wanted))
    notes.push(`gamut: ${name} chroma ${fixed(wanted.c)} reduced to ${fixed(clipped.c)} to fit sRGB`)
    return clipped
  }
  const place = (name: PaletteKey, colour: Color | string, source: ColourSource): void => {
    colours[name] = typeof colour === 'string' ? formatHex(colour)! : formatHex(clip(colour))
    sources[name] = source
  }

  for (const [name, stop] of Object.entries(FAMILY_STOPS) as Array<[keyof typeof FAMILY_STOPS, Stop]>) {
    // OT-084: thinking supplies tool and streaming when they are left out.
    const given = explicit[name] ?? (name === 'tool' || name === 'streaming' ? explicit.thinking : undefined)
    const source: ColourSource = explicit[name] !== undefined
      ? 'explicit'
      : given !== undefined ? 'fallback' : 'generated'
    const colour = given !== undefined ? toOklch(given)! : generated(name, stop, input.baseHue, input.lightness)
    place(name, guard(name, colour, true, notes, given), source)
  }
  for (const [name, stop] of Object.entries(WAITING_STOPS) as Array<[keyof typeof WAITING_STOPS, Stop]>) {
    // OT-084: waitingPermission supplies waitingQuestion; OT-086: anchorAttention ignores both overrides.
    const given = waitingExplicit[name] ?? (name === 'waitingQuestion' ? waitingExplicit.waitingPermission : undefined)
    const source: ColourSource = waitingExplicit[name] !== undefined
      ? 'explicit'
      : given !== undefined ? 'fallback' : 'generated'
    const colour = given !== undefined ? toOklch(given)! : generated(name, stop, waitingHue, 0)
    // Explicit waiting overrides are guarded like adapter colours; generated ones sit where the attention arc allows.
    place(name, guard(name, colour, given !== undefined, notes, given), source)
  }
  for (const [name, value] of Object.entries(FIXED_COLOURS) as Array<[keyof typeof FIXED_COLOURS, Oklch]>) {
    place(name, clip({ mode: 'oklch', l: value.l, c: value.c, h: value.h }), 'fixed')
  }
  place('deep', generated('deep', DEEP_STOP, input.baseHue, 0), 'generated')

  notes.push(...attentionNotes(input, waitingHue))
  return { colours, sources, waitingHue, notes }
}

/**
 * The notes on the waiting hue: a derived one in the calm arc (OT-079), or a chosen attentionHue whose waiting
 * colour sits close to a built-in waiting colour.
 */
function attentionNotes (input: PaletteInput, waitingHue: number): string[] {
  if (input.attentionHue === undefined) {
    return inCalmArc(waitingHue)
      ? [`attention: the waiting colour derived from baseHue ${fixed(input.baseHue)} sits at hue ${fixed(waitingHue, 1)}, in the calm arc (${CALM_ARC.from}..${CALM_ARC.to}); set palette.attentionHue to a hue in the alarm arc (280 -> 0 -> 76)`]
      : []
  }
  const { clip, deltaE, builtIns } = lib()
  const { l, c } = WAITING_STOPS.waitingPermission
  const attention = clip({ mode: 'oklch', l, c: c * input.chroma, h: waitingHue })
  const nearest = builtIns
    .map((builtIn) => ({ builtIn, distance: deltaE(attention, builtIn.oklch) }))
    .sort((a, b) => a.distance - b.distance)[0]!
  if (nearest.distance >= PROXIMITY_DELTA_E) return []
  return [`proximity: attentionHue ${fixed(input.attentionHue)} is ${fixed(nearest.distance * 100, 1)} deltaE_OK x100 from ${nearest.builtIn.name} (hue ${nearest.builtIn.h}); expected in the alarm arc, not an error`]
}

/**
 * The colour as it will be emitted (rounded to #rrggbb), so that every guard judges exactly what the app draws.
 */
function emitted (colour: Color): Oklch {
  const { toOklch, clip, formatHex } = lib()
  return toOklch(formatHex(clip(colour)))
}

/**
 * The guards a colour goes through, judged on its emitted hex: the salience guard (when `salient`) turns its hue
 * away from the error colour, the WCAG lift raises its lightness for label text. Lifting can bring a colour back
 * near the error colour, so the two run again until both hold. One note per guard that changed something.
 */
function guard (name: string, colour: Oklch, salient: boolean, notes: string[], sent?: string): Oklch | string {
  const { toOklch, clip, deltaE, wcagContrast, formatHex, errorColour } = lib()
  // An explicit colour the guards leave alone is emitted as sent (a trip through OKLCH can move a channel by one), so
  // it is judged as sent too.
  const hexOf = (c: Oklch): string => c === colour && sent !== undefined ? formatHex(sent)! : formatHex(clip(c))
  const clearOfError = (c: Oklch): boolean => deltaE(toOklch(hexOf(c)), errorColour) >= SALIENCE_MIN_DELTA_E
  const readable = (c: Oklch): boolean => wcagContrast(hexOf(c), LABEL_TEXT) >= WCAG_AA
  const from = toOklch(hexOf(colour))
  let current = colour
  let turned = false
  let lifted = false
  for (let round = 0; round < 20; round++) {
    if (salient && !clearOfError(current)) {
      const start = normalise(current.h ?? ERROR_HUE)
      const away = normalise(start - ERROR_HUE) <= 180 ? 1 : -1
      for (let step = 1; step <= SALIENCE_MAX_STEPS && !clearOfError(current); step++) {
        const h = normalise(start + away * SALIENCE_STEP * step)
        current = toOklch(clip({ mode: 'oklch', l: current.l, c: Math.max(current.c, SALIENCE_MIN_CHROMA), h }))
      }
      turned = true
    }
    while (!readable(current) && current.l < 1) {
      current = toOklch(clip({ ...current, l: Math.min(1, current.l + WCAG_LIFT_STEP) }))
      lifted = true
    }
    if ((!salient || clearOfError(current)) && readable(current)) break
  }
  const to = emitted(current)
  if (turned) notes.push(`salience: ${name} turned from hue ${fixed(from.h ?? 0, 1)} to ${fixed(to.h ?? 0, 1)} to stay clear of the error colour`)
  if (lifted) notes.push(`wcag: ${name} lightness ${fixed(from.l)} lifted to ${fixed(to.l)} for ${WCAG_AA}:1 label contrast`)
  return current === colour && sent !== undefined ? sent : current
}

function clamp01 (n: number): number {
  return Math.min(1, Math.max(0, n))
}
