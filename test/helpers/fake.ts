import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startOrbtileMock, type OrbtileMock, type OrbtileMockOptions } from '../../src/orbtile-mock/index.js'

/** What the helpers need of a tap test. */
export interface Teardown {
  teardown(fn: () => unknown): void
}

/** A short private scratch folder, removed when the test ends. Socket paths must stay under 107 bytes. */
export function scratch (t: Teardown): string {
  const dir = mkdtempSync(join(tmpdir(), 'ot-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

/** A fake Orbtile on a socket in a scratch folder, with its discovery file beside it; closed when the test ends. */
export async function startFake (
  t: Teardown,
  options: OrbtileMockOptions = {}
): Promise<OrbtileMock & { dir: string }> {
  const dir = scratch(t)
  const fake = await startOrbtileMock({
    discoveryPath: join(dir, 'home', 'adapter-api.json'),
    socketPath: join(dir, 'run', 'orbtile.sock'),
    ...options
  })
  t.teardown(() => fake.close())
  return Object.assign(fake, { dir })
}

/** Reads the discovery file as an adapter would. */
export function readDiscovery (path: string): { api: number, basePath: string, socketPath: string, token: string } {
  return JSON.parse(readFileSync(path, 'utf8'))
}
