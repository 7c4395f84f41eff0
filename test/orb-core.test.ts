import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import fc from 'fast-check'
import t from 'tap'
import { createAjv } from '../src/shared/ajv.js'
import {
  CHECKED_WORLD_FILE, checkWorld, DEFAULT_WORLD_FILE, defaultWorld, demoWorld, WorldError, type World
} from '../src/orb-mock/world.js'
import { orbRoutes } from '../src/orb-mock/app.js'
import { DEMO, isOrbError, startOrb } from './helpers/orb.js'
import { fcParams } from './helpers/fc.js'
import { ROOT } from './helpers/root.js'

const root = ROOT
const spec = JSON.parse(readFileSync(join(root, 'specs', 'orb-bot-api.openapi.json'), 'utf8'))
const served = (orb: Awaited<ReturnType<typeof startOrb>>) => orbRoutes({ ...orb.services, rateLimit: 'on' })

// A path of the spec with its {params} filled in with something plausible.
const concrete = (path: string): string => path.replace('{id}', '1').replace('{event}', 'evt_1')

t.test(
  'ORB-001 ORB-010 bot routes live under /api/bot/v1 and the directory under /api/orb, as the spec lists them',
  async (t) => {
    const orb = await startOrb(t)
    for (const route of served(orb)) {
      t.ok(
        spec.paths[route.path]?.[route.method.toLowerCase()] !== undefined,
        `${route.method} ${route.path} is an operation of the spec`
      )
      t.match(route.path, route.auth === 'public' ? /^\/api\/orb\// : /^\/api\/bot\/v1\//)
    }
  }
)

t.test(
  'ORB-003 every /api/bot/v1 route answers 401 "Missing or invalid token" without a token, with a malformed one, or a wrong one',
  async (t) => {
    const orb = await startOrb(t)
    const bot = served(orb).filter((route) => route.auth === 'bot')
    t.ok(bot.length >= 4)
    for (const route of bot) {
      for (const headers of [
        {} as Record<string, string>,
        { authorization: 'Basic abc' },
        { authorization: 'Bearer' },
        { authorization: `Bearer ${DEMO.token}x` },
        { authorization: DEMO.token }
      ]) {
        const reply = await orb.bot.request(route.method, concrete(route.path), {
          token: null,
          headers,
          body: route.method === 'GET' || route.method === 'DELETE' ? undefined : {}
        })
        t.ok(isOrbError(reply, 401), `${route.method} ${route.path} with ${JSON.stringify(headers)} → 401`)
        t.equal(reply.json.error.message, 'Missing or invalid token')
      }
    }
    t.equal(
      (await orb.bot.get('/api/bot/v1/app', { headers: { authorization: `bearer  ${DEMO.token}` } })).status,
      200,
      'the scheme is case-insensitive'
    )
  }
)

t.test('ORB-005 ORB-006 a missing scope is 403 before the body is even looked at', async (t) => {
  const orb = await startOrb(t)
  const lite = orb.as(DEMO.lite) // messages:read only
  const relic = orb.as(DEMO.relic) // messages:write only
  const post = await lite.post('/api/bot/v1/messages', { channel: 'ch_general', content: 'hi' })
  t.ok(isOrbError(post, 403))
  t.match(post.json.error.message, /messages:write/)
  t.ok(
    isOrbError(await lite.post('/api/bot/v1/messages', { nonsense: true }), 403),
    'an invalid body still meets the scope gate first'
  )
  t.ok(isOrbError(await relic.get('/api/bot/v1/messages?channel=ch_general'), 403))
  t.ok(
    isOrbError(await lite.delete('/api/bot/v1/messages/1'), 403),
    'ORB-A07: DELETE /messages/{id} needs messages:write'
  )
  t.equal((await lite.get('/api/bot/v1/messages?channel=ch_general')).status, 200)
})

t.test('ORB-007 the world accepts exactly the five scopes', async (t) => {
  const world = defaultWorld()
  world.apps[0]!.scopes = ['messages:read', 'admin' as never]
  t.throws(() => checkWorld(world), WorldError)
  const ok = defaultWorld()
  ok.apps[0]!.scopes = ['messages:read', 'messages:write', 'voice', 'music', 'passport']
  t.doesNotThrow(() => checkWorld(ok))
})

t.test(
  'ORB-008 ORB-A06 an app is a member of each community that installed it, with one member id; it posts as that member with bot: true',
  async (t) => {
    const orb = await startOrb(t)
    const lite = orb.as(DEMO.lite)
    const me = (await lite.get('/api/bot/v1/app')).json
    t.same(me.app, { id: 'app_lite', name: 'Lite Bot', scopes: ['messages:read'] })
    t.equal(me.member, 'app_lite')
    t.same(me.servers.map((s: { id: string }) => s.id).sort(), ['srv_orbit', 'srv_quiet'])
    t.same(me.servers.find((s: { id: string }) => s.id === 'srv_quiet').role, {
      name: 'Lite Bot',
      rights: ['send_messages']
    })
    const posted = (await orb.bot.post('/api/bot/v1/messages', { channel: 'ch_general', content: 'hello' })).json
    t.same(posted.author, { id: 'app_demo', name: 'Demo Bot', bot: true })
    const demo = (await orb.bot.get('/api/bot/v1/app')).json
    t.equal(demo.member, posted.author.id)
  }
)

t.test("ORB-009 ORB-102 another community's channel is 404 to the app, exactly like an unknown one", async (t) => {
  const orb = await startOrb(t)
  const foreign = await orb.bot.post('/api/bot/v1/messages', { channel: 'ch_quiet', content: 'hi' })
  const unknown = await orb.bot.post('/api/bot/v1/messages', { channel: 'ch_nowhere', content: 'hi' })
  t.ok(isOrbError(foreign, 404))
  t.ok(isOrbError(unknown, 404))
  t.ok(isOrbError(await orb.bot.get('/api/bot/v1/messages?channel=ch_quiet'), 404))
  t.ok(
    isOrbError(await orb.bot.get('/api/bot/v1/app?server=srv_quiet'), 404),
    'ORB-A06: a server that did not install the app'
  )
  t.ok(isOrbError(await orb.bot.get('/api/bot/v1/app?server=srv_nowhere'), 404))
})

t.test(
  'ORB-020 ORB-A06 GET /app without server: the app, its member id and its communities with their roles',
  async (t) => {
    const orb = await startOrb(t)
    const reply = await orb.bot.get('/api/bot/v1/app')
    t.equal(reply.status, 200)
    t.same(reply.json, {
      app: {
        id: 'app_demo',
        name: 'Demo Bot',
        scopes: ['messages:read', 'messages:write', 'voice', 'music', 'passport']
      },
      member: 'app_demo',
      servers: [
        {
          id: 'srv_orbit',
          name: 'Orbit Lounge',
          role: { name: 'Demo Bot', rights: ['send_messages', 'connect', 'speak'] }
        }
      ]
    })
  }
)

t.test(
  'ORB-021 GET /app?server= lists exactly the channels the role sees on the allow-list, with their rights',
  async (t) => {
    const orb = await startOrb(t)
    const reply = await orb.bot.get('/api/bot/v1/app?server=srv_orbit')
    t.equal(reply.status, 200)
    t.equal(reply.json.server, 'srv_orbit')
    const channels = reply.json.channels as Array<{ id: string; type: string; readOnly: boolean; rights: string[] }>
    t.same(
      channels.map((c) => c.id),
      ['ch_general', 'ch_news', 'ch_lounge', 'ch_stage'],
      'ch_staff (not allowed) and ch_vault (hidden) are absent'
    )
    t.same(
      channels.find((c) => c.id === 'ch_news'),
      {
        id: 'ch_news',
        name: 'announcements',
        type: 'text',
        readOnly: true,
        rights: ['send_messages', 'connect', 'speak']
      }
    )
    t.same(channels.find((c) => c.id === 'ch_stage')!.rights, ['connect'], "a channel's own rights replace the role's")
    t.equal(channels.find((c) => c.id === 'ch_lounge')!.type, 'voice')
    await orb.control.install('srv_orbit', 'app_demo', {
      role: { rights: ['send_messages'] },
      channels: ['ch_general', 'ch_staff']
    })
    const after = (await orb.bot.get('/api/bot/v1/app?server=srv_orbit')).json
    t.same(
      after.channels.map((c: { id: string }) => c.id),
      ['ch_general', 'ch_staff'],
      "an admin's change shows at once"
    )
  }
)

t.test('ORB-022 GET /app with a missing or invalid token is 401', async (t) => {
  const orb = await startOrb(t)
  t.ok(isOrbError(await orb.bot.get('/api/bot/v1/app', { token: null }), 401))
  t.ok(isOrbError(await orb.bot.get('/api/bot/v1/app', { token: 'orb_nope_0000000000000000' }), 401))
})

t.test('ORB-A22 a rotated token answers 401 at once; the new one works, and the app keeps its messages', async (t) => {
  const orb = await startOrb(t)
  await orb.bot.post('/api/bot/v1/messages', { channel: 'ch_general', content: 'before' })
  const { token } = orb.control.rotateToken('app_demo')
  t.not(token, DEMO.token)
  t.ok(isOrbError(await orb.bot.get('/api/bot/v1/app'), 401))
  const fresh = orb.as(token)
  t.equal((await fresh.get('/api/bot/v1/app')).status, 200)
  const page = (await fresh.get('/api/bot/v1/messages?channel=ch_general')).json
  t.equal(page.messages.at(-1).body, 'before')
})

t.test(
  "ORB-A04 uninstalling takes the community out of the app's reach; installing again brings it back",
  async (t) => {
    const orb = await startOrb(t)
    orb.control.uninstall('srv_orbit', 'app_demo')
    t.same((await orb.bot.get('/api/bot/v1/app')).json.servers, [])
    t.ok(isOrbError(await orb.bot.get('/api/bot/v1/messages?channel=ch_general'), 404))
    t.ok(isOrbError(await orb.bot.post('/api/bot/v1/messages', { channel: 'ch_general', content: 'x' }), 404))
    orb.control.install('srv_quiet', 'app_demo', {})
    const servers = (await orb.bot.get('/api/bot/v1/app')).json.servers
    t.same(
      servers,
      [
        {
          id: 'srv_quiet',
          name: 'Quiet Corner',
          role: { name: 'Demo Bot', rights: ['send_messages', 'connect', 'speak'] }
        }
      ],
      "the default role carries the listing's rights"
    )
    t.equal(
      (await orb.bot.post('/api/bot/v1/messages', { channel: 'ch_quiet', content: 'hi' })).status,
      200,
      'the default allow-list is every channel'
    )
  }
)

t.test(
  'ORB-101 ORB-102 ORB-A01 ORB-A23 errors are {error:{message, code}} with code = status: 400, 404, 405, 415',
  async (t) => {
    const orb = await startOrb(t)
    const checks: Array<[Promise<Awaited<ReturnType<typeof orb.bot.get>>>, number, string]> = [
      [
        orb.bot.request('POST', '/api/bot/v1/messages', { body: '{"channel":', headers: {} }),
        400,
        'a body that is not JSON'
      ],
      [orb.bot.request('POST', '/api/bot/v1/messages', { body: '', headers: {} }), 400, 'an empty JSON body'],
      [
        orb.bot.request('POST', '/api/bot/v1/messages', {
          body: 'channel=x',
          headers: { 'content-type': 'application/x-www-form-urlencoded' }
        }),
        415,
        'a body that is not JSON by type'
      ],
      [
        orb.bot.request('POST', '/api/bot/v1/messages', {
          body: '{"channel":"ch_general","content":"hi"}',
          headers: { 'content-type': 'text/plain' }
        }),
        415,
        'JSON sent as text/plain'
      ],
      [
        orb.bot.request('PUT', '/api/bot/v1/commands', {
          body: '{"commands":[]}',
          headers: { 'content-type': 'application/octet-stream' }
        }),
        415,
        'JSON sent as bytes'
      ],
      [orb.bot.request('PATCH', '/api/bot/v1/messages'), 405, 'a wrong method'],
      [orb.bot.get('/api/bot/v1/nothing-here'), 404, 'an unknown route'],
      [orb.bot.get('/api/nothing'), 404, 'an unknown route outside /api/bot/v1'],
      [orb.bot.get('/api/bot/v1/messages?channel=ch_general&limit=1&limit=2'), 400, 'a query parameter given twice']
    ]
    for (const [pending, status, what] of checks) {
      const reply = await pending
      t.ok(isOrbError(reply, status), `${what} → ${status} ${reply.text}`)
    }
    const wrong = await orb.bot.request('PUT', '/api/bot/v1/messages')
    t.equal(wrong.headers.get('allow'), 'POST, GET', '405 names the methods the path allows')
  }
)

t.test(
  'ORB-A23 unknown body fields and unknown query parameters are ignored, however often they come; success is 200',
  async (t) => {
    const orb = await startOrb(t)
    const posted = await orb.bot.post('/api/bot/v1/messages', {
      channel: 'ch_general',
      content: 'hi',
      flair: 'sparkles',
      nested: { a: 1 }
    })
    t.equal(posted.status, 200)
    t.equal((await orb.bot.get('/api/bot/v1/messages?channel=ch_general&sort=desc&x=1')).status, 200)
    t.equal(
      (await orb.bot.get('/api/bot/v1/messages?channel=ch_general&x=1&x=2')).status,
      200,
      'an unknown parameter given twice'
    )
    t.equal((await orb.bot.get('/api/orb/directory?x=1&x=2', { token: null })).status, 200)
    const proto = await orb.bot.post(
      '/api/bot/v1/messages',
      '{"channel":"ch_general","content":"hi","__proto__":{"polluted":true}}'
    )
    t.equal(proto.status, 200, 'a "__proto__" key is just another unknown field')
    t.equal(({} as { polluted?: boolean }).polluted, undefined, 'and it pollutes nothing')
  }
)

t.test(
  'ORB-A23 a bodiless request that says Content-Type: application/json has no body, not a broken one',
  async (t) => {
    const orb = await startOrb(t)
    const own = (await orb.bot.post('/api/bot/v1/messages', { channel: 'ch_general', content: 'bye' })).json.id
    const deleted = await orb.bot.request('DELETE', `/api/bot/v1/messages/${own}`, {
      headers: { 'content-type': 'application/json' }
    })
    t.equal(deleted.status, 200)
    t.equal(
      (await orb.bot.request('GET', '/api/bot/v1/app', { headers: { 'content-type': 'application/json' } })).status,
      200
    )
    t.ok(
      isOrbError(
        await orb.bot.request('POST', '/api/bot/v1/messages', { headers: { 'content-type': 'application/json' } }),
        400
      ),
      'a route that needs a body still says so'
    )
    const long = await orb.bot.delete(`/api/bot/v1/messages/${'1'.repeat(600)}`)
    t.ok(isOrbError(long, 400))
    t.match(long.json.error.message, /too long/)
  }
)

// The spec is the oracle: whatever its request schemas refuse, the fake must answer 400 with the error shape.
t.test(
  'ORB-101 ORB-A23 property: every body the OpenAPI schemas refuse gets 400 with the error body, never a crash',
  async (t) => {
    const orb = await startOrb(t, { rateLimit: 'off' })
    const ajv = createAjv().addSchema({ $id: 'orb', paths: spec.paths, components: spec.components })
    const withBodies = served(orb).filter(
      (route) => spec.paths[route.path][route.method.toLowerCase()].requestBody !== undefined
    )
    t.ok(withBodies.length >= 1)
    const validators = new Map(
      withBodies.map((route) => [
        route,
        ajv.compile({
          $ref: `orb#/paths/${route.path.replaceAll('/', '~1')}/${route.method.toLowerCase()}/requestBody/content/application~1json/schema`
        })
      ])
    )
    const field = fc.oneof(
      fc.string({ maxLength: 6 }),
      fc.integer(),
      fc.boolean(),
      fc.constant(null),
      fc.array(fc.integer(), { maxLength: 2 }),
      fc.constantFrom('ch_general', 'ch_lounge', 'join', 'add', 'x'.repeat(2001))
    )
    const body = fc.oneof(
      fc.jsonValue({ maxDepth: 2 }),
      fc.dictionary(
        fc.constantFrom('channel', 'content', 'reply_to', 'action', 'call', 'speaking', 'arg', 'commands'),
        field
      )
    )
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...withBodies), body, async (route, value) => {
        const reply = await orb.bot.request(route.method, concrete(route.path), { body: JSON.stringify(value) })
        if (!validators.get(route)!(value)) return isOrbError(reply, 400)
        return reply.status < 500 && reply.json !== undefined
      }),
      fcParams({ numRuns: 150 })
    )
  }
)

