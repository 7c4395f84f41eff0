import { isDeepStrictEqual } from 'node:util'
import fc from 'fast-check'
import { orbSpec } from '../../../../../src/spec/orb.js'
import { CaseFailure } from '../../../core/case.js'
import { arbitraryFor } from '../../../core/schema-arbitrary.js'
import { expectComponent, expectEqual, expectOk, expectThat } from '../../expect.js'
import { fail, type OrbContext } from '../../orb-case.js'
import type { OrbReply, Speaker } from '../../transport.js'
import { COMMANDS, MUSIC_ACTIONS, strict, wrongType } from './features-support.js'
import type { Strictness } from '../../../core/strictness.js'

/*
 * Commands (ORB-055..064, ORB-A15): valid and invalid CommandInputs, and the requests the command cases make.
 */

export interface CommandInput {
  name: string
  description?: string
  right?: string
  options?: Array<{ name: string, description?: string, optional?: boolean }>
}

const NAME = /^[a-z0-9_-]{1,32}$/
const RIGHTS = ['send_messages', 'attach_files', 'manage_messages', 'connect', 'speak', 'stream', 'move_members']
/**
 * ORB-A15's reserved names, the room player's and the administration names; generated names avoid them (tests name
 * only play and ban).
 */
const RESERVED = new Set([
  ...MUSIC_ACTIONS,
  'queue',
  'skip',
  'stop',
  'np',
  'ban',
  'kick',
  'mute',
  'unmute',
  'timeout',
  'warn',
  'purge',
  'role',
  'slowmode',
  'lock',
  'unlock'
])
export const NAME_POOL = ['hello', 'roll', 'dice_2', 'weather', 'x', 'greet-me', 'a_b', 'zz9']

const commandName = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...NAME_POOL) },
  { weight: 1, arbitrary: fc.stringMatching(NAME).filter((n) => !RESERVED.has(n)) }
)

/** A value as the server receives it: what JSON keeps (no undefined keys, plain prototypes). */
const wire = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T

/** ORB-A15: option names unique, required ones first (a stable sort keeps the rest of the order). */
function tidyOptions (command: CommandInput): CommandInput {
  if (command.options === undefined) return wire(command)
  const seen = new Set<string>()
  const unique = command.options.filter((o) => !seen.has(o.name) && seen.add(o.name) !== undefined)
  return wire({
    ...command,
    options: [...unique.filter((o) => o.optional !== true), ...unique.filter((o) => o.optional === true)]
  })
}

/** A valid CommandInput from the spec's own schema, with names it cannot say (ORB-A15) drawn from valid ones. */
const validCommand = (arbitraryFor((orbSpec().components as any).schemas.CommandInput, {}, {
  name: commandName,
  description: fc.oneof(fc.string({ unit: 'binary', maxLength: 20 }), fc.string({ minLength: 100, maxLength: 140 })),
  'options[].name': fc.stringMatching(/^[a-z0-9_-]{1,12}$/)
}) as fc.Arbitrary<CommandInput>).map(tidyOptions)

export const commandList = fc.uniqueArray(validCommand, { maxLength: 5, selector: (c) => c.name })

/** PUT /commands as `as`; on a virtual clock 6 s pass first, so that 10 syncs a minute (ORB-A03) never bite. */
export async function sync (ctx: OrbContext, commands: unknown, as: Speaker = 'full'): Promise<OrbReply> {
  if (await ctx.virtualTime()) await ctx.elapse(6000)
  return ctx.client.request({ method: 'PUT', path: COMMANDS, body: { commands }, as })
}

export async function syncOk (
  ctx: OrbContext,
  commands: CommandInput[],
  what: string,
  as: Speaker = 'full'
): Promise<OrbReply> {
  const reply = await sync(ctx, commands, as)
  if (reply.status !== 200) fail(`${what}: PUT /commands`, 200, reply)
  return reply
}

/** GET /commands (ORB-055): the list, every item a valid Command. */
export async function listCommands (ctx: OrbContext, as: Speaker = 'full'): Promise<any[]> {
  const body = expectOk(await ctx.client.get(COMMANDS, undefined, as), 'GET /commands', {
    method: 'GET',
    path: COMMANDS
  })
  if (!Array.isArray(body.commands)) {
    throw new CaseFailure('GET /commands: no commands array (ORB-055)', '{"commands":[…]}', body)
  }
  for (const c of body.commands) expectComponent(c, 'Command', 'a listed command')
  return body.commands
}

