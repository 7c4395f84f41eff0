import type { TimerHandle } from '../shared/clock.js'
import type { Secret } from '../shared/secrets.js'
import type { Icon } from './icon.js'
import type { EffectivePalette } from './palette/effective.js'
import type { Registration } from './registration.js'
import type { UserSettings } from './user-settings.js'

/** Why a lease ended (OT-023, OT-A07, OT-A08). */
export type LeaseEndReason = 'unregistered' | 'silence' | 'token_regenerated' | 'restart' | 'reset'

/** A live lease: the ownership of an id's routes (OT-018..023), with its token and silence timer (OT-A08). */
export interface Lease {
  /** The lease token, with its bytes for the constant-time check on every adapter route. */
  token: Secret
  startedAt: number
  lastActivity: number
  timer: TimerHandle
}

/** Everything the fake holds about one adapter id. */
export interface AdapterRecord {
  readonly id: string
  user: UserSettings
  /** The last accepted registration; kept after its lease ends, as the app keeps the adapter in Settings. */
  registration: Registration | null
  iconImages: Icon | null
  palette: EffectivePalette | null
  /** The warnings of the last registration reply. */
  warnings: string[]
  /** OT-057: the keypad switch as it stood at the last registration. */
  keypadDecisions: boolean
  lease: Lease | null
}

/** The registration reply (OT-041, OT-059..061, OT-018). */
export interface RegistrationReply {
  adapter: { id: string, palette: Registration['palette'], resolvedBaseHue: number }
  enabled: boolean
  reason?: 'awaiting_user' | 'disabled_by_user'
  keypadDecisions: boolean
  warnings: string[]
  adapterToken: string
}

/** A record for an id the fake has not seen: awaiting the user, keypad off, no override (OT-A09, OT-A26). */
export function newRecord (id: string): AdapterRecord {
  return {
    id,
    user: { approval: 'awaiting_user', keypad: false, baseHue: null, anchorAttention: false },
    registration: null,
    iconImages: null,
    palette: null,
    warnings: [],
    keypadDecisions: false,
    lease: null
  }
}
