import type { FastifyReply } from 'fastify'
import { closeIfBodyUnread, rawJsonResponse } from '../shared/http-server.js'
import { CONTROL_ERROR_STATUS, type ControlError } from '../shared/control-error.js'

export { CONTROL_ERROR_STATUS, ControlError, type ControlErrorCode } from '../shared/control-error.js'

/** Answers a ControlError: its status and `{error: {code, message}}`, the control API's one error shape. */
export function sendControlError (reply: FastifyReply, err: ControlError): FastifyReply {
  const body = { error: { code: err.code, message: err.message } }
  closeIfBodyUnread(reply)
  return reply.code(CONTROL_ERROR_STATUS[err.code]).type('application/json').send(body)
}

/** A whole `400 bad_request` response in the control API's shape, for bytes no route ever sees. */
export function rawControlBadRequest (message: string): string {
  return rawJsonResponse(400, 'Bad Request', { error: { code: 'bad_request', message } })
}
