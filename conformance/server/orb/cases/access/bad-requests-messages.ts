import fc from 'fast-check'
import { ORB_LIMITS } from '../../../../../src/spec/orb.js'
import { BOT } from '../../orb-case.js'
import {
  badRequestOf,
  notInteger,
  notObject,
  notString,
  unknownId,
  type BadRequest,
  type BadRequestTarget
} from './bad-request.js'

// The bad requests of GET /app and of the messages routes: one family per kind of mistake, each an arbitrary of the
// values that vary and the request they make. The order of the families is the order fast-check draws from, so a
// seed replays the same requests.

type Family = fc.Arbitrary<BadRequest>

const MESSAGES = `${BOT}/messages`
const postMessage = badRequestOf('POST', MESSAGES, 'messages:write')
const getMessages = badRequestOf('GET', MESSAGES)

/** ORB-023: POST /messages with a body that is no object, lacks a field, or holds one of the wrong type or length. */
function postFamilies (t: BadRequestTarget): Family[] {
  const { messageLength } = ORB_LIMITS
  return [
    notObject.map((body) =>
      postMessage({ label: 'POST /messages with a body that is no object', body, statuses: [400] })
    ),
    fc
      .constantFrom({ content: 'x' }, { channel: t.text }, {})
      .map((body) => postMessage({ label: 'POST /messages without channel or content', body, statuses: [400] })),
    notString.map((content) =>
      postMessage({
        label: 'POST /messages with a content that is no string',
        body: { channel: t.text, content },
        statuses: [400]
      })
    ),
    notString.map((channel) =>
      postMessage({
        label: 'POST /messages with a channel that is no string',
        body: { channel, content: 'x' },
        statuses: [400]
      })
    ),
    fc
      .integer({ min: messageLength + 1, max: messageLength + 100 })
      .map((n) =>
        postMessage({
          label: `POST /messages with ${n} characters`,
          body: { channel: t.text, content: 'x'.repeat(n) },
          statuses: [400]
        })
      ),
    fc
      .oneof(fc.constantFrom(1.5, -0.25), fc.string({ maxLength: 4 }), fc.boolean())
      .map((replyTo) =>
        postMessage({
          label: 'POST /messages with a reply_to that is no integer',
          body: { channel: t.text, content: 'x', reply_to: replyTo },
          statuses: [400]
        })
      ),
    unknownId('ch_zz').map((channel) =>
      postMessage({
        label: 'POST /messages to an unknown channel',
        body: { channel, content: 'orbtest: never posted' },
        statuses: [404]
      })
    )
  ]
}

/** ORB-033, ORB-034: GET /messages of no channel or an unknown one, or with a limit or cursor the spec refuses. */
function readFamilies (t: BadRequestTarget): Family[] {
  const { minimum, maximum } = ORB_LIMITS.messagePage
  return [
    fc.constant(getMessages({ label: 'GET /messages without channel', query: { limit: 5 }, statuses: [400] })),
    fc
      .oneof(fc.constantFrom(minimum - 1, maximum + 1, -1, 1000), notInteger)
      .map((limit) =>
        getMessages({
          label: `GET /messages with limit ${String(limit)}`,
          query: { channel: t.text, limit },
          statuses: [400]
        })
      ),
    notInteger
      .filter((s) => s !== '')
      .map((before) =>
        getMessages({
          label: `GET /messages with before ${before}`,
          query: { channel: t.text, before },
          statuses: [400]
        })
      ),
    unknownId('ch_zz').map((channel) =>
      getMessages({ label: 'GET /messages of an unknown channel', query: { channel }, statuses: [404] })
    )
  ]
}

/** DELETE /messages/<id> of an id that is no integer, or of one never posted. */
function deleteFamilies (): Family[] {
  const deleteMessage = (id: string | number, label: string, statuses: number[]): BadRequest =>
    badRequestOf('DELETE', `${MESSAGES}/${id}`, 'messages:write')({ label, statuses })
  return [
    fc
      .oneof(fc.stringMatching(/^[a-z][a-z0-9]{0,8}$/), fc.constantFrom('1.5', '-x'))
      .map((id) => deleteMessage(id, `DELETE /messages/${id}`, [400])),
    fc
      .integer({ min: 1_000_000_000, max: 2_000_000_000 })
      .map((id) => deleteMessage(id, 'DELETE /messages/<unknown id>', [404]))
  ]
}

/** Bad requests of GET /app and of the messages routes. */
export function messageFamilies (t: BadRequestTarget): Family[] {
  return [
    unknownId('srv_zz').map((server) =>
      badRequestOf('GET', `${BOT}/app`)({
        label: 'GET /app of an unknown community',
        query: { server },
        statuses: [404],
        decided: true
      })
    ),
    ...postFamilies(t),
    ...readFamilies(t),
    ...deleteFamilies()
  ]
}
