/**
 * A run's JSON report (`--json` of either suite, server or client, or `orbtest up --judge FILE.json`) as Markdown for
 * a person: what a CI job shows on its summary page (`$GITHUB_STEP_SUMMARY`). The reports are redacted already (no
 * token is in them, CLIENT-06), and every text taken from them is escaped here: a client's output or a server's reply
 * may hold anything, and must not rewrite the page it is shown on.
 */
import { replayFlags } from './client/core/report.js'
import type { CheckSummary } from './client/core/journal.js'
import { caseReplayFlags } from './report.js'

/** Verdicts as both kinds of report write them. */
type AnyVerdict = 'pass' | 'fail' | 'skip' | 'informational' | 'non-strict' | 'inconclusive' | 'not-exercised'

/** One row of the summary: a server case or a client check, in the fields both share. */
export interface SummaryRow {
  id: string
  title: string
  verdict: AnyVerdict
  reason?: string
  expected?: string
  actual?: string
  where?: string
  expectedFailure?: string
  /** The command that plays this failure again, when there is one. */
  replay?: string
}

export interface RunSummary {
  kind: 'server' | 'client' | 'judge'
  title: string
  /** What was judged: the server's target, or the client's command line. */
  subject: string
  seed?: number
  ms: number
  rows: SummaryRow[]
  /** True when no required rule failed (expected failures aside): the run's exit code was 0. */
  passed: boolean
  /** A judged run's source of traffic: `orbtest up --judge`, `orbtest proxy orbtile` or `orbtest proxy orb`. */
  via?: string
  /** What the server answered that it may not, read by `orbtest proxy`. */
  server?: Array<{ id: string, level: string, what: string, message: string }>
}

/** The counts a summary shows, by the words the reports use. */
export interface SummaryCounts {
  passed: number
  failed: number
  expectedFailures: number
  nonStrict: number
  inconclusive: number
  notExercised: number
  skipped: number
  informational: number
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined)

/** Reads a parsed JSON report of either suite; throws an Error that says what is missing for anything else. */
export function readRunReport (json: unknown): RunSummary {
  if (!isObject(json)) throw new Error('not a JSON object')
  if (Array.isArray(json.cases)) return serverRun(json)
  if (Array.isArray(json.checks)) return clientRun(json)
  throw new Error('neither a server report (cases) nor a client report (checks): write it with --json')
}

function serverRun (json: Record<string, unknown>): RunSummary {
  const target = str(json.target) ?? '?'
  const runs = typeof json.runs === 'number' ? json.runs : 20
  const rows = (json.cases as unknown[]).filter(isObject).map((c): SummaryRow => {
    const id = str(c.id) ?? '?'
    // A failing property replays by its seed and path (as the TAP block says); any other case by the run's seed.
    const flags = isObject(c.replay) && typeof c.replay.seed === 'number' && typeof c.replay.path === 'string'
      ? caseReplayFlags(id, { seed: c.replay.seed, path: c.replay.path }, runs)
      : `${typeof json.seed === 'number' ? `--seed ${json.seed} ` : ''}--grep ${id}`
    return {
      id,
      title: str(c.title) ?? '',
      verdict: (str(c.verdict) ?? 'fail') as AnyVerdict,
      ...optional('reason', str(c.reason)),
      ...optional('expected', str(c.expected)),
      ...optional('actual', str(c.actual)),
      ...optional('expectedFailure', str(c.expectedFailure)),
      ...(c.verdict === 'fail' ? { replay: `npx orbtest conformance --target ${shellWord(target)} ${flags}` } : {})
    }
  })
  return {
    kind: 'server',
    title: str(json.title) ?? `${str(json.suite) ?? 'server'} conformance`,
    subject: target,
    ...(typeof json.seed === 'number' ? { seed: json.seed } : {}),
    ms: typeof json.ms === 'number' ? json.ms : 0,
    rows,
    passed: rows.every((r) => r.verdict !== 'fail' || r.expectedFailure !== undefined)
  }
}

