import { get as httpGet } from 'node:http'
import { get as httpsGet } from 'node:https'
import { UsageError } from '../../../src/shared/usage-error.js'
import { checkControl, type ControlClient } from '../core/control.js'
import { TargetError, caseTimeoutMs, type Suite } from '../core/suite.js'
import { ORB_CASES } from './index.js'
import { prepareOrbRun } from './run.js'
import { loadTargetConfig } from './target.js'
import type { OrbBotClient } from './transport.js'

/** How long an Orb case may take on a real clock, throttles waited out (ORB-A03's windows are a minute). */
const REAL_CASE_TIMEOUT_MS = 5 * 60_000
const VIRTUAL_CASE_TIMEOUT_MS = 60_000

/** The server suite of the Orb bot API: an http(s):// origin, with --config or orbtest's --control. */
export const orbSuite: Suite<OrbBotClient> = {
  name: 'orb',
  title: 'orbtest conformance: Orb',
  cases: ORB_CASES,
  async prepare ({ target: spec, token, config: configFile, control, slow, readOnly }) {
    if (token !== undefined) throw new UsageError('--token is for unix: targets; an Orb\'s tokens go in --config')
    const url = checkOrbUrl(spec)
    const config = configFile === undefined ? undefined : loadTargetConfig(configFile, url)
    if (config === undefined && control === undefined) {
      throw new UsageError(
        "an Orb target needs --config FILE (its apps, community and channels), or --control URL for orbtest's fake"
      )
    }
    await checkOrbReachable(url, config?.full.token, control)
    const run = await prepareOrbRun({
      url,
      ...(control === undefined ? {} : { control }),
      ...(config === undefined ? {} : { config })
    })
    const virtual = control !== undefined && (await control.virtualClock())
    const own = run.target.controlled === undefined ? '' : `; apps of the suite's own in ${run.target.community}`
    return {
      about: (seedAndRuns) =>
        `orbtest conformance: Orb bot API (orb-bots-v1) at ${url}; ${seedAndRuns}` +
        (control === undefined
          ? '; no control API (cases that act as members are skipped)'
          : `; control ${control.url}${own}`) +
        (readOnly ? '; read-only' : ''),
      target: url,
      transport: run.transport,
      // On a real clock a case that posts may wait out the throttles' minute windows several times.
      caseTimeoutMs: caseTimeoutMs(slow, virtual, { real: REAL_CASE_TIMEOUT_MS, virtual: VIRTUAL_CASE_TIMEOUT_MS }),
      close: async () => { await run.close() }
    }
  }
}

// The Orb answers its public directory, and the config's token is accepted (a 401 says the config is stale).
async function checkOrbReachable (
  url: string,
  token: string | undefined,
  control: ControlClient | undefined
): Promise<void> {
  const get = async (path: string, headers: Record<string, string> = {}): Promise<number> => {
    try {
      return await status(`${url}${path}`, headers)
    } catch (err) {
      throw new TargetError(`the Orb at ${url} cannot be reached: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`)
    }
  }
  const directory = await get('/api/orb/directory')
  if (directory !== 200 && directory !== 429) {
    throw new TargetError(`${url} answers GET /api/orb/directory with ${directory}, not 200: is it an Orb?`)
  }
  if (token !== undefined) {
    const app = await get('/api/bot/v1/app', { authorization: `Bearer ${token}` })
    if (app === 401) throw new TargetError('the Orb refuses the config\'s full token (401); is it current?')
  }
  if (control !== undefined) {
    await checkControl(control)
    const state = await control.call('GET', '/control/orb/state')
    if (state.status !== 200) throw new TargetError(`${control.url} runs no fake Orb (GET /control/orb/state answered ${state.status})`)
  }
}

/** The status of a GET, by node's own client (fetch refuses some ports outright, and says only "bad port"). */
function status (url: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = (url.startsWith('https:') ? httpsGet : httpGet)(url, { headers, timeout: 5000 }, (res) => {
      res.resume()
      res.on('end', () => { resolve(res.statusCode ?? 0) })
    })
    req.on('timeout', () => { req.destroy(Object.assign(new Error('no answer within 5 s'), { code: 'ETIMEDOUT' })) })
    req.on('error', reject)
  })
}

/** An Orb target is an origin: `http(s)://host[:port]` with nothing after it. */
function checkOrbUrl (raw: string): string {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw new UsageError(`an Orb target is the server's origin, for example http://127.0.0.1:8787, not ${JSON.stringify(raw)}`)
  }
  if (url.pathname !== '/' || url.search !== '' || url.hash !== '') {
    throw new UsageError(`an Orb target is the server's origin, for example http://127.0.0.1:8787, not ${JSON.stringify(raw)}`)
  }
  return url.origin
}
