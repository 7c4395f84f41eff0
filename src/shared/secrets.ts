import { randomBytes, timingSafeEqual } from 'node:crypto'

/** OT-013, OT-018: a token is 256 random bits. */
export const TOKEN_BYTES = 32

/** A secret and its UTF-8 bytes, kept side by side: the bytes are what every request compares against. */
export interface Secret {
  readonly text: string
  readonly bytes: Buffer
}

/** A new random token (OT-013, OT-018): 256 bits, base64url without padding, 43 characters. */
export function newToken (): string {
  return randomBytes(TOKEN_BYTES).toString('base64url')
}

/** A secret from its text, with its bytes computed once. */
export function secretOf (text: string): Secret {
  return { text, bytes: Buffer.from(text, 'utf8') }
}

/** A new random secret (see newToken). */
export function newSecret (): Secret {
  return secretOf(newToken())
}

/**
 * True when `given` is exactly the expected secret, compared in time that does not depend on where they differ. Only
 * the length can leak, and token lengths are public (43 characters, OT-018), so a length mismatch answers at once.
 */
export function sameSecret (given: string, expected: Buffer): boolean {
  const bytes = Buffer.from(given, 'utf8')
  return bytes.length === expected.length && timingSafeEqual(bytes, expected)
}
