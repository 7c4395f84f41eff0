import { appendFileSync, readFileSync, writeFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { flagMessage, UsageError } from './args.js'

export const SUMMARY_HELP = `Usage: orbtest summary REPORT.json [--github] [--out FILE]

Turns a run's JSON report (--json of 'orbtest conformance', server or client, or 'orbtest up --judge FILE.json')
into Markdown for a person: the verdict, the counts, each failure with its id, Expected, Actual and the command
that replays it, and a table of every id with its verdict. The report holds no token, and the Markdown escapes
whatever text the report carries.

Flags:
  --github     append the Markdown to $GITHUB_STEP_SUMMARY and write passed, failed, non-strict, inconclusive,
               not-exercised, informational and verdict (pass or fail) to $GITHUB_OUTPUT, as a GitHub Actions step
               does
  --out FILE   write the Markdown to FILE (default: stdout, unless --github)
  --help, -h   this help

Exit 0 when the run passed, 1 when a required rule failed, 2 when the report cannot be read.
`

/** `orbtest summary`: resolves to the exit code. */
export async function summary (argv: readonly string[], out: NodeJS.WritableStream = process.stdout): Promise<number> {
  let parsed
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      strict: true,
      options: { github: { type: 'boolean' }, out: { type: 'string' }, help: { type: 'boolean', short: 'h' } }
    })
  } catch (err) {
    throw new UsageError(flagMessage(err as Error))
  }
  const { values, positionals } = parsed
  if (values.help === true) {
    out.write(SUMMARY_HELP)
    return 0
  }
  if (positionals.length !== 1) throw new UsageError('give one JSON report, for example: orbtest summary report.json')
  const file = positionals[0]!
  let json: unknown
  try {
    json = JSON.parse(readFileSync(file, 'utf8'))
  } catch (err) {
    throw new UsageError(`cannot read ${file} as JSON (${(err as Error).message})`)
  }
  // Loaded here: the summary is the conformance core's, and `orbtest up` should not pay for it.
  const { markdownSummary, readRunReport, summaryCounts } = await import('../../conformance/summary.js')
  let run
  try {
    run = readRunReport(json)
  } catch (err) {
    throw new UsageError(`${file} is not an orbtest report: ${(err as Error).message}`)
  }
  const markdown = markdownSummary(run)
  if (values.github === true) {
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
  if (values.out !== undefined) writeFileSync(values.out, markdown)
  else if (values.github !== true) out.write(markdown)
  return run.passed ? 0 : 1
}