function clientRun (json: Record<string, unknown>): RunSummary {
  const words = (v: unknown): string[] => Array.isArray(v) ? v.filter((w): w is string => typeof w === 'string') : []
  const command = words(json.command)
  const judged = command.length === 0
  const suiteFlags = words(json.suiteFlags)
  const base = `npx orbtest conformance --client ${str(json.suite) ?? '?'}${suiteFlags.map((f) => ` ${shellWord(f)}`).join('')}`
  const rows = (json.checks as unknown[]).filter(isObject).map((c): SummaryRow => {
    const scenario = isObject(c.where) ? str(c.where.scenario) ?? '' : undefined
    const where = scenario === undefined
      ? undefined
      : `${scenario}${isObject(c.where) && typeof c.where.seq === 'number' ? ` #${c.where.seq}` : ''}`
    // The TAP block's own replay flags: a generated scenario by its seed and path, a tour by its name.
    const flags = replayFlags({
      ...(isObject(c.replay) ? { replay: c.replay as { seed: number, path: string } } : {}),
      ...(scenario === undefined ? {} : { where: { scenario } })
    } as CheckSummary)
    return {
      id: str(c.id) ?? '?',
      title: str(c.title) ?? '',
      verdict: (str(c.verdict) ?? 'fail') as AnyVerdict,
      ...optional('reason', str(c.reason) ?? (c.verdict === 'pass' ? undefined : str(c.note))),
      ...optional('expected', str(c.expected)),
      ...optional('actual', str(c.actual)),
      ...optional('where', where),
      ...optional('expectedFailure', str(c.expectedFailure)),
      ...(judged || flags === undefined || c.violationCount === 0
        ? {}
        : { replay: `${base} ${flags} -- ${command.map(shellWord).join(' ')}` })
    }
  })
  // A judged report's title ends with the command whose traffic it judged (`… (orbtest proxy orb)`).
  const via = /\((orbtest [^()]+)\)$/.exec(str(json.title) ?? '')?.[1] ?? 'orbtest up --judge'
  return {
    kind: judged ? 'judge' : 'client',
    title: str(json.title) ?? `${str(json.suite) ?? 'client'} client conformance`,
    subject: judged ? `live traffic (${via})` : command.join(' '),
    ...(judged ? { via } : {}),
    ...(Array.isArray(json.server) ? { server: json.server.filter(isObject).map(serverFinding) } : {}),
    ...(judged || typeof json.seed !== 'number' ? {} : { seed: json.seed }),
    ms: typeof json.ms === 'number' ? json.ms : 0,
    rows,
    passed: rows.every((r) => r.verdict !== 'fail' || r.expectedFailure !== undefined)
  }
}

function serverFinding (f: Record<string, unknown>): { id: string, level: string, what: string, message: string } {
  return { id: str(f.id) ?? '?', level: str(f.level) ?? '', what: str(f.what) ?? '', message: str(f.message) ?? '' }
}

function optional<K extends string> (key: K, value: string | undefined): Partial<Record<K, string>> {
  return value === undefined ? {} : ({ [key]: value } as Record<K, string>)
}

/** A word as a POSIX shell reads it back: quoted only when it must be. */
export function shellWord (word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, "'\\''")}'`
}

export function summaryCounts (run: RunSummary): SummaryCounts {
  const n = (v: AnyVerdict): number => run.rows.filter((r) => r.verdict === v).length
  const expectedFailures = run.rows.filter((r) => r.verdict === 'fail' && r.expectedFailure !== undefined).length
  return {
    passed: n('pass'),
    failed: n('fail') - expectedFailures,
    expectedFailures,
    nonStrict: n('non-strict'),
    inconclusive: n('inconclusive'),
    notExercised: n('not-exercised'),
    skipped: n('skip'),
    informational: n('informational')
  }
}

/** Words and a mark for each verdict: the mark is never the only signal. */
const SHOWN: Record<AnyVerdict, string> = {
  pass: '✅ pass',
  fail: '❌ fail',
  skip: '➖ skipped',
  'not-exercised': '➖ not exercised',
  'non-strict': '⚠️ non-strict (fails only with --strict)',
  inconclusive: '❔ inconclusive (never fails)',
  informational: 'ℹ️ informational'
}

