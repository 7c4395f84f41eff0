// The raw lane's bytes: request lines and heads no client library would send, bodies framed wrongly, and the heads of
// ordinary requests taken apart so that a scenario can send them slowly, in pieces, or without their body.
import { serialize, type HttpRequest } from './request.js'

/** A request line or head that breaks HTTP/1.1, for a server to refuse with its JSON 400. `{m}` is the method. */
export const MALFORMED_HEADS: readonly string[] = [
  '{m} /x HTTP/1.1 extra\r\nHost: {h}\r\n\r\n',
  '{m}  /x HTTP/1.1\r\nHost: {h}\r\n\r\n',
  '{m} /x HTTP/9.9\r\nHost: {h}\r\n\r\n',
  '{m} /x HTTP/1.1\r\nBad Header\r\n\r\n',
  '{m} /x HTTP/1.1\r\nHost: {h}\r\n folded: value\r\n\r\n',
  '{m} /x HTTP/1.1\r\nHo st: {h}\r\n\r\n',
  '{m} /x HTTP/1.1\r\nHost : {h}\r\n\r\n',
  '{m} /x HTTP/1.1\r\nX-\u0001: y\r\nHost: {h}\r\n\r\n',
  '{m} /x HTTP/1.1\r\nHost: {h}\r\nContent-Length: abc\r\n\r\n',
  '{m} /x HTTP/1.1\r\nHost: {h}\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n',
  '{m} /x HTTP/1.1\r\nHost: {h}\r\nContent-Length: -1\r\n\r\n',
  '{m} /x\u0000y HTTP/1.1\r\nHost: {h}\r\n\r\n',
  '{m} /x HTTP/1.1\rHost: {h}\r\n\r\n',
  'FOO /x HTTP/1.1\r\nHost: {h}\r\n\r\n',
  'get /x HTTP/1.1\r\nHost: {h}\r\n\r\n',
  '\u0000\u0001\u0002\r\n\r\n',
  '\u0016\u0003\u0001\u0000\u00a5\u0001\u0000\u0000\u00a1\u0003\u0003\r\n\r\n',
  'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'
]

/**
 * The bytes of a malformed head with `method` where its template has one (HEAD's answer must then carry no body),
 * and the method the bytes really name.
 */
export function malformedHead (variant: number, method: string, host: string): { bytes: Buffer, method: string } {
  const template = MALFORMED_HEADS[variant % MALFORMED_HEADS.length]!
  const named = template.startsWith('{m} ') ? method : 'GET'
  return { bytes: Buffer.from(template.replaceAll('{m}', method).replaceAll('{h}', host), 'latin1'), method: named }
}

/** A head far over the 16 KiB every server allows: one huge header, or thousands of small ones. */
export function oversizedHead (variant: number, host: string): Buffer {
  const filler = variant % 2 === 0
    ? `X-Big: ${'b'.repeat(20_000)}\r\n`
    : Array.from({ length: 3000 }, (_, i) => `X-F${i}: v\r\n`).join('')
  return Buffer.from(`GET /x HTTP/1.1\r\nHost: ${host}\r\n${filler}\r\n`, 'latin1')
}

/** Bodies whose chunked framing is broken, for a head that says `Transfer-Encoding: chunked`. */
export const BAD_CHUNKS: readonly string[] = [
  'zz\r\n{}\r\n0\r\n\r\n',
  '2\r\n{}\r\nzz\r\n',
  '-1\r\n{}\r\n0\r\n\r\n',
  'fffffffffffffffffff\r\n{}\r\n',
  '2\r\n{}XX0\r\n\r\n',
  '2;\u0001=x\r\n{}\r\n0\r\n\r\n',
  '2\r\n{}\r\n0\r\nBad Trailer\r\n\r\n'
]

/** Transfer codings and lengths that frame a body no server may accept: each with the body that follows. */
export const BAD_CODINGS: ReadonlyArray<{ headers: string, body: string }> = [
  { headers: 'Transfer-Encoding: gzip\r\n', body: '\u001f\u008b\b\u0000abc' },
  { headers: 'Transfer-Encoding: identity\r\n', body: '{}' },
  { headers: 'Transfer-Encoding: identity\r\nContent-Length: 2\r\n', body: '{}' },
  { headers: 'Transfer-Encoding: chunked, gzip\r\n', body: '2\r\n{}\r\n0\r\n\r\n' },
  { headers: 'Transfer-Encoding: chunked\r\nContent-Length: 2\r\n', body: '2\r\n{}\r\n0\r\n\r\n' },
  { headers: 'Transfer-Encoding: xchunked\r\n', body: '2\r\n{}\r\n0\r\n\r\n' },
  { headers: 'Transfer-Encoding: chunked\r\nTransfer-Encoding: gzip\r\n', body: '2\r\n{}\r\n0\r\n\r\n' }
]

/** A request's head alone: its bytes up to the blank line, with Content-Length set for its body. */
export function headOf (request: HttpRequest, extra: Array<[string, string]> = []): Buffer {
  const bytes = serialize({ ...request, headers: [...request.headers, ...extra] })
  return bytes.subarray(0, bytes.indexOf('\r\n\r\n') + 4)
}

/** A request's head without any framing header, ready for one of BAD_CODINGS or a chunked body. */
export function unframedHead (request: HttpRequest, framing: string): Buffer {
  const headers = request.headers.filter(([name]) => !/^(content-length|transfer-encoding)$/i.test(name))
  const bytes = serialize({ method: request.method, target: request.target, headers })
  const head = bytes.subarray(0, bytes.length - 2).toString('latin1')
  return Buffer.from(`${head}${framing}\r\n`, 'latin1')
}

/** A JSON body of exactly `size` bytes. */
export function bodyOfSize (size: number): Buffer {
  const body = Buffer.alloc(size, 0x61)
  body.write('{"pad":"', 0)
  body.write('"}', size - 2)
  return body
}

/** Splits bytes into `parts` pieces of about the same size. */
export function pieces (bytes: Buffer, parts: number): Buffer[] {
  const out: Buffer[] = []
  const size = Math.max(1, Math.ceil(bytes.length / parts))
  for (let at = 0; at < bytes.length; at += size) out.push(bytes.subarray(at, at + size))
  return out
}
