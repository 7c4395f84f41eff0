// The soak's people, through the control server: the Orbtile user allows adapters, taps sessions and decides
// requests; the Orb's members mention the bot and type its commands, admins install and uninstall, the developer
// changes the chain and voice; and, in quiet moments, the user switches the API off and on, restarts the app and
// regenerates its token, and everything is reset.
import type { Answer, Soak } from './soak-core.js'
import { SOAK_ADAPTERS, type PendingRequest } from './soak-orbtile.js'

/** The user and the community, until the soak ends; a quiet moment every `quietEveryMs`. */
export async function people (soak: Soak, pending: PendingRequest[], quietEveryMs: number): Promise<void> {
  const client = soak.client('control')
  const call = (route: string, path: string, body?: unknown): Promise<Answer | undefined> =>
    soak.call(client, route, path, { body })
  const allow = async (): Promise<void> => {
    for (const id of SOAK_ADAPTERS) {
      await call('PUT /control/orbtile/adapters/{adapterId}/user', `/control/orbtile/adapters/${id}/user`,
        { allowed: true, keypad: true, ...(soak.random() < 0.3 ? { baseHue: soak.random() * 359 } : {}) })
    }
  }
  await allow()
  let nextQuiet = Date.now() + quietEveryMs
  let quiets = 0
  let round = 0
  while (soak.running()) {
    round++
    const id = soak.pick(SOAK_ADAPTERS)
    await call('POST /control/orbtile/adapters/{adapterId}/sessions/{sessionId}/tap',
      `/control/orbtile/adapters/${id}/sessions/s${Math.floor(soak.random() * 33)}/tap`)
    const request = pending.shift()
    if (request !== undefined) {
      await call('POST /control/orbtile/adapters/{adapterId}/requests/{requestId}/decide',
        `/control/orbtile/adapters/${request.adapter}/requests/${request.id}/decide`,
        request.kind === 'approval' ? { decision: soak.pick(['allow', 'deny']) } : { picks: [[0]] })
    }
    const member = soak.pick(['mem_ada', 'mem_bo', 'mem_cy'])
    await call('POST /control/orb/messages', '/control/orb/messages',
      { server: 'srv_orbit', channel: 'ch_general', member, content: `hi <@app_demo> ${round}` })
    if (round % 3 === 0) {
      await call('POST /control/orb/commands/invoke', '/control/orb/commands/invoke',
        { server: 'srv_orbit', channel: 'ch_general', member: 'mem_ada', name: 'ping', app: 'app_demo' })
    }
    if (round % 10 === 0) await reads(call, id)
    if (round % 25 === 0) await community(call, round)
    if (Date.now() >= nextQuiet) {
      quiets++
      await soak.quiet(async () => {
        await call('PUT /control/orbtile/api', '/control/orbtile/api', { enabled: false })
        await call('GET /control/orbtile/state', '/control/orbtile/state')
        await call('PUT /control/orbtile/api', '/control/orbtile/api', { enabled: true })
        await call('POST /control/orbtile/restart', '/control/orbtile/restart')
        await call('POST /control/orbtile/token/regenerate', '/control/orbtile/token/regenerate')
        if (quiets % 2 === 1) await call('POST /control/reset', '/control/reset')
        soak.state.leases.clear()
        soak.state.orbtileToken = soak.state.refreshToken()
        await allow()
      })
      nextQuiet = Date.now() + quietEveryMs
    }
    await soak.pause(40)
  }
}

type Call = (route: string, path: string, body?: unknown) => Promise<Answer | undefined>

// What people look at: the state of both fakes, an adapter and its icons, the clock, the control API itself.
async function reads (call: Call, id: string): Promise<void> {
  await call('GET /control', '/control')
  await call('GET /control/openapi.json', '/control/openapi.json')
  await call('GET /control/orbtile/state', '/control/orbtile/state')
  await call('GET /control/orbtile/adapters/{adapterId}', `/control/orbtile/adapters/${id}`)
  await call('GET /control/orbtile/adapters/{adapterId}/icon/{file}', `/control/orbtile/adapters/${id}/icon/28.png`)
  await call('GET /control/orbtile/adapters/{adapterId}/icon/{file}', `/control/orbtile/adapters/${id}/icon/56.png`)
  await call('GET /control/orb/state', '/control/orb/state')
  await call('GET /control/clock', '/control/clock')
  // A real clock cannot be moved: clock_not_virtual, a 409.
  await call('POST /control/clock/advance', '/control/clock/advance', { ms: 1000 })
}

// What the community's admins and the developer change, and change back.
async function community (call: Call, round: number): Promise<void> {
  const on = round % 50 === 0
  await call('PUT /control/orb/chain', '/control/orb/chain', { available: !on })
  await call('PUT /control/orb/voice', '/control/orb/voice', { server: !on, capacity: { ch_lounge: on ? 2 : 4 } })
  if (on) await call('DELETE /control/orb/servers/{server}/apps/{app}', '/control/orb/servers/srv_quiet/apps/app_lite')
  else await call('PUT /control/orb/servers/{server}/apps/{app}', '/control/orb/servers/srv_quiet/apps/app_lite', {})
  await call('POST /control/orb/messages', '/control/orb/messages',
    { server: 'srv_orbit', channel: 'ch_general', member: 'mem_dee', content: 'Dee cannot post' })
  const posted = await call('POST /control/orb/messages', '/control/orb/messages',
    { server: 'srv_orbit', channel: 'ch_general', member: 'mem_ada', content: 'to be removed' })
  // A moderator removes it.
  if (typeof posted?.json?.id === 'number') {
    await call('DELETE /control/orb/messages/{id}', `/control/orb/messages/${posted.json.id}`)
  }
  await call('DELETE /control/orbtile/adapters/{adapterId}', '/control/orbtile/adapters/dev.soak.never')
}
