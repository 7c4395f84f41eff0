// `orbtest proxy orbtile`: a relay in front of a real Orbtile app (or any server of the protocol). The adapter finds
// the proxy through a discovery file of the proxy's own, which names the proxy's socket and the upstream's token
// (the token passes through unchanged, so the /info proof of OT-A29 still holds against the upstream). The proxy
// follows the upstream's file: a new token is written into its own file at once, a move of the upstream's socket
// takes the next connection there, and a file that is gone (the app quit) takes the proxy's file away too.
import { unwatchFile, watchFile, mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  readDiscoveryFile, removeDiscoveryFile, writeDiscoveryFile, type DiscoveryFile
} from '../orbtile-mock/discovery.js'
import { listenPrivately, makeSocketPrivate } from '../orbtile-mock/socket.js'
import { StartupError } from '../shared/startup-error.js'
import type { WireTap } from '../shared/tap.js'
import { relay } from './relay.js'

/** How often the upstream's discovery file is looked at (a stat): a new token reaches the adapter this late at most. */
const FOLLOW_MS = 250

export interface OrbtileProxyOptions {
  /** The upstream's discovery file. */
  upstream: string
  /** The proxy's own discovery file, for the adapter. */
  discovery: string
  tap?: WireTap
  /** Told when the upstream's file changes: gone (`away`), back, a new token, another socket. */
  onUpstream?: (change: UpstreamChange) => void
}

export type UpstreamChange =
  | { kind: 'away' }
  | { kind: 'back' | 'token' | 'moved', file: DiscoveryFile }

export interface OrbtileProxy {
  /** The proxy's socket, in a private folder of its own. */
  readonly socketPath: string
  readonly discoveryPath: string
  /** The upstream's token as last read ('' while its file is gone). */
  token(): string
  close(): Promise<void>
}

/** Starts the proxy: its socket listening (0600), its discovery file written (0600), the upstream's file followed. */
export async function startOrbtileProxy (o: OrbtileProxyOptions): Promise<OrbtileProxy> {
  let current = readDiscoveryFile(o.upstream)
  if (current === undefined) {
    throw new StartupError('ORBTEST_UPSTREAM_MISSING', `no discovery file of an Orbtile app at ${o.upstream} (is the app running, and its Adapter API on?)`)
  }
  const folder = mkdtempSync(join(tmpdir(), 'orbtest-proxy-'))
  const socketPath = join(folder, 'orbtile.sock')
  const server = createServer({ allowHalfOpen: true })
  const upstream = (): { path: string } | undefined => current === undefined ? undefined : { path: current.socketPath }
  const relayed = relay(server, { upstream, tap: o.tap })
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      listenPrivately(() => server.listen(socketPath, () => resolve()))
    })
  } catch (err) {
    rmSync(folder, { recursive: true, force: true })
    throw err
  }
  makeSocketPrivate(socketPath)
  const ours = (file: DiscoveryFile): DiscoveryFile => ({ ...file, socketPath })
  writeDiscoveryFile(o.discovery, ours(current))
  const follow = (): void => {
    const next = readDiscoveryFile(o.upstream)
    const change = changeOf(current, next)
    current = next
    if (change === undefined) return
    if (next === undefined) removeDiscoveryFile(o.discovery, socketPath)
    else writeDiscoveryFile(o.discovery, ours(next))
    o.onUpstream?.(change)
  }
  watchFile(o.upstream, { interval: FOLLOW_MS, persistent: false }, follow)
  return {
    socketPath,
    discoveryPath: o.discovery,
    token: () => current?.token ?? '',
    close: async () => {
      unwatchFile(o.upstream, follow)
      await relayed.close()
      removeDiscoveryFile(o.discovery, socketPath)
      rmSync(folder, { recursive: true, force: true })
    }
  }
}

/** What changed between two readings of the upstream's file, if anything the adapter must see. */
function changeOf (before: DiscoveryFile | undefined, after: DiscoveryFile | undefined): UpstreamChange | undefined {
  if (after === undefined) return before === undefined ? undefined : { kind: 'away' }
  if (before === undefined) return { kind: 'back', file: after }
  if (after.socketPath !== before.socketPath) return { kind: 'moved', file: after }
  if (after.token !== before.token) return { kind: 'token', file: after }
  return undefined
}
