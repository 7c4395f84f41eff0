import { html } from 'htm/preact'
import type { JudgeFrame } from './types.js'

const MARK: Record<string, string> = {
  pass: '✓', fail: '✗', 'non-strict': '!', inconclusive: '?', 'not-exercised': '·', informational: 'i'
}

/** `orbtest up --judge`: the adapter client rules' verdicts so far, live, worst first. */
export function JudgePanel ({ judge }: { judge: JudgeFrame }) {
  const order = ['fail', 'non-strict', 'inconclusive', 'pass', 'informational', 'not-exercised']
  const rank = (verdict: string): number => order.indexOf(verdict)
  const checks = [...judge.checks].sort((a, b) => rank(a.verdict) - rank(b.verdict) || a.id.localeCompare(b.id))
  const failed = judge.checks.filter((c) => c.verdict === 'fail').length
  return html`
    <section aria-labelledby="judge-title" class="panel">
      <div class="bar">
        <h2 id="judge-title">Client rules</h2>
        <span class=${`status status-${failed === 0 ? 'on' : 'off'}`}>
          ${failed === 0 ? 'no rule broken' : `${failed} broken`}</span>
        <span class="muted small">${judge.requests} requests judged since ${judge.since}</span>
      </div>
      <table class="judge">
        <thead><tr><th scope="col">verdict</th><th scope="col">id</th><th scope="col">rule</th><th scope="col">seen</th>
          <th scope="col">first violation</th></tr></thead>
        <tbody>${checks.map((c) => html`<tr class=${`verdict-${c.verdict}`} data-check=${c.id}>
          <td><span aria-hidden="true">${MARK[c.verdict] ?? ''}</span> ${c.verdict}</td><td><code>${c.id}</code></td>
          <td>${c.title}</td><td>${c.exercised}</td>
          <td class="small">${c.actual === undefined ? '' : html`expected ${c.expected ?? ''}; got ${c.actual}`}</td>
        </tr>`)}</tbody>
      </table>
    </section>`
}
