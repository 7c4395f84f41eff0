/** The user's side of one adapter id: Settings > Agents in the real app (OT-A09, OT-A26). */

/** OT-A09: where the user stands on an adapter id. Kept per id, across leases and restarts. */
export type Approval = 'awaiting_user' | 'allowed' | 'disabled_by_user'

/** The user's settings for one adapter id (OT-A26): Settings > Agents in the real app. */
export interface UserSettings {
  approval: Approval
  /** OT-056: the "Approve from the keypad" switch. */
  keypad: boolean
  /** OT-085: the user's base hue override, or null. */
  baseHue: number | null
  /** OT-086 */
  anchorAttention: boolean
}

/** A change to the user's settings; `allowed: false` is the user disabling the adapter. */
export interface UserChange {
  allowed?: boolean
  keypad?: boolean
  baseHue?: number | null
  anchorAttention?: boolean
}

/** OT-A26: applies the user's change to their settings, in place. */
export function applyUserChange (user: UserSettings, change: UserChange): void {
  if (change.allowed !== undefined) user.approval = change.allowed ? 'allowed' : 'disabled_by_user'
  if (change.keypad !== undefined) user.keypad = change.keypad
  if (change.baseHue !== undefined) user.baseHue = change.baseHue
  if (change.anchorAttention !== undefined) user.anchorAttention = change.anchorAttention
}

/** OT-060, OT-A09: the reply's `enabled`, and a `reason` only when not enabled. */
export function approvalOf (user: UserSettings): { enabled: boolean, reason?: 'awaiting_user' | 'disabled_by_user' } {
  return user.approval === 'allowed' ? { enabled: true } : { enabled: false, reason: user.approval }
}
