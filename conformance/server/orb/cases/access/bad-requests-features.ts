import fc from 'fast-check'
import { BOT } from '../../orb-case.js'
import { notInteger, notObject, unknownId, type BadRequest, type BadRequestTarget } from './bad-request.js'

/** Bad requests of events, commands, interactions, voice, music and the passport. */
export function featureFamilies (t: BadRequestTarget): Array<fc.Arbitrary<BadRequest>> {
  return [
    // Never a valid `wait` above 0: a held poll is not what this property is about.
    fc
      .oneof(
        notInteger.filter((s) => s !== '').map((after) => ({ after })),
        fc
          .oneof(
            fc.integer({ min: 26, max: 1000 }),
            fc.constant(-1),
            notInteger.filter((s) => s !== '')
          )
          .map((wait) => ({ wait })),
        fc
          .oneof(
            fc.constantFrom(0, -3),
            fc.integer({ min: 101, max: 500 }),
            notInteger.filter((s) => s !== '')
          )
          .map((limit) => ({ limit }))
      )
      .map((query) => ({
        label: `GET /events?${Object.keys(query)[0]!}=${String(Object.values(query)[0])}`,
        method: 'GET',
        path: `${BOT}/events`,
        query,
        statuses: [400]
      })),
    fc
      .oneof(
        notObject,
        fc.constantFrom<unknown>({}, { commands: 'x' }, { commands: {} }),
        fc
          .constantFrom('Hello', 'a b', 'a'.repeat(33), '', 'play', 'ban')
          .map((name) => ({ commands: [{ name, description: 'x' }] })),
        fc
          .constantFrom<unknown>(
            [{ name: 'ok', description: 'd'.repeat(141) }],
            [{ name: 'ok', right: 'admin' }],
            [{ name: 'ok', options: Array.from({ length: 7 }, (_, i) => ({ name: `o${i}` })) }],
            [{ name: 'ok', options: [{ description: 'no name' }] }],
            Array.from({ length: 51 }, (_, i) => ({ name: `c${i}` }))
          )
          .map((commands) => ({ commands }))
      )
      .map((body) => ({
        label: 'PUT /commands with a body the spec refuses',
        method: 'PUT',
        path: `${BOT}/commands`,
        body,
        statuses: [400, 429]
      })),
    fc.constant({ label: 'DELETE /commands without name', method: 'DELETE', path: `${BOT}/commands`, statuses: [400] }),
    unknownId('zz-').map((name) => ({
      label: 'DELETE /commands of a name never registered',
      method: 'DELETE',
      path: `${BOT}/commands`,
      query: { name },
      statuses: [404]
    })),
    fc
      .tuple(
        unknownId('evt_zz'),
        fc.constantFrom<unknown>({ content: 'x' }, {}, { content: 'y'.repeat(1801) }, { content: 3 }, [])
      )
      .map(([event, body]) => ({
        label: 'POST /interactions/<unknown>/respond',
        method: 'POST',
        path: `${BOT}/interactions/${event}/respond`,
        body,
        statuses: (body as any)?.content === 'x' ? [404] : [400, 404]
      })),
    fc
      .oneof(
        notObject,
        fc.constantFrom<unknown>(
          {},
          { action: 'dance' },
          { action: 'roster' },
          { action: 'join' },
          { action: 'heartbeat' },
          { action: 'leave' },
          { action: 'grant' },
          { action: 'heartbeat', call: 'call_zz', speaking: 'yes' }
        )
      )
      .map((body) => ({
        label: 'POST /voice with a body the spec refuses',
        method: 'POST',
        path: `${BOT}/voice`,
        body,
        statuses: [400],
        scope: 'voice' as const
      })),
    fc
      .tuple(fc.constantFrom('roster', 'join'), unknownId('ch_zz'))
      .map(([action, channel]) => ({
        label: `POST /voice ${action} of an unknown channel`,
        method: 'POST',
        path: `${BOT}/voice`,
        body: { action, channel },
        statuses: [404],
        scope: 'voice' as const
      })),
    fc
      .tuple(fc.constantFrom('heartbeat', 'leave', 'grant'), unknownId('call_zz'))
      .map(([action, call]) => ({
        label: `POST /voice ${action} of an unknown call`,
        method: 'POST',
        path: `${BOT}/voice`,
        body: { action, call },
        statuses: [404],
        scope: 'voice' as const
      })),
    fc.constant({
      label: 'POST /voice join of a text channel',
      method: 'POST',
      path: `${BOT}/voice`,
      body: { action: 'join', channel: t.text },
      statuses: [400],
      decided: true,
      scope: 'voice' as const
    }),
    fc
      .oneof(
        notObject,
        fc.constantFrom<unknown>(
          {},
          { action: 'state' },
          ...(t.voice === undefined
            ? []
            : [{ channel: t.voice }, { channel: t.voice, action: 'dance' }, { channel: t.voice, action: 7 }])
        )
      )
      .map((body) => ({
        label: 'POST /music with a body the spec refuses',
        method: 'POST',
        path: `${BOT}/music`,
        body,
        statuses: [400],
        scope: 'music' as const
      })),
    unknownId('ch_zz').map((channel) => ({
      label: 'POST /music state of an unknown channel',
      method: 'POST',
      path: `${BOT}/music`,
      body: { channel, action: 'state' },
      statuses: [404],
      scope: 'music' as const
    })),
    fc.constant({
      label: 'POST /music of a text channel',
      method: 'POST',
      path: `${BOT}/music`,
      body: { channel: t.text, action: 'state' },
      statuses: [400],
      decided: true,
      scope: 'music' as const
    }),
    ...(t.voice === undefined
      ? []
      : [
          fc
            .constantFrom<[string, unknown]>(
              ['volume', 101],
              ['volume', -1],
              ['volume', 'loud'],
              ['seek', -5],
              ['seek', 'x'],
              ['loop', 'sometimes'],
              ['jump', -1],
              ['jump', 'x'],
              ['remove', -2],
              ['add', undefined]
            )
            .map(([action, arg]) => ({
              label: `POST /music ${action} ${JSON.stringify(arg)}`,
              method: 'POST',
              path: `${BOT}/music`,
              body: { channel: t.voice, action, ...(arg === undefined ? {} : { arg }) },
              statuses: [400],
              decided: true,
              scope: 'music' as const
            }))
        ]),
    fc.constant({
      label: 'GET /music without channel',
      method: 'GET',
      path: `${BOT}/music`,
      statuses: [400],
      scope: 'music' as const
    }),
    unknownId('ch_zz').map((channel) => ({
      label: 'GET /music of an unknown channel',
      method: 'GET',
      path: `${BOT}/music`,
      query: { channel },
      statuses: [404],
      scope: 'music' as const
    })),
    fc.constant({
      label: 'GET /music of a text channel',
      method: 'GET',
      path: `${BOT}/music`,
      query: { channel: t.text },
      statuses: [400],
      decided: true,
      scope: 'music' as const
    }),
    fc
      .constantFrom<Record<string, string | number>>(
        { address: t.address, kind: t.kind },
        { server: t.community, kind: t.kind },
        { server: t.community, address: t.address },
        { server: t.community, address: '0x123', kind: t.kind },
        { server: t.community, address: 'abc', kind: t.kind },
        { server: t.community, address: t.address, kind: t.kind, minimum: 0 },
        { server: t.community, address: t.address, kind: t.kind, minimum: 1000 },
        { server: t.community, address: t.address, kind: t.kind, minimum: 'x' }
      )
      .map((query) => ({
        label: 'GET /passport with parameters the spec refuses',
        method: 'GET',
        path: `${BOT}/passport`,
        query,
        statuses: [400],
        scope: 'passport' as const
      })),
    unknownId('srv_zz').map((server) => ({
      label: 'GET /passport of an unknown community',
      method: 'GET',
      path: `${BOT}/passport`,
      query: { server, address: t.address, kind: t.kind },
      statuses: [404],
      scope: 'passport' as const
    }))
  ]
}
