import type { FastifyReply } from 'fastify'
import { rawJsonResponse } from '../shared/http-server.js'

/** Every code the control API answers with, and its status. The OpenAPI document's `Error` enum lists the same. */
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

export type ControlErrorCode = keyof typeof CONTROL_ERROR_STATUS

/** An error the control server answers with. */
export class ControlError extends Error {
  readonly code: ControlErrorCode

  constructor (code: ControlErrorCode, message: string) {
    super(message)
    this.name = 'ControlError'
    this.code = code
  }
}

export function sendControlError (reply: FastifyReply, err: ControlError): FastifyReply {
  return reply.code(CONTROL_ERROR_STATUS[err.code]).type('application/json').send({ error: { code: err.code, message: err.message } })
}

/** A whole `400 bad_request` response in the control API's shape, for bytes no route ever sees. */
export function rawControlBadRequest (message: string): string {
  return rawJsonResponse(400, 'Bad Request', { error: { code: 'bad_request', message } })
}
