import type { OrbRoute, RouteContext } from '../route.js'

/** Filled in by the music capability. */
export function musicRoutes (_ctx: RouteContext): OrbRoute[] {
  return []
}
