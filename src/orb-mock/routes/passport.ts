import type { OrbRoute, RouteContext } from '../route.js'

/** Filled in by the passport capability. */
export function passportRoutes (_ctx: RouteContext): OrbRoute[] {
  return []
}
