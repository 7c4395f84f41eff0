import { createHash, createHmac } from 'node:crypto'

/** ORB-091: the signing key: sha256(token) as lowercase hex, used as its 64 ASCII bytes. */
export function signingKey (token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex')
}

/** ORB-091: `v1`, the lowercase hex HMAC-SHA256 of `"<t>.<raw body>"` under `signingKey(token)`. */
export function signature (token: string, t: number, rawBody: string): string {
  return createHmac('sha256', signingKey(token)).update(`${t}.`, 'utf8').update(rawBody, 'utf8').digest('hex')
}
