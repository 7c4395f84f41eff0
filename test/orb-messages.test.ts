import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import fc from 'fast-check'
import t from 'tap'
import { createAjv } from '../src/shared/ajv.js'
import { defaultWorld, type World } from '../src/orb-mock/world.js'
import { DEMO, isOrbError, startOrb } from './helpers/orb.js'
import { fcParams } from './helpers/fc.js'
import { ROOT } from './helpers/root.js'

const root = ROOT
const spec = JSON.parse(readFileSync(join(root, 'specs', 'orb-bot-api.openapi.json'), 'utf8'))
const ajv = createAjv().addSchema({ $id: 'orb', paths: spec.paths, components: spec.components })
const postedSchema = ajv.compile({ $ref: 'orb#/components/schemas/PostedMessage' })
const pageSchema = ajv.compile({ $ref: 'orb#/paths/~1api~1bot~1v1~1messages/get/responses/200/content/application~1json/schema' })
const messageSchema = ajv.compile({ $ref: 'orb#/components/schemas/Message' })

/** A world where the demo app may post in three text channels of one community. */
function threeChannels (): World {
  const world = defaultWorld()
  const orbit = world.communities.find((c) => c.id === 'srv_orbit')!
  orbit.channels.push({ id: 'ch_two', name: 'two', kind: 'text' }, { id: 'ch_three', name: 'three', kind: 'text' })
  world.installs!.find((i) => i.app === 'app_demo' && i.community === 'srv_orbit')!.channels.push('ch_two', 'ch_three')
  return world
}

t.test(
  'ORB-023 POST /messages validates {channel, content, reply_to} from the spec: 2000 characters pass, 2001 do not',
  async (t) => {
    const orb = await startOrb(t)
    const bad: unknown[] = [
      undefined,
      {},
      { channel: 'ch_general' },
      { content: 'hi' },
      { channel: 'ch_general', content: 'x'.repeat(2001) },
      { channel: 1, content: 'hi' },
      { channel: 'ch_general', content: 5 },
      { channel: 'ch_general', content: 'hi', reply_to: '1' },
      { channel: 'ch_general', content: 'hi', reply_to: 1.5 },
      [],
      'hi',
      null
    ]
    for (const body of bad) {
      const reply =
        body === undefined
          ? await orb.bot.request('POST', '/api/bot/v1/messages')
          : await orb.bot.post('/api/bot/v1/messages', JSON.stringify(body))
      t.ok(isOrbError(reply, 400), `${JSON.stringify(body)} → 400 (${reply.json?.error?.message})`)
    }
    t.equal(
      (await orb.bot.post('/api/bot/v1/messages', { channel: 'ch_general', content: 'x'.repeat(2000) })).status,
      200
    )
    t.equal(
      (await orb.bot.post('/api/bot/v1/messages', { channel: 'ch_general', content: '🙂'.repeat(1000) })).status,
      200,
      '1000 emoji: 2000 UTF-16 units, but 1000 characters as JSON Schema counts them'
    )
  }
)

t.test(
  'ORB-024 ORB-A24 a post answers 200 PostedMessage: id, channel, server, created, author as the app with bot: true',
  async (t) => {
    const orb = await startOrb(t)
    const reply = await orb.bot.post('/api/bot/v1/messages', { channel: 'ch_general', content: 'hello' })
    t.equal(reply.status, 200)
    t.ok(postedSchema(reply.json), "matches the spec's PostedMessage")
    t.same(reply.json, {
      id: reply.json.id,
      channel: 'ch_general',
      server: 'srv_orbit',
      created: orb.clock.now(),
      author: { id: 'app_demo', name: 'Demo Bot', bot: true }
    })
    t.ok(Number.isInteger(reply.json.id))
    const next = await orb.bot.post('/api/bot/v1/messages', { channel: 'ch_general', content: 'again' })
    t.ok(next.json.id > reply.json.id, 'ids increase')
  }
)

