/**
 * The two hue pushes of the palette (OT-072, OT-078, OT-A12). Both arcs are open intervals; a hue inside moves
 * to the nearer edge, and a hue exactly on the midpoint goes to the lower edge. Comparisons are made against the
 * edge and midpoint literals themselves, never against computed distances, so ties land exactly as OT-A12 says.
 */

import { ATTENTION_ARC, RESERVED_ARC } from './colour-model.js'
import { NO_FAULTS, type Faults } from '../faults.js'

/** OT-072, OT-A12: where a base hue lands. The arc wraps through 0. */
export function pushBaseHue (hue: number, faults: Faults = NO_FAULTS): number {
  const { lower, upper, midpoint } = RESERVED_ARC
  const inside = hue > lower || hue < upper
  if (!inside) return hue
  // On the wrapped side (above 345.9) and up to the midpoint, the lower edge is nearer.
  const lowerIsNearer = hue > lower || hue <= midpoint
  if (faults.has('hue-edge')) return lowerIsNearer ? upper : lower
  return lowerIsNearer ? lower : upper
}

/** OT-078, OT-A12: where an attention hue lands. */
export function pushAttentionHue (hue: number): number {
  const { lower, upper, midpoint } = ATTENTION_ARC
  if (!(hue > lower && hue < upper)) return hue
  return hue <= midpoint ? lower : upper
}
