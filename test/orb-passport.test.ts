import t from 'tap'
import fc from 'fast-check'
import { defaultWorld } from '../src/orb-mock/world.js'
import { fcParams } from './helpers/fc.js'
import { DEMO, isOrbError, startOrb } from './helpers/orb.js'

// The demo world's evidence: Ada is human twice and a builder five times, Bo is human once.
const ADA = '0x1111111111111111111111111111111111111111'
const BO = '0x2222222222222222222222222222222222222222'
const NOBODY = '0x9999999999999999999999999999999999999999'

const passport = (query: Record<string, string | number>): string =>
  `/api/bot/v1/passport?${new URLSearchParams(Object.entries(query).map(([k, v]): [string, string] => [k, String(v)]))}`

t.test('ORB-086 ORB-A18 the reply is {server, address, kind, minimum, count, holds}, read from the registry', async (t) => {
  const orb = await startOrb(t)
  const reply = await orb.bot.get(passport({ server: 'srv_orbit', address: ADA, kind: 'human', minimum: 2 }))
  t.equal(reply.status, 200)
  t.same(reply.json, { server: 'srv_orbit', address: ADA, kind: 'human', minimum: 2, count: 2, holds: true })
  t.same((await orb.bot.get(passport({ server: 'srv_orbit', address: ADA, kind: 'builder' }))).json.count, 5)
})

t.test('ORB-085 minimum defaults to 1; 1 and 999 are accepted', async (t) => {
  const orb = await startOrb(t)
  const reply = await orb.bot.get(passport({ server: 'srv_orbit', address: BO, kind: 'human' }))
  t.same(reply.json, { server: 'srv_orbit', address: BO, kind: 'human', minimum: 1, count: 1, holds: true })
  t.match((await orb.bot.get(passport({ server: 'srv_orbit', address: BO, kind: 'human', minimum: 1 }))).json, {
    minimum: 1,
    holds: true
  })
  t.match((await orb.bot.get(passport({ server: 'srv_orbit', address: BO, kind: 'human', minimum: 999 }))).json, {
    minimum: 999,
    holds: false
  })
})

t.test(
  'ORB-085 a missing server, address or kind, address 0x123, and minimum 0, 1000 or not an integer are 400',
  async (t) => {
    const orb = await startOrb(t)
    const good = { server: 'srv_orbit', address: ADA, kind: 'human' }
    const refused: Record<string, Record<string, string | number>> = {
      'no server': { address: ADA, kind: 'human' },
      'no address': { server: 'srv_orbit', kind: 'human' },
      'no kind': { server: 'srv_orbit', address: ADA },
      'address 0x123': { ...good, address: '0x123' },
      'an address of 41 hex digits': { ...good, address: `${ADA}1` },
      'an address without 0x': { ...good, address: ADA.slice(2).padEnd(42, '1') },
      'an address with a non-hex digit': { ...good, address: `0x${'g'.repeat(40)}` },
      'minimum 0': { ...good, minimum: 0 },
      'minimum 1000': { ...good, minimum: 1000 },
      'minimum -1': { ...good, minimum: -1 },
      'minimum 1.5': { ...good, minimum: '1.5' },
      'minimum abc': { ...good, minimum: 'abc' }
    }
    for (const [what, query] of Object.entries(refused)) t.ok(isOrbError(await orb.bot.get(passport(query)), 400), what)
    t.ok(isOrbError(await orb.bot.get(`${passport(good)}&minimum=2&minimum=3`), 400), 'minimum given twice')
  }
)

t.test('ORB-087 holds is true exactly when the count reaches the minimum', async (t) => {
  const orb = await startOrb(t)
  const holds = async (address: string, kind: string, minimum: number) =>
    (await orb.bot.get(passport({ server: 'srv_orbit', address, kind, minimum }))).json.holds
  t.equal(await holds(ADA, 'human', 2), true, '2 of 2')
  t.equal(await holds(ADA, 'human', 3), false, '2 of 3')
  t.equal(await holds(ADA, 'builder', 5), true, '5 of 5')
  t.equal(await holds(ADA, 'builder', 6), false, '5 of 6')
  t.equal(await holds(BO, 'builder', 1), false, 'Bo is no builder')
})

t.test('ORB-087 property: for any minimum, holds is count >= minimum', async (t) => {
  const orb = await startOrb(t)
  const evidence: Array<[string, string, number]> = [
    [ADA, 'human', 2],
    [ADA, 'builder', 5],
    [BO, 'human', 1],
    [NOBODY, 'human', 0]
  ]
  await fc.assert(
    fc.asyncProperty(
      fc.constantFrom(...evidence),
      fc.integer({ min: 1, max: 999 }),
      async ([address, kind, count], minimum) => {
        const reply = await orb.bot.get(passport({ server: 'srv_orbit', address, kind, minimum }))
        return (
          reply.status === 200 &&
          reply.json.count === count &&
          reply.json.holds === (count >= minimum) &&
          reply.json.minimum === minimum
        )
      }
    ),
    fcParams({ numRuns: 60 })
  )
})

