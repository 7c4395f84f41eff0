import { isDeepStrictEqual } from 'node:util'
import t from 'tap'
import fc from 'fast-check'
import { DEFAULT_RESERVED_COMMANDS } from '../src/orb-mock/store.js'
import { defaultWorld, RIGHTS } from '../src/orb-mock/world.js'
import { fcParams } from './helpers/fc.js'
import { DEMO, isOrbError, startOrb } from './helpers/orb.js'

const COMMANDS = '/api/bot/v1/commands'

/** The demo world with commands already registered: one global and one for srv_orbit (ORB-A15). */
function worldWithCommands () {
  const world = defaultWorld()
  world.apps.find((a) => a.id === 'app_demo')!.commands = [
    { name: 'roll', description: 'Roll a die', options: [{ name: 'sides', optional: true }] },
    { name: 'local', description: 'Only in Orbit', right: 'manage_messages', community: 'srv_orbit' }
  ]
  return world
}

const names = (reply: { json: any }): string[] => reply.json.commands.map((c: { name: string }) => c.name)

t.test(
  'ORB-055 GET lists every command of the app, global and community ones, each with the Command fields',
  async (t) => {
    const orb = await startOrb(t, { world: worldWithCommands() })
    const reply = await orb.bot.get(COMMANDS)
    t.equal(reply.status, 200)
    t.same(Object.keys(reply.json), ['commands'])
    const [roll, local] = reply.json.commands
    t.same(Object.keys(roll).sort(), ['args', 'community', 'description', 'id', 'name', 'right'])
    t.match(roll, {
      name: 'roll',
      description: 'Roll a die',
      args: [{ name: 'sides', optional: true }],
      right: 'send_messages',
      community: null
    })
    t.match(local, {
      name: 'local',
      description: 'Only in Orbit',
      args: [],
      right: 'manage_messages',
      community: 'srv_orbit'
    })
    t.type(roll.id, 'string')
    t.not(roll.id, local.id)
  }
)

t.test(
  'ORB-A07 /commands needs only a valid token: apps without any particular scope use all three methods',
  async (t) => {
    const orb = await startOrb(t)
    for (const token of [DEMO.lite, DEMO.relic]) {
      const app = orb.as(token)
      t.equal((await app.put(COMMANDS, { commands: [{ name: 'ping' }] })).status, 200)
      t.equal((await app.get(COMMANDS)).status, 200)
      t.equal((await app.delete(`${COMMANDS}?name=ping`)).status, 200)
    }
    for (const method of ['GET', 'PUT', 'DELETE']) {
      const reply = await orb.bot.request(method, `${COMMANDS}?name=ping`, {
        token: null,
        ...(method === 'PUT' ? { body: { commands: [] } } : {})
      })
      t.ok(isOrbError(reply, 401), `${method} without a token is 401 (ORB-003)`)
    }
  }
)

t.test('ORB-062 commands belong to the app that registered them; GET shows only its own', async (t) => {
  const orb = await startOrb(t)
  const lite = orb.as(DEMO.lite)
  await orb.bot.put(COMMANDS, { commands: [{ name: 'demo-only' }] })
  await lite.put(COMMANDS, { commands: [{ name: 'lite-only' }, { name: 'shared' }] })
  t.same(names(await orb.bot.get(COMMANDS)), ['demo-only'])
  t.same(names(await lite.get(COMMANDS)), ['lite-only', 'shared'])
  await orb.bot.put(COMMANDS, { commands: [{ name: 'shared' }] })
  t.same(names(await lite.get(COMMANDS)), ['lite-only', 'shared'], "another app's sync leaves lite's commands alone")
  t.ok(
    isOrbError(await orb.bot.delete(`${COMMANDS}?name=lite-only`), 404),
    "an app cannot remove another app's command"
  )
  t.same(names(await lite.get(COMMANDS)), ['lite-only', 'shared'])
})

t.test('ORB-056 PUT makes the global commands exactly the list, replies 200 as GET does, and [] removes them all', async (t) => {
  const orb = await startOrb(t)
  const first = await orb.bot.put(COMMANDS, { commands: [{ name: 'a' }, { name: 'b' }, { name: 'c' }] })
  t.equal(first.status, 200)
  t.same(names(first), ['a', 'b', 'c'])
  const second = await orb.bot.put(COMMANDS, { commands: [{ name: 'c' }, { name: 'd' }] })
  t.same(names(second), ['c', 'd'], 'a and b are gone, d is new')
  t.same((await orb.bot.get(COMMANDS)).json, second.json, 'the PUT reply is what GET says')
  const emptied = await orb.bot.put(COMMANDS, { commands: [] })
  t.same(emptied.json, { commands: [] })
  t.same((await orb.bot.get(COMMANDS)).json, { commands: [] })
  t.ok(isOrbError(await orb.bot.put(COMMANDS, {}), 400), 'commands is required')
})

