import { keccak_256 as keccak256 } from '@noble/hashes/sha3.js'
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js'
import { CaseFailure, defineCase, type ConformanceCase } from '../../../core/case.js'
import { expectComponent, expectEqual, expectOk, expectThat } from '../../expect.js'
import { DIRECTORY, controlled, type OrbContext } from '../../orb-case.js'
import type { OrbBotClient } from '../../transport.js'
import { DIRECTORY_LIMIT, NOT_A_TOKEN, SCOPES, readDirectory, type StateInstall } from './access-support.js'

/** A bytes32 as ORB-015 allows it (with or without 0x, either case). */
const HEX32 = /^(0x)?[0-9a-fA-F]{64}$/
/** A bytes32 as ORB-A19 writes it: 0x and lowercase. */
const LOWER_HEX32 = /^0x[0-9a-f]{64}$/
/** An amount in wei: a decimal integer string. */
const WEI = /^(0|[1-9][0-9]*)$/

/** The public directory of apps: who may read it, what it lists and in what shape (ORB-010 to ORB-018). */
export const directoryCases: Array<ConformanceCase<OrbBotClient>> = [
  defineCase<OrbBotClient>({
    id: 'ORB-010',
    title: 'the directory answers 200 without Authorization',
    level: 'required',
    async run (ctx) {
      const reply = await ctx.client.request({ path: DIRECTORY, as: null })
      expectOk(reply, 'GET /api/orb/directory without Authorization', { method: 'GET', path: '/api/orb/directory' })
    }
  }),

  defineCase<OrbBotClient>({
    id: 'ORB-011',
    title: 'the directory\'s 200 is {"apps": ListedApp[], "registry": {…}}',
    level: 'required',
    async run (ctx) {
      const body = await readDirectory(ctx)
      expectThat(
        typeof body === 'object' && body !== null && !Array.isArray(body),
        'the directory is an object',
        '{"apps":[…],"registry":{…}}',
        body
      )
      expectThat(Array.isArray(body.apps), 'the directory has apps: []', 'apps: ListedApp[]', body.apps)
      expectThat(
        typeof body.registry === 'object' && body.registry !== null && !Array.isArray(body.registry),
        'the directory has registry: {}',
        'registry: {…}',
        body.registry
      )
      for (const app of body.apps as unknown[]) expectComponent(app, 'ListedApp', 'a listed app')
    }
  }),

  defineCase<OrbBotClient>({
    id: 'ORB-012',
    title: 'the directory lists exactly the apps whose developer chose the public listing; unlisted apps never appear',
    level: 'required',
    needs: ['control'],
    async run (ctx) {
      const { control, target } = controlled(ctx)
      const state = await control.orbState()
      const listed = (state.apps as any[]).filter((a) => a.listed === true).map((a) => a.id as string).sort()
      const unlisted = new Set((state.apps as any[]).filter((a) => a.listed !== true).map((a) => a.id as string))
      const shown = ((await readDirectory(ctx)).apps as any[]).map((a) => a.id as string)
      const leaked = shown.filter((id) => unlisted.has(id))
      if (leaked.length > 0) throw new CaseFailure('unlisted apps appear in the directory', 'only listed apps', leaked)
      for (const own of [target.full.id, target.few?.id]) {
        expectThat(
          own === undefined || !shown.includes(own),
          "the suite's own (unlisted, installed) apps are not listed",
          `no ${String(own)}`,
          shown
        )
      }
      if (listed.length <= DIRECTORY_LIMIT) {
        expectEqual([...shown].sort(), listed, 'the directory lists every listed app')
      }
      ctx.note(`${listed.length} listed, ${unlisted.size} unlisted`)
    }
  }),

  defineCase<OrbBotClient>({
    id: 'ORB-013',
    title: 'the directory holds at most 60 apps, most installed first',
    level: 'required',
    async run (ctx) {
      const apps = (await readDirectory(ctx)).apps as any[]
      expectThat(apps.length <= DIRECTORY_LIMIT, 'at most 60 apps', `<= ${DIRECTORY_LIMIT}`, apps.length)
      // "newest and most installed first": an app never stands before one with more installs (the tie-break is
      // ORB-A19's).
      for (let i = 1; i < apps.length; i++) {
        if (Number(apps[i].installs) > Number(apps[i - 1].installs)) throw new CaseFailure(`${String(apps[i].id)} (${String(apps[i].installs)} installs) stands after ${String(apps[i - 1].id)} (${String(apps[i - 1].installs)})`, 'most installed first', apps.map((a) => [a.id, a.installs]))
      }
      ctx.note(`${apps.length} apps`)
    }
  }),

  defineCase<OrbBotClient>({
    id: 'ORB-014',
    title: 'each ListedApp has id, name, blurb, scopes (of the 5), rights, homepage, developer, integer installs, chain, manifest',
    level: 'required',
    async run (ctx) {
      const apps = (await readDirectory(ctx)).apps as any[]
      const vocabulary = new Set<string>(SCOPES)
      for (const app of apps) {
        const what = `listed app ${String(app?.id)}`
        for (const key of ['id', 'name', 'blurb', 'homepage', 'developer']) {
          expectThat(typeof app[key] === 'string', `${what}: ${key} is a string`, `${key}: "…"`, app[key])
        }
        expectThat(
          Array.isArray(app.scopes) && app.scopes.every((s: unknown) => vocabulary.has(String(s))),
          `${what}: scopes are a subset of the five`,
          [...SCOPES],
          app.scopes
        )
        expectThat(new Set(app.scopes).size === app.scopes.length, `${what}: each scope once`, 'no repeats', app.scopes)
        expectThat(
          Array.isArray(app.rights) && app.rights.every((r: unknown) => typeof r === 'string'),
          `${what}: rights are channel rights`,
          'rights: ["send_messages", …]',
          app.rights
        )
        expectThat(
          Number.isInteger(app.installs) && app.installs >= 0,
          `${what}: installs is a count`,
          'an integer >= 0',
          app.installs
        )
        expectThat('chain' in app, `${what}: chain is present`, 'chain: {…} or null', app)
        expectComponent(app, 'ListedApp', what)
      }
      if (ctx.client.target.controlled !== undefined) {
        // The listing says what the developer asked for: the scopes of the app itself.
        const state = await controlled(ctx).control.orbState()
        for (const app of apps) {
          const known = (state.apps as any[]).find((a) => a.id === app.id)
          if (known !== undefined) {
            expectEqual(
              [...app.scopes].sort(),
              [...known.scopes].sort(),
              `${String(app.id)}: the listing's scopes are the app's`
            )
          }
        }
      }
      ctx.note(`${apps.length} listings checked`)
    }
  }),

  defineCase<OrbBotClient>({
    id: 'ORB-015',
    title: 'chain is null or {app: bytes32, price: a decimal wei string, retired: boolean}',
    level: 'required',
    async run (ctx) {
      let onChain = 0
      for (const app of (await readDirectory(ctx)).apps as any[]) {
        const chain = app.chain
        if (chain === null) continue
        const what = `listed app ${String(app.id)}`
        expectThat(
          typeof chain === 'object' && !Array.isArray(chain),
          `${what}: chain is an object or null`,
          '{app, price, retired} or null',
          chain
        )
        expectThat(
          typeof chain.app === 'string' && HEX32.test(chain.app),
          `${what}: chain.app is a bytes32`,
          '0x and 64 hex digits',
          chain.app
        )
        expectThat(
          typeof chain.price === 'string' && WEI.test(chain.price),
          `${what}: chain.price is a decimal wei string`,
          '"0" or a decimal integer',
          chain.price
        )
        expectThat(
          typeof chain.retired === 'boolean',
          `${what}: chain.retired is a boolean`,
          'true or false',
          chain.retired
        )
        onChain++
      }
      ctx.note(`${onChain} listings on the registry`)
    }
  }),

  defineCase<OrbBotClient>({
    id: 'ORB-016',
    title: 'every listing\'s manifest.hash is Keccak-256 (not SHA3-256) of the exact UTF-8 bytes of manifest.json',
    level: 'required',
    async run (ctx) {
      const body = await readDirectory(ctx)
      let checked = 0
      for (const app of body.apps as any[]) {
        if (app.manifest === undefined || app.manifest === null) continue
        expectThat(
          typeof app.manifest.json === 'string',
          `${String(app.id)}: manifest.json is a string`,
          'the exact JSON text',
          app.manifest.json
        )
        const want = bytesToHex(keccak256(utf8ToBytes(String(app.manifest.json))))
        const got = String(app.manifest.hash).toLowerCase().replace(/^0x/, '')
        if (got !== want) {
          throw new CaseFailure(
            `${String(app.id)}: manifest.hash is not keccak256(manifest.json)`,
            `0x${want}`,
            app.manifest.hash
          )
        }
        checked++
      }
      ctx.note(`${checked} manifests checked`)
    }
  }),

  defineCase<OrbBotClient>({
    id: 'ORB-018',
    title:
      'registry has integer chainId, contract string or null, asset, feeRecipient, integer feeBps, integer apps, fees in wei',
    level: 'required',
    async run (ctx) {
      const r = (await readDirectory(ctx)).registry
      expectRegistryParties(r)
      expectRegistryAmounts(r)
    }
  })
]

