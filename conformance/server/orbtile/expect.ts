import { ERROR_STATUS, type ErrorCode } from '../../../src/spec/orbtile.js'
import { validatorFor } from '../../../src/spec/orbtile.js'
import { CaseFailure } from './orbtile-case.js'
import { exactStatus } from '../core/strictness.js'
import type { Reply } from './transport.js'

const errorSchema = validatorFor('Error')

// The spec names error codes but no statuses: the exact status of each code is orbtest's decision (OT-A01). Required
// cases hold a server to the spec only (the code, and a status of the same class); decision cases and --strict runs
// hold it to OT-A01's table too (see ../strictness.ts).

/** Why a reply is not the spec's error `code` (status by OT-A01, the spec's `Error` schema), or undefined. */
export function errorProblem (
  reply: Reply,
  code: ErrorCode,
  field?: string,
  status: number = ERROR_STATUS[code]
): string | undefined {
  const sameClass = Math.floor(reply.status / 100) === Math.floor(status / 100)
  if (exactStatus(reply) ? reply.status !== status : !sameClass) return `status ${reply.status}`
  if (!/^application\/json\b/.test(String(reply.headers['content-type']))) {
    return `content-type ${String(reply.headers['content-type'])}`
  }
  const body = reply.json as { error?: { code?: string; field?: string } } | undefined
  if (!errorSchema(reply.json)) return "a body the spec's Error schema refuses"
  if (body?.error?.code !== code) return `code ${body?.error?.code}`
  if (field !== undefined && body.error.field !== field) return `field ${body.error.field}`
  return undefined
}

/** Fails the case unless the reply is the spec's error `code` (with `field`, when given). */
export function expectError (reply: Reply, code: ErrorCode, what: string, field?: string, status?: number): void {
  const problem = errorProblem(reply, code, field, status)
  if (problem !== undefined) {
    throw new CaseFailure(`${what}: ${problem}`, `${status ?? ERROR_STATUS[code]} {"error":{"code":"${code}"${field === undefined ? '' : `,"field":"${field}"`}}}`, `${reply.status} ${reply.text.slice(0, 500)}`)
  }
}

/** Fails the case unless the reply has the status. */
export function expectStatus (reply: Reply, status: number, what: string): void {
  if (reply.status !== status) {
    throw new CaseFailure(`${what}: status ${reply.status}`, status, `${reply.status} ${reply.text.slice(0, 500)}`)
  }
}

/** Fails the case unless `actual` deep-equals `expected` (as JSON). */
export function expectEqual (actual: unknown, expected: unknown, what: string): void {
  if (JSON.stringify(actual) !== JSON.stringify(expected)) throw new CaseFailure(what, expected, actual)
}

/** Fails the case unless the condition holds. */
export function expectThat (condition: boolean, what: string, expected: unknown, actual: unknown): void {
  if (!condition) throw new CaseFailure(what, expected, actual)
}

/** Fails the case unless the spec's schema `def` accepts the value. */
export function expectSchema (value: unknown, def: string, what: string): void {
  const validate = validatorFor(def)
  if (!validate(value)) throw new CaseFailure(`${what}: the spec's ${def} schema refuses it (${validate.errors?.[0]?.instancePath ?? ''} ${validate.errors?.[0]?.message ?? ''})`, `a valid ${def}`, value)
}
