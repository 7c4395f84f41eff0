import fc from 'fast-check'
import { CaseSkip, defineCase, type ConformanceCase } from '../../../core/case.js'
import { exactStatus } from '../../../core/strictness.js'
import { expectEqual, expectOk, expectOrbError, expectThat } from '../../expect.js'
import { BOT, channel, controlled, drain, few, post, syncCommands, type OrbContext } from '../../orb-case.js'
import type { OrbBotClient, OrbReply, OrbRequest, Speaker } from '../../transport.js'
import {
  RIGHTS,
  SCOPES,
  deleteIfPosted,
  dropApp,
  installOf,
  ownApp,
  passportQuery,
  postProbe,
  readApp,
  readDirectory,
  type ScopeName,
  type StateInstall
} from './access-support.js'

/** What `control.install` takes to put an install back as it was. */
const installSpec = (i: StateInstall): Record<string, unknown> => ({
  role: i.role,
  channels: i.channels,
  hidden: i.hidden,
  channelRights: i.channelRights
})

/** The two gates of a call, the app's scopes and the role's channels (ORB-005, ORB-006, ORB-007). */
export const gateCases: Array<ConformanceCase<OrbBotClient>> = [
  defineCase<OrbBotClient>({
    id: 'ORB-005',
    title: 'a call opens only when both gates allow it: a missing scope, or a role or allow-list that does not give the channel, is 403',
    level: 'required',
    writes: true,
    async run (ctx) {
      const text = channel(ctx, 'text')
      await probeFixedGates(ctx, text)
      if (ctx.client.target.controlled === undefined) {
        ctx.note('without the control API only the fixed probes ran')
        return
      }
      // Both gates, every combination: apps of the case's own with random scopes and roles.
      const { control, target } = controlled(ctx)
      const voice = channel(ctx, 'voice')
      // ORB-005 alone says a refusal of either gate is 403, and a role with every channel right refuses nothing in a
      // channel it sees. Which right each operation needs is ORB-A08's table: enforced only under exactStatus.
      const exact = exactStatus(ctx.client)
      await fc.assert(
        fc.asyncProperty(
          fc.subarray([...SCOPES]),
          fc.oneof(fc.subarray(['send_messages', 'connect', 'speak']), fc.constant([...RIGHTS])),
          fc.constantFrom('seen', 'hidden', 'outside'),
          async (scopes, rights, placement) => {
            const app = await ownApp(ctx, 'gate', scopes)
            try {
              await control.install(target.community, app.id, {
                role: { name: 'orbtest gate', rights },
                channels: placement === 'outside' ? [voice] : [text, voice],
                hidden: placement === 'hidden' ? [text] : []
              })
              await probeGates(ctx, { as: app.as, scopes, rights, placement }, exact, { text, voice })
            } finally {
              await dropApp(ctx, app.id)
            }
          }
        ),
        ctx.fc()
      )
    }
  }),

  defineCase<OrbBotClient>({
    id: 'ORB-006',
    title: 'scopes by route: without messages:write, voice, music (both methods) or passport the route is 403; messages:read reads',
    level: 'required',
    writes: true,
    async run (ctx) {
      const fewApp = few(ctx)
      const target = ctx.client.target
      const text = channel(ctx, 'text')
      const voice = channel(ctx, 'voice')
      // With control, the few app gets the full app's role and allow-list for the case: only the scopes differ, so a
      // 403 can only come from the scope (a route that skipped the scope check would answer 200).
      if (target.controlled !== undefined && target.few?.id !== undefined && target.full.id !== undefined) {
        const { control } = controlled(ctx)
        const before = await installOf(ctx, target.community, target.few.id)
        const fullInstall = await installOf(ctx, target.community, target.full.id)
        if (before === undefined || fullInstall === undefined) {
          throw new CaseSkip("the suite's apps are not installed as discovered")
        }
        ctx.cleanup(async () => {
          await control.install(target.community, target.few!.id!, installSpec(before))
        })
        await control.install(target.community, target.few.id, {
          ...installSpec(fullInstall),
          role: { name: before.role.name, rights: fullInstall.role.rights }
        })
        ctx.note("the few app had the full app's role and allow-list during the case")
      } else {
        ctx.note('without the control API the few app keeps its own role: a 403 may come from the role too')
      }
      const routes: Array<[ScopeName, string, OrbRequest]> = [
        [
          'messages:write',
          'POST /messages',
          { method: 'POST', path: `${BOT}/messages`, body: { channel: text, content: 'orbtest: a scope probe' } }
        ],
        [
          'voice',
          'POST /voice roster',
          { method: 'POST', path: `${BOT}/voice`, body: { action: 'roster', channel: voice } }
        ],
        ['music', 'GET /music', { path: `${BOT}/music`, query: { channel: voice } }],
        [
          'music',
          'POST /music state',
          { method: 'POST', path: `${BOT}/music`, body: { channel: voice, action: 'state' } }
        ],
        ['passport', 'GET /passport', { path: `${BOT}/passport`, query: passportQuery(ctx) }]
      ]
      const scopes = new Set<string>((await readApp(ctx, fewApp)).app?.scopes ?? [])
      let checked = 0
      for (const [scope, what, request] of routes) {
        if (scopes.has(scope)) continue
        const reply = await ctx.client.request({ ...request, as: fewApp })
        if (request.method === 'POST' && request.path === `${BOT}/messages`) deleteIfPosted(ctx, reply, fewApp)
        expectOrbError(reply, 403, `${what} as an app without ${scope}`)
        // The same call with the scope is served: the route is reachable, the scope is what was missing.
        if (scope !== 'messages:write') {
          expectOk(await ctx.client.request({ ...request, as: 'full' }), `${what} as the app with every scope`)
        }
        checked++
      }
      expectThat(
        checked > 0,
        'the few app lacks some scope of the table',
        'at least one of messages:write, voice, music, passport missing',
        [...scopes]
      )
      // messages:read is the scope of GET /messages: the few app has it and reads.
      if (scopes.has('messages:read')) {
        expectOk(
          await ctx.client.get(`${BOT}/messages`, { channel: text, limit: 1 }, fewApp),
          'GET /messages as an app with messages:read',
          { method: 'GET', path: `${BOT}/messages` }
        )
      }
      ctx.note(`${checked} routes refused for want of their scope`)
    }
  }),

  defineCase<OrbBotClient>({
    id: 'ORB-007',
    title: 'scopes are drawn from exactly messages:read, messages:write, voice, music, passport',
    level: 'required',
    async run (ctx) {
      const vocabulary = new Set<string>(SCOPES)
      const full = (await readApp(ctx)).app?.scopes
      expectThat(Array.isArray(full), 'GET /app names the app\'s scopes', 'app.scopes: [...]', full)
      // The full app asked for every scope: it holds exactly the five, once each.
      expectEqual([...full].sort(), [...SCOPES].sort(), 'the scopes of the app that asked for every scope')
      if (ctx.client.target.few !== undefined) {
        const scopes = (await readApp(ctx, 'few')).app?.scopes as unknown[]
        expectThat(
          Array.isArray(scopes) && scopes.every((s) => vocabulary.has(String(s))),
          "the few app's scopes are of the vocabulary",
          [...SCOPES],
          scopes
        )
      }
      for (const app of (await readDirectory(ctx)).apps as any[]) {
        expectThat(
          Array.isArray(app.scopes) && app.scopes.every((s: unknown) => vocabulary.has(String(s))),
          `${String(app.id)}'s listed scopes are of the vocabulary`,
          [...SCOPES],
          app.scopes
        )
      }
    }
  })
]