t.test('ORB-025 reply_to must be a message of the same channel; unknown or foreign ids are 400', async (t) => {
  const orb = await startOrb(t)
  const general = (await orb.bot.get('/api/bot/v1/messages?channel=ch_general')).json.messages[0].id
  const ok = await orb.bot.post('/api/bot/v1/messages', { channel: 'ch_general', content: 'answer', reply_to: general })
  t.equal(ok.status, 200)
  const read = (await orb.bot.get('/api/bot/v1/messages?channel=ch_general')).json.messages
  t.equal(read.at(-1).replyTo, general)
  const news = orb.store.channels.get('ch_news')!.messages[0]!
  t.ok(
    isOrbError(
      await orb.bot.post('/api/bot/v1/messages', { channel: 'ch_general', content: 'x', reply_to: news }),
      400
    ),
    'a message of another channel'
  )
  t.ok(
    isOrbError(
      await orb.bot.post('/api/bot/v1/messages', { channel: 'ch_general', content: 'x', reply_to: 99999 }),
      400
    ),
    'an unknown id'
  )
  await orb.bot.delete(`/api/bot/v1/messages/${ok.json.id}`)
  t.ok(
    isOrbError(
      await orb.bot.post('/api/bot/v1/messages', { channel: 'ch_general', content: 'x', reply_to: ok.json.id }),
      400
    ),
    'a deleted message'
  )
})

t.test('ORB-026 ORB-A02 @everyone is refused with 403 in any case; @here and look-alikes are not', async (t) => {
  const orb = await startOrb(t, { rateLimit: 'off' })
  for (const content of ['@everyone', 'hey @EveryOne!', 'ping\n@everyone', '(@everyone)']) {
    t.ok(
      isOrbError(await orb.bot.post('/api/bot/v1/messages', { channel: 'ch_general', content }), 403),
      JSON.stringify(content)
    )
  }
  for (const content of ['@here', 'mail me at x@everyone.example', '@everyones', 'everyone']) {
    t.equal(
      (await orb.bot.post('/api/bot/v1/messages', { channel: 'ch_general', content })).status,
      200,
      JSON.stringify(content)
    )
  }
})

t.test('ORB-027 ORB-A20 a card (a line starting with /trade, /signal or /market) is refused with 403', async (t) => {
  const orb = await startOrb(t, { rateLimit: 'off' })
  for (const content of ['/trade ETH 2x', 'look:\n/signal BUY', '  /market open', '/TRADE now']) {
    t.ok(
      isOrbError(await orb.bot.post('/api/bot/v1/messages', { channel: 'ch_general', content }), 403),
      JSON.stringify(content)
    )
  }
  for (const content of ['we do not /trade here', '/trader joe', '/tradeable']) {
    t.equal(
      (await orb.bot.post('/api/bot/v1/messages', { channel: 'ch_general', content })).status,
      200,
      JSON.stringify(content)
    )
  }
  const world = defaultWorld()
  world.settings = { cardPattern: '^CARD:' }
  const custom = await startOrb(t, { world, rateLimit: 'off' })
  t.ok(
    isOrbError(await custom.bot.post('/api/bot/v1/messages', { channel: 'ch_general', content: 'CARD: buy' }), 403),
    "the pattern is the world's to set"
  )
  t.equal((await custom.bot.post('/api/bot/v1/messages', { channel: 'ch_general', content: '/trade x' })).status, 200)
})

t.test(
  'ORB-028 ORB-029 ORB-030 ORB-A02 voice channel 400, read-only 403, off the allow-list 403, hidden 403, no send right 403, blank 400',
  async (t) => {
    const orb = await startOrb(t)
    const post = (channel: string, content = 'hi') => orb.bot.post('/api/bot/v1/messages', { channel, content })
    t.ok(isOrbError(await post('ch_lounge'), 400), 'voice')
    t.ok(isOrbError(await post('ch_news'), 403), 'read-only')
    t.ok(isOrbError(await post('ch_staff'), 403), 'not on the allow-list')
    t.ok(isOrbError(await post('ch_vault'), 403), 'hidden from the role')
    t.ok(isOrbError(await post('ch_general', '   \n\t'), 400), 'whitespace only')
    t.ok(isOrbError(await post('ch_general', '\u200b\u2060 \ufeff'), 400), 'invisible characters only')
    orb.control.install('srv_orbit', 'app_demo', { role: { rights: ['connect'] }, channels: ['ch_general'] })
    const noRight = await post('ch_general')
    t.ok(isOrbError(noRight, 403), 'a role without send_messages')
    t.match(noRight.json.error.message, /send_messages/)
    t.equal(orb.store.channels.get('ch_general')!.messages.length, 3, 'no refused post was stored')
  }
)

