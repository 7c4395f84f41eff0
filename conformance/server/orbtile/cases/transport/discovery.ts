import { lstatSync, statSync } from 'node:fs'
import { isAbsolute } from 'node:path'
import fc from 'fast-check'
import { def } from '../../../../../src/spec/orbtile.js'
import { adapterId, defineCase, type ConformanceCase } from '../../orbtile-case.js'
import { register } from '../../adapters.js'
import { expectEqual, expectError, expectSchema, expectStatus, expectThat } from '../../expect.js'
import { readDiscovery } from '../../support-transport.js'
import {
  canonical, infoBody, infoOk, poll, rawHead, SESSION, session, tapAdapter, withEvents
} from './transport-support.js'

/** The socket and the discovery file, the five routes, unknown fields and older registrations (OT-002..010, OT-A04). */
export const discoveryCases: ConformanceCase[] = [
  defineCase({
    id: 'OT-002',
    title: 'the discovery file names an absolute socketPath; it is a Unix socket that speaks HTTP/1.1',
    level: 'required',
    async run (ctx) {
      const { json } = readDiscovery(ctx)
      expectThat(
        typeof json?.socketPath === 'string' && isAbsolute(json.socketPath),
        'socketPath in the discovery file',
        'an absolute path',
        json?.socketPath
      )
      expectEqual(
        json.socketPath,
        ctx.client.target.socketPath,
        "the discovery file's socketPath is the socket the suite talks to"
      )
      // A path with nothing there is no socket; any other failure to look (a folder it may not read) fails the case
      // with its own error.
      const socket = lstatSync(json.socketPath, { throwIfNoEntry: false })?.isSocket() === true
      expectThat(socket, 'socketPath names a Unix-domain socket', 'a socket', json.socketPath)
      const raw = await ctx.client.raw(rawHead(ctx, 'GET', '/info'))
      expectThat(
        /^HTTP\/1\.1 200 /.test(raw),
        'a GET /info written as HTTP/1.1 bytes on the socket',
        'HTTP/1.1 200',
        raw.slice(0, 200)
      )
    }
  }),
  defineCase({
    id: 'OT-003',
    title: "request targets are the discovery file's basePath followed by the endpoint path",
    level: 'required',
    async run (ctx) {
      const { json } = readDiscovery(ctx)
      expectThat(
        typeof json?.basePath === 'string' && json.basePath.startsWith('/'),
        'basePath in the discovery file',
        'a path',
        json?.basePath
      )
      const reply = await ctx.client.request({ target: `${json.basePath}/info` })
      expectStatus(reply, 200, `GET ${json.basePath}/info`)
      expectSchema(reply.json, 'Info', 'the /info body')
      expectError(
        await ctx.client.request({
          target: `${json.basePath}/adapters/${adapterId(ctx, 'base')}/events`,
          method: 'POST',
          body: {}
        }),
        'adapter_not_registered',
        'an adapter route under basePath'
      )
      expectError(await ctx.client.request({ target: '/info' }), 'not_found', 'the endpoint path without basePath')
    }
  }),
  defineCase({
    id: 'OT-004',
    title: 'the discovery file says api 1 and basePath /a/v1, while /info advertises apiMinor 2',
    level: 'required',
    async run (ctx) {
      const { json } = readDiscovery(ctx)
      expectEqual(
        { api: json?.api, basePath: json?.basePath },
        { api: 1, basePath: '/a/v1' },
        'api and basePath in the discovery file'
      )
      const info = await infoBody(ctx)
      expectEqual({ api: info.api, apiMinor: info.apiMinor }, { api: 1, apiMinor: 2 }, 'api and apiMinor in /info')
    }
  }),
  defineCase({
    id: 'OT-A04',
    title:
      "the discovery file is {api, basePath, socketPath, token}, mode 0600, the user's; the socket is 0600; the file's token is the bearer",
    level: 'decision',
    async run (ctx) {
      const { stat, json } = readDiscovery(ctx)
      expectEqual((stat.mode & 0o777).toString(8), '600', "the discovery file's mode")
      if (process.getuid !== undefined) {
        expectEqual(stat.uid, process.getuid(), 'the discovery file belongs to the user running the suite')
      }
      expectThat(
        json !== null &&
          typeof json === 'object' &&
          json.api === 1 &&
          typeof json.basePath === 'string' &&
          typeof json.socketPath === 'string' &&
          isAbsolute(json.socketPath) &&
          typeof json.token === 'string' &&
          json.token !== '',
        "the discovery file's fields",
        '{"api":1,"basePath":"/a/v1","socketPath":"<absolute>","token":"<string>"}',
        Object.fromEntries(Object.entries(json ?? {}).map(([k, v]) => [k, k === 'token' ? typeof v : v]))
      )
      expectEqual((statSync(json.socketPath).mode & 0o777).toString(8), '600', "the socket's mode")
      expectStatus(
        await ctx.client.request({ path: '/info', headers: { authorization: `Bearer ${json.token}` } }),
        200,
        "GET /info with the file's token"
      )
    }
  }),
  defineCase({
    id: 'OT-006',
    title: 'the five routes exist with exactly their methods: GET /info, PUT /adapters/{id}, POST …/sessions/{sid}, PUT …/sessions, POST …/events',
    level: 'required',
    async run (ctx) {
      const { client } = ctx
      await infoOk(ctx)
      const a = await tapAdapter(ctx, 'routes')
      expectSchema(a.reply.json, 'RegistrationReply', 'PUT /adapters/{id}')
      const created = await session(ctx, a, 's1', SESSION)
      expectStatus(created, 200, 'POST /adapters/{id}/sessions/{sid}')
      expectSchema(created.json, 'SessionReply', 'POST /adapters/{id}/sessions/{sid}')
      expectStatus(await client.request({ method: 'PUT', path: `/adapters/${a.id}/sessions`, headers: a.headers, body: { sessions: [{ id: 's1', ...SESSION }] } }), 200, 'PUT /adapters/{id}/sessions')
      const events = await poll(ctx, a)
      expectStatus(events, 200, 'POST /adapters/{id}/events')
      expectSchema(events.json, 'EventsReply', 'POST /adapters/{id}/events')
      const again = await client.request({
        method: 'PUT',
        path: `/adapters/${a.id}`,
        headers: a.headers,
        body: withEvents()
      })
      expectStatus(again, 200, 'PUT /adapters/{id} again (with the adapter token)')
      for (const [method, path] of [
        ['POST', '/info'],
        ['DELETE', '/info'],
        ['GET', `/adapters/${a.id}`],
        ['POST', `/adapters/${a.id}`],
        ['GET', `/adapters/${a.id}/sessions/s1`],
        ['PUT', `/adapters/${a.id}/sessions/s1`],
        ['POST', `/adapters/${a.id}/sessions`],
        ['GET', `/adapters/${a.id}/sessions`],
        ['GET', `/adapters/${a.id}/events`],
        ['PUT', `/adapters/${a.id}/events`]
      ] as const) {
        const reply = await client.request({
          method,
          path,
          headers: a.headers,
          ...(method === 'GET' || method === 'DELETE' ? {} : { body: {} })
        })
        expectThat(
          reply.status >= 400,
          `${method} ${path}: a method the spec does not name`,
          'refused',
          `${reply.status} ${reply.text.slice(0, 200)}`
        )
      }
    }
  }),
  defineCase({
    id: 'OT-007',
    title:
      'for any unknown field of a registration or session update, the request goes on as if it were absent and a warning names the field',
    level: 'required',
    async run (ctx) {
      const a = await tapAdapter(ctx, 'unknown')
      const known = new Set([
        ...Object.keys(def('AdapterRegistration').properties as object),
        ...Object.keys(def('SessionUpdate').properties as object)
      ])
      const plainRegistration = await ctx.client.request({
        method: 'PUT',
        path: `/adapters/${a.id}`,
        headers: a.headers,
        body: withEvents()
      })
      expectStatus(plainRegistration, 200, 're-registering without unknown fields')
      const plainSession = await session(ctx, a, 's1', SESSION)
      expectStatus(plainSession, 200, 'a session update without unknown fields')
      const withKey = (body: unknown, key: string, value: unknown): Buffer => {
        const text = JSON.stringify(body)
        return Buffer.from(`${text.slice(0, -1)},${JSON.stringify(key)}:${JSON.stringify(value)}}`)
      }
      const withoutWarnings = (json: any): string => canonical({ ...json, warnings: undefined })
      await fc.assert(
        fc.asyncProperty(
          fc
            .oneof(
              fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_-]{0,19}$/),
              fc.constantFrom('constructor', 'toString', 'hasOwnProperty', 'colour')
            )
            .filter((k) => !known.has(k)),
          fc.jsonValue({ maxDepth: 2 }),
          async (key, value) => {
            const registration = await ctx.client.request({
              method: 'PUT',
              path: `/adapters/${a.id}`,
              headers: a.headers,
              body: withKey(withEvents(), key, value)
            })
            expectStatus(registration, 200, `registering with an unknown field ${key}`)
            expectThat(
              Array.isArray(registration.json.warnings) &&
                registration.json.warnings.some((w: unknown) => typeof w === 'string' && w.includes(key)),
              `registering with ${key}: warnings`,
              `a warning naming ${key}`,
              registration.json.warnings
            )
            expectEqual(
              withoutWarnings(registration.json),
              withoutWarnings(plainRegistration.json),
              `registering with ${key}: the reply is the one without it`
            )
            const update = await session(ctx, a, 's1', withKey(SESSION, key, value))
            expectStatus(update, 200, `a session update with an unknown field ${key}`)
            expectThat(
              Array.isArray(update.json.warnings) &&
                update.json.warnings.some((w: unknown) => typeof w === 'string' && w.includes(key)),
              `a session update with ${key}: warnings`,
              `a warning naming ${key}`,
              update.json.warnings
            )
            expectEqual(
              withoutWarnings(update.json),
              withoutWarnings(plainSession.json),
              `a session update with ${key}: the reply is the one without it`
            )
          }
        ),
        ctx.fc()
      )
    }
  }),
  defineCase({
    id: 'OT-009',
    title:
      'v1.0 (name and palette.baseHue only) and v1.1 (capabilities, tapBehavior, no icon or states) registrations are accepted',
    level: 'required',
    async run (ctx) {
      const v10 = await register(ctx, { name: 'orbtest v1.0', palette: { baseHue: 120 } }, { label: 'v10' })
      expectSchema(v10.reply.json, 'RegistrationReply', 'a v1.0 registration')
      const v11 = await register(
        ctx,
        {
          name: 'orbtest v1.1',
          palette: { baseHue: 120 },
          capabilities: ['tap', 'approvals', 'questions'],
          tapBehavior: 'eventOnly'
        },
        { label: 'v11' }
      )
      expectSchema(v11.reply.json, 'RegistrationReply', 'a v1.1 registration')
      expectStatus(await poll(ctx, v11), 200, 'the v1.1 adapter polls events')
    }
  }),
  defineCase({
    id: 'OT-010',
    title: 'an adapter that never sends an optional field lives a whole life: register, create, heartbeat, update, batch, re-register',
    level: 'required',
    async run (ctx) {
      const a = await register(ctx, { name: 'orbtest bare', palette: { baseHue: 40 } }, { label: 'bare' })
      for (const [what, reply] of [
        ['GET /info without a nonce', await ctx.client.request({ path: '/info' })],
        ['creating a session with title and activity only', await session(ctx, a, 's1', SESSION)],
        ['a heartbeat {}', await session(ctx, a, 's1', {})],
        ['an update of activity only', await session(ctx, a, 's1', { activity: 'thinking' })],
        ['a batch of id, title and activity', await ctx.client.request({ method: 'PUT', path: `/adapters/${a.id}/sessions`, headers: a.headers, body: { sessions: [{ id: 's2', ...SESSION }] } })],
        ['re-registering the same bare body', await ctx.client.request({ method: 'PUT', path: `/adapters/${a.id}`, headers: a.headers, body: { name: 'orbtest bare', palette: { baseHue: 40 } } })]
      ] as const) expectStatus(reply, 200, what)
    }
  })
]
