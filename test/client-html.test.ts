import { createHash } from 'node:crypto'
import t from 'tap'
import { renderHtml } from '../conformance/client/core/html.js'
import type { ClientRunReport } from '../conformance/client/core/journal.js'

const HOSTILE = '</script><img src=x onerror=alert(1)>'
const HOSTILE_ESCAPED = '&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;'
const BASE = '/a/v1/adapters/x'

type Scenario = ClientRunReport['scenarios'][number]

/** Two scenarios: a pass, then a generated one whose exchange #2 breaks OT-031; a check never exercised. */
function sample (): ClientRunReport {
  return {
    suite: 'orbtile',
    title: 'Orbtile client conformance',
    command: ['node', 'client.js', '--name', 'my client'],
    seed: 1234,
    strict: false,
    ms: 4321,
    checks: sampleChecks(),
    scenarios: [approveScenario(), generatedScenario()]
  }
}

/** The run's verdicts: a pass, a failure with its replay, a check not exercised, a non-strict finding. */
function sampleChecks (): ClientRunReport['checks'] {
  return [
    {
      id: 'OT-012',
      title: 'the client sends its bearer',
      level: 'MUST',
      verdict: 'pass',
      exercised: 5,
      violationCount: 0,
      inconclusiveCount: 0,
      clauses: {}
    },
    {
      id: 'OT-031',
      title: 'a request with a body names its Content-Type',
      level: 'MUST',
      verdict: 'fail',
      exercised: 3,
      violationCount: 1,
      inconclusiveCount: 0,
      clauses: {},
      reason: 'POST without Content-Type',
      expected: 'content-type: application/json',
      actual: 'no content-type header <none>',
      where: { scenario: 'generated:3', seq: 2 },
      replay: { seed: 1234, path: '7:0:1' }
    },
    {
      id: 'OT-040',
      title: 'the client resumes after a restart',
      level: 'SHOULD',
      verdict: 'not-exercised',
      exercised: 0,
      violationCount: 0,
      inconclusiveCount: 0,
      clauses: {},
      note: 'no scenario restarted the app; run tour:restart to exercise it'
    },
    {
      id: 'OTC-002',
      title: 'the client backs off after a 429',
      level: 'decision',
      verdict: 'non-strict',
      exercised: 1,
      violationCount: 1,
      inconclusiveCount: 0,
      clauses: {},
      reason: 'retried after 10 ms',
      where: { scenario: 'tour:approve' }
    }
  ]
}

/** A tour that passes, with hostile text in its summary, a request body and the client's output. */
function approveScenario (): Scenario {
  return {
    name: 'tour:approve',
    summary: `open a session, the user approves ${HOSTILE}`,
    ms: 1500,
    exit: 'stopped by SIGTERM',
    dropped: 0,
    findings: [
      {
        id: 'OT-012',
        title: 'the client sends its bearer',
        verdict: 'pass',
        exercised: 2,
        violations: [],
        violationCount: 0,
        inconclusiveCount: 0,
        clauses: {},
        inconclusive: []
      },
      {
        id: 'OTC-002',
        title: 'the client backs off after a 429',
        verdict: 'informational',
        exercised: 1,
        violationCount: 1,
        inconclusiveCount: 0,
        clauses: {},
        inconclusive: [],
        violations: [
          { message: 'retried too soon', expected: 'a wait of >= 1000 ms', actual: 'retried after 10 ms' }
        ]
      }
    ],
    journal: [
      { kind: 'action', seq: 0, at: 0, actor: 'harness', name: 'start', text: 'client started' },
      {
        kind: 'exchange',
        seq: 1,
        at: 1234,
        end: 1246,
        connection: 1,
        method: 'POST',
        target: `${BASE}/sessions/s1`,
        httpVersion: '1.1',
        headers: { 'content-type': 'application/json', referer: 'https://evil.example/x' },
        body: JSON.stringify({ name: HOSTILE, big: 1 }).replace('1}', '12345678901234567890}'),
        bodyBytes: 80,
        status: 200,
        replyHeaders: { 'content-type': 'application/json' },
        reply: '{"ok":true,"list":[]}'
      },
      { kind: 'action', seq: 2, at: 1300, actor: 'user', name: 'approve', text: 'approved "s1"\' onmouseover="x' },
      { kind: 'output', seq: 3, at: 1400, stream: 'stdout', line: 'connected to //cdn.example/x.js' }
    ]
  }
}