t.test(
  'ORB-031 ORB-099 ORB-A03 the 13th post in a channel and the 31st overall in a minute are 429 with an integer Retry-After',
  async (t) => {
    const orb = await startOrb(t, { world: threeChannels() })
    const post = (channel: string) => orb.bot.post('/api/bot/v1/messages', { channel, content: 'tick' })
    for (let i = 0; i < 12; i++) t.equal((await post('ch_general')).status, 200)
    orb.clock.advance(10_000)
    const thirteenth = await post('ch_general')
    t.ok(isOrbError(thirteenth, 429))
    t.equal(thirteenth.headers.get('retry-after'), '50', 'the oldest post leaves the window 50 s from now')
    for (let i = 0; i < 12; i++) t.equal((await post('ch_two')).status, 200)
    for (let i = 0; i < 6; i++) t.equal((await post('ch_three')).status, 200)
    const thirtyFirst = await post('ch_three')
    t.ok(isOrbError(thirtyFirst, 429), 'the 31st in a minute across channels')
    t.match(thirtyFirst.json.error.message, /30 posts a minute/)
    t.equal(thirtyFirst.headers.get('retry-after'), '50')
    orb.clock.advance(49_999)
    t.equal((await post('ch_three')).status, 429, 'not a millisecond early')
    orb.clock.advance(1)
    t.equal((await post('ch_three')).status, 200, 'the window has room once Retry-After has passed')
    const off = await startOrb(t, { rateLimit: 'off' })
    for (let i = 0; i < 40; i++) {
      t.equal((await off.bot.post('/api/bot/v1/messages', { channel: 'ch_general', content: 'x' })).status, 200)
    }
  }
)

// A plain model of ORB-A03: sliding 60 s windows, 30 per app and 12 per channel; refused posts do not count.
t.test(
  'ORB-031 ORB-A03 property: no window ever admits more than 30 per app or 12 per channel, and every Retry-After is honest',
  async (t) => {
    const channels = ['ch_general', 'ch_two', 'ch_three']
    const step = fc.oneof(
      fc.record({ kind: fc.constant('post' as const), channel: fc.constantFrom(...channels) }),
      fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 1, max: 20_000 }) })
    )
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 80 }), async (steps) => {
        const orb = await startOrb(t, { world: threeChannels() })
        const admitted: Array<{ at: number; channel: string }> = []
        try {
          for (const s of steps) {
            if (s.kind === 'advance') {
              orb.clock.advance(s.ms)
              continue
            }
            const now = orb.clock.now()
            const live = admitted.filter((p) => p.at > now - 60_000)
            const inChannel = live.filter((p) => p.channel === s.channel)
            const full = live.length >= 30 || inChannel.length >= 12
            const reply = await orb.bot.post('/api/bot/v1/messages', { channel: s.channel, content: 'x' })
            if (!full) {
              if (reply.status !== 200) return false
              admitted.push({ at: now, channel: s.channel })
              continue
            }
            if (!isOrbError(reply, 429)) return false
            const wait = Number(reply.headers.get('retry-after'))
            if (!Number.isInteger(wait) || wait < 1) return false
            // The honest wait: until both windows have a slot.
            const freeAt = Math.max(
              live.length >= 30 ? live[live.length - 30]!.at + 60_000 : now,
              inChannel.length >= 12 ? inChannel[inChannel.length - 12]!.at + 60_000 : now
            )
            if (wait !== Math.max(1, Math.ceil((freeAt - now) / 1000))) return false
          }
          return true
        } finally {
          await orb.close()
        }
      }),
      fcParams({ numRuns: 40 })
    )
  }
)