t.test(
  'ORB-A18 an unknown kind or address gives count 0 and holds false; the member need not belong to the server',
  async (t) => {
    const orb = await startOrb(t)
    t.same((await orb.bot.get(passport({ server: 'srv_orbit', address: ADA, kind: 'wizard' }))).json, {
      server: 'srv_orbit',
      address: ADA,
      kind: 'wizard',
      minimum: 1,
      count: 0,
      holds: false
    })
    t.match((await orb.bot.get(passport({ server: 'srv_orbit', address: NOBODY, kind: 'human' }))).json, {
      count: 0,
      holds: false
    })
    t.match(
      (await orb.bot.get(passport({ server: 'srv_orbit', address: ADA, kind: 'Human' }))).json,
      { count: 0, holds: false },
      'kinds are matched exactly'
    )
    orb.control.install('srv_quiet', 'app_demo', {})
    t.match(
      (await orb.bot.get(passport({ server: 'srv_quiet', address: ADA, kind: 'human' }))).json,
      { count: 2, holds: true },
      'Ada is not in srv_quiet'
    )
  }
)

t.test('ORB-A18 addresses match without regard to case, and are echoed as sent', async (t) => {
  const world = defaultWorld()
  const mixed = '0xAbCdEf0123456789aBcDeF0123456789ABCDEF01'
  world.passport = [{ address: mixed, kind: 'human', count: 3 }]
  const orb = await startOrb(t, { world })
  for (const address of [mixed, mixed.toLowerCase(), `0x${mixed.slice(2).toUpperCase()}`]) {
    t.same(
      (await orb.bot.get(passport({ server: 'srv_orbit', address, kind: 'human', minimum: 3 }))).json,
      { server: 'srv_orbit', address, kind: 'human', minimum: 3, count: 3, holds: true },
      address
    )
  }
})

t.test('ORB-086 ORB-A18 while the chain cannot be consulted, count and holds are null, never false', async (t) => {
  const orb = await startOrb(t)
  const ask = async () =>
    (await orb.bot.get(passport({ server: 'srv_orbit', address: ADA, kind: 'human', minimum: 5 }))).json
  t.match(await ask(), { count: 2, holds: false })
  orb.control.setChain({ available: false })
  t.same(await ask(), { server: 'srv_orbit', address: ADA, kind: 'human', minimum: 5, count: null, holds: null })
  t.match((await orb.bot.get(passport({ server: 'srv_orbit', address: NOBODY, kind: 'wizard' }))).json, {
    count: null,
    holds: null
  })
  orb.control.setChain({ available: true })
  t.match(await ask(), { count: 2, holds: false }, 'the chain is back')
})

t.test('ORB-086 a world whose registry starts unavailable answers null', async (t) => {
  const world = defaultWorld()
  world.registry.available = false
  const orb = await startOrb(t, { world })
  t.match((await orb.bot.get(passport({ server: 'srv_orbit', address: ADA, kind: 'human' }))).json, {
    count: null,
    holds: null
  })
})

t.test('ORB-089 without the passport scope the call is 403, before the query is looked at', async (t) => {
  const orb = await startOrb(t)
  for (const token of [DEMO.lite, DEMO.relic, DEMO.ghost]) {
    t.ok(
      isOrbError(await orb.as(token).get(passport({ server: 'srv_orbit', address: ADA, kind: 'human' })), 403),
      token
    )
    t.ok(
      isOrbError(await orb.as(token).get(passport({ server: 'srv_orbit', address: '0x123', kind: 'human' })), 403),
      `${token}, bad address`
    )
  }
  t.ok(
    isOrbError(await orb.bot.get(passport({ server: 'srv_orbit', address: ADA, kind: 'human' }), { token: null }), 401),
    'ORB-003 no token'
  )
})

t.test(
  'ORB-A08 a server that did not install the app, or does not exist, is 404; installing opens it, uninstalling closes it',
  async (t) => {
    const orb = await startOrb(t)
    const ask = (server: string) => orb.bot.get(passport({ server, address: ADA, kind: 'human' }))
    t.ok(isOrbError(await ask('srv_quiet'), 404), 'srv_quiet did not install the demo app')
    t.ok(isOrbError(await ask('srv_nowhere'), 404), 'no such community')
    orb.control.install('srv_quiet', 'app_demo', {})
    t.equal((await ask('srv_quiet')).status, 200)
    orb.control.uninstall('srv_orbit', 'app_demo')
    t.ok(isOrbError(await ask('srv_orbit'), 404), 'after uninstalling')
    orb.control.setChain({ available: false })
    t.ok(isOrbError(await ask('srv_orbit'), 404), 'the install gate comes before the chain')
  }
)
