import fc from 'fast-check'
import { adapterId, CaseSkip, defineCase, type CaseContext, type ConformanceCase } from '../../orbtile-case.js'
import { expectEqual, expectError, expectStatus, expectThat } from '../../expect.js'
import type { Reply } from '../../transport.js'
import { elapseUntil, REAL_SLACK_MS } from '../../time.js'
import { expectOk, expectRefused } from './expectations.js'
import {
  body,
  del,
  lease,
  onRoute,
  put,
  ROUTES,
  TOKEN_HEADER,
  TOKEN_PATTERN,
  withLeases,
  withPalette,
  type Body,
  type Lease,
  type RegistrationContext
} from './registration-support.js'

/** A lease's silence window as orbtest's control API states it (its deadline less its last activity), in ms. */
async function silenceWindow (ctx: CaseContext, id: string): Promise<number> {
  const lease = (await ctx.control!.adapter(id))?.lease as
    { lastActivity?: string; silenceDeadline?: string } | null | undefined
  const window = Date.parse(lease?.silenceDeadline ?? '') - Date.parse(lease?.lastActivity ?? '')
  if (!Number.isFinite(window) || window <= 0) {
    throw new CaseSkip(
      'the control API states no silence window for the lease (lease.lastActivity, lease.silenceDeadline)'
    )
  }
  return window
}

/** A lease with the tap capability; with `session`, the case's first session is created under it (it must be). */
export async function tapLease (ctx: RegistrationContext, label: string, session?: string): Promise<Lease> {
  const l = await lease(ctx, body({ capabilities: ['tap'] }), { label })
  if (session !== undefined) expectOk(await onRoute(ctx, l.id, 'session', l.token), session)
  return l
}

/** Registers the lease's id again with its ended lease's token; fails unless a new lease, with a new token, begins. */
async function expectNewLease (ctx: RegistrationContext, l: Lease, payload: Body, what: string): Promise<void> {
  const next = await put(ctx, l.id, payload, l.token)
  expectStatus(next, 200, what)
  expectThat(next.json.adapterToken !== l.token, 'a new lease has a new token', 'a different token', 'the same token')
}