/** A generated scenario: a malformed request, then exchange #2 that breaks OT-031, and the client's exit. */
function generatedScenario (): Scenario {
  return {
    name: 'generated:3',
    summary: 'a generated schedule',
    replay: { seed: 1234, path: '7:0:1' },
    ms: 900,
    exit: 'exited with code 1 at 0.9 s',
    dropped: 2,
    findings: [
      {
        id: 'OT-031',
        title: 'a request with a body names its Content-Type',
        verdict: 'fail',
        exercised: 1,
        violationCount: 1,
        inconclusiveCount: 0,
        clauses: {},
        inconclusive: [],
        violations: [{
          seq: 2,
          at: 500,
          message: 'POST without Content-Type',
          expected: 'content-type: application/json',
          actual: 'no content-type header <none>'
        }]
      },
      {
        id: 'OT-040',
        title: 'the client resumes after a restart',
        verdict: 'not-exercised',
        exercised: 0,
        violations: [],
        violationCount: 0,
        inconclusiveCount: 0,
        clauses: {},
        inconclusive: [],
        note: 'no restart here'
      }
    ],
    journal: [
      { kind: 'malformed', seq: 0, at: 100, connection: 1, reason: 'HPE_INVALID_METHOD', bytes: 'G\\x00T / <b>' },
      { kind: 'output', seq: 1, at: 200, stream: 'stderr', line: HOSTILE },
      {
        kind: 'exchange',
        seq: 2,
        at: 500,
        end: 520,
        connection: 2,
        method: 'POST',
        target: `${BASE}/requests`,
        httpVersion: '1.1',
        headers: {},
        body: 'plain & simple',
        bodyBytes: 14,
        status: 415,
        replyHeaders: {},
        reply: '',
        wire: ['429 injected']
      },
      {
        kind: 'action',
        seq: 3,
        at: 900,
        actor: 'client',
        name: 'exit',
        text: 'exited with code 1',
        data: { code: 1 }
      }
    ]
  }
}

interface Tag { name: string, closing: boolean, attrs: Array<[string, string]>, raw: string }

