import { OT_138 } from './cursor.js'
import { DECISION_CHECKS } from './decisions.js'
import type { OrbtileCheck } from './define.js'
import { LIFE_CHECKS } from './life.js'
import { PACE_CHECKS } from './pace.js'
import { REGISTRATION_CHECKS } from './registration.js'
import { REQUEST_CHECKS } from './requests.js'
import { TOKEN_CHECKS } from './tokens.js'
import { WIRE_CHECKS } from './connection.js'

/** Every client check of the Orbtile suite, in ledger order, then orbtest's own (OTC-…). */
export const CHECKS: readonly OrbtileCheck[] = [
  ...WIRE_CHECKS, ...TOKEN_CHECKS, ...PACE_CHECKS, ...REQUEST_CHECKS, ...REGISTRATION_CHECKS, ...DECISION_CHECKS,
  OT_138, ...LIFE_CHECKS
].sort((a, b) => order(a.id) - order(b.id) || a.id.localeCompare(b.id))

function order (id: string): number {
  const m = /^(OTC|OT)-(A)?(\d+)$/.exec(id)
  if (m === null) return 1e6
  return (m[1] === 'OTC' ? 2e5 : 0) + (m[2] === 'A' ? 1e5 : 0) + Number(m[3])
}
