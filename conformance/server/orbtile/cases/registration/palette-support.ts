import { expectAccepted } from './expectations.js'
import type { Reply } from '../../transport.js'
import { lease, put, withPalette, type Body, type RegistrationContext } from './registration-support.js'

// What the palette's cases and decisions share: where the pushes put a hue, and the user's hue override.

/** OT-072, OT-A12: where the reserved-arc push puts a base hue (open arc through 0; the midpoint goes down). */
export function expectedBaseHue (h: number): number {
  const inside = h > 345.9 || h < 75.9
  if (!inside) return h
  return h > 345.9 || h <= 30.9 ? 345.9 : 75.9
}

/** OT-078, OT-A12: where the attention push puts an attention hue. */
export function expectedAttentionHue (h: number): number {
  return h > 18.9 && h < 55 ? (h <= 36.95 ? 18.9 : 55) : h
}

/** Registers the palette under a fresh id (its lease ended at once); fails unless it is accepted. */
export const acceptedPalette = (ctx: RegistrationContext, palette: Body, what: string): Promise<Reply> =>
  expectAccepted(ctx, withPalette(palette), what)

/** A palette with chroma and state colours of its own, which a user hue override replaces (OT-085, OT-A13.b). */
export const overridden = (): Body => withPalette({ baseHue: 200, chroma: 0.8, states: { thinking: '#88bbee' } })

/** The base hue a reply echoes and the one it resolved (after the reserved-arc push). */
export const huesOf = (reply: Reply): { baseHue: unknown, resolvedBaseHue: unknown } =>
  ({ baseHue: reply.json.adapter?.palette?.baseHue, resolvedBaseHue: reply.json.adapter?.resolvedBaseHue })

/** Sets the user's base hue override (null clears it) and registers again. */
export type Override = (baseHue: number | null) => Promise<Reply>

/**
 * Registers `payload` under an id the user allowed; the function it answers sets the user's base hue override (null
 * clears it) and registers the same body again with the lease's token.
 */
export async function userHue (ctx: RegistrationContext, payload: Body, label: string): Promise<Override> {
  const l = await lease(ctx, payload, { label, allow: true })
  return async (baseHue) => {
    await ctx.control!.user(l.id, { baseHue })
    return put(ctx, l.id, payload, l.token)
  }
}
