import { isDeepStrictEqual } from 'node:util'
import fc from 'fast-check'
import { CaseSkip, defineCase } from '../../../core/case.js'
import { expectEqual, expectOk, expectOrbError, expectThat } from '../../expect.js'
import { controlled, type OrbContext } from '../../orb-case.js'
import type { OrbBotClient, OrbReply, Speaker } from '../../transport.js'
import { PASSPORT, withoutScope, type Case } from './features-support.js'

/*
 * Passport checks (ORB-085..089, ORB-A18): whether a member's address holds enough evidence of a kind.
 */

const ADDRESS = /^0x[0-9a-fA-F]{40}$/
const passport = (
  ctx: OrbContext,
  query: Record<string, string | number | undefined>,
  as: Speaker = 'full'
): Promise<OrbReply> => ctx.client.get(PASSPORT, query, as)

/** A passport check of `what` answers count 0, holds false (`asked` names the request in a failure). */
async function expectHoldsNothing (
  ctx: OrbContext,
  query: Record<string, string>,
  what: string,
  asked = `passport for ${what}`
): Promise<void> {
  const got = expectOk(await passport(ctx, query), asked)
  expectThat(got.count === 0 && got.holds === false, `${what}: count 0, holds false`, { count: 0, holds: false }, got)
}

/** An address and kind with evidence, and its count: the config's, else the first candidate with some. */
async function knownEvidence (ctx: OrbContext): Promise<{ address: string; kind: string; count: number }> {
  const t = ctx.client.target
  const candidates: Array<{ address: string; kind: string }> = t.passport === undefined ? [] : [t.passport]
  if (ctx.control !== undefined) {
    const state = await ctx.control.orbState()
    const addresses = ((state.members as any[] | undefined) ?? [])
      .map((m) => m.address)
      .filter((a): a is string => typeof a === 'string' && ADDRESS.test(a))
    for (const address of [`0x${'1'.repeat(40)}`, `0x${'2'.repeat(40)}`, ...addresses]) {
      for (const kind of ['builder', 'human']) candidates.push({ address, kind })
    }
  } else if (candidates.length === 0) {
    candidates.push({ address: `0x${'1'.repeat(40)}`, kind: 'human' })
  }
  let first: { address: string, kind: string, count: number } | undefined
  for (const c of candidates) {
    const body = expectOk(await passport(ctx, { server: t.community, ...c, minimum: 1 }), `passport for ${c.kind}`)
    if (body.count === null) throw new CaseSkip('the chain cannot be consulted now (count null)')
    first ??= { ...c, count: body.count }
    if (body.count >= 1) return { ...c, count: body.count }
  }
  ctx.note('no evidence found for any candidate: counts are 0')
  return first!
}

const badAddress = fc.oneof(
  fc.constant('0x123'),
  fc.string({ maxLength: 44 }).filter((s) => !ADDRESS.test(s)),
  fc.stringMatching(/^0x[0-9a-f]{0,39}$/),
  fc.stringMatching(/^0x[0-9a-f]{41,50}$/),
  fc.stringMatching(/^[0-9a-f]{40}$/),
  fc.stringMatching(/^0x[0-9a-f]{39}[g-z]$/)
)
const badMinimum = fc.oneof(
  fc.constantFrom(0, 1000, -1, 'abc', 'one', '1.5', 'true'),
  fc.integer({ min: 1000, max: 1e9 }),
  fc.integer({ min: -1e9, max: 0 }),
  fc.integer({ min: 1, max: 998 }).map((n) => `${n}.5`)
)

