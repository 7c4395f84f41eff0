/**
 * The colour model of the fake's palette generator, in one place. The spec fixes the pushes, the notes and their
 * triggers in prose; the exact colours are the fake's own (OT-A13 leaves them open). Every colour is built in
 * OKLCH (culori does the maths), then clipped to sRGB.
 *
 * - Adapter family: each state is a stop of lightness L and chroma C at the resolved base hue plus a small hue
 *   offset. `palette.chroma` multiplies C; `palette.lightness` shifts L of every lit stop; the deep stop never moves.
 * - Waiting: `waitingPermission` and `waitingQuestion` sit on the waiting hue: `attentionHue` (pushed) when given,
 *   else the base hue turned DERIVED_WAITING_TURN degrees toward the error hue along the shorter way, so the
 *   direction flips at 210.9 (= 30.9 + 180), then pushed out of the attention arc like an explicit one.
 * - Fixed: the error colours and the neutrals are the same for every adapter (OT-087).
 * - Notes (OT-061, OT-A11), each reachable:
 *   - `gamut:` a generated stop was outside sRGB and its chroma was reduced to fit;
 *   - `wcag:` a stop (generated or from palette.states) gave label text under 4.5:1 (WCAG AA) and its lightness was
 *     lifted;
 *   - `salience:` an adapter-family stop was under SALIENCE_MIN_DELTA_E from the error colour and its hue was turned
 *     away;
 *   - `attention:` no attentionHue, and the derived waiting hue lies in the calm arc (76, 280);
 *   - `proximity:` an attentionHue whose waiting colour is under PROXIMITY_DELTA_E from a built-in waiting colour.
 */

/** The error hue everything keeps clear of. */
export const ERROR_HUE = 30.9

/** OT-072: base hues within 45 degrees of the error hue, 345.9 -> 0 -> 75.9 (an open arc through 0). */
export const RESERVED_ARC = { lower: 345.9, upper: 75.9, midpoint: 30.9 } as const

/** OT-078: attention hues from the error hue to past Claude's terracotta, 18.9 -> 55 (open). */
export const ATTENTION_ARC = { lower: 18.9, upper: 55, midpoint: 36.95 } as const

/** One colour stop of the model: a lightness, a chroma and a turn from the family's hue. */
export interface Stop {
  /** OKLCH lightness, 0..1. */
  l: number
  /** OKLCH chroma before the chroma multiplier. */
  c: number
  /** Hue offset from the resolved base hue, degrees. */
  dh: number
}

/** The adapter family's lit stops, one per adapter-coloured state. `thinking` is the working orb at the base hue. */
export const FAMILY_STOPS = {
  thinking: { l: 0.72, c: 0.14, dh: 0 },
  tool: { l: 0.68, c: 0.15, dh: 6 },
  streaming: { l: 0.78, c: 0.12, dh: -6 },
  starting: { l: 0.80, c: 0.08, dh: 0 },
  idle: { l: 0.60, c: 0.05, dh: 0 },
  done: { l: 0.75, c: 0.09, dh: 0 },
  compacting: { l: 0.66, c: 0.10, dh: 12 }
} as const satisfies Record<string, Stop>

/** The deep stop: the orb's shadow. `palette.lightness` never moves it. */
export const DEEP_STOP: Stop = { l: 0.30, c: 0.05, dh: 0 }

/** The waiting stops, on the waiting hue. */
export const WAITING_STOPS = {
  waitingPermission: { l: 0.70, c: 0.15, dh: 0 },
  waitingQuestion: { l: 0.78, c: 0.12, dh: 0 }
} as const satisfies Record<string, Stop>

/** OT-087: fixed for every adapter, as OKLCH. The error colour sits on the error hue 30.9. */
export const FIXED_COLOURS = {
  error: { l: 0.62, c: 0.19, h: 30.9 },
  offline: { l: 0.55, c: 0, h: 0 },
  empty: { l: 0.35, c: 0, h: 0 }
} as const

/** How far the derived waiting hue turns from the base hue toward the error hue. */
export const DERIVED_WAITING_TURN = 40

/** OT-079: the calm arc of waiting hues, an open interval: the complement of the alarm arc 280 -> 0 -> 76. */
export const CALM_ARC = { from: 76, to: 280 } as const

/** OT-080: the built-in waiting colours an attention colour should stay clear of. */
export const BUILT_IN_WAITING = [
  { name: 'Claude terracotta', l: 0.70, c: 0.15, h: 43 },
  { name: 'Codex violet', l: 0.70, c: 0.15, h: 306 },
  { name: 'ZCode rose', l: 0.70, c: 0.15, h: 355 }
] as const

/** OT-080: "under 10 deltaE_OK x 100", i.e. a Euclidean OKLab distance under 0.10. */
export const PROXIMITY_DELTA_E = 0.10

/**
 * The salience guard: adapter colours (and explicit waiting overrides) keep at least this OKLab distance from the
 * error colour, turning their hue away from it in SALIENCE_STEP degree steps, at most SALIENCE_MAX_STEPS of them.
 * An achromatic colour gets SALIENCE_MIN_CHROMA so that it has a hue to turn. Generated waiting colours are exempt:
 * the attention-arc push already keeps them where the spec allows (down to 18.9).
 */
export const SALIENCE_MIN_DELTA_E = 0.12
export const SALIENCE_STEP = 2
export const SALIENCE_MAX_STEPS = 90
export const SALIENCE_MIN_CHROMA = 0.05

/**
 * Label text drawn on a lit orb, and the WCAG AA contrast it must keep, measured on the colour as emitted (hex).
 * Lightness is lifted in WCAG_LIFT_STEP steps. The fixed colours are exempt: the spec fixes them.
 */
export const LABEL_TEXT = '#111111'
export const WCAG_AA = 4.5
export const WCAG_LIFT_STEP = 0.01

/** Every state colour the generator outputs, in the spec's Activity order, plus `empty` and the deep stop. */
export const PALETTE_KEYS = [
  'starting', 'idle', 'thinking', 'tool', 'streaming', 'waitingPermission', 'waitingQuestion', 'done', 'error',
  'compacting', 'offline', 'empty', 'deep'
] as const

/** One of PALETTE_KEYS. */
export type PaletteKey = typeof PALETTE_KEYS[number]
