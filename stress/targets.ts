// The three servers as the campaign sees them: where each listens, the head every request to it carries, and the
// one shape its error bodies must have (each API's own, read from its document).
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { ERROR_STATUS, LIMITS } from '../src/spec/orbtile.js'
import { REPO_ROOT, type Endpoints } from './server.js'
import { header, type Address, type WireResponse } from './wire.js'

/** The servers of one `orbtest up`. */
export type ServerName = 'orbtile' | 'orb' | 'control'

/** Every server, in report order. */
export const SERVER_NAMES: readonly ServerName[] = ['orbtile', 'orb', 'control']

/** One server: its address, its Host, and its error shape. */
export interface Target {
  name: ServerName
  address: Address
  /** The Host header its clients send. */
  host: string
  /** Where its API lives: `/a/v1` for the Orbtile, `` for the others (their paths are whole). */
  base: string
  /** The body limit it states, in bytes. */
  bodyLimit: number
  /** Why an error response is not in the API's shape; undefined when it is. */
  errorShape: (status: number, body: unknown) => string | undefined
}

/** Reads a JSON document of this repository. */
export function readDocument<T = any> (path: string): T {
  return JSON.parse(readFileSync(join(REPO_ROOT, path), 'utf8')) as T
}

const CONTROL_CODES = new Set<string>(
  readDocument('src/control/openapi.json').components.schemas.Error.properties.error.properties.code.enum
)

function errorObject (body: unknown): Record<string, unknown> | string {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return 'the body is not a JSON object'
  const error = (body as { error?: unknown }).error
  if (error === null || typeof error !== 'object' || Array.isArray(error)) return 'the body has no "error" object'
  if (typeof (error as { message?: unknown }).message !== 'string') return 'error.message is not a string'
  return error as Record<string, unknown>
}

/** OT-149, OT-A01: `{"error":{"code","message"}}`, a code of the spec's enum with the status the ledger gives it. */
export function orbtileErrorShape (status: number, body: unknown): string | undefined {
  const error = errorObject(body)
  if (typeof error === 'string') return error
  const code = error.code
  if (typeof code !== 'string' || !(code in ERROR_STATUS)) return `error.code ${JSON.stringify(code)} is not the spec's`
  const expected = ERROR_STATUS[code as keyof typeof ERROR_STATUS]
  if (expected !== status && !(status === 405 && code === 'bad_request')) {
    return `error.code ${code} is ${expected}, not ${status}`
  }
  return undefined
}

/** ORB-101: `{"error":{"message","code"}}` where code is the status itself. */
export function orbErrorShape (status: number, body: unknown): string | undefined {
  const error = errorObject(body)
  if (typeof error === 'string') return error
  return error.code === status ? undefined : `error.code ${JSON.stringify(error.code)} is not the status ${status}`
}

/** The control document's `Error`: `{"error":{"code","message"}}` with a code of its enum. */
export function controlErrorShape (_status: number, body: unknown): string | undefined {
  const error = errorObject(body)
  if (typeof error === 'string') return error
  const code = error.code
  return typeof code === 'string' && CONTROL_CODES.has(code)
    ? undefined
    : `error.code ${JSON.stringify(code)} is not in the control document's Error enum`
}

/** The three targets of a running `orbtest up`. */
export function targetsOf (endpoints: Endpoints): Record<ServerName, Target> {
  return {
    orbtile: {
      name: 'orbtile',
      address: { path: endpoints.socketPath },
      host: 'localhost',
      base: endpoints.basePath,
      bodyLimit: LIMITS.maxBodyBytes,
      errorShape: orbtileErrorShape
    },
    orb: {
      name: 'orb',
      address: { port: endpoints.orbPort },
      host: `127.0.0.1:${endpoints.orbPort}`,
      base: '',
      bodyLimit: 1024 * 1024,
      errorShape: orbErrorShape
    },
    control: {
      name: 'control',
      address: { port: endpoints.controlPort },
      host: `127.0.0.1:${endpoints.controlPort}`,
      base: '',
      // fastify's default, which the control server keeps.
      bodyLimit: 1024 * 1024,
      errorShape: controlErrorShape
    }
  }
}

/**
 * Why a response breaks the rules every answer keeps, or undefined: a 4xx carries a JSON body in the API's shape
 * (a HEAD's answer carries none), and its Content-Type says JSON.
 */
export function responseFault (target: Target, response: WireResponse): string | undefined {
  if (response.status < 400) return undefined
  if (response.head) return response.body.length === 0 ? undefined : 'the answer to a HEAD has a body'
  const type = header(response, 'content-type') ?? ''
  if (!/^application\/json\b/i.test(type)) return `Content-Type ${JSON.stringify(type)} is not JSON`
  let body: unknown
  try {
    body = JSON.parse(response.body.toString('utf8'))
  } catch {
    return `the body is not JSON: ${JSON.stringify(response.body.subarray(0, 80).toString('utf8'))}`
  }
  return target.errorShape(response.status, body)
}
