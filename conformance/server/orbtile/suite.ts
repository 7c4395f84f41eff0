import { readFileSync } from 'node:fs'
import { resolveDiscoveryPath } from '../../../src/spec/orbtile.js'
import { UsageError } from '../../../src/shared/usage-error.js'
import { checkControl, type ControlClient } from '../core/control.js'
import { TargetError, caseTimeoutMs, clockWait, type Suite } from '../core/suite.js'
import { ORBTILE_CASES } from './index.js'
import { OrbtileClient, orbtileTransport, type OrbtileTarget } from './transport.js'

/** How long a case may take, but with --slow on a real clock (a slow case waits up to about 12 minutes, OT-112.b). */
const CASE_TIMEOUT_MS = 60_000

/** The server suite of the Orbtile Adapter Protocol v1.2: `orbtile`, `orbtile:PATH` and `unix:SOCKET` targets. */
export const orbtileSuite: Suite<OrbtileClient> = {
  name: 'orbtile',
  title: 'orbtest conformance: Orbtile',
  cases: ORBTILE_CASES,
  async prepare ({ target: spec, token, config, control, slow }) {
    if (config !== undefined) throw new UsageError('--config is for Orb targets (http:// or https://)')
    const target = resolveTarget(spec, token)
    await checkReachable(target, control)
    const virtual = control !== undefined && (await control.virtualClock())
    return {
      about: (seedAndRuns) =>
        `orbtest conformance: Orbtile Adapter Protocol v1.2 at ${target.socketPath}; ${seedAndRuns}` +
        (control === undefined
          ? '; no control API (cases that play the user are skipped)'
          : `; control ${control.url}`),
      target: target.socketPath,
      transport: orbtileTransport(target, clockWait(control, virtual)),
      caseTimeoutMs: caseTimeoutMs(slow, virtual, { real: CASE_TIMEOUT_MS, virtual: CASE_TIMEOUT_MS }),
      close: async () => {}
    }
  }
}

/** `orbtile`, `orbtile:PATH` or `unix:SOCKET` (with --token). */
export function resolveTarget (spec: string, token: string | undefined): OrbtileTarget {
  if (spec === 'orbtile' || spec.startsWith('orbtile:')) {
    const discovery = resolveDiscoveryPath(spec === 'orbtile' ? undefined : spec.slice('orbtile:'.length))
    let parsed: { socketPath?: unknown, basePath?: unknown, token?: unknown }
    try {
      parsed = JSON.parse(readFileSync(discovery, 'utf8'))
    } catch (err) {
      const why = (err as NodeJS.ErrnoException).code ?? (err as Error).message
      throw new TargetError(`cannot read the discovery file ${discovery}: ${why}`)
    }
    if (typeof parsed.socketPath !== 'string' || typeof parsed.token !== 'string') {
      throw new TargetError(`${discovery} has no socketPath and token`)
    }
    const basePath = typeof parsed.basePath === 'string' ? parsed.basePath : '/a/v1'
    return { socketPath: parsed.socketPath, basePath, token: parsed.token, discovery }
  }
  if (spec.startsWith('unix:')) {
    if (token === undefined || token === '') throw new UsageError('a unix: target needs --token')
    return { socketPath: spec.slice('unix:'.length), basePath: '/a/v1', token }
  }
  throw new UsageError(`--target must be orbtile, orbtile:PATH, unix:SOCKET or an Orb's http(s):// origin, not ${JSON.stringify(spec)}`)
}

// The target answers /info, accepts the token, and has room for the suite's adapters (OT-028: at most 8 live).
async function checkReachable (target: OrbtileTarget, control: ControlClient | undefined): Promise<void> {
  const client = new OrbtileClient(target)
  try {
    const info = await client.request({ path: '/info', timeoutMs: 5000 }).catch((err: Error) => {
      if (client.stalled !== undefined) throw new TargetError(client.stalled)
      const why = (err as NodeJS.ErrnoException).code ?? err.message
      throw new TargetError(`the target at ${target.socketPath} cannot be reached: ${why}`)
    })
    if (info.status === 401) throw new TargetError('the target refuses the token (401); is the discovery file current?')
    if (info.status !== 200) {
      throw new TargetError(`the target answers GET ${target.basePath}/info with ${info.status}, not 200`)
    }
    const probe = 'org.orbtest.conformance.probe'
    const body = { name: 'orbtest conformance probe', palette: { baseHue: 200 } }
    const reg = await client.request({ method: 'PUT', path: `/adapters/${probe}`, body })
    if (reg.status === 409 && reg.json?.error?.code === 'limit_exceeded') {
      throw new TargetError('the target already holds 8 adapters; the suite needs room for its own (unregister some and retry)')
    }
    if (reg.status === 200) {
      const headers = { 'x-orbtile-adapter-token': reg.json.adapterToken }
      const done = await client.request({ method: 'DELETE', path: `/adapters/${probe}`, headers })
      // orbtest's fake forgets the probe too; a control API that cannot be reached is reported below.
      if (done.status === 204 && control !== undefined) await control.forget(probe).catch(() => undefined)
    }
  } finally {
    client.close()
  }
  if (control !== undefined) await checkControl(control)
}
