import { CodedError } from './coded-error.js'

/**
 * Every code the control API answers with: its status, and when it fires. The control OpenAPI document's `Error`
 * enum lists the same codes (a test keeps the two, and docs/errors.md, in step).
 */
export const CONTROL_ERRORS = {
  bad_request: {
    status: 400,
    when: 'a body the control document refuses, bytes that are not HTTP, or an action the fake cannot take as asked'
  },
  forbidden_host: { status: 403, when: 'a Host header that is not this server\'s loopback name and port' },
  forbidden_origin: { status: 403, when: 'an Origin other than this server\'s own (a page of another site)' },
  not_found: { status: 404, when: 'no such control route, or no such adapter, session, request, app, member or message' },
  method_not_allowed: { status: 405, when: 'a known path with a method it does not serve; `Allow` lists those it does' },
  payload_too_large: { status: 413, when: 'a body over the control server\'s limit of 1 MiB, refused as it arrives' },
  unsupported_media_type: {
    status: 415,
    when: 'DASH-D04: a request that changes state with a body type other than JSON, or from a page without one'
  },
  conflict: { status: 409, when: 'the fake\'s state forbids the action now: a leased id to forget, a decided request' },
  clock_not_virtual: { status: 409, when: 'advancing the clock of a fake that runs on real time' },
  internal: { status: 500, when: 'an unexpected fault; it is logged and the server keeps serving' }
} as const satisfies Record<string, { status: number, when: string }>

/** Every code the control API answers with, and its status. */
export const CONTROL_ERROR_STATUS: { readonly [C in ControlErrorCode]: (typeof CONTROL_ERRORS)[C]['status'] } =
  Object.freeze(Object.fromEntries(Object.entries(CONTROL_ERRORS).map(([code, { status }]) => [code, status]))) as never

export type ControlErrorCode = keyof typeof CONTROL_ERRORS

/**
 * A control action that cannot be done, thrown by the fakes' domain code (a tap on an unknown session, a post to a
 * channel that does not exist) and by the control server itself; the control server answers it with its status.
 */
export class ControlError extends CodedError<ControlErrorCode> {
  constructor (code: ControlErrorCode, message: string) {
    super('ControlError', code, message)
  }
}