t.test('ORB-033 GET /messages: channel is required; before is an integer; limit is 1..50', async (t) => {
  const orb = await startOrb(t)
  for (const query of [
    '',
    '?limit=5',
    '?channel=ch_general&limit=0',
    '?channel=ch_general&limit=51',
    '?channel=ch_general&limit=abc',
    '?channel=ch_general&limit=1.5',
    '?channel=ch_general&before=abc',
    '?channel=ch_general&limit=',
    '?channel=ch_general&before=1e3'
  ]) {
    t.ok(isOrbError(await orb.bot.get(`/api/bot/v1/messages${query}`), 400), query)
  }
  const huge = await orb.bot.get('/api/bot/v1/messages?channel=ch_general&limit=99999999999999999999')
  t.ok(isOrbError(huge, 400))
  t.match(huge.json.error.message, /limit must be <= 50/, 'an integer past 2^53 is still an integer, only too large')
  const all = (await orb.bot.get('/api/bot/v1/messages?channel=ch_general&before=99999999999999999999')).json
  t.equal(all.messages.length, 3, 'before past 2^53 means everything')
  for (const query of [
    '?channel=ch_general&limit=1',
    '?channel=ch_general&limit=50',
    '?channel=ch_general&before=2',
    '?channel=ch_general&before=-1'
  ]) {
    const reply = await orb.bot.get(`/api/bot/v1/messages${query}`)
    t.equal(reply.status, 200, query)
    t.ok(pageSchema(reply.json), "matches the spec's 200 schema")
  }
})

t.test(
  'ORB-034 ORB-A20 the newest page comes oldest first; before gives the limit messages just older; hasOlder says whether more exist',
  async (t) => {
    const orb = await startOrb(t, { rateLimit: 'off' })
    const ids: number[] = orb.store.channels.get('ch_general')!.messages.slice()
    for (let i = 0; i < 60; i++) {
      ids.push((await orb.bot.post('/api/bot/v1/messages', { channel: 'ch_general', content: `m${i}` })).json.id)
    }
    const first = (await orb.bot.get('/api/bot/v1/messages?channel=ch_general')).json
    t.same(
      first.messages.map((m: { id: number }) => m.id),
      ids.slice(-50),
      'default limit 50, the newest, ascending'
    )
    t.equal(first.hasOlder, true)
    const second = (await orb.bot.get(`/api/bot/v1/messages?channel=ch_general&before=${ids.at(-50)}&limit=10`)).json
    t.same(
      second.messages.map((m: { id: number }) => m.id),
      ids.slice(-60, -50)
    )
    t.equal(second.hasOlder, true)
    const last = (await orb.bot.get(`/api/bot/v1/messages?channel=ch_general&before=${ids.at(-60)}&limit=50`)).json
    t.same(
      last.messages.map((m: { id: number }) => m.id),
      ids.slice(0, -60)
    )
    t.equal(last.hasOlder, false)
    const exact = (
      await orb.bot.get(`/api/bot/v1/messages?channel=ch_general&before=${ids.at(-60)}&limit=${ids.length - 60}`)
    ).json
    t.equal(exact.hasOlder, false, 'a page that ends exactly at the oldest message has nothing older')
  }
)

t.test(
  'ORB-034 ORB-039 property: paging back with before walks every live message exactly once, deletions included',
  async (t) => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 40 }),
        fc.array(fc.nat(), { maxLength: 15 }),
        fc.integer({ min: 1, max: 50 }),
        async (count, deletions, limit) => {
          const orb = await startOrb(t, { rateLimit: 'off' })
          try {
            const ids = orb.store.channels.get('ch_general')!.messages.slice()
            for (let i = 0; i < count; i++) {
              ids.push(
                (await orb.bot.post('/api/bot/v1/messages', { channel: 'ch_general', content: `m${i}` })).json.id
              )
            }
            const own = ids.slice(-count || ids.length)
            const deleted = new Set<number>()
            for (const d of deletions) {
              if (count === 0) break
              const id = own[d % own.length]!
              if (deleted.has(id)) continue
              if ((await orb.bot.delete(`/api/bot/v1/messages/${id}`)).status !== 200) return false
              deleted.add(id)
            }
            const expected = ids.filter((id) => !deleted.has(id))
            const seen: number[] = []
            let before: number | undefined
            for (let pages = 0; pages < 100; pages++) {
              const reply = (
                await orb.bot.get(
                  `/api/bot/v1/messages?channel=ch_general&limit=${limit}${before === undefined ? '' : `&before=${before}`}`
                )
              ).json
              const pageIds = reply.messages.map((m: { id: number }) => m.id) as number[]
              if (pageIds.some((id, i) => i > 0 && id <= pageIds[i - 1]!)) return false
              seen.unshift(...pageIds)
              if (!reply.hasOlder) break
              if (pageIds.length === 0) return false
              before = pageIds[0]
            }
            return JSON.stringify(seen) === JSON.stringify(expected)
          } finally {
            await orb.close()
          }
        }
      ),
      fcParams({ numRuns: 25 })
    )
  }
)

