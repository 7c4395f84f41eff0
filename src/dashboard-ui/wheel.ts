import { html } from 'htm/preact'
import { useState } from 'preact/hooks'
import { act, seg } from './api.js'
import type { Adapter, HueArc } from './types.js'

const R = 50
const RING = 9

/** A point on the wheel for a hue: 0 at the top, turning clockwise, as hue angles are usually drawn. */
function at (hue: number, radius: number): [number, number] {
  const a = (hue - 90) * Math.PI / 180
  return [R + radius * Math.cos(a), R + radius * Math.sin(a)]
}

/** An SVG arc along the ring, from `from` to `to` going clockwise (through 0 when from > to). */
function arcPath ({ from, to }: HueArc, radius: number): string {
  const span = ((to - from) % 360 + 360) % 360
  const [x1, y1] = at(from, radius)
  const [x2, y2] = at(to, radius)
  const large = span > 180 ? 1 : 0
  return `M ${x1.toFixed(2)} ${y1.toFixed(2)} A ${radius} ${radius} 0 ${large} 1 ${x2.toFixed(2)} ${y2.toFixed(2)}`
}

/**
 * The user's hue override (OT-A13's `baseHue`): a wheel in OKLCH hues with the reserved arc (where a base hue is
 * pushed away from the error hue) and the calm arc (base hues whose waiting colour would not draw the eye) marked,
 * the hue in force as a dot. Click the wheel, or use it as a slider (arrows move by 1, Shift by 15; Enter sets),
 * or type a hue. Colour is not the only signal: the arcs are dashed and named, the hues are written out.
 */
export function HueControl ({ adapter, wheel }: { adapter: Adapter, wheel: { reserved: HueArc, calm: HueArc } }) {
  const override = adapter.user.baseHue
  const inForce = adapter.palette?.resolvedBaseHue ?? adapter.registration?.palette.baseHue ?? 0
  const [pending, setPending] = useState<number | undefined>(undefined)
  const shown = pending ?? override ?? inForce
  const set = (hue: number | null): void => {
    setPending(undefined)
    act('PUT', `/control/orbtile/adapters/${seg(adapter.id)}/user`, { baseHue: hue },
      hue === null ? `clear ${adapter.id}'s hue` : `hue ${hue} for ${adapter.id}`)
  }
  const onClick = (e: MouseEvent): void => {
    const box = (e.currentTarget as SVGElement).getBoundingClientRect()
    const x = e.clientX - box.left - box.width / 2
    const y = e.clientY - box.top - box.height / 2
    set(Math.round((Math.atan2(y, x) * 180 / Math.PI + 90 + 360) % 360) % 360)
  }
  const onKey = (e: KeyboardEvent): void => {
    const step = e.shiftKey ? 15 : 1
    const moves: Record<string, number> = {
      ArrowRight: step, ArrowUp: step, ArrowLeft: -step, ArrowDown: -step, PageUp: 30, PageDown: -30
    }
    if (e.key in moves) {
      e.preventDefault()
      setPending(((Math.round(shown) + moves[e.key]!) % 360 + 360) % 360)
    } else if (e.key === 'Enter' && pending !== undefined) {
      e.preventDefault()
      set(pending)
    }
  }
  const [dx, dy] = at(inForce, R - RING / 2)
  const [px, py] = at(shown, R - RING / 2)
  const inputId = `hue-${adapter.id}`
  return html`
    <div class="hue">
      <div class="wheel-box">
      <div class="wheel-ring" aria-hidden="true"></div>
      <svg class="wheel" viewBox="0 0 100 100" role="slider" tabindex="0" aria-label=${`Hue override for ${adapter.id}`}
        aria-valuemin="0" aria-valuemax="359" aria-valuenow=${Math.round(shown)}
        aria-valuetext=${`${Math.round(shown)} degrees${pending === undefined ? '' : ', press Enter to set'}`}
        onClick=${onClick} onKeyDown=${onKey}>
        <path class="arc arc-reserved" d=${arcPath(wheel.reserved, R - RING - 3)}><title>reserved arc</title></path>
        <path class="arc arc-calm" d=${arcPath(wheel.calm, R - RING - 3)}><title>calm arc</title></path>
        <circle class="hue-dot" cx=${dx} cy=${dy} r="4"><title>hue in force</title></circle>
        ${pending === undefined ? null : html`<circle class="hue-pending" cx=${px} cy=${py} r="4" />`}
        <text x="50" y="48" class="wheel-text">${Math.round(inForce)}°</text>
        <text x="50" y="60" class="wheel-sub">${override === null ? 'registered' : 'override'}</text>
      </svg>
      </div>
      <div class="hue-form">
        <label for=${inputId}>Hue override</label>
        <input id=${inputId} type="number" min="0" max="359" step="1" value=${Math.round(shown)}
          onChange=${(e: Event) => setPending(Number((e.target as HTMLInputElement).value))} />
        <button type="button" onClick=${() => set(Math.round(shown) % 360)}>Set hue</button>
        <button type="button" disabled=${override === null} onClick=${() => set(null)}>Clear</button>
        <p class="legend">
          <span class="key key-reserved"></span> reserved ${wheel.reserved.from}°→${wheel.reserved.to}°
          <span class="key key-calm"></span> calm ${wheel.calm.from}°→${wheel.calm.to}°
        </p>
      </div>
    </div>`
}
