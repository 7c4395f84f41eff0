// A campaign's report for people: the figures, each check with its verdict, and for a failed one its evidence and
// the command that replays it.
import type { CampaignReport } from './campaign.js'
import type { ProcessSample } from './server.js'

const mib = (kib: number): string => `${(kib / 1024).toFixed(1)} MiB`

/** One line of a process sample. */
export function describeSample (sample: ProcessSample): string {
  return `${sample.sockets} sockets, ${sample.fds} descriptors, RSS ${mib(sample.rssKiB)}`
}

/** The statuses of a histogram, most frequent first: `200×1234 400×567 none×2`. */
export function histogram (statuses: Record<string, number>): string {
  return Object.entries(statuses).sort((a, b) => b[1] - a[1]).map(([status, n]) => `${status}×${n}`).join(' ')
}

/** The summary a run prints on stdout. */
export function formatReport (report: CampaignReport): string {
  const lines: string[] = []
  lines.push(`orbtest fuzz: seed ${report.seed}, ${report.requestsSent} of ${report.requestsPlanned} requests to ${report.servers.join(', ')} in ${(report.durationMs / 1000).toFixed(1)} s (${report.requestsPerSecond} requests/s)${report.stoppedByTimeLimit ? ', stopped by the time limit' : ''}`)
  for (const [name, tally] of Object.entries(report.perServer)) {
    if (tally.requests === 0) continue
    lines.push(`  ${name.padEnd(8)} ${String(tally.requests).padStart(7)} requests  ${histogram(tally.statuses)}`)
  }
  lines.push(`  process  idle: ${describeSample(report.process.idle)}`)
  lines.push(`           peak: ${report.process.peak.sockets} sockets, RSS ${mib(report.process.peak.rssKiB)}`)
  lines.push(`           after: ${describeSample(report.process.after)}`)
  lines.push(`  clock ticks ${report.ticks.sent} (${report.ticks.failed} failed), keep-alive retries ${report.retries}, webhook deliveries ${report.webhookDeliveries}, server error log lines ${report.serverErrorLogLines}`)
  lines.push('Checks:')
  for (const [name, check] of Object.entries(report.checks)) {
    lines.push(`  ${check.failures === 0 ? 'ok  ' : 'FAIL'} ${name}: ${check.description}${check.failures === 0 ? '' : ` (${check.failures} failures)`}`)
    for (const example of check.examples) {
      const where = example.index < 0 ? '' : `#${example.index} `
      lines.push(`         ${where}${example.server} ${example.label}: ${example.detail}`)
    }
  }
  if (report.ok) lines.push('Every check held.')
  else {
    const indices = Object.values(report.checks).flatMap((check) => check.examples.map((e) => e.index))
      .filter((index) => index >= 0)
    lines.push(`Some checks failed. Seed ${report.seed}; replay the run with:`)
    lines.push(`  ${report.replay}`)
    if (indices.length > 0) {
      lines.push('or only the requests above, each on a fresh server state:')
      lines.push(`  ${report.replay} --only ${[...new Set(indices)].slice(0, 20).join(',')}`)
    }
  }
  return `${lines.join('\n')}\n`
}
