// Mutations of a well-formed request: its JSON body broken in structure, type or syntax, its type, method, path,
// query, token or headers made wrong. Each stays framed correctly; the raw lane is where framing breaks.
import fc from 'fast-check'
import type { Draft } from './draft.js'
import type { HttpRequest } from './request.js'
import type { Target } from './targets.js'

/** What a mutation changes. */
export const MUTATION_KINDS = [
  'wrong-type', 'missing-field', 'extra-field', 'huge-value', 'deep-nesting', 'bad-json', 'bad-content-type',
  'no-content-type', 'chunked-body', 'body-on-bodiless', 'wrong-method', 'unknown-path', 'bad-token',
  'odd-header', 'bad-query', 'expect-continue'
] as const

/** One kind of mutation. */
export type MutationKind = typeof MUTATION_KINDS[number]

/** A mutation as fast-check draws it: its kind, which variant, where in the body, and a value to put there. */
export interface Mutation {
  kind: MutationKind
  variant: number
  pick: number
  value: unknown
  text: string
}

/** Any mutation. */
export const mutationArbitrary: fc.Arbitrary<Mutation> = fc.record({
  kind: fc.constantFrom(...MUTATION_KINDS),
  variant: fc.nat({ max: 1_000_000 }),
  pick: fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true }),
  value: fc.jsonValue({ maxDepth: 2 }),
  text: fc.string({ unit: 'binary', maxLength: 24 })
})

