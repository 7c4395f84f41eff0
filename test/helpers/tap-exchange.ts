// An exchange as a tap reports it (a fake's or a proxy's), for checks fed exchanges written by hand.
import type { TapExchange } from '../../src/orbtile-mock/index.js'

/** `GET /a/v1/info` on connection 1, answered 200 with `{}`, unless `over` says otherwise. */
export const exchangeOf = (over: Partial<TapExchange> = {}): TapExchange => ({
  request: 1,
  connection: 1,
  method: 'GET',
  target: '/a/v1/info',
  httpVersion: '1.1',
  headers: {},
  body: undefined,
  contentLength: 0,
  status: 200,
  replyHeaders: {},
  reply: '{}',
  finished: true,
  notes: [],
  ...over
})

/** A session batch answered `status` (a 429 with Retry-After: 1). */
export const exchange = (request: number, status: number, notes: string[] = []): TapExchange => exchangeOf({
  request,
  method: 'PUT',
  target: '/a/v1/adapters/dev.example.a/sessions',
  status,
  replyHeaders: status === 429 ? { 'retry-after': '1' } : {},
  reply: status === 429 ? '{"error":{"code":"rate_limited","message":"x"}}' : '{"sessions":[]}',
  notes
})
