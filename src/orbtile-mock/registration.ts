import { errors, type OrbtileError } from './errors.js'
import { readIcon, type Icon } from './icon.js'
import type { StateName } from './palette/generator.js'
import { compareKeys, orderKey, schemaFault, stripUnknown } from './validation.js'

/** OT-052: schemes refused everywhere, whatever a registration lists. */
export const REFUSED_SCHEMES: ReadonlySet<string> = new Set([
  'file', 'javascript', 'data', 'orbtile', 'x-apple.systempreferences'
])

/** What a registration declares it can take back from the app: taps, approvals, questions (OT-A09). */
export type Capability = 'tap' | 'approvals' | 'questions'

/** A registration as the fake keeps it: valid, unknown fields dropped, defaults filled in (OT-A09). */
export interface Registration {
  name: string
  shortName?: string
  palette: {
    baseHue: number
    chroma: number
    lightness: number
    attentionHue?: number
    states?: Partial<Record<StateName, string>> | null
  }
  glyph?: { symbol?: string, monogram?: string }
  /** The icon as sent, without its PNG bytes; `null` when none. */
  icon: { appBundleId?: string, png?: { width: number, height: number, bytes: number } } | null
  version?: string
  homepage?: string
  urlSchemes: string[]
  capabilities: Capability[]
  tapBehavior: 'alsoOpen' | 'eventOnly'
}

/** What reading a PUT body gives: the registration, its unknown-field warnings, and the decoded icon. */
export interface RegistrationRead {
  registration: Registration
  /** `unknown-field: <path>` for each dropped key (OT-007, OT-A11). */
  warnings: string[]
  /** The re-encoded icon, when `icon.png` was sent. */
  iconImages: Icon | null
}

type Body = Record<string, unknown> & {
  name: string
  shortName?: string
  palette: {
    baseHue: number, chroma?: number, lightness?: number, attentionHue?: number, states?: Record<string, string> | null
  }
  glyph?: { symbol?: string, monogram?: string }
  icon?: { png?: string, appBundleId?: string } | null
  version?: string
  homepage?: string
  urlSchemes?: string[]
  capabilities?: Capability[]
  tapBehavior?: 'alsoOpen' | 'eventOnly'
}

/**
 * Reads a `PUT /adapters/{id}` body (OT-041..070, OT-A09, OT-A10, OT-A14, OT-A15): unknown keys dropped and
 * reported, the schema from the spec, then the checks the schema cannot make, in the body's key order: refused URL
 * schemes and the icon's bytes. Throws the first invalid_field. Changes nothing: the caller commits.
 */
export async function readRegistration (raw: Record<string, unknown>): Promise<RegistrationRead> {
  const { value, unknown } = stripUnknown('AdapterRegistration', raw)
  const body = value as Body
  // OT-A25: every fault is ranked by where it stands in the body, the schema's and the ones it cannot see alike.
  const faults: Array<{ at: number[], error: OrbtileError }> = []
  const fault = schemaFault('AdapterRegistration', value)
  if (fault !== undefined) faults.push({ at: orderKey(value, fault.path), error: fault.error })
  const schemes = Array.isArray(body.urlSchemes) ? body.urlSchemes : []
  const refused = schemes.findIndex((scheme) => typeof scheme === 'string' && REFUSED_SCHEMES.has(scheme))
  if (refused !== -1) {
    // OT-A15: refused loudly, not dropped, so the adapter learns of it.
    faults.push({ at: orderKey(value, ['urlSchemes', refused]), error: errors.invalidField(`urlSchemes[${refused}]`, `the scheme ${JSON.stringify(schemes[refused])} is always refused`) })
  }
  faults.sort((a, b) => compareKeys(a.at, b.at))
  const png = typeof body.icon?.png === 'string' ? body.icon.png : undefined
  // The icon is decoded (the costly part) only when no earlier field has failed already.
  const iconFirst = faults[0] === undefined || compareKeys(orderKey(value, ['icon', 'png']), faults[0].at) < 0
  if (png !== undefined && iconFirst) {
    const iconImages = await readIcon(png)
    if (faults[0] !== undefined) throw faults[0].error
    return normalise(body, unknown, iconImages)
  }
  if (faults[0] !== undefined) throw faults[0].error
  return normalise(body, unknown, null)
}

function normalise (body: Body, unknown: string[], iconImages: Icon | null): RegistrationRead {
  const { palette } = body
  return {
    registration: {
      name: body.name,
      ...(body.shortName === undefined ? {} : { shortName: body.shortName }),
      palette: {
        baseHue: palette.baseHue,
        chroma: palette.chroma ?? 1,
        lightness: palette.lightness ?? 0,
        ...(palette.attentionHue === undefined ? {} : { attentionHue: palette.attentionHue }),
        ...(palette.states === undefined ? {} : { states: palette.states as Registration['palette']['states'] })
      },
      ...(body.glyph === undefined ? {} : { glyph: body.glyph }),
      icon: body.icon == null
        ? null
        : {
            ...(body.icon.appBundleId === undefined ? {} : { appBundleId: body.icon.appBundleId }),
            ...(iconImages === null
              ? {}
              : { png: { width: iconImages.width, height: iconImages.height, bytes: iconImages.bytes } })
          },
      ...(body.version === undefined ? {} : { version: body.version }),
      ...(body.homepage === undefined ? {} : { homepage: body.homepage }),
      urlSchemes: body.urlSchemes ?? [],
      capabilities: body.capabilities ?? [],
      tapBehavior: body.tapBehavior ?? 'alsoOpen'
    },
    warnings: unknown.map((path) => `unknown-field: ${path}`),
    iconImages
  }
}

/** OT-A09: the badge text: shortName, else the name cut to 12 characters for display only. */
export function badgeOf (registration: Registration): string {
  return registration.shortName ?? [...registration.name].slice(0, 12).join('')
}
