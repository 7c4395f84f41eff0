import type { FastifyRequest, RouteHandlerMethod } from 'fastify'
import { checkAdapterId } from '../adapter-id.js'
import type { Adapters } from '../adapters.js'
import { errors } from '../errors.js'
import { admittedToken } from '../pipeline.js'
import { readRegistration } from '../registration.js'

type AdapterRequest = FastifyRequest<{ Params: { adapterId: string } }>

/** The lease token a request carries, if any (OT-019). A repeated header arrives joined, and so never matches. */
export function adapterToken (request: FastifyRequest): string | undefined {
  const value = request.headers['x-orbtile-adapter-token']
  return Array.isArray(value) ? value.join(', ') : value
}

/** What a registration reads of the app at its commit: the discovery token now, and the API switch. */
export interface AppSwitches {
  readonly tokenBytes: Buffer
  readonly apiEnabled: boolean
}

/** `PUT /adapters/{adapterId}` (OT-041..070, OT-A09), checks in OT-A02's order from step 8 on. */
export function registerHandler (adapters: Adapters, app: AppSwitches): RouteHandlerMethod {
  return async (request) => {
    const { adapterId } = (request as AdapterRequest).params
    checkAdapterId(adapterId, adapters.faults)
    const token = adapterToken(request)
    // A token made new (or the API switched off) while the body arrives, the registration waits its turn or its
    // icon decodes must not see it open a lease under the new token: its adapter, told every lease ended (OT-023),
    // would not know it holds one. Judged at the commit, against the token the head was let in with.
    const admittedWith = admittedToken(request)
    return adapters.serial(adapterId, async () => {
      adapters.checkReRegistration(adapterId, token)
      const read = await readRegistration(request.body as Record<string, unknown>)
      if (!app.apiEnabled) throw errors.apiDisabled()
      if (app.tokenBytes !== admittedWith) {
        throw errors.unauthorized('the discovery token changed while the registration was in progress; read the file again')
      }
      return adapters.register(adapterId, read)
    })
  }
}

/** `DELETE /adapters/{adapterId}` (OT-A07): 204, the lease ends. */
export function unregisterHandler (adapters: Adapters): RouteHandlerMethod {
  return async (request, reply) => {
    const { adapterId } = (request as AdapterRequest).params
    checkAdapterId(adapterId, adapters.faults)
    await adapters.serial(adapterId, () => adapters.unregister(adapterId, adapterToken(request)))
    return reply.code(204).send()
  }
}