/** The page's own tags (the journal's `<` are all escaped, so every `<` that starts a name starts a tag). */
function tags (html: string): Tag[] {
  return [...html.matchAll(/<(\/?)([a-zA-Z][a-zA-Z0-9]*)([^>]*)>/g)].map((m) => ({
    name: m[2]!.toLowerCase(),
    closing: m[1] === '/',
    attrs: [...m[3]!.matchAll(/([^\s=/]+)(?:="([^"]*)")?/g)].map((a) => [a[1]!.toLowerCase(), a[2] ?? '']),
    raw: m[0]
  }))
}

/** The page without its style and script contents, and without its tags: what a reader sees as text. */
function textOf (html: string): string {
  return html.replace(/<(style|script)>[\s\S]*?<\/\1>/g, '').replace(/<[^>]*>/g, '')
}

const html = renderHtml(sample())

t.test('CLIENT-H01 the page is one well-formed document: one html, head and body, every element closed in order', async (t) => {
  t.ok(html.startsWith('<!doctype html>\n<html lang="en">'), 'starts with the doctype')
  t.ok(html.endsWith('</html>\n'), 'ends with </html>')
  for (const name of ['html', 'head', 'body', 'main', 'style', 'script']) {
    t.equal(tags(html).filter((tag) => tag.name === name && !tag.closing).length, 1, `one <${name}>`)
  }
  const voids = new Set(['meta', 'input', 'br', 'hr', 'wbr'])
  const stack: string[] = []
  const errors: string[] = []
  for (const tag of tags(html.replace(/(<(style|script)>)[\s\S]*?(<\/\2>)/g, '$1$3'))) {
    if (voids.has(tag.name)) continue
    if (!tag.closing) stack.push(tag.name)
    else if (stack.pop() !== tag.name) errors.push(tag.raw)
  }
  t.same(errors, [], 'closing tags that close something else')
  t.same(stack, [], 'elements left open')
  const empty = renderHtml({ ...sample(), checks: [], scenarios: [], command: [] })
  t.equal(empty.match(/<html/g)?.length, 1, 'an empty run renders')
})

t.test('CLIENT-H02 nothing is fetched: no src, only in-page links, no URL in any tag, CSS or script', async (t) => {
  const all = tags(html)
  const fetching = ['img', 'link', 'iframe', 'object', 'embed', 'base', 'audio', 'video', 'source', 'form']
  t.same(all.filter((tag) => fetching.includes(tag.name)).map((tag) => tag.raw), [], 'elements that fetch')
  const attrs = all.flatMap((tag) => tag.attrs)
  t.same(attrs.filter(([name]) => name === 'src' || name.startsWith('on')), [], 'src and event attributes')
  t.same(attrs.filter(([name, value]) => name === 'href' && !/^#[\w-]+$/.test(value)), [], 'hrefs off the page')
  // The CSP's hashes are base64, which may hold `//`: they are the only thing taken out before looking for URLs.
  const unhashed = all.map((tag) => tag.raw.replace(/&#39;sha256-[A-Za-z0-9+/=]+&#39;/g, 'HASH'))
  t.same(unhashed.filter((raw) => /\/\/|https?:/.test(raw)), [], 'tags naming a URL')
  const inline = [...html.matchAll(/<(style|script)>([\s\S]*?)<\/\1>/g)].map((m) => m[2]!).join('\n')
  t.notMatch(inline, /url\(|@import|https?:|\/\/|fetch|XMLHttpRequest|import\(/, 'style and script fetch nothing')
  t.match(html, /<meta http-equiv="Content-Security-Policy" content="default-src &#39;none&#39;;/, 'CSP: nothing else')
  // The journal's URLs are there, as text a reader sees.
  t.match(textOf(html), 'referer: https://evil.example/x')
  t.match(textOf(html), 'connected to //cdn.example/x.js')
})

t.test('CLIENT-H03 the journal\'s hostile text appears only escaped, in text and never in a tag', async (t) => {
  t.notOk(html.includes(HOSTILE), 'the raw text is not on the page')
  t.notOk(html.includes('<img'), 'no img element')
  t.equal(html.split('<script').length - 1, 1, 'only the page\'s own script')
  t.equal(html.split('</script>').length - 1, 1, 'only the page\'s own script ends')
  t.ok(html.includes(`&quot;name&quot;: &quot;${HOSTILE_ESCAPED}&quot;`), 'in the request body, indented as JSON')
  t.ok(html.includes(`<code>${HOSTILE_ESCAPED}</code>`), 'in the stderr line')
  t.ok(html.includes(`the user approves ${HOSTILE_ESCAPED}`), 'in the scenario summary')
  t.ok(html.includes('approved &quot;s1&quot;&#39; onmouseover=&quot;x'), 'quotes are escaped')
  t.ok(html.includes('plain &amp; simple'), 'ampersands are escaped')
  t.ok(html.includes('G\\x00T / &lt;b&gt;'), 'malformed bytes are escaped')
  t.notMatch(textOf(html), /[<>]/, 'no raw < or > in any text')
  t.same(tags(html).flatMap((tag) => tag.attrs).filter(([, value]) => /onerror|onmouseover|alert/.test(value)), [])
})

t.test(
  'CLIENT-H04 the verdict table links to the violation\'s row, which is marked and shows Expected and Actual',
  async (t) => {
    const row = html.match(/<tr id="(k\d+)"[^>]*><th scope="row"><code>OT-031<\/code>[\s\S]*?<\/tr>/)
    t.ok(row, 'the row of OT-031')
    t.match(row![0], '<a href="#s1-e2">generated:3, entry #2</a>', 'links to scenario 2, entry 2')
    t.match(row![0], /\u2717<\/span> fail/, 'an icon and a label')
    const entry = html.match(/<li id="s1-e2" class="([^"]*)">([\s\S]*?)<\/li>/)
    t.ok(entry, 'the entry the link points at')
    t.match(entry![1], /\bviolated\b/, 'is highlighted')
    t.match(entry![2], `<a class="cid" href="#${row![1]}">OT-031</a>`, 'names the check, linked back')
    t.match(entry![2], '<dt>Expected</dt><dd><code>content-type: application/json</code></dd>')
    t.match(entry![2], '<dt>Actual</dt><dd><code>no content-type header &lt;none&gt;</code></dd>')
    t.match(entry![2], `POST ${BASE}/requests \u2192 <span class="st-4">415</span>`)
    t.match(entry![2], '<span class="badge">429 injected</span>')
    const others = [...html.matchAll(/<li id="(s\d+-e\d+)" class="([^"]*)"/g)].filter((m) => /violated/.test(m[2]!))
    t.same(others.map((m) => m[1]), ['s1-e2'], 'no other row is marked')
  }
)

t.test('CLIENT-H05 every check id, Expected and Actual, the not-exercised note and the replay flags appear', async (t) => {
  for (const check of sample().checks) t.match(html, `<th scope="row"><code>${check.id}</code></th>`, check.id)
  const table = html.slice(html.indexOf('<h2 id="verdicts">'), html.indexOf('</table>'))
  t.match(table, '<dt>Expected</dt><dd><code>content-type: application/json</code></dd>')
  t.match(table, '<dt>Actual</dt><dd><code>no content-type header &lt;none&gt;</code></dd>')
  t.match(table, 'no scenario restarted the app; run tour:restart to exercise it')
  t.match(table, '<p>Replay: <code>--seed 1234 --path 7:0:1</code></p>')
  t.match(table, '<a href="#s0">tour:approve</a>', 'a violation without an entry links to its scenario')
  t.match(html, /<li><span class="v v-fail"><span aria-hidden="true">\u2717<\/span> fail<\/span>: <strong>1</)
  t.match(html, /not exercised<\/span>: <strong>1<\/strong>/)
  t.match(html, '<code>node client.js --name &#39;my client&#39;</code>', 'the command, quoted as a shell reads it')
})

t.test('CLIENT-H06 a scenario lists its non-pass findings, its loose violations and a row per entry', async (t) => {
  const first = html.slice(html.indexOf('<section id="s0"'), html.indexOf('<section id="s1"'))
  const findings = first.slice(first.indexOf('<h3>Findings'), first.indexOf('<h3>Timeline'))
  t.notMatch(findings, 'OT-012', 'a pass is not listed')
  t.match(findings, 'OTC-002')
  t.match(findings, '<h3>Cases not tied to a journal entry</h3>')
  t.match(findings, '<dt>Expected</dt><dd><code>a wait of &gt;= 1000 ms</code></dd>')
  t.equal(first.match(/<li id="s0-e\d+"/g)?.length, 4, 'one row per entry')
  t.match(first, '<a class="t" href="#s0-e1" title="entry #1">+1.234 s</a>')
  t.match(first, `POST ${BASE}/sessions/s1 \u2192 <span class="st-2">200</span></code> <span class="meta">connection 1 \u00b7 12.0 ms`)
  t.match(first, '&quot;big&quot;: 12345678901234567890\n}', 'JSON indented without rounding its numbers')
  t.match(first, '&quot;list&quot;: []', 'an empty array stays on its line')
  t.match(first, /<li id="s0-e2" class="entry action actor-user">/)
  t.match(first, /<li id="s0-e3" class="entry output stdout">/)
  const second = html.slice(html.indexOf('<section id="s1"'))
  t.match(second, /<dt>Dropped entries<\/dt><dd>2<\/dd>/)
  t.match(second, /<li id="s1-e0" class="entry malformed">/)
  t.match(second, '<code>--seed 1234 --path 7:0:1</code>')
})

t.test('CLIENT-H07 the CSP allows just the page\'s own style and script, by hash: a browser runs both', async (t) => {
  const meta = html.match(/<meta http-equiv="Content-Security-Policy" content="([^"]*)">/)
  const csp = meta![1]!.replace(/&#39;/g, "'")
  for (const name of ['style', 'script']) {
    const body = html.match(new RegExp(`<${name}>([\\s\\S]*?)</${name}>`))![1]!
    const hash = createHash('sha256').update(body).digest('base64')
    t.match(csp, `${name}-src 'sha256-${hash}';`, `${name}-src names the hash of the inline ${name}`)
  }
  t.notMatch(csp, 'unsafe-inline', 'no inline style or script is allowed by default')
})
