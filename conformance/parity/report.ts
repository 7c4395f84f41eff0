// The parity report: every difference between a recording and its replay against a fake, counted by route, kind and
// cause, in words, as JSON and as an HTML page.
import type { RecordedApi } from '../../src/proxy/recording.js'
import { differencesOf, type Difference, type DifferenceCause } from './compare.js'
import type { Replayed } from './replay.js'

export interface ParityCount {
  route: string
  kind: Difference['kind']
  cause: DifferenceCause
  count: number
}

export interface ParityReport {
  orbtest: 'parity'
  api: RecordedApi
  recording: string
  /** What the recording was replayed against, in words (the fake and its flags). */
  against: string
  exchanges: number
  /** Exchanges whose recorded reply was whole, so that there was something to compare. */
  compared: number
  /** Long polls sent with a shorter wait: the recorded server answered them early (an event came). */
  shortened: number
  differences: Difference[]
  causes: Record<DifferenceCause, number>
  counts: ParityCount[]
}

/** The report of a replay: each exchange compared, the differences counted. */
export function parityReport (
  api: RecordedApi,
  recording: string,
  against: string,
  replayed: readonly Replayed[]
): ParityReport {
  const differences = replayed.flatMap((x) => differencesOf(api, x))
  const causes: Record<DifferenceCause, number> = { behaviour: 0, world: 0, follows: 0 }
  const counts = new Map<string, ParityCount>()
  for (const d of differences) {
    causes[d.cause]++
    const key = `${d.route}\u0000${d.kind}\u0000${d.cause}`
    const c = counts.get(key) ?? { route: d.route, kind: d.kind, cause: d.cause, count: 0 }
    c.count++
    counts.set(key, c)
  }
  return {
    orbtest: 'parity',
    api,
    recording,
    against,
    exchanges: replayed.length,
    compared: replayed.filter((x) => x.recorded.finished).length,
    shortened: replayed.filter((x) => x.shortened !== undefined).length,
    differences,
    causes,
    counts: [...counts.values()].sort((a, b) => a.route.localeCompare(b.route) || a.kind.localeCompare(b.kind))
  }
}

/** Whether the fake behaved as the recorded server did: no difference of behaviour (the world's are told, not held). */
export function parityHeld (r: ParityReport): boolean {
  return r.causes.behaviour === 0
}

const CAUSE_WORDS: Record<DifferenceCause, string> = {
  behaviour: 'of behaviour',
  world: 'of the world (a thing or setting one server has and the other lacks)',
  follows: 'following an earlier difference (a value the replay could not put back)'
}

/** The report in words: the counts, then each difference (the first `shown`). */
export function parityText (r: ParityReport, shown = 50): string {
  const cut = r.exchanges - r.compared
  const lines = [
    `orbtest parity: ${r.exchanges} exchanges of ${r.recording} replayed against ${r.against}; ${r.compared} compared` +
      (cut === 0 ? '' : ` (${cut} cut in the recording)`)
  ]
  if (r.shortened > 0) {
    lines.push(`  ${r.shortened} long poll(s) sent with a shorter wait: the recorded server answered them early`)
  }
  for (const cause of ['behaviour', 'world', 'follows'] as const) {
    lines.push(`  ${r.causes[cause]} difference(s) ${CAUSE_WORDS[cause]}`)
  }
  if (r.counts.length > 0) lines.push('  by route:')
  for (const c of r.counts) lines.push(`    ${c.route}  ${c.kind}  ${c.cause}  ${c.count}`)
  for (const d of r.differences.slice(0, shown)) lines.push(`  #${d.n} ${differenceText(d)}`)
  const more = r.differences.length - shown
  if (more > 0) lines.push(`  … and ${more} more (the JSON report has every one)`)
  lines.push(parityHeld(r) ? 'parity held: no difference of behaviour' : 'parity broken: the fake behaved otherwise')
  return `${lines.join('\n')}\n`
}

function differenceText (d: Difference): string {
  const where = d.where === undefined ? '' : ` ${d.where}`
  return `${d.route}: ${d.kind}${where}: recorded ${d.recorded}, replayed ${d.replayed} (${d.cause})`
}

const escapeHtml = (s: string): string =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!)

/** The report as one self-contained HTML page: the counts, then a table of every difference. */
export function parityHtml (r: ParityReport): string {
  const row = (cells: Array<string | number>, tag = 'td'): string =>
    `<tr>${cells.map((c) => `<${tag}>${escapeHtml(String(c))}</${tag}>`).join('')}</tr>`
  const counts = r.counts.map((c) => row([c.route, c.kind, c.cause, c.count])).join('\n')
  const diffs = r.differences
    .map((d) => row([d.n, d.route, d.kind, d.where ?? '', d.recorded, d.replayed, d.cause])).join('\n')
  const verdict = parityHeld(r)
    ? 'Parity held: no difference of behaviour.'
    : 'Parity broken: the fake behaved otherwise.'
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>orbtest parity: ${escapeHtml(r.recording)}</title>
<style>body{font:14px system-ui,sans-serif;margin:2em;color:#222}table{border-collapse:collapse;margin:1em 0}
td,th{border:1px solid #ccc;padding:.3em .6em;text-align:left;vertical-align:top}th{background:#f4f4f4}
.behaviour{color:#b00020}</style></head><body>
<h1>Parity of ${escapeHtml(r.api === 'orbtile' ? 'the fake Orbtile' : 'the fake Orb')}</h1>
<p>${r.exchanges} exchanges of <code>${escapeHtml(r.recording)}</code> replayed against ${escapeHtml(r.against)};
${r.compared} compared${r.shortened > 0 ? `; ${r.shortened} long poll(s) sent with a shorter wait, as the recorded server answered them early` : ''}.</p>
<p class="${parityHeld(r) ? '' : 'behaviour'}">${verdict} Differences: ${r.causes.behaviour} of behaviour,
${r.causes.world} of the world, ${r.causes.follows} following an earlier one.</p>
<h2>By route</h2>
<table>${row(['route', 'kind', 'cause', 'count'], 'th')}
${counts}</table>
<h2>Every difference</h2>
<table>${row(['#', 'route', 'kind', 'where', 'recorded', 'replayed', 'cause'], 'th')}
${diffs}</table>
</body></html>
`
}