export const globals = (listed: any[]): any[] => listed.filter((c) => typeof c.community !== 'string')
export const namesOf = (listed: any[]): string[] => listed.map((c) => String(c.name)).sort()

/** One listed command against the input it was registered from (ORB-055; ORB-A15 where strict). */
export function checkListed (of: Strictness, listed: any, input: CommandInput, what: string): void {
  expectThat(
    typeof listed.id === 'string' && listed.id !== '',
    `${what}: /${input.name} has a string id (ORB-055)`,
    'an id',
    listed
  )
  if (input.description !== undefined) {
    expectEqual(listed.description, input.description, `${what}: /${input.name}'s description`)
  }
  if (input.right !== undefined || strict(of)) {
    expectEqual(
      listed.right,
      input.right ?? 'send_messages',
      `${what}: /${input.name}'s right${input.right === undefined ? ' (ORB-A15: send_messages by default)' : ''}`
    )
  }
  if (strict(of)) {
    expectThat(
      isDeepStrictEqual(listed.args, input.options ?? []),
      `${what}: /${input.name}'s args echo its options (ORB-A15)`,
      input.options ?? [],
      listed.args
    )
    expectEqual(listed.community, null, `${what}: /${input.name} is global, community null (ORB-A15)`)
  }
}

/** Invalid names (ORB-058): off the pattern, too long, upper case, empty. */
const badName = fc.oneof(
  fc.string({ maxLength: 40 }).filter((s) => !NAME.test(s)),
  fc.stringMatching(/^[a-z0-9_-]{33,40}$/),
  fc.stringMatching(/^[a-z]{0,4}[A-Z ][a-z]{0,4}$/)
)

/** One CommandInput the spec's schema refuses (ORB-058). */
const invalidCommand: fc.Arbitrary<unknown> = fc.oneof(
  fc.tuple(validCommand, badName).map(([c, name]) => ({ ...c, name })),
  fc
    .string({ unit: 'grapheme-ascii', minLength: 141, maxLength: 220 })
    .map((description) => ({ name: 'ok58', description })),
  fc
    .string({ maxLength: 20 })
    .filter((r) => !RIGHTS.includes(r))
    .map((right) => ({ name: 'ok58', right })),
  fc
    .integer({ min: 7, max: 9 })
    .map((n) => ({ name: 'ok58', options: Array.from({ length: n }, (_, i) => ({ name: `o${i}` })) })),
  fc
    .record({ description: fc.string({ maxLength: 10 }), optional: fc.boolean() }, { requiredKeys: [] })
    .map((option) => ({ name: 'ok58', options: [{ name: 'fine' }, option] })),
  fc.record({ description: fc.string({ maxLength: 10 }), right: fc.constantFrom(...RIGHTS) }, { requiredKeys: [] }),
  wrongType.map((name) => ({ name })),
  wrongType.filter((v) => typeof v !== 'string').map((description) => ({ name: 'ok58', description })),
  wrongType.map((right) => ({ name: 'ok58', right })),
  fc.oneof(fc.integer(), fc.string(), fc.constant(null), fc.boolean()).map((options) => ({ name: 'ok58', options })),
  wrongType.map((name) => ({ name: 'ok58', options: [{ name }] })),
  fc
    .oneof(fc.integer(), fc.string({ maxLength: 4 }), fc.constant(null))
    .map((optional) => ({ name: 'ok58', options: [{ name: 'o', optional }] })),
  fc.oneof(fc.integer(), fc.string({ maxLength: 8 }), fc.constant(null), fc.boolean())
)

/** A PUT body the schema refuses: one invalid command among valid ones, or a body without a commands array. */
export const invalidSync: fc.Arbitrary<unknown> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.tuple(commandList, invalidCommand, fc.nat()).map(([list, bad, at]) => {
      const commands: unknown[] = [...list]
      commands.splice(at % (list.length + 1), 0, bad)
      return { commands }
    })
  },
  {
    weight: 1,
    arbitrary: fc.oneof(
      fc.constant({}),
      wrongType.map((commands) => ({ commands })),
      fc.constant([])
    )
  }
)
