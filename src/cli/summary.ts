import { appendFileSync, readFileSync, writeFileSync } from 'node:fs'
import { markdownSummary, readRunReport, summaryCounts, type RunSummary } from '../../conformance/summary.js'
import { UsageError } from '../shared/usage-error.js'
import type { CommandInput, Outcome } from './command.js'
import type { SUMMARY_FLAGS } from './command-flags.js'

/** `orbtest summary REPORT.json`: the run's verdict is the outcome, so that a CI step fails with the run. */
export function summary ({ flags, operands }: CommandInput<typeof SUMMARY_FLAGS>, out: NodeJS.WritableStream): Outcome {
  if (operands.length !== 1) throw new UsageError('give one JSON report, for example: orbtest summary report.json')
  const run = readReport(operands[0]!)
  const markdown = markdownSummary(run)
  if (flags.github === true) writeGithubStep(run, markdown)
  if (flags.out !== undefined) writeFileSync(flags.out, markdown)
  else if (flags.github !== true) out.write(markdown)
  return run.passed ? 'ok' : 'failed'
}

function readReport (file: string): RunSummary {
  let json: unknown
  try {
    json = JSON.parse(readFileSync(file, 'utf8'))
  } catch (err) {
    throw new UsageError(`cannot read ${file} as JSON (${(err as Error).message})`)
  }
  try {
    return readRunReport(json)
  } catch (err) {
    throw new UsageError(`${file} is not an orbtest report: ${(err as Error).message}`)
  }
}

/** What a GitHub Actions step shows and gives the next steps: the summary page, and the counts as outputs. */
function writeGithubStep (run: RunSummary, markdown: string): void {
  const page = process.env.GITHUB_STEP_SUMMARY
  const outputs = process.env.GITHUB_OUTPUT
  if (page === undefined || page === '' || outputs === undefined || outputs === '') {
    throw new UsageError('--github needs GITHUB_STEP_SUMMARY and GITHUB_OUTPUT, which a GitHub Actions step sets')
  }
  appendFileSync(page, markdown)
  const c = summaryCounts(run)
  appendFileSync(outputs, [
    `passed=${c.passed}`,
    `failed=${c.failed}`,
    `non-strict=${c.nonStrict}`,
    `inconclusive=${c.inconclusive}`,
    `not-exercised=${c.notExercised}`,
    `informational=${c.informational}`,
    `verdict=${run.passed ? 'pass' : 'fail'}`,
    ''
  ].join('\n'))
}
