import type { OrbRoute, RouteContext } from '../route.js'

/** Filled in by the directory capability. */
export function directoryRoutes (_ctx: RouteContext): OrbRoute[] {
  return []
}
