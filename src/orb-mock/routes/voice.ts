import type { OrbRoute, RouteContext } from '../route.js'

/** Filled in by the voice capability. */
export function voiceRoutes (_ctx: RouteContext): OrbRoute[] {
  return []
}
