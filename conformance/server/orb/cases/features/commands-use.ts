import { isDeepStrictEqual } from 'node:util'
import { CaseSkip, defineCase } from '../../../core/case.js'
import { expectEqual, expectOrbError, expectThat } from '../../expect.js'
import { controlled, drain, few, fail, invokeFull, keepCommands } from '../../orb-case.js'
import type { OrbBotClient, OrbReply } from '../../transport.js'
import { compareListing } from './commands-model.js'
import { checkListed, globals, listCommands, namesOf, sync, syncOk, type CommandInput } from './commands-support.js'
import { COMMANDS, type Case } from './features-support.js'

// Like commands.ts, every case that syncs first calls keepCommands: it ends with the app's commands as they were.

/** Whose commands they are (ORB-062), who may run them (ORB-063), deleting one (ORB-064), and ORB-A15's details. */
export const commandUseCases: Case[] = [
  defineCase<OrbBotClient>({
    id: 'ORB-062',
    title: 'commands belong to the app that registered them: another app\'s GET does not list them, its PUT does not touch them',
    level: 'required',
    writes: true,
    async run (ctx) {
      const other = few(ctx)
      await keepCommands(ctx)
      await keepCommands(ctx, other)
      await syncOk(ctx, [{ name: 'mine62' }], 'the full app registers /mine62')
      const mine = (await listCommands(ctx)).find((c) => c.name === 'mine62')
      const theirs = await listCommands(ctx, other)
      expectThat(
        !theirs.some((c) => c.name === 'mine62' || c.id === mine?.id),
        "the few app's GET /commands shows only its own commands",
        'no /mine62',
        namesOf(theirs)
      )
      await syncOk(ctx, [], 'the few app syncs []', other)
      expectThat(
        (await listCommands(ctx)).some((c) => c.name === 'mine62'),
        "the few app's PUT [] left the full app's commands alone",
        '/mine62 still registered',
        'gone'
      )
    }
  }),
  defineCase<OrbBotClient>({
    id: 'ORB-063',
    title: 'a member lacking a command\'s right cannot run it: no event; a member holding it can',
    level: 'required',
    writes: true,
    async run (ctx) {
      const { control, world, target } = controlled(ctx)
      const lacking = world.lacking ?? (() => { throw new CaseSkip('the community has no member lacking a right') })()
      await keepCommands(ctx)
      await syncOk(ctx, [{ name: 'need63', right: lacking.lacks }], `registering /need63 needing ${lacking.lacks}`)
      const start = (await drain(ctx)).next
      const refused = await control.invoke({
        server: target.community,
        channel: target.channels.text,
        member: lacking.member,
        name: 'need63',
        app: target.full.id!
      })
      expectThat(
        refused.status !== 200,
        `${lacking.member}, without ${lacking.lacks}, types /need63`,
        'refused: no event',
        `${refused.status} ${JSON.stringify(refused.json)}`
      )
      const allowed = await invokeFull(ctx, 'need63')
      const typed = (await drain(ctx, start)).events.filter(
        (e) => e.type === 'application_command' && e.data?.command?.name === 'need63'
      )
      expectEqual(
        typed.map((e) => [e.id, e.data?.member?.id]),
        [[allowed, world.member]],
        'the only /need63 event is the one of the member holding the right'
      )
    }
  }),
  defineCase<OrbBotClient>({
    id: 'ORB-064',
    title: 'DELETE /commands?name= removes a registered command (200, gone from GET); an unregistered name is 404',
    level: 'required',
    writes: true,
    async run (ctx) {
      await keepCommands(ctx)
      await syncOk(ctx, [{ name: 'gone64' }, { name: 'stay64' }], 'registering two')
      const del = (name: string): Promise<OrbReply> =>
        ctx.client.request({ method: 'DELETE', path: COMMANDS, query: { name } })
      const removed = await del('gone64')
      if (removed.status !== 200) fail('DELETE of a registered name', 200, removed)
      expectEqual(namesOf(globals(await listCommands(ctx))), ['stay64'], 'GET after the DELETE')
      expectOrbError(await del('gone64'), 404, 'DELETE of the same name again')
      expectOrbError(await del('never64'), 404, 'DELETE of a name never registered')
    }
  }),
  defineCase<OrbBotClient>({
    id: 'ORB-A15',
    title: 'command details: right defaults to send_messages, args echo options, community null, stable ids, duplicates and option order 400, DELETE shape',
    level: 'decision',
    writes: true,
    async run (ctx) {
      await keepCommands(ctx)
      const first = await syncOk(ctx, [{ name: 'a15' }], 'registering /a15')
      const before = (await listCommands(ctx)).find((c) => c.name === 'a15')
      if (before === undefined) fail('GET /commands lists /a15', '/a15', first)
      checkListed(ctx.client, before, { name: 'a15' }, 'a command given no right, options or community')
      const list: CommandInput[] = [
        { name: 'a15', options: [{ name: 'who' }, { name: 'why', optional: true, description: 'a reason' }] },
        { name: 'b15', right: 'speak', description: 'two' }
      ]
      const second = await syncOk(ctx, list, 'a second sync')
      const listed = await listCommands(ctx)
      expectThat(
        isDeepStrictEqual(first.json?.commands, [before]) && isDeepStrictEqual(second.json?.commands, listed),
        'PUT answers {"commands": Command[]} as GET does',
        listed,
        second.json
      )
      compareListing(
        ctx.client,
        listed,
        { registered: new Map(list.map((c) => [c.name, c])), ids: new Map([['a15', before.id]]) },
        'after the second sync'
      )
      const refused: Array<[string, unknown[]]> = [
        ['a name given twice', [{ name: 'dup15' }, { name: 'dup15' }]],
        [
          'a required option after an optional one',
          [{ name: 'ord15', options: [{ name: 'a', optional: true }, { name: 'b' }] }]
        ],
        ['an option name off the pattern', [{ name: 'opt15', options: [{ name: 'Bad Name' }] }]],
        ['an option name given twice', [{ name: 'opt15', options: [{ name: 'o' }, { name: 'o', optional: true }] }]]
      ]
      for (const [what, commands] of refused) {
        expectOrbError(await sync(ctx, commands), 400, `PUT /commands with ${what}`)
        expectEqual(namesOf(globals(await listCommands(ctx))), ['a15', 'b15'], `${what}: nothing changed`)
      }
      expectOrbError(
        await ctx.client.request({ method: 'DELETE', path: COMMANDS }),
        400,
        'DELETE /commands without name'
      )
      const removed = await ctx.client.request({ method: 'DELETE', path: COMMANDS, query: { name: 'b15' } })
      expectThat(
        removed.status === 200 && isDeepStrictEqual(removed.json, { ok: true, name: 'b15' }),
        'DELETE answers {"ok": true, "name": …}',
        '200 {"ok":true,"name":"b15"}',
        `${removed.status} ${removed.text}`
      )
    }
  })
]
