import { errors } from './errors.js'
import { readIcon, type Icon } from './icon.js'
import type { StateName } from './palette/generator.js'
import { schemaError, stripUnknown } from './validation.js'

/** OT-052: schemes refused everywhere, whatever a registration lists. */
export const REFUSED_SCHEMES: ReadonlySet<string> = new Set(['file', 'javascript', 'data', 'orbtile', 'x-apple.systempreferences'])

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
  palette: { baseHue: number, chroma?: number, lightness?: number, attentionHue?: number, states?: Record<string, string> | null }
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
  const invalid = schemaError('AdapterRegistration', value)
  if (invalid !== undefined) throw invalid
  const body = value as Body
  let iconImages: Icon | null = null
  for (const key of Object.keys(body)) {
    if (key === 'urlSchemes') {
      const refused = body.urlSchemes!.findIndex((scheme) => REFUSED_SCHEMES.has(scheme))
      if (refused !== -1) {
        // OT-A15: refused loudly, not dropped, so the adapter learns of it.
        throw errors.invalidField(`urlSchemes[${refused}]`, `the scheme ${JSON.stringify(body.urlSchemes![refused])} is always refused`)
      }
    }
    if (key === 'icon' && typeof body.icon?.png === 'string') iconImages = await readIcon(body.icon.png)
  }
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
            ...(iconImages === null ? {} : { png: { width: iconImages.width, height: iconImages.height, bytes: iconImages.bytes } })
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