t.test(
  'ORB-A04 the demo world reaches every rule: a channel off the allow-list, a read-only and a hidden one, voice, encryption, a weaker app, an unlisted app, a community without the demo app',
  async (t) => {
    const world = defaultWorld()
    const demo = world.installs!.find((i) => i.app === 'app_demo' && i.community === 'srv_orbit')!
    const orbit = world.communities.find((c) => c.id === 'srv_orbit')!
    t.ok(
      orbit.channels.some((c) => c.kind === 'text' && !demo.channels.includes(c.id)),
      'a text channel outside the allow-list'
    )
    t.ok(
      orbit.channels.some((c) => c.readOnly === true && demo.channels.includes(c.id)),
      'a read-only channel'
    )
    t.ok((demo.hidden ?? []).length > 0, 'a channel hidden from the role')
    t.ok(
      orbit.channels.some((c) => c.kind === 'voice'),
      'a voice channel'
    )
    t.ok(
      world.messages!.some((m) => m.encrypted === true),
      'an encrypted message'
    )
    t.ok(
      world.apps.some((a) => a.id !== 'app_demo' && a.scopes.length < 5),
      'a second app with fewer scopes'
    )
    t.ok(
      world.apps.some((a) => a.listed !== true),
      'an unlisted app'
    )
    t.ok(
      world.communities.some((c) => !world.installs!.some((i) => i.app === 'app_demo' && i.community === c.id)),
      'a community that did not install the demo app'
    )
    t.ok(
      world.apps.some((a) => a.chain === null) && world.apps.some((a) => a.chain?.retired === true),
      'apps off the registry and retired on it'
    )
  }
)