/** orbtest's decisions on the directory's order, chains, hashes and install counts (ORB-A19). */
export const directoryDecisions: Array<ConformanceCase<OrbBotClient>> = [
  defineCase<OrbBotClient>({
    id: 'ORB-A19',
    title:
      'directory: installs descending, retired apps listed with retired true, no manifest without chain, 0x-hex hashes, installs counts current installs, Authorization ignored',
    level: 'decision',
    async run (ctx) {
      const body = await readDirectory(ctx)
      const apps = body.apps as any[]
      for (let i = 1; i < apps.length; i++) {
        expectThat(
          apps[i].installs <= apps[i - 1].installs,
          'installs descending',
          'installs descending',
          apps.map((a) => [a.id, a.installs])
        )
      }
      expectChainsAndHashes(apps, body.registry)
      // Authorization, valid or not, changes nothing.
      expectEqual((await readDirectory(ctx, { as: 'full' })).apps, apps, "the directory with the app's token")
      expectEqual((await readDirectory(ctx, { as: NOT_A_TOKEN })).apps, apps, 'the directory with an unknown token')
      if (ctx.client.target.controlled === undefined) return
      const state = await controlled(ctx).control.orbState()
      expectListingsAsDeveloped(ctx, apps, state)
      if (ctx.readOnly) {
        ctx.note('read-only: no install was made, so the install count was not moved')
        return
      }
      await expectInstallMovesCount(ctx, apps, state)
    }
  })
]

