import type { OrbRoute, RouteContext } from '../route.js'

/** Filled in by the commands capability. */
export function commandRoutes (_ctx: RouteContext): OrbRoute[] {
  return []
}