t.test('ORB-A04 a world is checked by its JSON Schema and its references; every problem names its path', async (t) => {
  const bad = (change: (w: World) => void): string[] => {
    const world = defaultWorld()
    change(world)
    try {
      checkWorld(world)
      return []
    } catch (err) {
      return (err as WorldError).problems
    }
  }
  t.same(
    bad(() => {}),
    []
  )
  t.match(
    bad((w) => {
      ;(w.apps[1] as { token: string }).token = 'short'
    }),
    [/^apps\[1\]\.token: must match pattern/]
  )
  t.match(
    bad((w) => {
      ;(w as { extra?: number }).extra = 1
    }),
    [/^\(top level\): unknown key "extra"/]
  )
  t.match(
    bad((w) => {
      w.communities[0]!.channels[0]!.kind = 'forum' as never
    }),
    [/^communities\[0\]\.channels\[0\]\.kind: must be one of "text", "voice"/]
  )
  t.match(
    bad((w) => {
      w.installs![0]!.channels.push('ch_quiet')
    }),
    [/^installs\[0\]\.channels\[5\]: no channel "ch_quiet" in srv_orbit/]
  )
  t.match(
    bad((w) => {
      w.messages![0]!.author = 'mem_nobody'
    }),
    [/^messages\[0\]\.author: no member or app "mem_nobody"/]
  )
  t.match(
    bad((w) => {
      w.apps[1]!.token = w.apps[0]!.token
    }),
    [/^apps\[1\]\.token: token .* is defined twice/]
  )
  t.match(
    bad((w) => {
      w.apps[0]!.manifest = undefined
    }),
    [/^apps\[0\]\.manifest: an app on the registry needs/]
  )
  t.match(
    bad((w) => {
      w.communities[1]!.channels[0]!.id = 'ch_general'
    }),
    [/channel "ch_general" is defined twice/]
  )
  t.match(
    bad((w) => {
      w.apps[0]!.endpoint = 'http://example.com/hook'
    }),
    [/^apps\[0\]\.endpoint: must be https, or http to localhost/]
  )
  t.same(
    bad((w) => {
      w.apps[0]!.endpoint = 'http://127.0.0.1:9999/hook'
    }),
    [],
    'http to this machine is fine'
  )
})

t.test('ORB-A04 the demo world the build checked is the fixture checked now, used only while the fixture is the one it checked', async (t) => {
  const fixture = readFileSync(join(ROOT, DEFAULT_WORLD_FILE), 'utf8')
  const built = readFileSync(join(ROOT, CHECKED_WORLD_FILE), 'utf8')
  const fresh = checkWorld(JSON.parse(fixture), DEFAULT_WORLD_FILE)
  t.same(defaultWorld(), fresh, "the world a fake starts with is the fixture with the schema's defaults")
  t.same(demoWorld(fixture, built), fresh)
  t.not(demoWorld(fixture, built), demoWorld(fixture, built), 'a fresh copy each call')
  // Another text (a fixture edited since the build) is checked afresh: a broken one is refused, not trusted.
  const edited = fixture.replace('"name": "orbtest demo world"', '"name": "edited"')
  t.not(edited, fixture)
  t.equal(demoWorld(edited, built).name, 'edited')
  const broken = JSON.stringify({ ...JSON.parse(fixture), apps: 'none' })
  t.throws(() => demoWorld(broken, built), WorldError)
})
