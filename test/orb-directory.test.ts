import t from 'tap'
import fc from 'fast-check'
import { keccak_256 as keccak256, sha3_256 as sha3256 } from '@noble/hashes/sha3.js'
import { bytesToHex } from '@noble/hashes/utils.js'
import { checkWorld, defaultWorld, type World } from '../src/orb-mock/world.js'
import { fcParams } from './helpers/fc.js'
import { DEMO, isOrbError, startOrb } from './helpers/orb.js'

const DIRECTORY = '/api/orb/directory'

// ORB-016: the ledger's vectors.
const VECTORS: Record<string, string> = {
  '': 'c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470',
  abc: '4e03657aea45a94fc7d47ba826c8d667c0d1e6e33a64a036ec44f58fa12d6c45',
  '{}': 'b48d38f93eaa084033fc5970bf96e559c33c4cdc07d889ab00b4d63f9590739d'
}
const SHA3_OF_EMPTY = 'a7ffc6f8bf1ed76651c14756a061d662f580ff4de43b49fa82d80a4b80f8434a'
const CHAIN = { app: `0x${'ab'.repeat(32)}`, price: '0', retired: false }

const keccakOf = (text: string): string => `0x${bytesToHex(keccak256(new TextEncoder().encode(text)))}`
const byId = (reply: { json: any }) => new Map<string, any>(reply.json.apps.map((app: { id: string }) => [app.id, app]))

/** The demo world with its listed apps replaced by `apps` (on the registry, each with its manifest). */
function worldWithManifests (manifests: readonly string[]): World {
  const world = defaultWorld()
  world.apps = world.apps.filter((app) => app.listed !== true)
  world.installs = world.installs?.filter((install) => world.apps.some((app) => app.id === install.app))
  manifests.forEach((manifest, i) =>
    world.apps.push({
      id: `app_m${i}`,
      name: `M${i}`,
      token: `tok_manifest_${i}_0000000`,
      scopes: [],
      listed: true,
      listedAt: i,
      chain: CHAIN,
      manifest
    })
  )
  return world
}

t.test('ORB-010 the directory answers 200 without Authorization', async (t) => {
  const orb = await startOrb(t)
  const reply = await orb.bot.get(DIRECTORY, { token: null })
  t.equal(reply.status, 200)
  t.match(reply.headers.get('content-type'), /^application\/json/)
})

t.test('ORB-A19 an Authorization header, valid or not, is ignored', async (t) => {
  const orb = await startOrb(t)
  const anonymous = await orb.bot.get(DIRECTORY, { token: null })
  for (const token of [DEMO.token, DEMO.ghost, 'not-a-token']) {
    const reply = await orb.bot.get(DIRECTORY, { token })
    t.equal(reply.status, 200, token)
    t.same(reply.json, anonymous.json)
  }
  t.equal((await orb.bot.get(DIRECTORY, { token: null, headers: { authorization: 'Basic Zm9vOmJhcg==' } })).status, 200)
})

t.test(
  'ORB-011 ORB-018 the reply is {apps, registry}; the registry holds its seven public facts from the world',
  async (t) => {
    const orb = await startOrb(t)
    const reply = await orb.bot.get(DIRECTORY)
    t.same(Object.keys(reply.json).sort(), ['apps', 'registry'])
    t.ok(Array.isArray(reply.json.apps))
    const { available: _available, ...facts } = defaultWorld().registry
    t.same(reply.json.registry, facts, 'chainId, contract, asset, feeRecipient, feeBps, apps, fees; nothing else')
    t.same(Object.keys(reply.json.registry).sort(), [
      'apps',
      'asset',
      'chainId',
      'contract',
      'feeBps',
      'feeRecipient',
      'fees'
    ])
  }
)

t.test('ORB-012 only apps the developer listed appear; the unlisted one never does', async (t) => {
  const orb = await startOrb(t)
  const ids = [...byId(await orb.bot.get(DIRECTORY)).keys()].sort()
  t.same(ids, ['app_demo', 'app_lite', 'app_relic'])
  orb.control.install('srv_orbit', 'app_ghost', {})
  t.notOk(byId(await orb.bot.get(DIRECTORY)).has('app_ghost'), 'installs do not list an app')
})

t.test('ORB-014 each ListedApp carries id, name, blurb, scopes, rights, homepage, developer, installs, chain, manifest', async (t) => {
  const orb = await startOrb(t)
  const source = defaultWorld().apps.find((a) => a.id === 'app_demo')!
  t.same(byId(await orb.bot.get(DIRECTORY)).get('app_demo'), {
    id: 'app_demo',
    name: source.name,
    blurb: source.blurb,
    scopes: source.scopes,
    rights: source.rights,
    homepage: source.homepage,
    developer: source.developer,
    installs: 1,
    chain: source.chain,
    manifest: { json: source.manifest, hash: keccakOf(source.manifest!) }
  })
})

