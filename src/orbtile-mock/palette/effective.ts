import type { Registration } from '../registration.js'
import type { UserSettings } from '../user-settings.js'
import { pushAttentionHue, pushBaseHue } from './arcs.js'
import { generatePalette, type GeneratedPalette, type PaletteInput } from './generator.js'
import { NO_FAULTS, type Faults } from '../faults.js'

/** The palette an adapter gets, after the pushes and the user's settings (OT-059, OT-073, OT-085, OT-A13). */
export interface EffectivePalette {
  /** The reply's `adapter.palette`: what was registered, defaults filled, or the user's hue without states. */
  echo: Registration['palette']
  resolvedBaseHue: number
  resolvedAttentionHue: number | undefined
  generated: GeneratedPalette
}

/**
 * OT-059, OT-073, OT-085, OT-A12, OT-A13: the palette after the pushes and the user's override. The echo shows the
 * registered palette with defaults filled, or, under a user override, the user's hue and no states.
 */
export function effectivePalette (registration: Registration, user: UserSettings, faults: Faults = NO_FAULTS):
EffectivePalette {
  const { palette } = registration
  const override = user.baseHue
  const resolvedBaseHue = pushBaseHue(override ?? palette.baseHue, faults)
  const resolvedAttentionHue = palette.attentionHue === undefined ? undefined : pushAttentionHue(palette.attentionHue)
  const { states, ...rest } = palette
  const echo: Registration['palette'] = override === null ? { ...palette } : { ...rest, baseHue: override }
  const generated = paletteOf({
    baseHue: resolvedBaseHue,
    chroma: palette.chroma,
    lightness: palette.lightness,
    ...(resolvedAttentionHue === undefined ? {} : { attentionHue: resolvedAttentionHue }),
    states: override === null ? states : undefined,
    anchorAttention: user.anchorAttention
  })
  return { echo, resolvedBaseHue, resolvedAttentionHue, generated }
}

/**
 * OT-072, OT-078, OT-A11, OT-A12: one warning per hue the registration sent that a push moved. Under the user's hue
 * override the adapter's own baseHue is not drawn, so its warning says so rather than contradict resolvedBaseHue.
 */
export function pushWarnings (registration: Registration, user: UserSettings, faults: Faults = NO_FAULTS): string[] {
  const { baseHue, attentionHue } = registration.palette
  const warnings: string[] = []
  const base = pushBaseHue(baseHue, faults)
  if (base !== baseHue) {
    warnings.push(user.baseHue === null
      ? `reserved-arc: baseHue ${baseHue} moved to ${base}`
      : `reserved-arc: baseHue ${baseHue} would move to ${base}; the user's hue override ${user.baseHue} is in force`)
  }
  if (attentionHue !== undefined) {
    const attention = pushAttentionHue(attentionHue)
    if (attention !== attentionHue) warnings.push(`attention-arc: attentionHue ${attentionHue} moved to ${attention}`)
  }
  return warnings
}

/** How many generated palettes are kept: suites and busy harnesses register the same few palettes again and again. */
const KEPT_PALETTES = 256
const palettes = new Map<string, GeneratedPalette>()

/**
 * generatePalette, remembered: it is pure, and the costliest step of a registration (tens of colour conversions and
 * the guards' loops). The palette handed out is frozen, so that no reader can change what the next adapter gets.
 */
function paletteOf (input: PaletteInput): GeneratedPalette {
  const key = JSON.stringify(input)
  const kept = palettes.get(key)
  if (kept !== undefined) {
    // The newest use goes to the end, so the oldest is the one let go.
    palettes.delete(key)
    palettes.set(key, kept)
    return kept
  }
  const made = generatePalette(input)
  Object.freeze(made.colours)
  Object.freeze(made.sources)
  Object.freeze(made.notes)
  Object.freeze(made)
  palettes.set(key, made)
  if (palettes.size > KEPT_PALETTES) palettes.delete(palettes.keys().next().value!)
  return made
}