t.test(
  "ORB-035 ORB-037 ORB-A24 an encrypted message reads as encrypted: true, body: null; every message has the spec's fields",
  async (t) => {
    const orb = await startOrb(t)
    const messages = (await orb.bot.get('/api/bot/v1/messages?channel=ch_general')).json.messages
    const sealed = messages.find((m: { encrypted: boolean }) => m.encrypted)
    t.same({ encrypted: sealed.encrypted, body: sealed.body }, { encrypted: true, body: null })
    for (const message of messages) {
      t.ok(messageSchema(message), `message ${message.id} matches the spec's Message`)
      t.same(Object.keys(message).sort(), [
        'author',
        'body',
        'channel',
        'created',
        'encrypted',
        'id',
        'mentions',
        'replyTo'
      ])
    }
    t.same(messages[1].mentions, ['mem_ada'], 'ORB-A20: mentions list member ids')
    t.same(messages[0].author, { id: 'mem_ada', name: 'Ada', bot: false })
  }
)

t.test(
  'ORB-038 ORB-A20 reading needs messages:read and a channel the role sees on the allow-list; a voice channel is 400',
  async (t) => {
    const orb = await startOrb(t)
    t.ok(
      isOrbError(await orb.as(DEMO.relic).get('/api/bot/v1/messages?channel=ch_general'), 403),
      'no messages:read scope'
    )
    t.ok(isOrbError(await orb.bot.get('/api/bot/v1/messages?channel=ch_staff'), 403), 'off the allow-list')
    t.ok(isOrbError(await orb.bot.get('/api/bot/v1/messages?channel=ch_vault'), 403), 'hidden from the role')
    t.ok(isOrbError(await orb.bot.get('/api/bot/v1/messages?channel=ch_lounge'), 400), 'a voice channel')
    t.equal((await orb.bot.get('/api/bot/v1/messages?channel=ch_news')).status, 200, 'a read-only channel can be read')
  }
)

t.test(
  "ORB-039 ORB-040 ORB-041 ORB-042 ORB-A21 delete: own 200 then gone; others' 403; after uninstall 403; unknown or twice 404; non-integer 400",
  async (t) => {
    const orb = await startOrb(t)
    const mine = (await orb.bot.post('/api/bot/v1/messages', { channel: 'ch_general', content: 'oops' })).json.id
    const deleted = await orb.bot.delete(`/api/bot/v1/messages/${mine}`)
    t.equal(deleted.status, 200)
    t.same(deleted.json, { ok: true, id: mine })
    const read = (await orb.bot.get('/api/bot/v1/messages?channel=ch_general')).json.messages
    t.notOk(
      read.some((m: { id: number }) => m.id === mine),
      'no longer read'
    )
    t.ok(isOrbError(await orb.bot.delete(`/api/bot/v1/messages/${mine}`), 404), 'a second delete')
    t.ok(isOrbError(await orb.bot.delete('/api/bot/v1/messages/424242'), 404), 'an unknown id')
    const huge = await orb.bot.delete('/api/bot/v1/messages/99999999999999999999')
    t.ok(isOrbError(huge, 404), 'an integer id past 2^53 is an unknown id, not a bad one')
    t.match(huge.json.error.message, /99999999999999999999/, 'named as sent')
    for (const id of ['abc', '1.5', '1e2']) {
      t.ok(isOrbError(await orb.bot.delete(`/api/bot/v1/messages/${id}`), 400), `id ${id}`)
    }
    const ada = orb.store.channels.get('ch_general')!.messages[0]!
    const other = await orb.bot.delete(`/api/bot/v1/messages/${ada}`)
    t.ok(isOrbError(other, 403), "another member's message")
    const quiet = orb.store.channels.get('ch_quiet')!.messages[0]!
    t.ok(
      isOrbError(await orb.bot.delete(`/api/bot/v1/messages/${quiet}`), 404),
      'a message of a community that never installed the app'
    )
    const kept = (await orb.bot.post('/api/bot/v1/messages', { channel: 'ch_general', content: 'stays' })).json.id
    orb.control.uninstall('srv_orbit', 'app_demo')
    t.ok(
      isOrbError(await orb.bot.delete(`/api/bot/v1/messages/${kept}`), 403),
      'its own message, after the community uninstalled it'
    )
    t.equal(orb.store.messages.get(kept)!.deleted, false)
  }
)
