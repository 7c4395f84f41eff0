import { validatorFor } from '../../src/orbtile-mock/spec.js'
import { ERROR_STATUS, type ErrorCode } from '../../src/orbtile-mock/errors.js'
import type { Reply } from './client.js'

const errorSchema = validatorFor('Error')

/**
 * Why a reply is not the spec's error `code` (OT-149, OT-150, OT-A01): wrong status, not JSON, a body the spec's
 * `Error` schema refuses, or another code. Returns undefined when it is right. Usable inside properties.
 */
export function specErrorProblem (
  reply: Reply,
  code: ErrorCode,
  field?: string,
  status: number = ERROR_STATUS[code]
): string | undefined {
  if (reply.status !== status) return `status ${reply.status}, expected ${status} (${code}); body ${reply.text}`
  if (!/^application\/json\b/.test(String(reply.headers['content-type']))) {
    return `content-type ${reply.headers['content-type']}`
  }
  // Read the body before the schema check: ajv's type guard would narrow it to unknown.
  const { error } = reply.json ?? {}
  if (!errorSchema(reply.json)) return `body fails the spec's Error schema: ${reply.text}`
  if (error.code !== code) return `code ${error.code}, expected ${code}`
  if (field !== undefined && error.field !== field) return `field ${error.field}, expected ${field}`
  return undefined
}

interface Asserter {
  equal(found: unknown, wanted: unknown, message: string): unknown
}

/** Asserts a reply is the spec's error `code`, with `field` when given (and a status other than the table's: 405). */
export function assertSpecError (t: Asserter, reply: Reply, code: ErrorCode, field?: string, status?: number): void {
  t.equal(
    specErrorProblem(reply, code, field, status),
    undefined,
    `answers ${code}${field === undefined ? '' : ` on ${field}`}`
  )
}
