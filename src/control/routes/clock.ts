import type { FastifyInstance } from 'fastify'
import { advanceClock, clockState } from '../../shared/clock.js'
import type { ControlRouteContext } from './context.js'

/** `/control/clock`: the shared clock, and moving a virtual one forward (a real one answers clock_not_virtual). */
export function clockRoutes (app: FastifyInstance, { clock, body }: ControlRouteContext): void {
  app.get('/control/clock', async () => clockState(clock))
  app.post('/control/clock/advance', async (request) =>
    advanceClock(clock, body<{ ms: number }>('Advance', request.body).ms))
}