t.test('ORB-065 a PUT is idempotent: the same list twice gives the same commands, ids included', async (t) => {
  const orb = await startOrb(t)
  const list = { commands: [{ name: 'quote', description: 'A quote', options: [{ name: 'topic' }] }, { name: 'help' }] }
  const once = await orb.bot.put(COMMANDS, list)
  const twice = await orb.bot.put(COMMANDS, list)
  t.equal(once.status, 200)
  t.same(twice.json, once.json)
})

t.test('ORB-A15 defaults: right send_messages, description empty, args echo the options, community null', async (t) => {
  const orb = await startOrb(t)
  const options = [
    { name: 'who', description: 'Whom to greet' },
    { name: 'times', optional: true }
  ]
  const reply = await orb.bot.put(COMMANDS, {
    commands: [
      { name: 'greet', options },
      { name: 'bare', right: 'speak' }
    ]
  })
  t.same(
    reply.json.commands.map(({ id: _id, ...rest }: Record<string, unknown>) => rest),
    [
      { name: 'greet', description: '', args: options, right: 'send_messages', community: null },
      { name: 'bare', description: '', args: [], right: 'speak', community: null }
    ]
  )
})

t.test('ORB-A15 PUT leaves community commands alone, and a community sent in the body is ignored', async (t) => {
  const orb = await startOrb(t, { world: worldWithCommands() })
  const before = (await orb.bot.get(COMMANDS)).json.commands
  const local = before.find((c: { name: string }) => c.name === 'local')
  const reply = await orb.bot.put(COMMANDS, { commands: [{ name: 'local', community: 'srv_quiet' }, { name: 'new' }] })
  t.equal(reply.status, 200)
  t.same(
    reply.json.commands,
    [
      local,
      {
        id: reply.json.commands[1].id,
        name: 'local',
        description: '',
        args: [],
        right: 'send_messages',
        community: null
      },
      { id: reply.json.commands[2].id, name: 'new', description: '', args: [], right: 'send_messages', community: null }
    ],
    'roll is gone, the community command stays as it was, the new ones are global'
  )
  t.not(reply.json.commands[1].id, local.id, 'a global and a community command of one name are two commands')
  t.same((await orb.bot.put(COMMANDS, { commands: [] })).json.commands, [local], '[] removes the global ones only')
  t.ok(isOrbError(await orb.bot.delete(`${COMMANDS}?name=local`), 404), 'DELETE cannot remove a community command')
})

t.test('ORB-A15 a command keeps its id across syncs, even after it was removed and registered again', async (t) => {
  const orb = await startOrb(t)
  const ids = async (commands: Array<{ name: string }>) =>
    Object.fromEntries(
      (await orb.bot.put(COMMANDS, { commands })).json.commands.map((c: { name: string; id: string }) => [c.name, c.id])
    )
  const first = await ids([{ name: 'a' }, { name: 'b' }])
  t.not(first.a, first.b)
  const second = await ids([{ name: 'b' }, { name: 'c' }])
  t.equal(second.b, first.b)
  t.not(second.c, first.a)
  await orb.bot.delete(`${COMMANDS}?name=b`)
  const third = await ids([{ name: 'a' }, { name: 'b' }, { name: 'c' }])
  t.same(third, { ...first, c: second.c })
})

/** A valid command list: unique names outside the reserved ones, valid options with the required ones first. */
const validCommands = fc.uniqueArray(
  fc.record(
    {
      name: fc.stringMatching(/^[a-z0-9_-]{1,32}$/).filter((n) => !DEFAULT_RESERVED_COMMANDS.includes(n)),
      description: fc.option(fc.string({ maxLength: 140, unit: 'binary' }), { nil: undefined }),
      right: fc.option(fc.constantFrom(...RIGHTS), { nil: undefined }),
      options: fc.option(
        fc
          .uniqueArray(fc.stringMatching(/^[a-z0-9_-]{1,32}$/), { maxLength: 6 })
          .chain((optionNames) =>
            fc
              .nat({ max: optionNames.length })
              .map((required) => optionNames.map((name, i) => (i < required ? { name } : { name, optional: true })))
          ),
        { nil: undefined }
      )
    },
    { requiredKeys: ['name'] }
  ),
  { maxLength: 12, selector: (c) => c.name }
)

