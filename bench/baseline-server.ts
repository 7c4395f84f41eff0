/**
 * The baseline: a bare fastify server on a Unix socket, with one route answering a body the size of /info's,
 * and a ready file written once it listens, exactly as orbtest's CLI does. No pipeline, no validation.
 */
import { renameSync, rmSync, writeFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import Fastify from 'fastify'

const { values } = parseArgs({ options: { socket: { type: 'string' }, 'ready-file': { type: 'string' } } })
const socket = values.socket!
const readyFile = values['ready-file']
const body = {
  server: 'orbtile',
  api: 1,
  apiMinor: 2,
  version: '0.2.17',
  activities: [
    'starting',
    'idle',
    'thinking',
    'tool',
    'streaming',
    'waitingPermission',
    'waitingQuestion',
    'done',
    'error',
    'compacting',
    'offline'
  ],
  limits: {
    maxBodyBytes: 65536,
    maxSessionsPerAdapter: 32,
    maxAdapters: 8,
    requestsPerSecond: 20,
    burst: 60,
    maxPendingRequestsPerAdapter: 32,
    maxEvents: 128,
    maxRequestIDs: 4096,
    maxLongPolls: 4
  }
}
const app = Fastify()
app.get('/a/v1/info', async () => body)
// The session-update baseline: parse the JSON body, answer a SessionReply.
app.post('/a/v1/adapters/:adapterId/sessions/:sessionId', async (request) => {
  const { adapterId, sessionId } = request.params as { adapterId: string, sessionId: string }
  return { session: { uid: `${adapterId}/${sessionId}`, visible: true }, warnings: [] }
})
await app.listen({ path: socket })
if (readyFile !== undefined) {
  writeFileSync(`${readyFile}.tmp`, JSON.stringify({ socket }))
  renameSync(`${readyFile}.tmp`, readyFile)
}
const stop = async (): Promise<void> => {
  await app.close()
  // The socket may be gone already (closing the server removes it): `force` asks no more than that.
  rmSync(socket, { force: true })
  process.exit(0)
}
process.once('SIGTERM', stop)
process.once('SIGINT', stop)
