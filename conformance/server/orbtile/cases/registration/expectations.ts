import fc from 'fast-check'
import { adapterId, CaseFailure } from '../../orbtile-case.js'
import { errorProblem, expectStatus } from '../../expect.js'
import type { Reply } from '../../transport.js'
import { once, put, registrationValid, type Body, type RegistrationContext } from './registration-support.js'

// Expectations beyond expect.ts that several topics of the registration area share: invalid_field on a field, the
// reply's warnings, and properties whose oracle is the spec's own schema.

/** A field or any field under it (`palette` matches `palette.baseHue` and `palette[0]`). */
export const fieldUnder = (prefix: string): RegExp => new RegExp(`^${prefix.replace(/[.[\]]/g, '\\$&')}(?:$|[.[])`)

/** Fails unless the reply is `invalid_field`, with `field` exactly (a string) or matching (a RegExp). */
export function expectInvalid (reply: Reply, what: string, field?: string | RegExp): void {
  const problem = errorProblem(reply, 'invalid_field')
  const got: unknown = reply.json?.error?.field
  const fieldOk = field === undefined || (typeof field === 'string' ? got === field : field.test(String(got)))
  if (problem !== undefined || !fieldOk) {
    throw new CaseFailure(`${what}: ${problem ?? `field ${String(got)}`}`, `400 {"error":{"code":"invalid_field"${field === undefined ? '' : `,"field":"${String(field)}"`}}}`, `${reply.status} ${reply.text.slice(0, 500)}`)
  }
}

/** Registers the body under a fresh id (its lease ended at once); fails unless it is accepted (200). */
export async function expectAccepted (ctx: RegistrationContext, payload: unknown, what: string): Promise<Reply> {
  const reply = await once(ctx, payload)
  expectStatus(reply, 200, what)
  return reply
}

/** Fails unless the reply is a success (2xx). */
export function expectOk (reply: Reply, what: string): void {
  if (reply.status < 200 || reply.status > 299) {
    throw new CaseFailure(`${what}: status ${reply.status}`, '2xx', `${reply.status} ${reply.text.slice(0, 500)}`)
  }
}

/** Fails unless the reply is a refusal (not 2xx). */
export function expectRefused (reply: Reply, what: string): void {
  if (reply.status >= 200 && reply.status < 300) {
    throw new CaseFailure(`${what}: it was accepted`, 'a refusal', `${reply.status} ${reply.text.slice(0, 500)}`)
  }
}

/** The reply's warnings that are strings. */
export const warningsOf = (reply: Reply): string[] => Array.isArray(reply.json?.warnings)
  ? reply.json.warnings.filter((w: unknown): w is string => typeof w === 'string')
  : []

/** Whether a warning starts with `prefix` (a note of the colour generator, like `attention:`). */
export const hasNote = (reply: Reply, prefix: string): boolean => warningsOf(reply).some((w) => w.startsWith(prefix))
// The spec's own notes (`attention:`, `proximity:`) name baseHue and attentionHue in their text; a push warning is
// one of the others that names the hue (OT-A11: tests look for the word).
const SPEC_NOTE = /^(?:attention|proximity):/

/** The warning that reports a push of the hue, if any. */
export const pushWarned = (reply: Reply, word: 'baseHue' | 'attentionHue'): string | undefined =>
  warningsOf(reply).find((w) => !SPEC_NOTE.test(w) && w.includes(word))

/**
 * A property over one field: a body is accepted exactly when the spec's schema accepts it (and `extra` agrees), and
 * a refused one is `invalid_field` on a field under `field`.
 */
export async function schemaRule<T> (
  ctx: RegistrationContext, arbitrary: fc.Arbitrary<T>, make: (value: T) => Body, field: string,
  extra: (value: T) => boolean = () => true
): Promise<void> {
  const refusedId = adapterId(ctx, 'refused')
  let accepted = 0
  let refused = 0
  await fc.assert(fc.asyncProperty(arbitrary, async (value) => {
    const payload = make(value)
    const valid = registrationValid(payload) && extra(value)
    if (valid) {
      accepted++
      await expectAccepted(ctx, payload, `a body the spec accepts: ${JSON.stringify(payload).slice(0, 300)}`)
    } else {
      refused++
      expectInvalid(await put(ctx, refusedId, payload), `a body the spec refuses: ${JSON.stringify(payload).slice(0, 300)}`, fieldUnder(field))
    }
  }), ctx.fc({ endOnFailure: true }))
  ctx.note(`${accepted} accepted and ${refused} refused bodies`)
}