t.test('ORB-015 ORB-A19 chain is null (and manifest absent) off the registry; a retired app stays listed with retired: true', async (t) => {
  const orb = await startOrb(t)
  const apps = byId(await orb.bot.get(DIRECTORY))
  const lite = apps.get('app_lite')
  t.equal(lite.chain, null)
  t.notOk('manifest' in lite, 'no manifest without a chain record')
  const relic = apps.get('app_relic')
  t.same(relic.chain, { app: '0x8f3c2b8e1a4d6f7e9b0c1d2e3f405162738495a6b7c8d9e0f1a2b3c4d5e6f708', price: '1000000000000000000', retired: true })
  t.equal(relic.installs, 0)
  for (const app of [apps.get('app_demo'), relic]) {
    t.match(app.chain.app, /^0x[0-9a-f]{64}$/)
    t.match(app.chain.price, /^(0|[1-9][0-9]*)$/)
    t.match(app.manifest.hash, /^0x[0-9a-f]{64}$/, 'ORB-A19: 0x and 64 lowercase hex digits')
  }
})

t.test('ORB-A19 with no registry contract, every chain is null and no manifest is given', async (t) => {
  const world = defaultWorld()
  world.registry.contract = null
  const orb = await startOrb(t, { world })
  const reply = await orb.bot.get(DIRECTORY)
  t.equal(reply.json.registry.contract, null)
  t.equal(reply.json.apps.length, 3)
  for (const app of reply.json.apps) {
    t.equal(app.chain, null, app.id)
    t.notOk('manifest' in app, app.id)
  }
})

t.test(
  'ORB-016 manifest.hash is keccak256 of the exact manifest bytes (the ledger vectors), not sha3-256',
  async (t) => {
    t.equal(bytesToHex(sha3256(new Uint8Array())), SHA3_OF_EMPTY, "the wrong function gives the ledger's wrong answer")
    const manifests = Object.keys(VECTORS)
    const orb = await startOrb(t, { world: worldWithManifests(manifests) })
    const apps = byId(await orb.bot.get(DIRECTORY))
    manifests.forEach((manifest, i) => {
      const listed = apps.get(`app_m${i}`)
      t.equal(listed.manifest.json, manifest, 'the exact string, not re-serialised')
      t.equal(listed.manifest.hash, `0x${VECTORS[manifest]}`, JSON.stringify(manifest))
    })
    t.not(apps.get('app_m0').manifest.hash, `0x${SHA3_OF_EMPTY}`)
  }
)

t.test(
  'ORB-016 ORB-017 the manifest is served byte for byte: spacing, key order and non-ASCII are kept and hashed as UTF-8',
  async (t) => {
    const manifests = ['{ "b": 1,\n  "a": "é" }', '{"a":"é"}', '{"emoji":"🪐","cjk":"軌道"}', '{"escaped":"\\u00e9"}']
    const orb = await startOrb(t, { world: worldWithManifests(manifests) })
    const apps = byId(await orb.bot.get(DIRECTORY))
    const hashes = manifests.map((manifest, i) => {
      const listed = apps.get(`app_m${i}`)
      t.equal(listed.manifest.json, manifest)
      t.equal(listed.manifest.hash, keccakOf(manifest), JSON.stringify(manifest))
      return listed.manifest.hash
    })
    t.equal(new Set(hashes).size, manifests.length, 'texts that parse alike still hash apart')
  }
)

t.test(
  "ORB-016 property: any manifest JSON string in a world hashes to the library's keccak256 of its UTF-8 bytes",
  async (t) => {
    const orb = await startOrb(t, { rateLimit: 'off' })
    const manifest = fc.oneof(
      fc.json({ stringUnit: 'binary' }),
      fc
        .tuple(fc.jsonValue({ stringUnit: 'grapheme' }), fc.constantFrom(1, 2, '\t'))
        .map(([value, indent]) => JSON.stringify(value, null, indent))
    )
    await fc.assert(
      fc.asyncProperty(fc.array(manifest, { minLength: 1, maxLength: 3 }), async (manifests) => {
        // A fresh world, as a reset would load it.
        orb.store.load(checkWorld(worldWithManifests(manifests)))
        const apps = byId(await orb.bot.get(DIRECTORY))
        return manifests.every((json, i) => {
          const listed = apps.get(`app_m${i}`)
          return listed.manifest.json === json && listed.manifest.hash === keccakOf(json)
        })
      }),
      fcParams({ numRuns: 100 })
    )
  }
)

