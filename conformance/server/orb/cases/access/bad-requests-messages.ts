import fc from 'fast-check'
import { BOT } from '../../orb-case.js'
import { notInteger, notObject, notString, unknownId, type BadRequest, type BadRequestTarget } from './bad-request.js'

/** Bad requests of GET /app, messages and events. */
export function messageFamilies (t: BadRequestTarget): Array<fc.Arbitrary<BadRequest>> {
  const m = `${BOT}/messages`
  return [
    unknownId('srv_zz').map((server) => ({
      label: 'GET /app of an unknown community',
      method: 'GET',
      path: `${BOT}/app`,
      query: { server },
      statuses: [404],
      decided: true
    })),
    notObject.map((body) => ({
      label: 'POST /messages with a body that is no object',
      method: 'POST',
      path: m,
      body,
      statuses: [400],
      scope: 'messages:write' as const
    })),
    fc
      .constantFrom({ content: 'x' }, { channel: t.text }, {})
      .map((body) => ({
        label: 'POST /messages without channel or content',
        method: 'POST',
        path: m,
        body,
        statuses: [400],
        scope: 'messages:write' as const
      })),
    notString.map((content) => ({
      label: 'POST /messages with a content that is no string',
      method: 'POST',
      path: m,
      body: { channel: t.text, content },
      statuses: [400],
      scope: 'messages:write' as const
    })),
    notString.map((channel) => ({
      label: 'POST /messages with a channel that is no string',
      method: 'POST',
      path: m,
      body: { channel, content: 'x' },
      statuses: [400],
      scope: 'messages:write' as const
    })),
    fc
      .integer({ min: 2001, max: 2100 })
      .map((n) => ({
        label: `POST /messages with ${n} characters`,
        method: 'POST',
        path: m,
        body: { channel: t.text, content: 'x'.repeat(n) },
        statuses: [400],
        scope: 'messages:write' as const
      })),
    fc
      .oneof(fc.constantFrom(1.5, -0.25), fc.string({ maxLength: 4 }), fc.boolean())
      .map((replyTo) => ({
        label: 'POST /messages with a reply_to that is no integer',
        method: 'POST',
        path: m,
        body: { channel: t.text, content: 'x', reply_to: replyTo },
        statuses: [400],
        scope: 'messages:write' as const
      })),
    unknownId('ch_zz').map((channel) => ({
      label: 'POST /messages to an unknown channel',
      method: 'POST',
      path: m,
      body: { channel, content: 'orbtest: never posted' },
      statuses: [404],
      scope: 'messages:write' as const
    })),
    fc.constant({
      label: 'GET /messages without channel',
      method: 'GET',
      path: m,
      query: { limit: 5 },
      statuses: [400]
    }),
    fc
      .oneof(fc.constantFrom(0, 51, -1, 1000), notInteger)
      .map((limit) => ({
        label: `GET /messages with limit ${String(limit)}`,
        method: 'GET',
        path: m,
        query: { channel: t.text, limit },
        statuses: [400]
      })),
    notInteger
      .filter((s) => s !== '')
      .map((before) => ({
        label: `GET /messages with before ${before}`,
        method: 'GET',
        path: m,
        query: { channel: t.text, before },
        statuses: [400]
      })),
    unknownId('ch_zz').map((channel) => ({
      label: 'GET /messages of an unknown channel',
      method: 'GET',
      path: m,
      query: { channel },
      statuses: [404]
    })),
    fc
      .oneof(fc.stringMatching(/^[a-z][a-z0-9]{0,8}$/), fc.constantFrom('1.5', '-x'))
      .map((id) => ({
        label: `DELETE /messages/${id}`,
        method: 'DELETE',
        path: `${m}/${id}`,
        statuses: [400],
        scope: 'messages:write' as const
      })),
    fc
      .integer({ min: 1_000_000_000, max: 2_000_000_000 })
      .map((id) => ({
        label: 'DELETE /messages/<unknown id>',
        method: 'DELETE',
        path: `${m}/${id}`,
        statuses: [404],
        scope: 'messages:write' as const
      })),
  ]
}
