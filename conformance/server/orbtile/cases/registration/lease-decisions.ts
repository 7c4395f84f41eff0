import { adapterId, defineCase, type ConformanceCase } from '../../orbtile-case.js'
import { expectEqual, expectError, expectStatus, expectThat } from '../../expect.js'
import { elapseUntil, REAL_MARGIN_MS, REAL_SLACK_MS } from '../../time.js'
import { expectInvalid, expectOk } from './expectations.js'
import {
  body,
  del,
  lease,
  NEW_SESSION,
  onRoute,
  poll,
  postSession,
  put,
  ROUTES,
  withLeases,
  type Lease
} from './registration-support.js'
import { tapLease } from './leases.js'

/** The decisions on tokens and leases: token errors, unregistering, silence (OT-A06..A08). */
export const leaseDecisions: ConformanceCase[] = [
  defineCase(
    withLeases({
      id: 'OT-A06',
      title:
        'token errors: 401 naming X-Orbtile-Adapter-Token during a lease, adapter_not_registered without one, the same token on re-registration',
      level: 'decision',
      async run (ctx) {
        const a = await tapLease(ctx, 'a06')
        expectError(
          await put(ctx, a.id, body()),
          'unauthorized',
          're-registering without the token',
          'X-Orbtile-Adapter-Token'
        )
        for (const route of ROUTES) {
          expectError(
            await onRoute(ctx, a.id, route, 'B'.repeat(43)),
            'unauthorized',
            `${route} with a wrong token`,
            'X-Orbtile-Adapter-Token'
          )
          expectError(
            await onRoute(ctx, a.id, route, undefined),
            'unauthorized',
            `${route} without a token`,
            'X-Orbtile-Adapter-Token'
          )
        }
        expectThat(
          /^Bearer\b/i.test(String((await onRoute(ctx, a.id, 'session', undefined)).headers['www-authenticate'])),
          'a 401 carries WWW-Authenticate: Bearer (OT-A01)',
          'Bearer',
          'another challenge'
        )
        const again = await put(ctx, a.id, body({ capabilities: ['tap'] }), a.token)
        expectEqual(again.json.adapterToken, a.token, 're-registering with the token returns the same token')
        const never = adapterId(ctx, 'never')
        for (const route of ROUTES) {
          for (const token of [undefined, a.token, 'C'.repeat(43)]) {
            expectError(
              await onRoute(ctx, never, route, token),
              'adapter_not_registered',
              `${route} of an id never registered`
            )
          }
        }
        expectOk(await del(ctx, a.id, a.token), 'unregistering')
        for (const route of ROUTES) {
          expectError(
            await onRoute(ctx, a.id, route, a.token),
            'adapter_not_registered',
            `${route} after unregistering`
          )
        }
        const fresh = await put(ctx, a.id, body(), a.token)
        expectStatus(fresh, 200, 'a registration without a live lease, with a stale token')
        expectThat(
          fresh.json.adapterToken !== a.token,
          'the stale token is ignored: a new lease, a new token',
          'a new token',
          'the old one'
        )
      }
    })
  ),
  defineCase(
    withLeases({
      id: 'OT-A07',
      title:
        'DELETE /adapters/{id} with the token is 204: sessions end, the token dies; without a lease it is adapter_not_registered',
      level: 'decision',
      async run (ctx) {
        const a = await tapLease(ctx, 'a07', 'a session')
        expectError(await del(ctx, a.id), 'unauthorized', 'DELETE without the token')
        expectError(await del(ctx, a.id, 'D'.repeat(43)), 'unauthorized', 'DELETE with a wrong token')
        const done = await del(ctx, a.id, a.token)
        expectEqual({ status: done.status, body: done.text }, { status: 204, body: '' }, 'DELETE with the token')
        expectError(await del(ctx, a.id, a.token), 'adapter_not_registered', 'DELETE again')
        expectError(
          await del(ctx, adapterId(ctx, 'never'), a.token),
          'adapter_not_registered',
          'DELETE of an id never registered'
        )
        const next = await put(ctx, a.id, body({ capabilities: ['tap'] }))
        expectStatus(next, 200, 'registering again')
        const l: Lease = { id: a.id, token: next.json.adapterToken, reply: next }
        expectInvalid(
          await postSession(ctx, l, 's1', { model: 'm1' }),
          'an update without title and activity to the session of the ended lease',
          /^(?:title|activity)$/
        )
        const events = await poll(ctx, l)
        expectStatus(events, 200, 'polling the new lease')
        expectEqual(events.json.events, [], 'events of the new lease')
      }
    })
  ),
  defineCase(
    withLeases({
      id: 'OT-A07.b',
      title: "unregistering keeps the user's approval of the adapter id",
      level: 'decision',
      needs: ['control'],
      async run (ctx) {
        const a = await lease(ctx, body(), { label: 'keep', allow: true })
        expectEqual(a.reply.json.enabled, true, 'enabled once the user allowed it')
        expectOk(await del(ctx, a.id, a.token), 'unregistering')
        const again = await put(ctx, a.id, body())
        expectStatus(again, 200, 'registering again')
        expectEqual(again.json.enabled, true, 'enabled in the new lease, with no new decision of the user')
      }
    })
  ),
  defineCase(
    withLeases({
      id: 'OT-A08',
      title:
        'a lease ends after max(120 s, the longest session TTL) without a request on its routes; any request restarts the window',
      level: 'decision',
      // About 11 minutes of real time.
      needs: ['slow'],
      async run (ctx) {
        if (await ctx.virtualTime()) {
          const a = await lease(ctx, body(), { label: 'quiet' })
          await ctx.elapse(119_900)
          expectOk(await onRoute(ctx, a.id, 'session', a.token), 'a request 119.9 s after registering')
          await ctx.elapse(119_900)
          expectOk(await onRoute(ctx, a.id, 'session', a.token), 'a request 119.9 s after the last one')
          // The session's default TTL (120 s) does not stretch the window.
          await ctx.elapse(120_000)
          expectError(
            await onRoute(ctx, a.id, 'session', a.token),
            'adapter_not_registered',
            'a request after 120 s of silence'
          )
          const b = await lease(ctx, body(), { label: 'quiet' })
          expectOk(
            await postSession(ctx, b, 's1', { ...NEW_SESSION, ttlSeconds: 300 }),
            'a session with ttlSeconds 300'
          )
          await ctx.elapse(299_000)
          expectOk(await postSession(ctx, b, 's1', {}), 'a heartbeat 299 s later (the window is 300 s)')
          await ctx.elapse(300_000)
          expectError(
            await postSession(ctx, b, 's1', {}),
            'adapter_not_registered',
            'a heartbeat after 300 s of silence'
          )
          return
        }
        // A real clock (--slow): each request comes well before the window ends (measured from when the last one was
        // sent), and the end is looked at a little after it (measured from when the last one was answered).
        const before = (ms: number): number => (ms - REAL_MARGIN_MS) / 1000
        const after = (ms: number): number => (ms + REAL_SLACK_MS) / 1000
        let sent = performance.now()
        const a = await lease(ctx, body(), { label: 'quiet' })
        await elapseUntil(ctx, sent + 120_000 - REAL_MARGIN_MS)
        sent = performance.now()
        expectOk(await onRoute(ctx, a.id, 'session', a.token), `a request ${before(120_000)} s after registering`)
        await elapseUntil(ctx, sent + 120_000 - REAL_MARGIN_MS)
        sent = performance.now()
        expectOk(await onRoute(ctx, a.id, 'session', a.token), `a request ${before(120_000)} s after the last one`)
        let answered = performance.now()
        // The session's default TTL (120 s) does not stretch the window.
        await elapseUntil(ctx, answered + 120_000 + REAL_SLACK_MS)
        expectError(
          await onRoute(ctx, a.id, 'session', a.token),
          'adapter_not_registered',
          `a request after ${after(120_000)} s of silence`
        )
        // A TTL of 150 s stretches the window to 150 s (300 s on a virtual clock; shorter here to save real time).
        const b = await lease(ctx, body(), { label: 'quiet' })
        sent = performance.now()
        expectOk(await postSession(ctx, b, 's1', { ...NEW_SESSION, ttlSeconds: 150 }), 'a session with ttlSeconds 150')
        await elapseUntil(ctx, sent + 150_000 - REAL_MARGIN_MS)
        expectOk(await postSession(ctx, b, 's1', {}), `a heartbeat ${before(150_000)} s later (the window is 150 s)`)
        answered = performance.now()
        await elapseUntil(ctx, answered + 150_000 + REAL_SLACK_MS)
        expectError(
          await postSession(ctx, b, 's1', {}),
          'adapter_not_registered',
          `a heartbeat after ${after(150_000)} s of silence`
        )
      }
    })
  )
]
