import fc from 'fast-check'
import { def } from '../../../../../src/spec/orbtile.js'
import { adapterId, defineCase, type ConformanceCase } from '../../orbtile-case.js'
import { register } from '../../adapters.js'
import { expectError, expectSchema, expectThat } from '../../expect.js'
import type { RequestOptions } from '../../transport.js'
import { capped, SESSION, tapAdapter, withEvents } from './transport-support.js'

/** Errors of any request: invalid_field names its field (OT-151), adapter_not_registered (OT-152), fuzz (OT-156). */
export const errorFieldCases: ConformanceCase[] = [
  defineCase({
    id: 'OT-151',
    title: 'invalid_field names the offending field, for any field of a registration, session update, poll or the nonce header',
    level: 'required',
    async run (ctx) {
      const a = await tapAdapter(ctx, 'fields')
      const fresh = adapterId(ctx, 'fields')
      const hue = { baseHue: 200 }
      type Probe = { name: string; options: RequestOptions }
      const put = (body: unknown): RequestOptions => ({ method: 'PUT', path: `/adapters/${fresh}`, body })
      const post = (body: unknown): RequestOptions => ({
        method: 'POST',
        path: `/adapters/${a.id}/sessions/s1`,
        headers: a.headers,
        body: { ...SESSION, ...(body as object) }
      })
      const probes: Probe[] = [
        { name: 'name', options: put({ name: '', palette: hue }) },
        { name: 'name', options: put({ name: 'x'.repeat(33), palette: hue }) },
        { name: 'palette', options: put({ name: 'x' }) },
        { name: 'baseHue', options: put({ name: 'x', palette: { baseHue: 'red' } }) },
        { name: 'capabilities', options: put({ name: 'x', palette: hue, capabilities: ['telepathy'] }) },
        { name: 'title', options: post({ title: '' }) },
        { name: 'activity', options: post({ activity: 'empty' }) },
        { name: 'ttlSeconds', options: post({ ttlSeconds: 9 }) },
        { name: 'subagentCount', options: post({ subagentCount: 100 }) },
        { name: 'host', options: post({ host: 'a b' }) },
        {
          name: 'waitSeconds',
          options: { method: 'POST', path: `/adapters/${a.id}/events`, headers: a.headers, body: { waitSeconds: 3 } }
        },
        {
          name: 'after',
          options: { method: 'POST', path: `/adapters/${a.id}/events`, headers: a.headers, body: { after: -1 } }
        },
        { name: 'X-Orbtile-Nonce', options: { path: '/info', headers: { 'x-orbtile-nonce': 'not-hex' } } }
      ]
      const check = async ({ name, options }: Probe): Promise<void> => {
        const reply = await ctx.client.request(options)
        const what = `${options.method ?? 'GET'} ${options.path} breaking ${name}`
        expectError(reply, 'invalid_field', what)
        expectThat(
          typeof reply.json.error.field === 'string' &&
            reply.json.error.field.toLowerCase().includes(name.toLowerCase()),
          `${what}: field`,
          `a field naming ${name}`,
          reply.json.error.field
        )
      }
      for (const probe of probes) await check(probe)
      const maxima: Record<string, number> = {
        title: 120,
        cwd: 1024,
        model: 64,
        toolLabel: 80,
        toolKind: 32,
        statusDetail: 120
      }
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom(...Object.keys(maxima)),
          fc.integer({ min: 1, max: 200 }),
          async (name, over) => {
            await check({ name, options: post({ [name]: 'x'.repeat(maxima[name]! + over) }) })
          }
        ),
        capped(ctx, 20)
      )
    }
  }),
  defineCase({
    id: 'OT-152',
    title: 'for any adapter id without a live registration, POST sessions, PUT batch and POST events are adapter_not_registered, whatever token is sent',
    level: 'required',
    async run (ctx) {
      await fc.assert(fc.asyncProperty(
        fc.stringMatching(/^[a-z0-9]{1,12}$/),
        fc.constantFrom(0, 1, 2),
        fc.option(fc.stringMatching(/^[A-Za-z0-9_-]{43}$/), { nil: undefined }),
        async (label, route, token) => {
          const id = adapterId(ctx, `nr-${label}`)
          const headers: Record<string, string> = token === undefined ? {} : { 'x-orbtile-adapter-token': token }
          const options: RequestOptions = [
            { method: 'POST', path: `/adapters/${id}/sessions/s1`, headers, body: SESSION },
            { method: 'PUT', path: `/adapters/${id}/sessions`, headers, body: { sessions: [{ id: 's1', ...SESSION }] } },
            { method: 'POST', path: `/adapters/${id}/events`, headers, body: {} }
          ][route]!
          expectError(await ctx.client.request(options), 'adapter_not_registered', `${options.method} ${options.path} (${token === undefined ? 'no' : 'a made-up'} adapter token)`)
        }
      ), ctx.fc())
    }
  }),
  defineCase({
    id: 'OT-156',
    title:
      'fuzzed requests never get a non-JSON reply, and any 5xx is internal (a server fault cannot be caused on purpose from outside)',
    level: 'required',
    async run (ctx) {
      ctx.note(
        'no request is known to make a conforming server fault; this fuzzes the body-taking routes and checks every reply is JSON, and a 5xx is internal'
      )
      const a = await register(ctx, withEvents(['tap', 'approvals', 'questions']), { label: 'fuzz' })
      const keys = Object.keys(def('SessionUpdate').properties as Record<string, unknown>)
      const value = fc.oneof(
        fc.jsonValue({ maxDepth: 2 }),
        fc.integer(),
        fc.double(),
        fc.string({ unit: 'binary', maxLength: 40 })
      )
      await fc.assert(
        fc.asyncProperty(
          fc.oneof(
            fc
              .tuple(
                fc.stringMatching(/^[A-Za-z0-9._:-]{1,12}$/),
                fc.dictionary(fc.constantFrom(...keys, 'extra'), value, { maxKeys: 6 })
              )
              .map(([sid, body]): RequestOptions => ({
                method: 'POST',
                path: `/adapters/${a.id}/sessions/${sid}`,
                headers: a.headers,
                body
              })),
            fc
              .uint8Array({ maxLength: 200 })
              .map((bytes): RequestOptions => ({
                method: 'POST',
                path: `/adapters/${a.id}/sessions/s1`,
                headers: a.headers,
                body: Buffer.from(bytes)
              })),
            fc
              .dictionary(
                fc.constantFrom('after', 'ack', 'waitSeconds', 'extra'),
                fc.oneof(fc.integer(), fc.double(), fc.string(), fc.constant(null)),
                { maxKeys: 4 }
              )
              .map((body) => ({
                ...body,
                ...('waitSeconds' in body && body.waitSeconds !== 0 ? { waitSeconds: 3 } : {})
              }))
              .map((body): RequestOptions => ({
                method: 'POST',
                path: `/adapters/${a.id}/events`,
                headers: a.headers,
                body
              })),
            fc
              .array(fc.dictionary(fc.constantFrom(...keys, 'id'), value, { maxKeys: 4 }), { maxLength: 4 })
              .map((sessions): RequestOptions => ({
                method: 'PUT',
                path: `/adapters/${a.id}/sessions`,
                headers: a.headers,
                body: { sessions }
              }))
          ),
          async (options) => {
            const reply = await ctx.client.request(options)
            const what = `${options.method} ${options.path}`
            expectThat(
              reply.json !== undefined && /^application\/json\b/.test(String(reply.headers['content-type'])),
              `${what}: the reply is JSON`,
              'a JSON body',
              `${reply.status} ${reply.text.slice(0, 200)}`
            )
            if (reply.status >= 400) expectSchema(reply.json, 'Error', `${what}: the error body`)
            if (reply.status >= 500) expectError(reply, 'internal', `${what}: a server fault`)
          }
        ),
        ctx.fc()
      )
    }
  })
]
