/** Every code the control API answers with, and its status. The control OpenAPI document's `Error` enum agrees. */
export const CONTROL_ERROR_STATUS = {
  bad_request: 400,
  forbidden_host: 403,
  forbidden_origin: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  clock_not_virtual: 409,
  internal: 500
} as const

/** One of the control API's error codes. */
export type ControlErrorCode = keyof typeof CONTROL_ERROR_STATUS

/**
 * A control action that cannot be done, thrown by the fakes' domain code (a tap on an unknown session, a post to a
 * channel that does not exist) and by the control server itself; the control server answers it with its status.
 */
export class ControlError extends Error {
  readonly code: ControlErrorCode

  constructor (code: ControlErrorCode, message: string) {
    super(message)
    this.name = 'ControlError'
    this.code = code
  }
}
