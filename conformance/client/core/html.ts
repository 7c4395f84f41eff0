/**
 * The HTML report of a client run: one self-contained page (inline CSS, a few lines of inline JS, nothing fetched)
 * with the verdict of every check and each scenario's journal as a timeline, every violation marked where it
 * happened. Everything the journal holds is the client's text, so all of it is escaped, and the page's own CSP
 * (hashes of its one style and one script) refuses anything that escaping might still have let through.
 */
import { createHash } from 'node:crypto'
import type {
  ClientRunReport, ClientVerdict, CheckSummary, JournalEntry, JournalExchange, ScenarioReport, Violation
} from './journal.js'

const CSS = `
:root{--fg:#1f2328;--dim:#656d76;--bg:#fff;--alt:#f6f8fa;--line:#d0d7de;--pass:#1a7f37;--fail:#cf222e;
--warn:#9a6700;--info:#0969da;--none:#6e7781;--mark:#fff8c5;--bad:#ffebe9;--user:#8250df;--app:#1b7c83;
--wire:#bc4c00;--harness:#57606a;--client:#0969da}
@media (prefers-color-scheme:dark){:root{--fg:#e6edf3;--dim:#8d96a0;--bg:#0d1117;--alt:#161b22;--line:#30363d;
--pass:#3fb950;--fail:#f85149;--warn:#d29922;--info:#4493f8;--none:#8d96a0;--mark:#3b2e00;--bad:#3c1618;
--user:#a371f7;--app:#39c5cf;--wire:#f0883e;--harness:#8d96a0;--client:#4493f8}}
*{box-sizing:border-box}
body{margin:0 auto;max-width:1600px;padding:1rem 1.5rem;font:15px/1.45 system-ui,sans-serif;color:var(--fg);
background:var(--bg)}
code,pre,.t,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:13px}
pre{margin:.25rem 0;padding:.5rem;background:var(--alt);border:1px solid var(--line);border-radius:4px;
white-space:pre-wrap;overflow-wrap:anywhere;max-height:32rem;overflow:auto}
a{color:var(--info)}
h1{margin:.2rem 0}h2{margin:2rem 0 .3rem;border-bottom:1px solid var(--line)}h3{margin:1rem 0 .3rem;font-size:1rem}
.facts{display:flex;flex-wrap:wrap;gap:.3rem 2rem;margin:.5rem 0}.facts dt{font-weight:600;color:var(--dim)}
.facts dd{margin:0;overflow-wrap:anywhere}
.counts,.plain{list-style:none;padding:0;display:flex;flex-wrap:wrap;gap:.5rem 1.2rem}.scroll{overflow-x:auto}
table{border-collapse:collapse;width:100%}th,td{text-align:left;vertical-align:top;padding:.35rem .5rem;
border-bottom:1px solid var(--line)}thead th{background:var(--alt)}td.num{text-align:right}td p{margin:.1rem 0}
tr:target,li:target{outline:3px solid var(--info)}.note,.meta{color:var(--dim)}tr.row-fail{background:var(--bad)}
.v{font-weight:600;white-space:nowrap}.v-pass{color:var(--pass)}.v-fail{color:var(--fail)}
.v-non-strict{color:var(--warn)}.v-informational{color:var(--info)}.v-not-exercised{color:var(--none)}
.v-inconclusive{color:var(--dim)}li.unsettled{border-left:6px dashed var(--warn)}
.vio.unsure{border-style:dashed;border-color:var(--warn)}
.ea{display:grid;grid-template-columns:auto 1fr;gap:0 .6rem;margin:.2rem 0}.ea dt{font-weight:600}
.ea dd{margin:0;overflow-wrap:anywhere}
.badge{display:inline-block;padding:0 .4rem;border:1px solid var(--wire);border-radius:1rem;color:var(--wire);
font-size:12px;margin-left:.3rem}
ol.timeline{list-style:none;padding:0;margin:0}summary{cursor:pointer;color:var(--dim)}
li.entry{display:grid;grid-template-columns:7rem 8.5rem minmax(0,1fr);gap:.6rem;padding:.3rem .5rem;
border-left:4px solid transparent;border-bottom:1px solid var(--line)}
li.entry .t{color:var(--dim);text-decoration:none}
.who{font-weight:600}.who-user{color:var(--user)}.who-app{color:var(--app)}.who-wire{color:var(--wire)}
.who-harness{color:var(--harness)}.who-client{color:var(--client)}
li.action{border-left-color:currentcolor;background:var(--alt)}
li.actor-user{color:var(--user)}li.actor-app{color:var(--app)}li.actor-wire{color:var(--wire)}
li.actor-harness{color:var(--harness)}li.actor-client{color:var(--client)}li.action .what{color:var(--fg)}
li.output{opacity:.7}li.output code{white-space:pre-wrap;overflow-wrap:anywhere}li.stderr .what{color:var(--warn)}
li.malformed{background:var(--bad);border-left-color:var(--fail)}
li.violated{background:var(--mark);border-left:6px solid var(--fail);opacity:1}
.vio{margin:.3rem 0;padding:.3rem .5rem;border:1px solid var(--fail);border-radius:4px}.vio p{margin:0}
.cid{font-weight:700;color:var(--fail)}
.pair{display:grid;grid-template-columns:1fr 1fr;gap:.6rem}.lbl{margin:.3rem 0 0;font-weight:600}
.st-2{color:var(--pass)}.st-4,.st-5{color:var(--fail)}
fieldset{border:1px solid var(--line);border-radius:4px;margin:1rem 0}
body.only-violations li.entry:not(.violated),body.hide-output li.output:not(.violated){display:none}
@media (max-width:760px){body{padding:.5rem}li.entry{grid-template-columns:auto 1fr}
li.entry .what{grid-column:1/-1}.pair{grid-template-columns:1fr}}
`
// Without JS the filters stay hidden and every row shows; the script only reveals them and toggles a body class.
const SCRIPT = `
const f = document.getElementById('filters')
f.hidden = false
for (const box of f.querySelectorAll('input')) {
  box.addEventListener('change', () => document.body.classList.toggle(box.dataset.filter, box.checked))
}
`
const hash = (text: string): string => `'sha256-${createHash('sha256').update(text).digest('base64')}'`
const CSP = `default-src 'none'; style-src ${hash(CSS)}; script-src ${hash(SCRIPT)}; base-uri 'none'; form-action 'none'`