/** The routes that need no scope beyond a valid token (ORB-A07). */
export const gateDecisions: Array<ConformanceCase<OrbBotClient>> = [
  defineCase<OrbBotClient>({
    id: 'ORB-A07',
    title:
      '/app, /events, /commands, /interactions need only a valid token (an app with messages:read is never 403 there); DELETE /messages needs messages:write',
    level: 'decision',
    writes: true,
    async run (ctx) {
      const fewApp = few(ctx)
      await readApp(ctx, fewApp)
      expectOk(
        await ctx.client.get(`${BOT}/app`, { server: ctx.client.target.community }, fewApp),
        'GET /app?server= as the few app'
      )
      const events = await drain(ctx, 0, fewApp)
      expectOk(await ctx.client.get(`${BOT}/events`, { after: events.next }, fewApp), 'GET /events as the few app', {
        method: 'GET',
        path: `${BOT}/events`
      })
      expectOk(await ctx.client.get(`${BOT}/commands`, undefined, fewApp), 'GET /commands as the few app', {
        method: 'GET',
        path: `${BOT}/commands`
      })
      expectOk(await syncCommands(ctx, [], fewApp), 'PUT /commands [] as the few app', {
        method: 'PUT',
        path: `${BOT}/commands`
      })
      expectOrbError(
        await ctx.client.request({
          method: 'DELETE',
          path: `${BOT}/commands`,
          query: { name: 'orbtest-never-registered' },
          as: fewApp
        }),
        404,
        'DELETE /commands of an unregistered name as the few app'
      )
      expectOrbError(
        await ctx.client.post(`${BOT}/interactions/evt_orbtest_unknown/respond`, { content: 'x' }, fewApp),
        404,
        'POST /interactions/<unknown>/respond as the few app'
      )
      // DELETE /messages/{id} needs messages:write.
      const posted = await post(ctx, "orbtest: not the few app's to delete")
      expectOrbError(
        await ctx.client.request({ method: 'DELETE', path: `${BOT}/messages/${posted.id as number}`, as: fewApp }),
        403,
        'DELETE /messages/{id} as an app without messages:write'
      )
    }
  })
]

