// An exchange as the fake's tap reports it, for checks fed a journal written by hand: a session batch on connection
// 1, answered `status` (a 429 with Retry-After: 1).
import type { TapExchange } from '../../src/orbtile-mock/index.js'

export const exchange = (request: number, status: number, notes: string[] = []): TapExchange => ({
  request,
  connection: 1,
  method: 'PUT',
  target: '/a/v1/adapters/dev.example.a/sessions',
  httpVersion: '1.1',
  headers: {},
  body: undefined,
  contentLength: 0,
  status,
  replyHeaders: status === 429 ? { 'retry-after': '1' } : {},
  reply: status === 429 ? '{"error":{"code":"rate_limited","message":"x"}}' : '{"sessions":[]}',
  finished: true,
  notes
})