const VERDICTS: Record<ClientVerdict, { icon: string, label: string }> = {
  pass: { icon: '\u2713', label: 'pass' },
  fail: { icon: '\u2717', label: 'fail' },
  'non-strict': { icon: '\u25b2', label: 'non-strict' },
  inconclusive: { icon: '?', label: 'inconclusive' },
  'not-exercised': { icon: '\u25cb', label: 'not exercised' },
  informational: { icon: 'i', label: 'informational' }
}
const ORDER: ClientVerdict[] = ['pass', 'fail', 'non-strict', 'inconclusive', 'not-exercised', 'informational']

/** Where things are on the page: a check's row (`k<n>`) and a scenario's section (`s<n>`), by id and name. */
interface Places {
  checks: Map<string, number>
  scenarios: Map<string, number>
}

/** The whole page for one client run. */
export function renderHtml (report: ClientRunReport): string {
  const places: Places = { checks: new Map(), scenarios: new Map() }
  report.checks.forEach((c, n) => { if (!places.checks.has(c.id)) places.checks.set(c.id, n) })
  report.scenarios.forEach((s, n) => { if (!places.scenarios.has(s.name)) places.scenarios.set(s.name, n) })
  return [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    `<meta http-equiv="Content-Security-Policy" content="${esc(CSP)}">`,
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${esc(report.title)}: client run</title>`,
    `<style>${CSS}</style>`,
    '</head>',
    '<body>',
    header(report),
    '<main>',
    verdictTable(report, places),
    serverTable(report),
    '<fieldset id="filters" hidden><legend>Timeline filters</legend>',
    '<label><input type="checkbox" data-filter="only-violations"> only rows with violations</label>',
    '<label><input type="checkbox" data-filter="hide-output"> hide client output</label></fieldset>',
    ...report.scenarios.map((s, n) => scenarioSection(s, n, places)),
    '</main>',
    `<script>${SCRIPT}</script>`,
    '</body>',
    '</html>',
    ''
  ].join('\n')
}

function header (report: ClientRunReport): string {
  const count = (v: ClientVerdict): number => report.checks.filter((c) => c.verdict === v).length
  const expected = report.checks.filter((c) => c.verdict === 'fail' && c.expectedFailure !== undefined).length
  const counts = ORDER.map((v) => {
    const extra = v === 'fail' && expected > 0 ? ` (${expected} expected)` : ''
    return `<li>${verdict(v)}: <strong>${count(v)}</strong>${extra}</li>`
  })
  const strict = report.strict
    ? 'yes (--strict): non-strict findings fail the run too'
    : 'no: non-strict findings (SHOULDs, and findings that rest on orbtest\'s decisions) are reported but do not fail the run'
  const nav = report.scenarios.map((s, n) => `<li><a href="#s${n}">${esc(s.name)}</a></li>`)
  return [
    '<header>',
    `<h1>${esc(report.title)}</h1>`,
    `<p class="meta">Client conformance run of the <code>${esc(report.suite)}</code> suite</p>`,
    '<dl class="facts">',
    fact('Client command', `<code>${esc(report.command.map(shellWord).join(' ') || '(none)')}</code>`),
    fact('Seed', `<code>${esc(String(report.seed))}</code>`),
    fact('Duration', esc(duration(report.ms))),
    fact('Strict', esc(strict)),
    fact('Checks', esc(String(report.checks.length))),
    '</dl>',
    `<ul class="counts" aria-label="Verdicts of the checks">${counts.join('')}</ul>`,
    nav.length === 0 ? '' : `<nav aria-label="Scenarios"><ul class="plain">${nav.join('')}</ul></nav>`,
    '</header>'
  ].join('\n')
}

/** What the server answered that it may not (`orbtest proxy`), after the client's verdicts; nothing otherwise. */
function serverTable (report: ClientRunReport): string {
  if (report.server === undefined) return ''
  const rows = report.server.map((f) => `<tr><th scope="row"><code>${esc(f.id)}</code></th><td>${esc(f.level)}</td>` +
    `<td class="num">${esc(String(f.request))}</td><td><code>${esc(f.what)}</code></td><td>${esc(f.message)}</td></tr>`)
  return [
    `<section aria-labelledby="server"><h2 id="server">The server: ${report.server.length} finding(s)</h2>`,
    '<div class="scroll" role="region" aria-label="Server findings" tabindex="0"><table>',
    '<thead><tr><th scope="col">Rule</th><th scope="col">Level</th><th scope="col">Request</th>',
    '<th scope="col">Exchange</th><th scope="col">Finding</th></tr></thead>',
    `<tbody>${rows.join('')}</tbody></table></div></section>`
  ].join('\n')
}

function verdictTable (report: ClientRunReport, places: Places): string {
  const rows = report.checks.map((c, n) => [
    `<tr id="k${n}" class="row-${esc(c.verdict)}">`,
    `<th scope="row"><code>${esc(c.id)}</code></th><td>${esc(c.title)}</td><td>${esc(c.level)}</td>`,
    `<td>${verdict(c.verdict)}</td><td class="num">${esc(String(c.exercised))}</td>`,
    `<td class="num">${esc(String(c.violationCount))}</td><td class="num">${esc(String(c.inconclusiveCount))}</td>`,
    `<td>${checkDetail(c, report, places)}</td></tr>`
  ].join(''))
  return [
    '<section aria-labelledby="verdicts"><h2 id="verdicts">Verdicts</h2>',
    '<div class="scroll" role="region" aria-label="Verdict table" tabindex="0"><table>',
    '<thead><tr><th scope="col">Check</th><th scope="col">Title</th><th scope="col">Level</th>',
    '<th scope="col">Verdict</th><th scope="col">Exercised</th><th scope="col">Violations</th>',
    '<th scope="col">Not settled</th>',
    '<th scope="col">Detail</th></tr></thead>',
    `<tbody>${rows.join('\n')}</tbody></table></div></section>`
  ].join('\n')
}

function checkDetail (c: CheckSummary, report: ClientRunReport, places: Places): string {
  const out: string[] = []
  if (c.reason !== undefined) out.push(`<p>${esc(c.reason)}</p>`)
  if (c.expected !== undefined || c.actual !== undefined) out.push(expectedActual(c.expected, c.actual))
  if (c.where !== undefined) {
    const n = places.scenarios.get(c.where.scenario)
    const seq = c.where.seq
    const label = `${c.where.scenario}${seq === undefined ? '' : `, entry #${seq}`}`
    if (n === undefined) {
      out.push(`<p>Where: ${esc(label)} (not in this report)</p>`)
    } else {
      const kept = seq !== undefined && report.scenarios[n]!.journal.some((e) => e.seq === seq)
      const target = kept ? anchor(n, seq) : `s${n}`
      out.push(`<p>Where: <a href="#${esc(target)}">${esc(label)}</a>${seq === undefined || kept ? '' : ' (entry not kept)'}</p>`)
    }
  }
  if (c.replay !== undefined) out.push(`<p>Replay: ${replayFlags(c.replay)}</p>`)
  if (c.shrunk !== undefined) out.push(`<p>Smallest failing scenario: ${replayFlags(c.shrunk)}</p>`)
  if (c.note !== undefined) out.push(`<p class="note">${esc(c.note)}</p>`)
  if (c.expectedFailure !== undefined) out.push(`<p>Expected failure: ${esc(c.expectedFailure)}</p>`)
  return out.join('')
}

/** A case a check cites: a violation, or (`unsure`) one the judge could not settle. */
interface Cited { id: string, v: Violation, unsure: boolean }

function scenarioSection (s: ScenarioReport, n: number, places: Places): string {
  const cited = new Map<number, Cited[]>()
  const loose: Cited[] = []
  for (const f of s.findings) {
    const cases = [
      ...f.violations.map((v) => ({ id: f.id, v, unsure: false })),
      ...f.inconclusive.map((v) => ({ id: f.id, v, unsure: true }))
    ]
    for (const c of cases) {
      if (c.v.seq === undefined) loose.push(c)
      else cited.set(c.v.seq, [...(cited.get(c.v.seq) ?? []), c])
    }
  }
  const notPassed = s.findings.filter((f) => f.verdict !== 'pass').map((f) => {
    const shown = f.violationCount > f.violations.length ? ` (first ${f.violations.length} shown)` : ''
    const count = f.violationCount > 0 ? ` \u2014 ${f.violationCount} violation(s)${shown}` : ''
    const note = f.note === undefined ? '' : ` <span class="note">${esc(f.note)}</span>`
    return `<li>${checkLink(f.id, places)} ${verdict(f.verdict)} ${esc(f.title)}${esc(count)}${note}</li>`
  })
  const out = [
    `<section id="s${n}" aria-labelledby="s${n}-h">`,
    `<h2 id="s${n}-h">Scenario ${n + 1}: <code>${esc(s.name)}</code></h2>`,
    `<p>${esc(s.summary)}</p>`,
    '<dl class="facts">',
    fact('Exit', esc(s.exit)),
    fact('Duration', esc(duration(s.ms))),
    fact('Entries', esc(String(s.journal.length))),
    fact('Dropped entries', esc(String(s.dropped))),
    s.replay === undefined ? '' : fact('Replay', replayFlags(s.replay)),
    '</dl>',
    `<h3>Findings${notPassed.length === 0 ? '' : ' other than pass'}</h3>`,
    notPassed.length === 0
      ? '<p>Every check that applied here passed.</p>'
      : `<ul>${notPassed.join('')}</ul>`
  ]
  if (loose.length > 0) {
    out.push('<h3>Cases not tied to a journal entry</h3>', loose.map((c) => violationBlock(c, places)).join(''))
  }
  out.push('<h3>Timeline</h3>', s.journal.length === 0
    ? '<p>No entries.</p>'
    : `<ol class="timeline">${s.journal.map((e) => entryRow(e, n, cited.get(e.seq) ?? [], places)).join('\n')}</ol>`)
  out.push('</section>')
  return out.filter((part) => part !== '').join('\n')
}

function entryRow (e: JournalEntry, n: number, cited: Cited[], places: Places): string {
  const classes = ['entry', e.kind]
  if (e.kind === 'action') classes.push(`actor-${e.actor}`)
  if (e.kind === 'output') classes.push(e.stream)
  if (cited.some((c) => !c.unsure)) classes.push('violated')
  else if (cited.length > 0) classes.push('unsettled')
  const here = esc(anchor(n, e.seq))
  const [who, whoClass] = author(e)
  const marks = cited.map((c) => violationBlock(c, places)).join('')
  return `<li id="${here}" class="${esc(classes.join(' '))}">` +
    `<a class="t" href="#${here}" title="entry #${esc(String(e.seq))}">${esc(offset(e.at))}</a>` +
    `<span class="who who-${esc(whoClass)}">${esc(who)}</span>` +
    `<div class="what">${what(e)}${marks}</div></li>`
}

function author (e: JournalEntry): [string, string] {
  switch (e.kind) {
    case 'exchange':
    case 'malformed':
      return ['client request', 'client']
    case 'output':
      return [`client ${e.stream}`, 'client']
    case 'action':
      return [e.actor, e.actor]
  }
}

function what (e: JournalEntry): string {
  switch (e.kind) {
    case 'exchange':
      return exchange(e)
    case 'malformed':
      return `<strong>malformed request</strong> <code>${esc(e.reason)}</code>` +
        ` <span class="meta">connection ${esc(String(e.connection))}</span><pre>${esc(e.bytes)}</pre>`
    case 'output':
      return `<code>${esc(e.line)}</code>`
    case 'action':
      return `<strong>${esc(e.name)}</strong> ${esc(e.text)}` + (e.data === undefined
        ? ''
        : `<details><summary>Data of ${esc(e.name)}</summary><pre>${esc(stringify(e.data))}</pre></details>`)
  }
}

function exchange (e: JournalExchange): string {
  const status = `<span class="st-${esc(String(Math.floor(e.status / 100)))}">${esc(String(e.status))}</span>`
  const notes = (e.wire ?? []).map((w) => `<span class="badge">${esc(w)}</span>`).join('')
  const request = `${e.method} ${e.target} HTTP/${e.httpVersion}${headerLines(e.headers)}`
  const cut = e.body !== undefined && Buffer.byteLength(e.body) < e.bodyBytes ? ', cut' : ''
  return `<code>${esc(e.method)} ${esc(e.target)} \u2192 ${status}</code>` +
    ` <span class="meta">connection ${esc(String(e.connection))} \u00b7 ${esc((e.end - e.at).toFixed(1))} ms</span>${notes}` +
    '<details><summary>Request and reply: headers and bodies</summary><div class="pair">' +
    `<div><p class="lbl">Request</p><pre>${esc(request)}</pre>` +
    body(e.body, `${e.bodyBytes} bytes${cut}`) + '</div>' +
    `<div><p class="lbl">Reply</p><pre>${esc(`status ${e.status}${headerLines(e.replyHeaders)}`)}</pre>` +
    body(e.reply === '' ? undefined : e.reply, 'as kept') + '</div></div></details>'
}

function body (text: string | undefined, size: string): string {
  if (text === undefined) return '<p class="meta">No body.</p>'
  const pretty = prettyJson(text)
  const about = pretty === undefined ? '' : ', JSON indented'
  return `<p class="meta">Body (${esc(size)}${about}):</p><pre>${esc(pretty ?? text)}</pre>`
}

function stringify (data: unknown): string {
  try { return JSON.stringify(data, null, 2) } catch { return String(data) }
}

/** The headers, each on a line of its own after a newline. */
function headerLines (headers: Record<string, string>): string {
  return Object.entries(headers).map(([name, value]) => `\n${name}: ${value}`).join('')
}

/**
 * Valid JSON re-indented token by token, or undefined. It does not parse and print again: that would round large
 * numbers, drop duplicate keys and undo escapes, and the page must show what the client sent.
 */
function prettyJson (text: string): string | undefined {
  if (!/^\s*[[{]/.test(text)) return undefined
  try {
    JSON.parse(text)
  } catch {
    return undefined
  }
  // Valid JSON, so its tokens are strings, punctuation and bare words (numbers, true, false, null).
  const tokens = text.match(/"(?:[^"\\]|\\.)*"|[{}[\],:]|[^\s{}[\],:"]+/g) ?? []
  const pad = (depth: number): string => `\n${'  '.repeat(depth)}`
  let out = ''
  let depth = 0
  for (const [k, token] of tokens.entries()) {
    const next = tokens[k + 1]
    const last = tokens[k - 1]
    if ((token === '{' || token === '[') && next !== '}' && next !== ']') out += token + pad(++depth)
    else if ((token === '}' || token === ']') && last !== '{' && last !== '[') out += pad(--depth) + token
    else if (token === ',') out += ',' + pad(depth)
    else if (token === ':') out += ': '
    else out += token
  }
  return out
}

function violationBlock ({ id, v, unsure }: Cited, places: Places): string {
  const at = v.at === undefined ? '' : ` <span class="meta">at ${esc(offset(v.at))}</span>`
  const clause = v.clause === undefined ? id : `${id}.${v.clause}`
  const label = `${unsure ? 'not settled: ' : ''}<a class="cid" href="#k${places.checks.get(id) ?? ''}">${esc(clause)}</a>`
  return `<div class="vio${unsure ? ' unsure' : ''}"><p>${label} ${esc(v.message)}${at}</p>` +
    `${expectedActual(v.expected, v.actual)}</div>`
}

function expectedActual (expected: string | undefined, actual: string | undefined): string {
  return '<dl class="ea">' +
    (expected === undefined ? '' : `<dt>Expected</dt><dd><code>${esc(expected)}</code></dd>`) +
    (actual === undefined ? '' : `<dt>Actual</dt><dd><code>${esc(actual)}</code></dd>`) + '</dl>'
}

function checkLink (id: string, places: Places): string {
  const n = places.checks.get(id)
  return n === undefined ? `<span class="cid">${esc(id)}</span>` : `<a class="cid" href="#k${n}">${esc(id)}</a>`
}

function verdict (v: ClientVerdict): string {
  const known = VERDICTS[v] ?? { icon: '?', label: String(v) }
  return `<span class="v v-${esc(v)}"><span aria-hidden="true">${known.icon}</span> ${esc(known.label)}</span>`
}

function fact (name: string, html: string): string {
  return `<div><dt>${esc(name)}</dt><dd>${html}</dd></div>`
}

function replayFlags (replay: { seed: number, path: string }): string {
  return `<code>${esc(`--seed ${replay.seed} --path ${shellWord(replay.path)}`)}</code>`
}

/** The anchor of a journal entry: `s<scenario index>-e<seq>`. */
function anchor (n: number, seq: number): string {
  return `s${n}-e${seq}`
}

function offset (ms: number): string {
  return `${ms < 0 ? '-' : '+'}${(Math.abs(ms) / 1000).toFixed(3)} s`
}

function duration (ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`
}

/** An argument as a POSIX shell reads it back: bare when it is safe, else single-quoted. */
function shellWord (word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, "'\\''")}'`
}

// Everything but tab, newline, return and printable text: C0 and C1 controls and DEL.
const CONTROL = /[^\t\n\r\x20-\x7e\u00a0-\uffff]/g
const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }

/** Text as HTML, fit for an element or a quoted attribute; control characters shown as `\uXXXX`. */
function esc (text: string): string {
  return String(text)
    .replace(/[&<>"']/g, (c) => ENTITIES[c]!)
    .replace(CONTROL, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
}