const RAW = '@@raw@@'
const INVALID_UTF8 = Buffer.from([0xff, 0xfe, 0xc3])
const WRONG_VALUES: unknown[] = [0, -1, 1.5, 'x', '', true, false, null, [], {}, 1e300, -(2 ** 53) - 2, '9'.repeat(400)]
const METHODS = ['GET', 'PUT', 'POST', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD', 'TRACE', 'PROPFIND', 'SEARCH', 'PURGE']
const TYPES = ['text/plain', 'application/json; charset=latin1', 'application/x-www-form-urlencoded', '',
  'application/json;;', 'APPLICATION/JSON', 'application/json; charset="utf-8"', 'application/jsonx',
  'multipart/form-data; boundary=x', '*/*', 'application/json, text/plain', 'application/problem+json']

function choose<T> (items: readonly T[], n: number): T {
  return items[n % items.length]!
}

/** Every place in a JSON value, as a key path; the root is []. */
function places (value: unknown, at: Array<string | number> = [], out: Array<Array<string | number>> = []):
Array<Array<string | number>> {
  out.push(at)
  if (at.length > 6 || value === null || typeof value !== 'object') return out
  if (Array.isArray(value)) value.forEach((item, i) => places(item, [...at, i], out))
  else for (const [key, item] of Object.entries(value)) places(item, [...at, key], out)
  return out
}

/** A copy of `value` with the place at `path` replaced (or, for `undefined`, removed). */
function replaceAt (value: unknown, path: Array<string | number>, next: unknown): unknown {
  if (path.length === 0) return next
  const copy: any = Array.isArray(value) ? [...value] : { ...(value as object) }
  const [head, ...rest] = path
  if (rest.length === 0 && next === undefined) {
    if (Array.isArray(copy)) copy.splice(head as number, 1)
    else delete copy[head!]
  } else copy[head!] = replaceAt(copy[head!], rest, next)
  return copy
}

function setHeader (request: HttpRequest, name: string, value: string | undefined): void {
  request.headers = request.headers.filter(([key]) => key.toLowerCase() !== name.toLowerCase())
  if (value !== undefined) request.headers.push([name, value])
}

function withBody (request: HttpRequest, text: string | Buffer): void {
  request.body = Buffer.isBuffer(text) ? text : Buffer.from(text)
  if (!request.headers.some(([key]) => key.toLowerCase() === 'content-type')) {
    request.headers.push(['Content-Type', 'application/json'])
  }
}

function bodyWithRaw (body: unknown, pick: number, raw: string): string {
  const spots = places(body)
  const path = spots[Math.floor(pick * spots.length)] ?? []
  return JSON.stringify(replaceAt(body, path, RAW)).replace(`"${RAW}"`, raw)
}

function badJson (body: unknown, m: Mutation): string | Buffer {
  const text = JSON.stringify(body ?? {})
  const cut = Math.floor(m.pick * text.length)
  const variants: Array<() => string | Buffer> = [
    () => text.slice(0, cut), () => `${text}}`, () => `${text} garbage`, () => `\uFEFF${text}`,
    () => Buffer.concat([Buffer.from(text.slice(0, cut)), INVALID_UTF8, Buffer.from(text.slice(cut))]),
    () => text.replaceAll('"', "'"), () => '{"a":NaN}', () => text.startsWith('{"')
      ? `{${text.slice(1, text.indexOf(':') + 1)}0,${text.slice(1)}`
      : '{"a":1,"a":2}',
    () => 'null', () => '[]', () => '"text"', () => '42', () => '', () => '   ', () => `${text} // comment`,
    () => '{"__proto__":{"polluted":true}}', () => '{"constructor":{"prototype":{"polluted":true}}}',
    () => '{"a":"\\ud800"}', () => `{"a":"${'\\u0000'.repeat(50)}"}`
  ]
  return choose(variants, m.variant)()
}

function oddHeader (request: HttpRequest, target: Target, m: Mutation): void {
  const path = request.target
  const variants: Array<() => void> = [
    () => request.headers.push(['Origin', choose(['null', 'http://evil.example', `http://${target.host}`, ''], m.variant >> 4)]),
    () => request.headers.push(['Host', choose([target.host, 'evil.example', ''], m.variant >> 4)]),
    () => setHeader(request, 'Host', undefined),
    () => setHeader(request, 'Host', choose(['LOCALHOST', 'localhost:80', 'evil.example', '127.0.0.1', '[::1]:1',
      'localhost.', ' ', `${target.host}:99999`], m.variant >> 4)),
    () => { request.target = `http://${choose([target.host, 'evil.example', 'localhost'], m.variant >> 4)}${path}` },
    () => request.headers.push(['Connection', 'close']),
    () => request.headers.push(['Connection', 'Upgrade'], ['Upgrade', 'websocket']),
    () => request.headers.push(['Content-Encoding', 'gzip']),
    () => request.headers.push(['X-Forwarded-Host', 'evil.example'], ['X-Forwarded-For', '203.0.113.9']),
    () => { for (let i = 0; i < 300; i++) request.headers.push([`X-Filler-${i}`, 'x']) },
    () => request.headers.push(['X-Big', 'b'.repeat(choose([4000, 8000, 17000], m.variant >> 4))]),
    () => request.headers.push(['X-Latin', 'caf\xe9 \xff']),
    () => request.headers.push(['Expect', 'something-else']),
    () => request.headers.push(['Accept', 'text/html'], ['Accept-Encoding', 'gzip, br']),
    () => request.headers.push(['X-Orbtile-Nonce', m.text]),
    () => request.headers.push(['Authorization', 'Bearer second'])
  ]
  choose(variants, m.variant)()
}

function badToken (request: HttpRequest, m: Mutation): void {
  const current = request.headers.find(([key]) => key.toLowerCase() === 'authorization')?.[1] ?? 'Bearer x'
  const token = current.replace(/^Bearer /, '')
  const variants: Array<() => void> = [
    () => setHeader(request, 'Authorization', undefined),
    () => setHeader(request, 'Authorization', `Bearer ${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`),
    () => setHeader(request, 'Authorization', 'Basic dXNlcjpwYXNz'),
    () => setHeader(request, 'Authorization', 'Bearer'),
    () => setHeader(request, 'Authorization', `Bearer ${token} extra`),
    () => setHeader(request, 'Authorization', `bearer ${token}`),
    () => setHeader(request, 'Authorization', `Bearer    ${token}   `),
    () => setHeader(request, 'Authorization', `Bearer ${'x'.repeat(10_000)}`),
    () => setHeader(request, 'Authorization', `Bearer ${m.text}`),
    () => setHeader(request, 'X-Orbtile-Adapter-Token', undefined),
    () => setHeader(request, 'X-Orbtile-Adapter-Token', m.text),
    () => request.headers.push(['X-Orbtile-Adapter-Token', 'second'])
  ]
  choose(variants, m.variant)()
}

function unknownPath (request: HttpRequest, m: Mutation): void {
  const [path, query = ''] = request.target.split(/\?(.*)/s, 2) as [string, string?]
  const q = query === '' ? '' : `?${query}`
  const variants: Array<() => string> = [
    () => `${path}/extra${q}`, () => `/${encodeURIComponent(m.text)}${q}`, () => `${path}%zz${q}`,
    () => `/${path.replace(/^\//, '/')}`, () => `/..${path}`, () => `${path}/`, () => path.toUpperCase() + q,
    () => `${path}/${'a'.repeat(8000)}`, () => '*', () => `${path};param=1${q}`, () => `${path}%00${q}`,
    () => `${path}#fragment`, () => `${path.replace(/\/[^/]*$/, '/%2e%2e')}`, () => `${path}/%2f`
  ]
  request.target = choose(variants, m.variant)()
}

function badQuery (request: HttpRequest, m: Mutation): void {
  const join = request.target.includes('?') ? '&' : '?'
  const variants = ['limit=abc', 'limit=-1', 'limit=1e99', 'wait=26', 'wait=-1', 'after=x', 'limit=1&limit=2',
    `unknown=${encodeURIComponent(m.text)}`, 'channel=%zz', `q=${'x'.repeat(6000)}`, '', '&&&', 'channel',
    'wait=1.5', 'before=9007199254740993', 'caf\xe9=1', 'minimum=0', 'server=']
  request.target += join + choose(variants, m.variant)
}

/** What a mutation works on: the request to change, the draft's body, and the server it goes to. */
interface Mutating {
  request: HttpRequest
  body: unknown
  /** Whether the request had a body before the mutation. */
  hasBody: boolean
  target: Target
}

/** Gives a bodiless request the draft's body (or `{}`), for the mutations of a body's framing or type. */
function ensureBody ({ request, body, hasBody }: Mutating): void {
  if (!hasBody) withBody(request, JSON.stringify(body ?? {}))
}

/** Each kind of mutation, and how it changes the request in place. */
const MUTATORS: Record<MutationKind, (on: Mutating, m: Mutation) => void> = {
  'wrong-type': ({ request, body }, m) => {
    withBody(request, bodyWithRaw(body ?? {}, m.pick, JSON.stringify(choose(WRONG_VALUES, m.variant))))
  },
  'missing-field': ({ request, body }, m) => {
    const spots = places(body).filter((p) => p.length > 0)
    const spot = spots[Math.floor(m.pick * spots.length)]
    withBody(request, JSON.stringify(spot === undefined ? {} : replaceAt(body, spot, undefined)))
  },
  'extra-field': ({ request, body }, m) => {
    const extra = body !== null && typeof body === 'object' && !Array.isArray(body) ? body : {}
    withBody(request, JSON.stringify({ ...extra, [m.text === '' ? 'extra' : m.text]: m.value }))
  },
  'huge-value': ({ request, body }, m) => {
    const size = choose([1000, 70_000, 300_000], m.variant)
    const raw = choose([JSON.stringify('x'.repeat(size)), '1e400', `${'9'.repeat(size)}`, '-0'], m.variant >> 2)
    withBody(request, bodyWithRaw(body ?? {}, m.pick, raw))
  },
  'deep-nesting': ({ request, body }, m) => {
    const depth = choose([100, 1000, 10_000], m.variant)
    const open = m.variant % 2 === 0 ? '[' : '{"a":'
    const close = m.variant % 2 === 0 ? ']' : '}'
    withBody(request, bodyWithRaw(body ?? {}, m.pick, `${open.repeat(depth)}1${close.repeat(depth)}`))
  },
  'bad-json': ({ request, body }, m) => { withBody(request, badJson(body, m)) },
  'bad-content-type': (on, m) => {
    ensureBody(on)
    setHeader(on.request, 'Content-Type', choose(TYPES, m.variant))
    if (m.variant % 5 === 0) on.request.headers.push(['Content-Type', 'application/json'])
  },
  'no-content-type': (on) => {
    ensureBody(on)
    setHeader(on.request, 'Content-Type', undefined)
  },
  'chunked-body': (on) => {
    ensureBody(on)
    on.request.headers.push(['Transfer-Encoding', 'chunked'])
  },
  'body-on-bodiless': ({ request }, m) => { withBody(request, JSON.stringify(m.value ?? {})) },
  'wrong-method': ({ request }, m) => { request.method = choose(METHODS, m.variant) },
  'unknown-path': ({ request }, m) => { unknownPath(request, m) },
  'bad-token': ({ request }, m) => { badToken(request, m) },
  'odd-header': ({ request, target }, m) => { oddHeader(request, target, m) },
  'bad-query': ({ request }, m) => { badQuery(request, m) },
  'expect-continue': (on) => {
    ensureBody(on)
    on.request.headers.push(['Expect', '100-continue'])
  }
}

/** Applies a mutation to a request built from `draft`; the request is changed in place and returned. */
export function mutate (request: HttpRequest, draft: Draft, target: Target, m: Mutation): HttpRequest {
  MUTATORS[m.kind]({ request, body: draft.body, hasBody: request.body !== undefined, target }, m)
  return request
}