/** ORB-018: the registry's chain, contract, asset and fee recipient. */
function expectRegistryParties (r: any): void {
  expectThat(Number.isInteger(r?.chainId), 'registry.chainId is an integer', 'e.g. 10143', r?.chainId)
  expectThat(
    r?.contract === null || typeof r?.contract === 'string',
    'registry.contract is a string or null',
    'an address or null',
    r?.contract
  )
  expectThat(typeof r?.asset === 'string', 'registry.asset is a string', 'the test token', r?.asset)
  expectThat(
    typeof r?.feeRecipient === 'string',
    'registry.feeRecipient is a string',
    'an address',
    r?.feeRecipient
  )
}

/** Basis points in a whole: a fee of 100 %. */
const ALL_BPS = 10_000

/** ORB-018: the registry's fee in basis points, its count of apps and the fees it holds in wei. */
function expectRegistryAmounts (r: any): void {
  expectThat(
    Number.isInteger(r?.feeBps) && r.feeBps >= 0 && r.feeBps <= ALL_BPS,
    'registry.feeBps is an integer in basis points',
    '0..10000, e.g. 500',
    r?.feeBps
  )
  expectThat(Number.isInteger(r?.apps) && r.apps >= 0, 'registry.apps is a count', 'an integer >= 0', r?.apps)
  expectThat(
    typeof r?.fees === 'string' && WEI.test(r.fees),
    'registry.fees is a decimal wei string',
    '"0" or a decimal integer',
    r?.fees
  )
}

