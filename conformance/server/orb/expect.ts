import type { ValidateFunction } from 'ajv'
import { createAjv } from '../../../src/shared/ajv.js'
import { orbSpec } from '../../../src/spec/orb.js'
import { CaseFailure } from '../core/case.js'
import { exactStatus } from '../core/strictness.js'
import type { OrbReply } from './transport.js'

let ajv: ReturnType<typeof createAjv> | undefined
const compiled = new Map<string, ValidateFunction | null>()

function specAjv (): ReturnType<typeof createAjv> {
  if (ajv === undefined) {
    ajv = createAjv({})
    const { paths, components } = orbSpec()
    ajv.addSchema({ $id: 'orbreply', paths, components })
  }
  return ajv
}

const pointer = (path: string): string => path.replaceAll('~', '~0').replaceAll('/', '~1')

/** The spec's schema of an operation's 200 reply, or null where the spec gives none. */
export function replySchema (method: string, path: string): ValidateFunction | null {
  const key = `${method} ${path}`
  if (!compiled.has(key)) {
    const content = (orbSpec().paths[path]?.[method.toLowerCase()] as any)?.responses?.['200']?.content?.[
      'application/json'
    ]
    compiled.set(
      key,
      content?.schema === undefined
        ? null
        : specAjv().compile({
          $ref: `orbreply#/paths/${pointer(path)}/${method.toLowerCase()}/responses/200/content/application~1json/schema`
        })
    )
  }
  return compiled.get(key)!
}

/** One of the spec's component schemas (`Event`, `Message`, `ListedApp`…). */
export function componentSchema (name: string): ValidateFunction {
  const key = `#${name}`
  if (!compiled.has(key)) compiled.set(key, specAjv().compile({ $ref: `orbreply#/components/schemas/${name}` }))
  return compiled.get(key)!
}

const short = (reply: OrbReply): string => `${reply.status} ${reply.text.slice(0, 500)}`

/**
 * Fails unless the reply is the spec's error: `status` (ORB-102), a JSON body with `error.message` a string and
 * `error.code` an integer (ORB-101). Where the status itself is orbtest's decision (`decided`, for example ORB-A02's
 * 403 for @everyone), required cases accept any status of the same class; decision cases and --strict hold it exactly,
 * and also hold `code` to the status (ORB-A01).
 */
export function expectOrbError (
  reply: OrbReply,
  status: number,
  what: string,
  options: { decided?: boolean } = {}
): void {
  const exact = exactStatus(reply) || options.decided !== true
  const sameClass = Math.floor(reply.status / 100) === Math.floor(status / 100)
  const orClass = options.decided === true && !exactStatus(reply) ? ` (or another ${Math.floor(status / 100)}xx)` : ''
  const expected = `${status}${orClass} with {"error":{"message":"…","code":${status}}}`
  // A decided status may differ within its class, but never to 401 (the token) or 429 (a throttle): those refuse for
  // another reason.
  if (exact ? reply.status !== status : !sameClass || reply.status === 401 || reply.status === 429) {
    throw new CaseFailure(`${what}: status ${reply.status}`, expected, short(reply))
  }
  if (!/^application\/json\b/i.test(String(reply.headers['content-type']))) {
    throw new CaseFailure(`${what}: content-type ${String(reply.headers['content-type'])}`, expected, short(reply))
  }
  const error = reply.json?.error
  if (typeof error?.message !== 'string' || !Number.isInteger(error?.code) || !componentSchema('Error')(reply.json)) {
    throw new CaseFailure(`${what}: not the spec's Error body (ORB-101)`, expected, short(reply))
  }
  if (exactStatus(reply) && error.code !== reply.status) throw new CaseFailure(`${what}: error.code ${error.code} is not the status (ORB-A01)`, expected, short(reply))
  if (reply.status === 429) expectRetryAfter(reply, what)
}

/** ORB-099: a 429 carries an integer Retry-After (seconds); returns it. */
export function expectRetryAfter (reply: OrbReply, what: string): number {
  const header = reply.headers['retry-after']
  if (typeof header !== 'string' || !/^\d+$/.test(header.trim())) throw new CaseFailure(`${what}: a 429 without an integer Retry-After`, 'Retry-After: <seconds>', `${reply.status} retry-after: ${String(header)}`)
  return Number(header)
}

/**
 * Fails unless the reply is 200 with a JSON body the spec's schema for the operation accepts (where the spec has
 * one); returns the body.
 */
export function expectOk (reply: OrbReply, what: string, operation?: { method: string, path: string }): any {
  if (reply.status !== 200) throw new CaseFailure(`${what}: status ${reply.status}`, 200, short(reply))
  if (!/^application\/json\b/i.test(String(reply.headers['content-type'])) || reply.json === undefined) throw new CaseFailure(`${what}: the 200 is not JSON`, 'application/json', `${String(reply.headers['content-type'])} ${reply.text.slice(0, 200)}`)
  if (operation !== undefined) {
    const validate = replySchema(operation.method, operation.path)
    if (validate !== null && !validate(reply.json)) {
      const e = validate.errors?.[0]
      throw new CaseFailure(`${what}: the spec's reply schema of ${operation.method} ${operation.path} refuses it (${e?.instancePath ?? ''} ${e?.message ?? ''})`, 'a reply the spec\'s schema accepts', reply.text.slice(0, 800))
    }
  }
  return reply.json
}

/** Fails unless the spec's component schema accepts the value. */
export function expectComponent (value: unknown, name: string, what: string): void {
  const validate = componentSchema(name)
  if (!validate(value)) {
    const e = validate.errors?.[0]
    throw new CaseFailure(`${what}: the spec's ${name} schema refuses it (${e?.instancePath ?? ''} ${e?.message ?? ''})`, `a valid ${name}`, value)
  }
}

export { expectEqual, expectThat } from '../orbtile/expect.js'