export const passportCases: Case[] = [
  defineCase<OrbBotClient>({
    id: 'ORB-085',
    title: 'GET /passport with server, address or kind missing, an address off the pattern, or minimum outside 1..999 is 400',
    level: 'required',
    async run (ctx) {
      const good = { server: ctx.client.target.community, address: `0x${'1'.repeat(40)}`, kind: 'human' }
      expectOk(await passport(ctx, { ...good, minimum: 999 }), 'a valid query')
      const invalid = fc.oneof(
        fc.constantFrom('server', 'address', 'kind').map((drop) => ({ ...good, [drop]: undefined })),
        badAddress.map((address) => ({ ...good, address })),
        badMinimum.map((minimum) => ({ ...good, minimum }))
      )
      await fc.assert(fc.asyncProperty(invalid, async (query) => {
        expectOrbError(await passport(ctx, query), 400, `GET /passport ${JSON.stringify(query)}`)
      }), ctx.fc())
    }
  }),
  defineCase<OrbBotClient>({
    id: 'ORB-086',
    title: 'passport answers 200 with count and a three-valued holds; with the chain unavailable both are null',
    level: 'required',
    async run (ctx) {
      const { address, kind } = await knownEvidence(ctx)
      const query = { server: ctx.client.target.community, address, kind, minimum: 1 }
      const body = expectOk(await passport(ctx, query), 'passport')
      expectThat(Number.isInteger(body.count) && typeof body.holds === 'boolean', 'with the chain consulted: an integer count and a boolean holds', '{count: <int>, holds: <bool>}', body)
      if (ctx.control === undefined) {
        ctx.note('no control API: the chain cannot be made unavailable')
        return
      }
      if (ctx.readOnly) {
        // Making the chain unavailable changes the target.
        ctx.note('--read-only: the chain is not made unavailable')
        return
      }
      const { control } = controlled(ctx)
      const was = (await control.orbState()).chain?.available !== false
      ctx.cleanup(async () => {
        await control.setChain(was)
      })
      await control.setChain(false)
      const unknown = expectOk(await passport(ctx, query), 'passport with the chain unavailable')
      expectThat(
        unknown.count === null && unknown.holds === null,
        'with the chain unavailable: count and holds null, never false',
        '{count: null, holds: null}',
        unknown
      )
      await control.setChain(true)
      const back = expectOk(await passport(ctx, query), 'passport with the chain back')
      expectThat(
        back.count === body.count && back.holds === body.holds,
        'with the chain back: the answer as before',
        body,
        back
      )
    }
  }),
  defineCase<OrbBotClient>({
    id: 'ORB-087',
    title: 'holds is true exactly when the evidence count is at least minimum, for any minimum 1..999',
    level: 'required',
    async run (ctx) {
      const { address, kind, count } = await knownEvidence(ctx)
      ctx.note(`${kind} evidence of ${address}: ${count}`)
      // A count of 0 (or 999 and more) holds false (true) for every minimum: a server ignoring minimum looks the same.
      if (count === 0 || count >= 999) {
        throw new CaseSkip(
          `no evidence to tell holds from minimum: ${kind} of ${address} counts ${count}${ctx.client.target.passport === undefined ? ' (name an address and kind with evidence in the config: passport)' : ''}`
        )
      }
      const check = async (minimum: number): Promise<void> => {
        const body = expectOk(
          await passport(ctx, { server: ctx.client.target.community, address, kind, minimum }),
          `passport minimum ${minimum}`
        )
        expectThat(
          body.count === count && body.holds === (count >= minimum),
          `minimum ${minimum} against a count of ${count}`,
          { count, holds: count >= minimum },
          { count: body.count, holds: body.holds }
        )
      }
      for (const minimum of [1, count, count + 1, 999].filter((m) => m >= 1 && m <= 999)) await check(minimum)
      await fc.assert(
        fc.asyncProperty(
          fc.oneof(fc.integer({ min: 1, max: 999 }), fc.integer({ min: 1, max: Math.min(999, count + 3) })),
          check
        ),
        ctx.fc()
      )
    }
  }),
  defineCase<OrbBotClient>({
    id: 'ORB-089',
    title: 'passport without the passport scope is 403',
    level: 'required',
    async run (ctx) {
      const as = await withoutScope(ctx, 'passport')
      expectOrbError(
        await passport(ctx, { server: ctx.client.target.community, address: `0x${'1'.repeat(40)}`, kind: 'human' }, as),
        403,
        'GET /passport without the passport scope'
      )
    }
  }),
  defineCase<OrbBotClient>({
    id: 'ORB-A18',
    title: 'passport reply shape, address without regard to case, unknown kind count 0, a community without the app 404',
    level: 'decision',
    async run (ctx) {
      const t = ctx.client.target
      const { address, kind, count } = await knownEvidence(ctx)
      const body = expectOk(await passport(ctx, { server: t.community, address, kind }), 'passport without minimum')
      const want = {
        server: t.community,
        address:
          typeof body.address === 'string' && body.address.toLowerCase() === address.toLowerCase()
            ? body.address
            : address,
        kind,
        minimum: 1,
        count,
        holds: count >= 1
      }
      expectThat(
        isDeepStrictEqual(body, want),
        'the reply is {server, address, kind, minimum (default 1), count, holds}',
        want,
        body
      )
      for (const variant of [`0x${address.slice(2).toUpperCase()}`, address.toLowerCase()]) {
        expectEqual(
          expectOk(await passport(ctx, { server: t.community, address: variant, kind }), `passport for ${variant}`)
            .count,
          count,
          `${variant}: the same count whatever the case`
        )
      }
      const unknownKind = { server: t.community, address, kind: `orbtest-unknown-${ctx.uid('kind')}` }
      await expectHoldsNothing(ctx, unknownKind, 'an unknown kind')
      const nobody = { server: t.community, address: `0x${'7e'.repeat(20)}`, kind }
      await expectHoldsNothing(ctx, nobody, 'an address of no member', 'passport for an address of nobody here')
      expectOrbError(
        await passport(ctx, { server: 'srv_orbtest_no_such_community', address, kind }),
        404,
        'passport for an unknown community'
      )
      if (t.otherCommunity !== undefined) {
        expectOrbError(
          await passport(ctx, { server: t.otherCommunity, address, kind }),
          404,
          'passport for a community that did not install the app (ORB-A08)'
        )
      }
    }
  })
]
