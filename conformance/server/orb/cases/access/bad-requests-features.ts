import fc from 'fast-check'
import { ORB_LIMITS } from '../../../../../src/spec/orb.js'
import { BOT } from '../../orb-case.js'
import { COMMANDS, MAX_VOLUME, MUSIC, PASSPORT, VOICE } from '../features/features-support.js'
import {
  badRequestOf,
  notInteger,
  notObject,
  unknownId,
  type BadRequest,
  type BadRequestTarget
} from './bad-request.js'

// The bad requests of events, commands, interactions, voice, music and the passport: one family per kind of mistake,
// each an arbitrary of the values that vary and the request they make. The order of the families is the order
// fast-check draws from, so a seed replays the same requests.

type Family = fc.Arbitrary<BadRequest>

/** ORB-058: a command name's longest length, as CommandInput.name's pattern (`^[a-z0-9_-]{1,32}$`) states it. */
const COMMAND_NAME_MAX = 32

const notEmptyInteger = notInteger.filter((s) => s !== '')

const getEvents = badRequestOf('GET', `${BOT}/events`)
const putCommands = badRequestOf('PUT', COMMANDS)
const deleteCommands = badRequestOf('DELETE', COMMANDS)
const postVoice = badRequestOf('POST', VOICE, 'voice')
const postMusic = badRequestOf('POST', MUSIC, 'music')
const getMusic = badRequestOf('GET', MUSIC, 'music')
const getPassport = badRequestOf('GET', PASSPORT, 'passport')

/**
 * ORB-044, ORB-045, ORB-050: GET /events with one parameter the spec refuses. Never a valid `wait` above 0: a held
 * poll is not what this property is about.
 */
function eventFamilies (): Family[] {
  const { pollWaitSeconds, eventPage } = ORB_LIMITS
  const queries = fc.oneof(
    notEmptyInteger.map((after) => ({ after })),
    fc
      .oneof(fc.integer({ min: pollWaitSeconds.maximum + 1, max: 1000 }), fc.constant(-1), notEmptyInteger)
      .map((wait) => ({ wait })),
    fc
      .oneof(
        fc.constantFrom(eventPage.minimum - 1, -3),
        fc.integer({ min: eventPage.maximum + 1, max: 500 }),
        notEmptyInteger
      )
      .map((limit) => ({ limit }))
  )
  return [
    queries.map((query) =>
      getEvents({
        label: `GET /events?${Object.keys(query)[0]!}=${String(Object.values(query)[0])}`,
        query,
        statuses: [400]
      })
    )
  ]
}

/** ORB-057, ORB-058: command lists the spec refuses, whole or by one command. */
const REFUSED_COMMAND_LISTS: unknown[] = [
  [{ name: 'ok', description: 'd'.repeat(ORB_LIMITS.commandDescriptionLength + 1) }],
  [{ name: 'ok', right: 'admin' }],
  [{ name: 'ok', options: Array.from({ length: ORB_LIMITS.optionsPerCommand + 1 }, (_, i) => ({ name: `o${i}` })) }],
  [{ name: 'ok', options: [{ description: 'no name' }] }],
  Array.from({ length: ORB_LIMITS.commandsPerSync + 1 }, (_, i) => ({ name: `c${i}` }))
]

/** ORB-058, ORB-A15: command names the spec refuses (out of the pattern, or taken by Orb itself). */
const REFUSED_COMMAND_NAMES = ['Hello', 'a b', 'a'.repeat(COMMAND_NAME_MAX + 1), '', 'play', 'ban']

/** PUT /commands with a body the spec refuses, and DELETE /commands of no name or an unknown one. */
function commandFamilies (): Family[] {
  const bodies = fc.oneof(
    notObject,
    fc.constantFrom<unknown>({}, { commands: 'x' }, { commands: {} }),
    fc.constantFrom(...REFUSED_COMMAND_NAMES).map((name) => ({ commands: [{ name, description: 'x' }] })),
    fc.constantFrom<unknown>(...REFUSED_COMMAND_LISTS).map((commands) => ({ commands }))
  )
  return [
    bodies.map((body) =>
      putCommands({ label: 'PUT /commands with a body the spec refuses', body, statuses: [400, 429] })
    ),
    fc.constant(deleteCommands({ label: 'DELETE /commands without name', statuses: [400] })),
    unknownId('zz-').map((name) =>
      deleteCommands({ label: 'DELETE /commands of a name never registered', query: { name }, statuses: [404] })
    )
  ]
}

/** ORB-066: an answer to an unknown interaction; a well-formed one is refused only for the unknown event. */
function interactionFamilies (): Family[] {
  const answers = fc.constantFrom<unknown>(
    { content: 'x' },
    {},
    { content: 'y'.repeat(ORB_LIMITS.answerLength + 1) },
    { content: 3 },
    []
  )
  return [
    fc.tuple(unknownId('evt_zz'), answers).map(([event, body]) =>
      badRequestOf('POST', `${BOT}/interactions/${event}/respond`)({
        label: 'POST /interactions/<unknown>/respond',
        body,
        statuses: (body as any)?.content === 'x' ? [404] : [400, 404]
      })
    )
  ]
}

