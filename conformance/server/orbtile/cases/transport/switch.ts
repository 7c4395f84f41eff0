import { statSync } from 'node:fs'
import { adapterId, defineCase, type CaseContext, type ConformanceCase } from '../../orbtile-case.js'
import { minimal } from '../../adapters.js'
import { expectEqual, expectError, expectStatus, expectThat } from '../../expect.js'
import type { RequestOptions } from '../../transport.js'
import { connectionRefusal, readDiscovery, switchApi } from '../../support-transport.js'
import { SESSION, tapAdapter, withEvents } from './transport-support.js'

/** Switches the API on again; fails unless GET /info then answers 200. */
async function switchOn (ctx: CaseContext): Promise<void> {
  await switchApi(ctx, { enabled: true })
  expectStatus(await ctx.client.request({ path: '/info' }), 200, 'GET /info once the API is on again')
}

/** The user's Adapter API switch through the control API (OT-001, OT-155, OT-A03): it closes and reopens the socket. */
export const switchCases: ConformanceCase[] = [
  defineCase({
    id: 'OT-155',
    title: 'with the API switched off, every adapter request (and /info) is api_disabled; switched on, it serves again',
    level: 'required',
    needs: ['control'],
    async run (ctx) {
      const a = await tapAdapter(ctx, 'off')
      await switchApi(ctx, { enabled: false })
      const fresh = adapterId(ctx, 'off')
      for (const options of [
        { path: '/info' },
        { method: 'PUT', path: `/adapters/${fresh}`, body: minimal() },
        { method: 'PUT', path: `/adapters/${a.id}`, headers: a.headers, body: withEvents() },
        { method: 'POST', path: `/adapters/${a.id}/sessions/s1`, headers: a.headers, body: SESSION },
        { method: 'PUT', path: `/adapters/${a.id}/sessions`, headers: a.headers, body: { sessions: [] } },
        { method: 'POST', path: `/adapters/${a.id}/events`, headers: a.headers, body: {} }
      ] as RequestOptions[]) {
        expectError(await ctx.client.request({ ...options, retryRateLimited: false }), 'api_disabled', `${options.method ?? 'GET'} ${options.path} while the API is off`)
      }
      await switchOn(ctx)
    }
  }),
  defineCase({
    id: 'OT-001',
    title: 'while the user has the Adapter API off, no adapter request succeeds (socket open or closed)',
    level: 'required',
    needs: ['control'],
    async run (ctx) {
      ctx.note('"off by default" is the state before the user first turns the API on; a running target can only be switched off and back')
      const id = adapterId(ctx, 'off')
      const tries: RequestOptions[] = [
        { path: '/info' },
        { method: 'PUT', path: `/adapters/${id}`, body: minimal() },
        { method: 'POST', path: `/adapters/${id}/sessions/s1`, body: SESSION }
      ]
      for (const listening of [true, false]) {
        await switchApi(ctx, { enabled: false, listening })
        for (const options of tries) {
          const { code, reply } = await connectionRefusal(ctx, options)
          expectThat(reply === undefined || reply.status >= 400, `${options.method ?? 'GET'} ${options.path} with the API off (socket ${listening ? 'open' : 'closed'})`, 'no success', code ?? `${reply!.status} ${reply!.text.slice(0, 200)}`)
        }
      }
      await switchOn(ctx)
    }
  }),
  defineCase({
    id: 'OT-A03',
    title:
      'API off: an open socket answers even unauthenticated /info with 503 api_disabled; a closed one is ENOENT/ECONNREFUSED with the discovery file gone; on again, both are back',
    level: 'decision',
    needs: ['control'],
    async run (ctx) {
      const path = ctx.client.target.discovery
      await switchApi(ctx, { enabled: false })
      expectError(
        await ctx.client.request({ path: '/info', headers: { authorization: null } }),
        'api_disabled',
        'GET /info without Authorization, API off'
      )
      await switchApi(ctx, { enabled: false, listening: false })
      const { code, reply } = await connectionRefusal(ctx, { path: '/info' })
      expectThat(
        code === 'ENOENT' || code === 'ECONNREFUSED',
        'a request with the API off and the socket closed',
        'ENOENT or ECONNREFUSED',
        code ?? `${reply?.status} ${reply?.text.slice(0, 200)}`
      )
      if (path === undefined) ctx.note('no discovery file to check (unix: target)')
      else {
        let present = true
        try {
          statSync(path)
        } catch {
          present = false
        }
        expectThat(!present, 'the discovery file while the API is off', 'absent', 'present')
      }
      await switchApi(ctx, { enabled: true })
      if (path !== undefined) {
        const { json, stat } = readDiscovery(ctx)
        expectEqual(
          { socketPath: json.socketPath, mode: (stat.mode & 0o777).toString(8) },
          { socketPath: ctx.client.target.socketPath, mode: '600' },
          'the discovery file once the API is on again'
        )
      }
      expectStatus(await ctx.client.request({ path: '/info' }), 200, 'GET /info once the API is on again')
    }
  })
]
