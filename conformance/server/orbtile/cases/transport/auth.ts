import fc from 'fast-check'
import { adapterId, defineCase, type ConformanceCase } from '../../orbtile-case.js'
import { minimal } from '../../adapters.js'
import { expectError, expectStatus } from '../../expect.js'
import type { RequestOptions } from '../../transport.js'
import { freshPut, printable, SESSION, wrongAuthorization } from './transport-support.js'

/** Auth and headers: Origin, the bearer, the media type (OT-015..017). */
export const authCases: ConformanceCase[] = [
  defineCase({
    id: 'OT-015',
    title: 'any Origin header, empty or "null" included, is forbidden_origin, for any value on any route',
    level: 'required',
    async run (ctx) {
      for (const origin of ['http://localhost', 'null', '', 'https://example.com']) {
        expectError(
          await ctx.client.request({ path: '/info', headers: { origin } }),
          'forbidden_origin',
          `Origin ${JSON.stringify(origin)}`
        )
      }
      const id = adapterId(ctx, 'origin')
      const routes: RequestOptions[] = [
        { path: '/info' },
        { method: 'PUT', path: `/adapters/${id}`, body: minimal() },
        { method: 'POST', path: `/adapters/${id}/sessions/s1`, body: SESSION },
        { method: 'PUT', path: `/adapters/${id}/sessions`, body: { sessions: [] } },
        { method: 'POST', path: `/adapters/${id}/events`, body: {} }
      ]
      await fc.assert(fc.asyncProperty(
        fc.oneof(fc.webUrl(), printable(0, 60), fc.constantFrom('null', 'file://', 'http://localhost:8080', 'vscode-webview://x')),
        fc.nat({ max: routes.length - 1 }),
        async (origin, route) => {
          const options = routes[route]!
          const reply = await ctx.client.request({ ...options, headers: { origin } })
          expectError(reply, 'forbidden_origin', `${options.method ?? 'GET'} ${options.path} with Origin ${JSON.stringify(origin)}`)
        }
      ), ctx.fc())
    }
  }),
  defineCase({
    id: 'OT-016',
    title: 'a missing Authorization, another scheme or another token is unauthorized',
    level: 'required',
    async run ({ client }) {
      expectError(
        await client.request({ path: '/info', headers: { authorization: null } }),
        'unauthorized',
        'no Authorization'
      )
      expectError(
        await client.request({ path: '/info', headers: { authorization: 'Basic dXNlcjpwYXNz' } }),
        'unauthorized',
        'Basic scheme'
      )
      expectError(
        await client.request({ path: '/info', headers: { authorization: `Bearer ${'A'.repeat(43)}` } }),
        'unauthorized',
        'another token'
      )
      expectError(
        await client.request({ path: '/info', headers: { authorization: 'Bearer' } }),
        'unauthorized',
        'no token at all'
      )
    }
  }),
  defineCase({
    id: 'OT-016.b',
    title: 'for any Authorization but Bearer <discovery token> (other tokens, near misses, other schemes), on any route, the request is unauthorized',
    level: 'required',
    async run (ctx) {
      const id = adapterId(ctx, 'auth')
      const routes: RequestOptions[] = [
        { path: '/info' },
        { method: 'PUT', path: `/adapters/${id}`, body: minimal() },
        { method: 'POST', path: `/adapters/${id}/events`, body: {} }
      ]
      await fc.assert(
        fc.asyncProperty(
          wrongAuthorization(ctx.client.target.token),
          fc.nat({ max: routes.length - 1 }),
          async (authorization, route) => {
            const options = routes[route]!
            expectError(
              await ctx.client.request({ ...options, headers: { authorization } }),
              'unauthorized',
              `${options.method ?? 'GET'} ${options.path} with a wrong Authorization`
            )
          }
        ),
        ctx.fc()
      )
      expectStatus(await ctx.client.request({ path: '/info' }), 200, 'the discovery token itself')
    }
  }),
  defineCase({
    id: 'OT-017',
    title: 'a body that is not application/json is unsupported_media_type',
    level: 'required',
    async run (ctx) {
      const put = freshPut(ctx, 'media')
      const body = { name: 'x', palette: { baseHue: 1 } }
      for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'application/json; charset=latin1']) {
        const reply = await put({ headers: { 'content-type': type }, body })
        expectError(reply, 'unsupported_media_type', `Content-Type ${type}`)
      }
    }
  })
]
