import { derivedWaitingHue, inCalmArc } from './palette/generator.js'
import { ATTENTION_ARC, RESERVED_ARC } from './palette/colour-model.js'

/** An arc of the hue wheel, open, from `from` to `to` going up through 0 when `from > to`. */
export interface HueArc { from: number, to: number }

/** The hue wheel the dashboard draws for the user's hue override. */
export interface HueWheel {
  /** OT-072: base hues pushed out of the error hue's neighbourhood. */
  reserved: HueArc
  /** OT-078: attention hues pushed out. */
  attention: HueArc
  /** OT-079: base hues whose derived waiting colour lands in the calm arc (the `attention:` note), in whole degrees. */
  calm: HueArc
}

let wheel: HueWheel | undefined

/** The wheel's arcs, read from the palette model and generator themselves (computed once, on first use). */
export function hueWheel (): HueWheel {
  wheel ??= {
    reserved: { from: RESERVED_ARC.lower, to: RESERVED_ARC.upper },
    attention: { from: ATTENTION_ARC.lower, to: ATTENTION_ARC.upper },
    calm: calmBaseHues()
  }
  return wheel
}

// The calm base hues are one run of whole degrees (about 116..240): the first and last of it bound the arc.
function calmBaseHues (): HueArc {
  const calm = Array.from({ length: 360 }, (_, hue) => inCalmArc(derivedWaitingHue(hue)))
  const first = calm.findIndex((c, hue) => c && !calm[(hue + 359) % 360])
  let last = first
  while (calm[(last + 1) % 360] === true && (last + 1) % 360 !== first) last = (last + 1) % 360
  return { from: first - 1, to: (last + 1) % 360 }
}