/** ORB-A19: no manifest without a chain, hashes as 0x and lowercase hex, and no chain without a registry contract. */
function expectChainsAndHashes (apps: any[], registry: any): void {
  for (const app of apps) {
    if (app.chain === null) {
      expectThat(!('manifest' in app), `${String(app.id)}: no chain, no manifest`, 'manifest omitted', app.manifest)
      continue
    }
    expectThat(
      LOWER_HEX32.test(String(app.chain.app)),
      `${String(app.id)}: chain.app is 0x and 64 lowercase hex digits`,
      '0x…',
      app.chain.app
    )
    if (app.manifest !== undefined) {
      expectThat(
        LOWER_HEX32.test(String(app.manifest.hash)),
        `${String(app.id)}: manifest.hash is 0x and 64 lowercase hex digits`,
        '0x…',
        app.manifest.hash
      )
    }
  }
  if (registry?.contract === null) {
    expectThat(
      apps.every((a) => a.chain === null),
      'without a registry contract every chain is null',
      'chain: null',
      apps.map((a) => a.chain)
    )
  }
}

/**
 * ORB-A19, against the control API's state: installs counts the current installs, every listed app is shown
 * (retired ones too) while they fit the directory, and each chain says whether it is retired.
 */
function expectListingsAsDeveloped (ctx: OrbContext, apps: any[], state: any): void {
  const known = new Map<string, any>((state.apps as any[]).map((a) => [a.id, a]))
  for (const app of apps) {
    if (known.has(app.id)) {
      expectEqual(
        app.installs,
        known.get(app.id).installs,
        `${String(app.id)}: installs counts its current installs`
      )
    }
  }
  const listed = (state.apps as any[]).filter((a) => a.listed === true).map((a) => a.id as string)
  // Retired apps stay listed: every listed app is shown (while there are at most 60), retired or not.
  if (listed.length <= DIRECTORY_LIMIT) {
    expectEqual(apps.map((a) => a.id).sort(), [...listed].sort(), 'every listed app is shown, retired ones too')
  }
  for (const app of apps) {
    if (app.chain !== null) {
      expectThat(
        typeof app.chain.retired === 'boolean',
        `${String(app.id)}: chain.retired`,
        'true or false',
        app.chain.retired
      )
    }
  }
  ctx.note(
    `${apps.filter((a) => a.chain?.retired === true).length} retired listings shown of ${listed.length} listed apps`
  )
}

/**
 * ORB-A19: an admin installs a listed app in a community that lacks it: installs goes up by one, and back down after.
 */
async function expectInstallMovesCount (ctx: OrbContext, apps: any[], state: any): Promise<void> {
  const { control } = controlled(ctx)
  const pick = apps.flatMap((app) => (state.servers as any[])
    .filter((s) => !(state.installs as StateInstall[]).some((i) => i.app === app.id && i.server === s.id))
    .map((s) => ({ app: app.id as string, server: s.id as string, installs: app.installs as number })))[0]
  if (pick === undefined) {
    ctx.note('every listed app is installed everywhere: the install count was not moved')
    return
  }
  ctx.cleanup(async () => { await control.uninstall(pick.server, pick.app) })
  await control.install(pick.server, pick.app, {})
  const after = ((await readDirectory(ctx)).apps as any[]).find((a) => a.id === pick.app)
  expectEqual(after?.installs, pick.installs + 1, `${pick.app}'s installs once ${pick.server} installed it`)
  await control.uninstall(pick.server, pick.app)
  const back = ((await readDirectory(ctx)).apps as any[]).find((a) => a.id === pick.app)
  expectEqual(back?.installs, pick.installs, `${pick.app}'s installs once ${pick.server} uninstalled it again`)
}
