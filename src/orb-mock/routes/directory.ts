import { keccak_256 as keccak256, sha3_256 as sha3256 } from '@noble/hashes/sha3.js'
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js'
import { ORB_A03_WINDOWS, ORB_PROSE_LIMITS } from '../../spec/orb.js'
import { orbErrors } from '../errors.js'
import type { AppState } from '../records.js'
import type { OrbRoute, RouteCall, RouteContext } from '../route.js'
import type { OrbStore } from '../store.js'
import type { WindowLimit } from '../throttle.js'

/** ORB-019, ORB-A03: directory requests a minute per caller address. */
const REQUESTS = ORB_A03_WINDOWS.directoryPerAddress

/** `GET /api/orb/directory` (ORB-010..019, ORB-A19): public, and any `Authorization` is ignored. */
export function directoryRoutes ({ store, rateLimit }: RouteContext): OrbRoute[] {
  // A manifest's hash, by the manifest string: worlds change on reset, strings do not.
  const hashes = new Map<string, string>()
  const hashOf = (json: string): string => {
    let hash = hashes.get(json)
    if (hash === undefined) {
      // ORB-016: Keccak-256; under the `sha3-manifest` fault, FIPS SHA3-256 instead.
      hash = store.faults.has('sha3-manifest') ? `0x${bytesToHex(sha3256(utf8ToBytes(json)))}` : manifestHash(json)
      hashes.set(json, hash)
    }
    return hash
  }
  return [{
    method: 'GET',
    path: '/api/orb/directory',
    auth: 'public',
    handler: ({ request }: RouteCall) => {
      if (rateLimit === 'on') {
        const verdict = store.throttles.take(directoryLimits(request.ip))
        if (!verdict.ok) throw orbErrors.throttled(verdict.retryAfterSeconds, `${REQUESTS.limit} directory requests a minute from ${request.ip}`)
      }
      return { apps: listedApps(store).map((app) => listing(store, app, hashOf)), registry: registry(store) }
    }
  }]
}

/** The window a directory request from `address` counts against (ORB-A03). */
export function directoryLimits (address: string): WindowLimit[] {
  return [{ key: `directory:${address}`, limit: REQUESTS.limit, windowMs: REQUESTS.windowMs }]
}

/** ORB-016: `0x` and the lowercase hex Keccak-256 (not FIPS SHA3-256) of the string's exact UTF-8 bytes. */
export function manifestHash (json: string): string {
  return `0x${bytesToHex(keccak256(utf8ToBytes(json)))}`
}

/**
 * ORB-012, ORB-013, ORB-A19: the publicly listed apps, most installs first, then the newest listing (an app without
 * `listedAt` counts as oldest), then by id so the order is total; at most 60.
 */
function listedApps (store: OrbStore): Array<{ app: AppState, installs: number }> {
  return [...store.apps.values()]
    .filter((app) => app.source.listed === true)
    .map((app) => ({ app, installs: store.installCount(app.id) }))
    .sort((a, b) => b.installs - a.installs ||
      (b.app.source.listedAt ?? -Infinity) - (a.app.source.listedAt ?? -Infinity) ||
      (a.app.id < b.app.id ? -1 : a.app.id > b.app.id ? 1 : 0))
    .slice(0, ORB_PROSE_LIMITS.directorySize)
}

/** ORB-014, ORB-015, ORB-016, ORB-A19: one `ListedApp`. */
function listing (
  store: OrbStore,
  { app, installs }: { app: AppState, installs: number },
  hashOf: (json: string) => string
): Record<string, unknown> {
  const source = app.source
  // ORB-A19: without a registry contract nothing is on the chain; without a chain record there is no manifest.
  const chain = store.world.registry.contract === null || source.chain == null ? null : { ...source.chain }
  return {
    id: app.id,
    name: app.name,
    blurb: source.blurb ?? '',
    scopes: [...app.scopes],
    // The rights an install gives the app's role when the admin names none (OrbControl.install does the same).
    rights: [...(source.rights ?? ['send_messages'])],
    homepage: source.homepage ?? '',
    developer: source.developer ?? '',
    installs,
    chain,
    ...(chain === null || source.manifest === undefined
      ? {}
      : { manifest: { json: source.manifest, hash: hashOf(source.manifest) } })
  }
}

/** ORB-018: the registry's public facts (whether the chain answers is the control server's business, not the API's). */
function registry (store: OrbStore): Record<string, unknown> {
  const { chainId, contract, asset, feeRecipient, feeBps, apps, fees } = store.world.registry
  return { chainId, contract, asset, feeRecipient, feeBps, apps, fees }
}
