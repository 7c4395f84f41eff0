import type { AdapterRecord } from './adapter-record.js'
import type { GeneratedPalette } from './palette/generator.js'
import { badgeOf, type Registration } from './registration.js'
import { approvalOf, type UserSettings } from './user-settings.js'

/** One adapter in `GET /control/orbtile/state`. Never a token. */
export interface AdapterSnapshot {
  id: string
  user: UserSettings
  enabled: boolean
  reason?: 'awaiting_user' | 'disabled_by_user'
  keypadDecisions: boolean
  lease: { startedAt: string, lastActivity: string, silenceDeadline: string } | null
  registration: Registration | null
  badge: string | null
  palette: {
    baseHue: number
    resolvedBaseHue: number
    resolvedAttentionHue?: number
    waitingHue: number
    colours: GeneratedPalette['colours']
    sources: GeneratedPalette['sources']
  } | null
  /** The warnings of the last registration reply. */
  warnings: string[]
  paletteNotes: string[]
  icon: { 28: string, 56: string } | null
}

const iso = (ms: number): string => new Date(ms).toISOString()

// Where the control server serves an adapter's icons (GET /control/orbtile/adapters/{id}/icon/{28,56}.png).
const CONTROL_ICONS = '/control/orbtile/adapters'

/** The snapshot of one record; `silenceWindow` is the lease's window as it stands now (OT-A08). */
export function snapshotAdapter (record: AdapterRecord, silenceWindow: number): AdapterSnapshot {
  const { lease, registration, palette } = record
  return {
    id: record.id,
    user: { ...record.user },
    ...approvalOf(record.user),
    keypadDecisions: record.keypadDecisions,
    lease: lease === null
      ? null
      : {
          startedAt: iso(lease.startedAt),
          lastActivity: iso(lease.lastActivity),
          silenceDeadline: iso(lease.lastActivity + silenceWindow)
        },
    registration,
    badge: registration === null ? null : badgeOf(registration),
    palette: palette === null
      ? null
      : {
          baseHue: palette.echo.baseHue,
          resolvedBaseHue: palette.resolvedBaseHue,
          ...(palette.resolvedAttentionHue === undefined ? {} : { resolvedAttentionHue: palette.resolvedAttentionHue }),
          waitingHue: palette.generated.waitingHue,
          colours: palette.generated.colours,
          sources: palette.generated.sources
        },
    warnings: record.warnings,
    // The generator's notes for the palette as it stands now, the user's latest settings included.
    paletteNotes: palette?.generated.notes ?? [],
    icon: record.iconImages === null
      ? null
      : { 28: `${CONTROL_ICONS}/${record.id}/icon/28.png`, 56: `${CONTROL_ICONS}/${record.id}/icon/56.png` }
  }
}