/** ORB-A16: voice bodies the spec refuses: no action, an unknown one, or one without the channel or call it needs. */
const REFUSED_VOICE_BODIES: unknown[] = [
  {},
  { action: 'dance' },
  { action: 'roster' },
  { action: 'join' },
  { action: 'heartbeat' },
  { action: 'leave' },
  { action: 'grant' },
  { action: 'heartbeat', call: 'call_zz', speaking: 'yes' }
]

/** POST /voice with a body the spec refuses, of an unknown channel or call, or joining a text channel. */
function voiceFamilies (t: BadRequestTarget): Family[] {
  return [
    fc
      .oneof(notObject, fc.constantFrom<unknown>(...REFUSED_VOICE_BODIES))
      .map((body) => postVoice({ label: 'POST /voice with a body the spec refuses', body, statuses: [400] })),
    fc
      .tuple(fc.constantFrom('roster', 'join'), unknownId('ch_zz'))
      .map(([action, channel]) =>
        postVoice({ label: `POST /voice ${action} of an unknown channel`, body: { action, channel }, statuses: [404] })
      ),
    fc
      .tuple(fc.constantFrom('heartbeat', 'leave', 'grant'), unknownId('call_zz'))
      .map(([action, call]) =>
        postVoice({ label: `POST /voice ${action} of an unknown call`, body: { action, call }, statuses: [404] })
      ),
    fc.constant(
      postVoice({
        label: 'POST /voice join of a text channel',
        body: { action: 'join', channel: t.text },
        statuses: [400],
        decided: true
      })
    )
  ]
}

/** ORB-A17: an action with an `arg` the player refuses (out of range, of the wrong type, or missing). */
const REFUSED_MUSIC_ARGS: Array<[string, unknown]> = [
  ['volume', MAX_VOLUME + 1],
  ['volume', -1],
  ['volume', 'loud'],
  ['seek', -5],
  ['seek', 'x'],
  ['loop', 'sometimes'],
  ['jump', -1],
  ['jump', 'x'],
  ['remove', -2],
  ['add', undefined]
]

/** POST /music with a body the spec refuses, of an unknown or a text channel, or with a bad `arg`. */
function musicActionFamilies (t: BadRequestTarget): Family[] {
  const voiceBodies = t.voice === undefined
    ? []
    : [{ channel: t.voice }, { channel: t.voice, action: 'dance' }, { channel: t.voice, action: 7 }]
  const badArgs = fc.constantFrom<[string, unknown]>(...REFUSED_MUSIC_ARGS).map(([action, arg]) =>
    postMusic({
      label: `POST /music ${action} ${JSON.stringify(arg)}`,
      body: { channel: t.voice, action, ...(arg === undefined ? {} : { arg }) },
      statuses: [400],
      decided: true
    })
  )
  return [
    fc
      .oneof(notObject, fc.constantFrom<unknown>({}, { action: 'state' }, ...voiceBodies))
      .map((body) => postMusic({ label: 'POST /music with a body the spec refuses', body, statuses: [400] })),
    unknownId('ch_zz').map((channel) =>
      postMusic({
        label: 'POST /music state of an unknown channel',
        body: { channel, action: 'state' },
        statuses: [404]
      })
    ),
    fc.constant(
      postMusic({
        label: 'POST /music of a text channel',
        body: { channel: t.text, action: 'state' },
        statuses: [400],
        decided: true
      })
    ),
    ...(t.voice === undefined ? [] : [badArgs])
  ]
}

/** GET /music of no channel, an unknown one or a text channel. */
function musicReadFamilies (t: BadRequestTarget): Family[] {
  return [
    fc.constant(getMusic({ label: 'GET /music without channel', statuses: [400] })),
    unknownId('ch_zz').map((channel) =>
      getMusic({ label: 'GET /music of an unknown channel', query: { channel }, statuses: [404] })
    ),
    fc.constant(
      getMusic({ label: 'GET /music of a text channel', query: { channel: t.text }, statuses: [400], decided: true })
    )
  ]
}

/** ORB-085: GET /passport missing a parameter, with a malformed address or a minimum out of range; of no community. */
function passportFamilies (t: BadRequestTarget): Family[] {
  const { minimum, maximum } = ORB_LIMITS.passportMinimum
  const whole = { server: t.community, address: t.address, kind: t.kind }
  const queries = fc.constantFrom<Record<string, string | number>>(
    { address: t.address, kind: t.kind },
    { server: t.community, kind: t.kind },
    { server: t.community, address: t.address },
    { server: t.community, address: '0x123', kind: t.kind },
    { server: t.community, address: 'abc', kind: t.kind },
    { ...whole, minimum: minimum - 1 },
    { ...whole, minimum: maximum + 1 },
    { ...whole, minimum: 'x' }
  )
  return [
    queries.map((query) =>
      getPassport({ label: 'GET /passport with parameters the spec refuses', query, statuses: [400] })
    ),
    unknownId('srv_zz').map((server) =>
      getPassport({
        label: 'GET /passport of an unknown community',
        query: { server, address: t.address, kind: t.kind },
        statuses: [404]
      })
    )
  ]
}

/** Bad requests of events, commands, interactions, voice, music and the passport. */
export function featureFamilies (t: BadRequestTarget): Family[] {
  return [
    ...eventFamilies(),
    ...commandFamilies(),
    ...interactionFamilies(),
    ...voiceFamilies(t),
    ...musicActionFamilies(t),
    ...musicReadFamilies(t),
    ...passportFamilies(t)
  ]
}