/** Leases and tokens (OT-018..023), the adapter limit (OT-028). */
export const tokenCases: ConformanceCase[] = [
  defineCase(
    withLeases({
      id: 'OT-018',
      title: 'a registration reply carries a 43-character base64url adapterToken of 256 bits; each lease its own',
      level: 'required',
      async run (ctx) {
        const tokens = new Set<string>()
        const id = adapterId(ctx, 'token')
        for (let i = 0; i < 4; i++) {
          const reply = await put(ctx, id, body())
          expectStatus(reply, 200, `lease ${i + 1} of ${id}`)
          const token = reply.json.adapterToken
          expectThat(
            typeof token === 'string' && TOKEN_PATTERN.test(token),
            'adapterToken matches ^[A-Za-z0-9_-]{43}$',
            TOKEN_PATTERN.source,
            token
          )
          const bytes = Buffer.from(token, 'base64url')
          expectThat(
            bytes.length === 32 && bytes.toString('base64url') === token,
            'adapterToken is the unpadded base64url of 32 bytes',
            '256 bits',
            token.length
          )
          tokens.add(token)
          expectOk(await del(ctx, id, token), 'ending the lease')
        }
        const other = await lease(ctx)
        tokens.add(other.token)
        expectEqual(tokens.size, 5, 'five leases, five different tokens')
      }
    })
  ),
  defineCase(
    withLeases({
      id: 'OT-020',
      title: "during a lease, its routes refuse a missing token, any other token, and another adapter's token",
      level: 'required',
      async run (ctx) {
        const a = await tapLease(ctx, 'own-a')
        const b = await tapLease(ctx, 'own-b')
        for (const route of ROUTES) {
          expectError(await onRoute(ctx, a.id, route, undefined), 'unauthorized', `${route} without ${TOKEN_HEADER}`)
          expectError(await onRoute(ctx, a.id, route, b.token), 'unauthorized', `${route} of A with B's token`)
          expectOk(await onRoute(ctx, a.id, route, a.token), `${route} with A's own token`)
        }
        // Any other token: random ones, and the real one with one character changed, cut or extended.
        const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'
        const wrong = fc
          .oneof(
            fc.stringMatching(/^[A-Za-z0-9_-]{43}$/),
            fc
              .record({ at: fc.nat({ max: 42 }), by: fc.integer({ min: 1, max: 63 }) })
              .map(
                ({ at, by }) =>
                  a.token.slice(0, at) + alphabet[(alphabet.indexOf(a.token[at]!) + by) % 64] + a.token.slice(at + 1)
              ),
            fc.constantFrom(a.token.slice(0, 42), `${a.token}A`, a.token.toLowerCase(), a.token.toUpperCase(), 'x')
          )
          .filter((token) => token !== a.token)
        await fc.assert(
          fc.asyncProperty(wrong, fc.constantFrom(...ROUTES), async (token, route) => {
            expectError(
              await onRoute(ctx, a.id, route, token),
              'unauthorized',
              `${route} with a token that is not the lease's`
            )
          }),
          ctx.fc({ endOnFailure: true })
        )
      }
    })
  ),
  defineCase(
    withLeases({
      id: 'OT-021',
      title:
        're-registration during a lease needs its token; with it the lease goes on and the reply reflects the new body',
      level: 'required',
      async run (ctx) {
        const a = await lease(ctx, body({ capabilities: ['tap', 'approvals'] }), { label: 'rereg' })
        const b = await lease(ctx, body(), { label: 'other' })
        expectError(await put(ctx, a.id, body()), 'unauthorized', 're-registering without the token')
        expectError(await put(ctx, a.id, body(), 'A'.repeat(43)), 'unauthorized', 're-registering with a made-up token')
        expectError(
          await put(ctx, a.id, body(), b.token),
          'unauthorized',
          "re-registering with another adapter's token"
        )
        expectOk(await onRoute(ctx, a.id, 'session', a.token), 'the lease is untouched by the refused attempts')
        // A capability downgrade and a new palette, under the token.
        const again = await put(ctx, a.id, withPalette({ baseHue: 250 }, { name: 'Renamed' }), a.token)
        expectStatus(again, 200, 're-registering with the token')
        expectEqual(again.json.adapter?.palette?.baseHue, 250, 'the reply reflects the new palette')
        expectOk(await onRoute(ctx, a.id, 'session', a.token), 'the lease goes on: its token still works')
        if (again.json.adapterToken !== a.token) {
          expectOk(await onRoute(ctx, a.id, 'session', again.json.adapterToken), 'the token of the reply works')
        }
      }
    })
  ),
  defineCase(
    withLeases({
      id: 'OT-023',
      title: 'a lease ends on unregister: the old token works on no route; a new registration gets a new token',
      level: 'required',
      async run (ctx) {
        const a = await tapLease(ctx, 'end', 'a session under the lease')
        expectOk(await del(ctx, a.id, a.token), 'unregistering')
        for (const route of ROUTES) {
          expectRefused(await onRoute(ctx, a.id, route, a.token), `${route} with the ended lease's token`)
        }
        await expectNewLease(ctx, a, body({ capabilities: ['tap'] }), 'a new registration (with the stale token)')
        for (const route of ROUTES) {
          expectError(
            await onRoute(ctx, a.id, route, a.token),
            'unauthorized',
            `${route} of the new lease with the old token`
          )
        }
        ctx.note(
          'the ends by token regeneration and host restart need a new discovery token, which a run cannot pick up: not checked'
        )
      }
    })
  ),
  defineCase(
    withLeases({
      id: 'OT-023.b',
      title: 'a lease ends on silence: after a long quiet, the old token works on no route and a new one is issued',
      level: 'required',
      needs: ['control'],
      async run (ctx) {
        const virtual = await ctx.virtualTime()
        const a = await tapLease(ctx, 'silent')
        const quiet = performance.now()
        let silence = 'two hours'
        if (virtual) {
          // Far past any window the spec allows (the longest session TTL is 3600 s; this adapter has no session).
          await ctx.elapse(2 * 3600_000)
        } else {
          // A real clock: the lease's own window, as the control API states it, and a little more. A window of minutes
          // (120 s by default) waits with --slow only.
          const window = await silenceWindow(ctx, a.id)
          silence = `${(window + REAL_SLACK_MS) / 1000} s`
          ctx.note(
            `real clock: waited the lease's silence window (${window / 1000} s, from the control API) and ${REAL_SLACK_MS / 1000} s more`
          )
          await elapseUntil(ctx, quiet + window + REAL_SLACK_MS)
        }
        for (const route of ROUTES) {
          expectRefused(await onRoute(ctx, a.id, route, a.token), `${route} after ${silence} of silence`)
        }
        await expectNewLease(ctx, a, body(), 'registering again')
      }
    })
  ),
  defineCase(
    withLeases({
      id: 'OT-028',
      title:
        'at most 8 adapters hold live leases: one more is limit_exceeded; re-registering is no new slot; ending one frees it',
      level: 'required',
      async run (ctx) {
        const held: Lease[] = []
        let refusal: Reply | undefined
        for (let i = 0; i < 9 && refusal === undefined; i++) {
          const id = adapterId(ctx, 'max')
          const reply = await put(ctx, id, body())
          if (reply.status === 200) held.push({ id, token: reply.json.adapterToken, reply })
          else refusal = reply
        }
        expectThat(
          refusal !== undefined,
          'a 9th live lease is refused',
          'limit_exceeded by the 9th registration at the latest',
          `${held.length} registrations accepted`
        )
        expectError(refusal!, 'limit_exceeded', `registration ${held.length + 1}`)
        if (held.length === 0) throw new CaseSkip('the target already holds 8 leases of other adapters')
        ctx.note(`${held.length} leases of this case reached the limit: the target held ${8 - held.length} others`)
        expectStatus(
          await put(ctx, held[0]!.id, body(), held[0]!.token),
          200,
          're-registering a live adapter at the limit'
        )
        expectError(
          await put(ctx, adapterId(ctx, 'max'), body()),
          'limit_exceeded',
          'one more after the re-registration'
        )
        expectOk(await del(ctx, held[0]!.id, held[0]!.token), 'ending one lease')
        expectStatus(await put(ctx, adapterId(ctx, 'max'), body()), 200, 'a registration in the freed slot')
      }
    })
  )
]