/** Text for a Markdown table cell or line: no markup, no line breaks, at most `max` characters. */
export function mdText (text: string, max = 300): string {
  const cut = text.length > max ? `${text.slice(0, max)}…` : text
  return cut
    .replace(/[\r\n]+/g, ' ')
    .replace(/[&<>]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;' })[c]!)
    .replace(/([\\`*_[\]|~])/g, '\\$1')
    // A mark that opens a heading or a list only at the start of a line.
    .replace(/^([#>+-])/, '\\$1')
}

/** Inline code that holds any text: a fence longer than any run of backticks inside it. */
export function mdCode (text: string, max = 500): string {
  const cut = (text.length > max ? `${text.slice(0, max)}…` : text).replace(/[\r\n]+/g, ' ')
  const longest = Math.max(0, ...[...cut.matchAll(/`+/g)].map((m) => m[0].length))
  const fence = '`'.repeat(longest + 1)
  const pad = cut.startsWith('`') || cut.endsWith('`') || cut === '' ? ' ' : ''
  return `${fence}${pad}${cut}${pad}${fence}`
}

/** The Markdown summary of a run. */
export function markdownSummary (run: RunSummary): string {
  const verdict = run.passed ? '✅ passed' : '❌ failed'
  const about = [
    run.kind === 'judge' ? `judged: live traffic (\`${run.via ?? 'orbtest up --judge'}\`)` : `${run.kind === 'server' ? 'target' : 'client'}: ${mdCode(run.subject)}`,
    ...(run.seed === undefined ? [] : [`seed ${run.seed}`]),
    `${(run.ms / 1000).toFixed(1)} s`
  ]
  const lines = [
    `## orbtest: ${mdText(run.title)}: ${verdict}`, '',
    about.join(' · '), '',
    ...countsTable(run),
    ...failureLines(run.rows.filter((r) => r.verdict === 'fail' && r.expectedFailure === undefined)),
    ...findingLines(run.rows),
    ...serverLines(run),
    ...everyRowLines(run)
  ]
  return `${lines.join('\n')}\n`
}

/** The counts, as a table of one row: a server run's skipped cases, or a client run's findings that do not fail it. */
function countsTable (run: RunSummary): string[] {
  const c = summaryCounts(run)
  const columns: Array<[string, number]> = [
    ['passed', c.passed],
    ['failed', c.failed],
    ...(c.expectedFailures > 0 ? [['expected failures', c.expectedFailures] as [string, number]] : []),
    ...(run.kind === 'server'
      ? [['skipped', c.skipped] as [string, number]]
      : [
          ['non-strict', c.nonStrict] as [string, number],
          ['inconclusive', c.inconclusive] as [string, number],
          ['not exercised', c.notExercised] as [string, number]
        ]),
    ['informational', c.informational]
  ]
  return [
    `| ${columns.map(([k]) => k).join(' | ')} |`, `|${columns.map(() => '---:').join('|')}|`,
    `| ${columns.map(([, v]) => String(v)).join(' | ')} |`, ''
  ]
}

/** Each failure with its reason, Expected, Actual and the command that replays it. */
function failureLines (failures: readonly SummaryRow[]): string[] {
  if (failures.length === 0) return []
  const lines = [`### Failures (${failures.length})`, '']
  for (const f of failures) {
    lines.push(`#### ${mdText(f.id)}: ${mdText(f.title)}`, '')
    if (f.reason !== undefined) lines.push(mdText(f.reason, 600), '')
    if (f.where !== undefined) lines.push(`- **Where:** ${mdText(f.where)}`)
    lines.push(`- **Expected:** ${mdCode(f.expected ?? '(not given)')}`)
    lines.push(`- **Actual:** ${mdCode(f.actual ?? '(not given)')}`)
    if (f.replay !== undefined) lines.push(`- **Replay:** ${mdCode(f.replay, 2000)}`)
    lines.push('')
  }
  return lines
}

/** The findings that do not fail the run: non-strict, inconclusive, and informational ones that say something. */
/** Server findings shown, at most: a faulty app repeats itself. */
const SERVER_SHOWN = 20

/** What the server answered that it may not (`orbtest proxy`): reported, failing the run only with --strict-server. */
function serverLines (run: RunSummary): string[] {
  if (run.server === undefined) return []
  const shown = run.server.slice(0, SERVER_SHOWN).map((f) => `- **${mdText(f.id)}** (${mdText(f.level)}) ${mdCode(f.what)}: ${mdText(f.message)}`)
  const more = run.server.length > SERVER_SHOWN ? [`- and ${run.server.length - SERVER_SHOWN} more`] : []
  return [`### The server: ${run.server.length} finding(s)`, '', ...shown, ...more, '']
}

function findingLines (rows: readonly SummaryRow[]): string[] {
  const findings = rows.filter((r) => r.verdict === 'non-strict' || r.verdict === 'inconclusive' ||
    (r.verdict === 'informational' && r.reason !== undefined && r.reason !== ''))
  if (findings.length === 0) return []
  return [
    '### Findings that do not fail the run', '',
    ...findings.map((f) => `- **${mdText(f.id)}** (${SHOWN[f.verdict]}): ${mdText(f.reason ?? '')}`),
    ''
  ]
}

/** Every case or check with its verdict, folded away when the run passed. */
function everyRowLines (run: RunSummary): string[] {
  const lines = [
    `<details${run.passed ? '' : ' open'}><summary>Every ${run.kind === 'server' ? 'case' : 'check'} (${run.rows.length})</summary>`, '',
    '| id | verdict | rule |', '|---|---|---|'
  ]
  for (const r of run.rows) {
    const shown = r.expectedFailure === undefined
      ? SHOWN[r.verdict]
      : `☑️ expected failure: ${mdText(r.expectedFailure, 120)}`
    lines.push(`| ${mdText(r.id)} | ${shown} | ${mdText(r.title, 160)} |`)
  }
  lines.push('', '</details>', '')
  return lines
}