t.test(
  'ORB-056 ORB-A15 property: after any valid PUT, GET returns exactly that set, ids stable per name across syncs',
  async (t) => {
    const orb = await startOrb(t, { rateLimit: 'off' })
    const idOf = new Map<string, string>()
    await fc.assert(
      fc.asyncProperty(validCommands, async (commands) => {
        const put = await orb.bot.put(COMMANDS, { commands })
        const got = await orb.bot.get(COMMANDS)
        if (put.status !== 200 || got.status !== 200) return false
        const expected = commands.map((c) => ({
          name: c.name,
          description: c.description ?? '',
          args: c.options ?? [],
          right: c.right ?? 'send_messages',
          community: null
        }))
        const byName = (a: { name: string }, b: { name: string }) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)
        const listed = [...got.json.commands].sort(byName)
        if (
          !isDeepStrictEqual(
            listed.map(({ id: _id, ...rest }: Record<string, unknown>) => rest),
            [...expected].sort(byName)
          )
        ) { return false }
        if (!isDeepStrictEqual(put.json, got.json)) return false
        for (const { name, id } of listed as Array<{ name: string; id: string }>) {
          if ((idOf.get(name) ?? id) !== id) return false
          idOf.set(name, id)
        }
        return new Set(idOf.values()).size === idOf.size
      }),
      fcParams({ numRuns: 60 })
    )
  }
)

t.test('ORB-057 50 commands are accepted, 51 are 400 and change nothing', async (t) => {
  const orb = await startOrb(t)
  const list = (n: number) => ({ commands: Array.from({ length: n }, (_, i) => ({ name: `c${i}` })) })
  t.equal((await orb.bot.put(COMMANDS, list(50))).json.commands.length, 50)
  t.ok(isOrbError(await orb.bot.put(COMMANDS, list(51)), 400))
  t.equal((await orb.bot.get(COMMANDS)).json.commands.length, 50)
})

t.test('ORB-058 every refusal example of the ledger is 400 and changes nothing', async (t) => {
  const orb = await startOrb(t)
  const kept = (await orb.bot.put(COMMANDS, { commands: [{ name: 'kept' }] })).json
  const refused: Record<string, unknown> = {
    'name Hello': { name: 'Hello' },
    'name "a b"': { name: 'a b' },
    'a 33-character name': { name: 'a'.repeat(33) },
    'a 141-character description': { name: 'long', description: 'd'.repeat(141) },
    'right admin': { name: 'boss', right: 'admin' },
    '7 options': { name: 'many', options: Array.from({ length: 7 }, (_, i) => ({ name: `o${i}` })) },
    'an option without a name': { name: 'anon', options: [{ description: 'no name' }] },
    'no name at all': { description: 'nameless' }
  }
  for (const [what, command] of Object.entries(refused)) {
    t.ok(isOrbError(await orb.bot.put(COMMANDS, { commands: [command] }), 400), what)
  }
  t.same((await orb.bot.get(COMMANDS)).json, kept)
  const edges = [{ name: 'a'.repeat(32), description: 'd'.repeat(140), options: Array.from({ length: 6 }, (_, i) => ({ name: `o${i}` })) }, { name: '0_-' }]
  t.equal((await orb.bot.put(COMMANDS, { commands: edges })).status, 200, 'the limits themselves are accepted')
})

t.test('ORB-059 ORB-A15 reserved names (the player\'s play, the administrators\' ban) are 400', async (t) => {
  const orb = await startOrb(t)
  for (const name of ['play', 'ban']) {
    const reply = await orb.bot.put(COMMANDS, { commands: [{ name: 'fine' }, { name }] })
    t.ok(isOrbError(reply, 400), name)
  }
  t.same((await orb.bot.get(COMMANDS)).json, { commands: [] })
})

t.test('ORB-A15 the reserved list is the world\'s when it names one', async (t) => {
  const world = defaultWorld()
  world.settings = { reservedCommands: ['zap'] }
  const orb = await startOrb(t, { world })
  t.ok(isOrbError(await orb.bot.put(COMMANDS, { commands: [{ name: 'zap' }] }), 400))
  t.equal((await orb.bot.put(COMMANDS, { commands: [{ name: 'play' }] })).status, 200)
})