/** A world of `n` listed apps: app_i was listed at day i and is installed in `installs(i)` communities. */
function crowdedWorld (n: number, installs: (i: number) => number): World {
  const world = defaultWorld()
  world.apps = []
  world.installs = []
  world.messages = []
  world.communities = Array.from({ length: 3 }, (_, c) => ({
    id: `srv_${c}`,
    name: `S${c}`,
    members: [],
    channels: []
  }))
  for (let i = 0; i < n; i++) {
    const id = `app_${String(i).padStart(2, '0')}`
    world.apps.push({
      id,
      name: id,
      token: `tok_crowd_${id}_000000`,
      scopes: [],
      listed: true,
      listedAt: i * 86_400_000
    })
    for (let c = 0; c < installs(i); c++) {
      world.installs.push({ community: `srv_${c}`, app: id, role: { name: id, rights: [] }, channels: [] })
    }
  }
  world.apps.push({ id: 'app_hidden', name: 'Hidden', token: 'tok_crowd_hidden_00000', scopes: [], listed: false })
  for (let c = 0; c < 3; c++) {
    world.installs.push({
      community: `srv_${c}`,
      app: 'app_hidden',
      role: { name: 'Hidden', rights: [] },
      channels: []
    })
  }
  return world
}

t.test('ORB-013 ORB-A19 at most 60 of 70 listed apps: most installs first, then the newest listing', async (t) => {
  const installs = (i: number) => i % 4 === 0 ? 3 : i % 4 === 1 ? 0 : i % 3
  const orb = await startOrb(t, { world: crowdedWorld(70, installs) })
  const apps: Array<{ id: string, installs: number }> = (await orb.bot.get(DIRECTORY)).json.apps
  t.equal(apps.length, 60)
  const expected = Array.from({ length: 70 }, (_, i) => ({ i, installs: installs(i) }))
    .sort((a, b) => b.installs - a.installs || b.i - a.i)
    .slice(0, 60)
    .map(({ i, installs }) => ({ id: `app_${String(i).padStart(2, '0')}`, installs }))
  t.same(apps.map(({ id, installs }) => ({ id, installs })), expected)
  t.notOk(apps.some((app) => app.id === 'app_hidden'), 'the most installed app is unlisted, so absent')
})

t.test('ORB-A19 installs counts current installs, and the order follows them', async (t) => {
  const orb = await startOrb(t)
  const order = async () =>
    (await orb.bot.get(DIRECTORY)).json.apps.map((app: { id: string; installs: number }) => `${app.id}:${app.installs}`)
  t.same(await order(), ['app_lite:2', 'app_demo:1', 'app_relic:0'])
  orb.control.install('srv_quiet', 'app_relic', {})
  orb.control.install('srv_orbit', 'app_relic', {})
  orb.control.uninstall('srv_quiet', 'app_lite')
  t.same(await order(), ['app_relic:2', 'app_lite:1', 'app_demo:1'], 'lite and demo tie at 1: lite was listed later')
})

t.test(
  'ORB-019 ORB-099 ORB-A03 the 61st request in a minute from one address is 429 with Retry-After; waiting it out succeeds',
  async (t) => {
    const orb = await startOrb(t)
    for (let i = 0; i < 30; i++) t.equal((await orb.bot.get(DIRECTORY, { token: null })).status, 200)
    orb.clock.advance(20_000)
    for (let i = 0; i < 30; i++) {
      t.equal((await orb.bot.get(DIRECTORY, { token: i % 2 === 0 ? DEMO.token : DEMO.lite })).status, 200)
    }
    const refused = await orb.bot.get(DIRECTORY, { token: DEMO.ghost })
    t.ok(isOrbError(refused, 429), 'the window is per address, whatever token is sent')
    const retryAfter = refused.headers.get('retry-after')
    t.equal(retryAfter, '40', 'ceil of the seconds until the oldest request leaves the window')
    orb.clock.advance(39_999)
    t.ok(isOrbError(await orb.bot.get(DIRECTORY), 429), 'never early')
    orb.clock.advance(Number(retryAfter) * 1000 - 39_999)
    t.equal((await orb.bot.get(DIRECTORY)).status, 200, 'after Retry-After seconds')
  }
)

t.test('ORB-A03 with rateLimit off the directory is never throttled', async (t) => {
  const orb = await startOrb(t, { rateLimit: 'off' })
  for (let i = 0; i < 70; i++) t.equal((await orb.bot.get(DIRECTORY)).status, 200)
})