/** ORB-005 without the control API: the few app cannot post, the full app cannot reach channels it was not given. */
async function probeFixedGates (ctx: OrbContext, text: string): Promise<void> {
  // The scope gate alone: the few app's role may post in the text channel, its scopes do not allow it.
  const fewPost = await postProbe(ctx, { channel: text, content: 'orbtest: a scope gate probe' }, few(ctx))
  expectOrbError(fewPost, 403, 'POST /messages as an app without messages:write')
  // The role gate alone: the full app has every scope, the community did not give it these channels.
  for (const kind of ['outsideAllowList', 'hidden'] as const) {
    const id = ctx.client.target.channels[kind]
    if (id === undefined) continue
    const reply = await postProbe(ctx, { channel: id, content: 'orbtest: a role gate probe' })
    expectOrbError(reply, 403, `POST /messages to the ${kind} channel as an app with every scope`)
    expectOrbError(await ctx.client.get(`${BOT}/messages`, { channel: id, limit: 1 }), 403, `GET /messages of the ${kind} channel as an app with every scope`)
  }
}

/** One app of ORB-005's property: its scopes, its role's rights, and how its role stands to the text channel. */
interface GateApp {
  as: Speaker
  scopes: readonly ScopeName[]
  rights: readonly string[]
  placement: 'seen' | 'hidden' | 'outside'
}

/** Judges one reply to `op`: whether the gates opened it (true) or refused it. */
type GateJudge = (reply: OrbReply, op: string, scope: ScopeName, sight: boolean, needs: string | null) => boolean

/**
 * `scope` and `sight` are the spec's gates: either refusing is 403. With both open, the role's rights decide: a role
 * with every right opens the call; otherwise ORB-A08's `needs` (exact runs), or either answer (200, or the role's 403)
 * in a required run.
 */
function gateJudge (app: GateApp, exact: boolean): GateJudge {
  const { scopes, rights, placement } = app
  const everyRight = RIGHTS.every((r) => rights.includes(r))
  const what = (op: string): string =>
    `${op} as an app with scopes [${scopes.join(', ')}], role [${rights.join(', ')}], text channel ${placement}`
  return (reply, op, scope, sight, needs) => {
    if (!scopes.includes(scope) || !sight) {
      expectOrbError(reply, 403, what(op))
      return false
    }
    if (everyRight || (exact && (needs === null || rights.includes(needs)))) {
      expectOk(reply, what(op))
      return true
    }
    if (exact || reply.status !== 200) {
      expectOrbError(reply, 403, `${what(op)}${exact ? ` (ORB-A08: needs ${String(needs)})` : ''}`)
    }
    return reply.status === 200
  }
}

/** ORB-005: each route the app calls, judged by its two gates (and ORB-A08's rights in an exact run). */
async function probeGates (
  ctx: OrbContext,
  app: GateApp,
  exact: boolean,
  channels: { text: string, voice: string }
): Promise<void> {
  const { text, voice } = channels
  const judge = gateJudge(app, exact)
  const seen = app.placement === 'seen'
  // Posting: messages:write, a channel the role sees on the allow-list (ORB-A08: and send_messages).
  const posted = await postProbe(ctx, { channel: text, content: 'orbtest: a gate probe' }, app.as)
  if (judge(posted, 'POST /messages', 'messages:write', seen, 'send_messages')) {
    await ctx.client.request({
      method: 'DELETE',
      path: `${BOT}/messages/${posted.json.id as number}`,
      as: app.as
    })
  }
  // Reading: messages:read, and a channel the role sees (ORB-A08: no right beyond that).
  judge(
    await ctx.client.get(`${BOT}/messages`, { channel: text, limit: 1 }, app.as),
    'GET /messages',
    'messages:read',
    seen,
    null
  )
  // Music, voice, passport: the voice channel is always on the allow-list and seen. ORB-A08: music needs connect
  // there; the roster and the passport need no right.
  judge(await ctx.client.get(`${BOT}/music`, { channel: voice }, app.as), 'GET /music', 'music', true, 'connect')
  judge(
    await ctx.client.post(`${BOT}/voice`, { action: 'roster', channel: voice }, app.as),
    'POST /voice roster',
    'voice',
    true,
    null
  )
  judge(
    await ctx.client.get(`${BOT}/passport`, passportQuery(ctx), app.as),
    'GET /passport',
    'passport',
    true,
    null
  )
}