t.test(
  'ORB-A15 duplicate names, bad or duplicate option names, and a required option after an optional one are 400',
  async (t) => {
    const orb = await startOrb(t)
    const refused: Record<string, unknown[]> = {
      'a name given twice': [{ name: 'twin' }, { name: 'twin', description: 'again' }],
      'option name Who': [{ name: 'greet', options: [{ name: 'Who' }] }],
      'option name "a b"': [{ name: 'greet', options: [{ name: 'a b' }] }],
      'an empty option name': [{ name: 'greet', options: [{ name: '' }] }],
      'a 33-character option name': [{ name: 'greet', options: [{ name: 'o'.repeat(33) }] }],
      'an option name given twice': [{ name: 'greet', options: [{ name: 'who' }, { name: 'who', optional: true }] }],
      'required after optional': [{ name: 'greet', options: [{ name: 'who', optional: true }, { name: 'times' }] }],
      'optional: false after optional': [
        {
          name: 'greet',
          options: [
            { name: 'who', optional: true },
            { name: 'times', optional: false }
          ]
        }
      ]
    }
    for (const [what, commands] of Object.entries(refused)) {
      t.ok(isOrbError(await orb.bot.put(COMMANDS, { commands }), 400), what)
    }
    t.same((await orb.bot.get(COMMANDS)).json, { commands: [] })
    const fine = [
      {
        name: 'greet',
        options: [
          { name: 'who' },
          { name: 'times', optional: false },
          { name: 'style', optional: true },
          { name: 'x', optional: true }
        ]
      }
    ]
    t.equal(
      (await orb.bot.put(COMMANDS, { commands: fine })).status,
      200,
      'required (optional absent or false) then optional is accepted'
    )
  }
)

t.test(
  'ORB-064 DELETE removes a registered global command (200 {ok, name}); an unknown name is 404; no name is 400',
  async (t) => {
    const orb = await startOrb(t)
    await orb.bot.put(COMMANDS, { commands: [{ name: 'a' }, { name: 'b' }] })
    const removed = await orb.bot.delete(`${COMMANDS}?name=a`)
    t.equal(removed.status, 200)
    t.same(removed.json, { ok: true, name: 'a' })
    t.same(names(await orb.bot.get(COMMANDS)), ['b'])
    t.ok(isOrbError(await orb.bot.delete(`${COMMANDS}?name=a`), 404), 'a second delete of the same name')
    t.ok(isOrbError(await orb.bot.delete(`${COMMANDS}?name=never`), 404))
    t.ok(isOrbError(await orb.bot.delete(COMMANDS), 400), 'name is required')
    t.same(names(await orb.bot.get(COMMANDS)), ['b'])
  }
)

t.test(
  'ORB-060 ORB-099 ORB-A03 the 11th PUT in a minute is 429 with an integer Retry-After; waiting it out succeeds',
  async (t) => {
    const orb = await startOrb(t)
    for (let i = 0; i < 10; i++) t.equal((await orb.bot.put(COMMANDS, { commands: [{ name: `v${i}` }] })).status, 200)
    const refused = await orb.bot.put(COMMANDS, { commands: [{ name: 'late' }] })
    t.ok(isOrbError(refused, 429))
    t.match(refused.headers.get('retry-after'), /^[1-9][0-9]*$/)
    t.equal(refused.headers.get('retry-after'), '60', 'all ten syncs were at the same instant')
    t.same(names(await orb.bot.get(COMMANDS)), ['v9'], 'the refused sync changed nothing')
    t.equal((await orb.as(DEMO.lite).put(COMMANDS, { commands: [] })).status, 200, 'the window is per app')
    orb.clock.advance(59_999)
    t.ok(isOrbError(await orb.bot.put(COMMANDS, { commands: [] }), 429), 'never early')
    orb.clock.advance(1)
    t.equal((await orb.bot.put(COMMANDS, { commands: [{ name: 'late' }] })).status, 200)
    t.equal((await orb.bot.get(COMMANDS)).status, 200, 'GET is not throttled')
  }
)

t.test('ORB-A03 refused PUTs (400 and 429) do not count against the window', async (t) => {
  const orb = await startOrb(t)
  for (let i = 0; i < 20; i++) t.ok(isOrbError(await orb.bot.put(COMMANDS, { commands: [{ name: 'play' }] }), 400))
  for (let i = 0; i < 10; i++) {
    t.equal((await orb.bot.put(COMMANDS, { commands: [] })).status, 200, `sync ${i + 1} after twenty refusals`)
  }
  t.equal((await orb.bot.put(COMMANDS, { commands: [] })).status, 429)
  orb.clock.advance(30_000)
  for (let i = 0; i < 10; i++) t.equal((await orb.bot.put(COMMANDS, { commands: [] })).status, 429)
  orb.clock.advance(30_000)
  t.equal(
    (await orb.bot.put(COMMANDS, { commands: [] })).status,
    200,
    'the ten 429s half a minute ago were not counted'
  )
})

t.test('ORB-A03 with rateLimit off, PUT is never throttled', async (t) => {
  const orb = await startOrb(t, { rateLimit: 'off' })
  for (let i = 0; i < 25; i++) t.equal((await orb.bot.put(COMMANDS, { commands: [] })).status, 200)
})
