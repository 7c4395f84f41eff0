/**
 * The reporter for a person at a terminal (`--reporter human`, the default when stdout is one): a progress line while
 * the run goes (cases done of total, what is running, time so far), then a summary to act on: the counts, each
 * failure with its id, Expected, Actual and the command that replays it. In colour where the terminal takes it
 * (not with NO_COLOR; FORCE_COLOR forces it), and never by colour alone: every verdict is also a word and a mark.
 * TAP stays the output anywhere else; the summary's facts come from the run's JSON report (summary.ts), as the CI
 * summary's do.
 */
import type { RunSummary } from './summary.js'
import { summaryCounts } from './summary.js'

export type ReporterName = 'tap' | 'human'

/** The reporter a run uses: the one asked for, else human on a terminal and TAP anywhere else. */
export function chooseReporter (asked: ReporterName | undefined, out: NodeJS.WritableStream): ReporterName {
  return asked ?? ((out as { isTTY?: boolean }).isTTY === true ? 'human' : 'tap')
}

/** Whether to colour: FORCE_COLOR (not 0) forces it, NO_COLOR forbids it, else a terminal that is not dumb. */
export function wantsColour (out: NodeJS.WritableStream, env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== '0') return true
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false
  return (out as { isTTY?: boolean }).isTTY === true && env.TERM !== 'dumb'
}

const CODES = { red: 31, green: 32, yellow: 33, dim: 2, bold: 1 } as const
type Style = keyof typeof CODES

export class HumanReporter {
  readonly #out: NodeJS.WritableStream
  readonly #tty: boolean
  readonly #colour: boolean
  readonly #started = performance.now()
  readonly #running = new Set<string>()
  #done = 0
  #total: number
  #lineShown = false

  constructor (out: NodeJS.WritableStream, total: number, options: { colour?: boolean } = {}) {
    this.#out = out
    this.#tty = (out as { isTTY?: boolean }).isTTY === true
    this.#colour = options.colour ?? wantsColour(out)
    this.#total = total
  }

  paint (style: Style, text: string): string {
    return this.#colour ? `\u001b[${CODES[style]}m${text}\u001b[0m` : text
  }

  /** The run's first lines: what is judged, and how. */
  header (title: string, about: string): void {
    this.#write(`${this.paint('bold', title)}\n${this.paint('dim', about)}\n\n`)
  }

  start (name: string): void {
    this.#running.add(name)
    this.#progress()
  }

  /** A case or scenario ended; `bad` names what failed in it (shown at once, above the progress line). */
  done (name: string, bad: readonly string[], ms: number): void {
    this.#running.delete(name)
    this.#done++
    const time = this.paint('dim', `${(ms / 1000).toFixed(1)} s`)
    if (bad.length > 0) this.#write(`${this.paint('red', '✗')} ${name} ${time}  ${this.paint('red', bad.join(', '))}\n`)
    else if (!this.#tty) this.#write(`${this.paint('green', '✓')} ${name} ${time}\n`)
    this.#progress()
  }

  /** More to play than planned (a failure being shrunk). */
  grow (total: number): void {
    this.#total = Math.max(this.#total, total)
  }

  /** The closing summary; the run's verdict last. */
  end (run: RunSummary): void {
    this.#clear()
    const c = summaryCounts(run)
    const failures = run.rows.filter((r) => r.verdict === 'fail' && r.expectedFailure === undefined)
    const lines: string[] = ['']
    for (const f of failures) {
      lines.push(`${this.paint('red', '✗ FAIL')} ${this.paint('bold', f.id)} ${f.title}`)
      if (f.reason !== undefined) lines.push(`    ${f.reason}`)
      if (f.where !== undefined) lines.push(`    where:    ${f.where}`)
      lines.push(`    expected: ${this.paint('green', f.expected ?? '(not given)')}`)
      lines.push(`    actual:   ${this.paint('red', f.actual ?? '(not given)')}`)
      if (f.replay !== undefined) lines.push(`    replay:   ${f.replay}`)
      lines.push('')
    }
    for (const f of run.rows.filter((r) => r.verdict === 'non-strict')) {
      lines.push(`${this.paint('yellow', '! NON-STRICT')} ${this.paint('bold', f.id)} ${f.title}${f.reason === undefined ? '' : `: ${f.reason}`}`)
    }
    for (const f of run.rows.filter((r) => r.verdict === 'inconclusive')) {
      lines.push(`${this.paint('dim', '? INCONCLUSIVE')} ${this.paint('bold', f.id)} ${f.title}${f.reason === undefined ? '' : `: ${f.reason}`}`)
    }
    const counts = [
      this.paint('green', `${c.passed} passed`),
      c.failed > 0 ? this.paint('red', `${c.failed} failed`) : `${c.failed} failed`,
      ...(c.expectedFailures > 0 ? [`${c.expectedFailures} expected failures`] : []),
      ...(c.nonStrict > 0 ? [this.paint('yellow', `${c.nonStrict} non-strict (fail only with --strict)`)] : []),
      ...(c.inconclusive > 0 ? [`${c.inconclusive} inconclusive`] : []),
      ...(c.notExercised > 0 ? [`${c.notExercised} not exercised`] : []),
      ...(c.skipped > 0 ? [`${c.skipped} skipped`] : []),
      ...(c.informational > 0 ? [`${c.informational} informational`] : [])
    ]
    lines.push(`${counts.join(', ')} ${this.paint('dim', `(${this.#elapsed()})`)}`)
    lines.push(run.passed ? this.paint('green', '✓ PASSED: every required rule held') : this.paint('red', `✗ FAILED: ${c.failed} required rule${c.failed === 1 ? '' : 's'} broken`))
    this.#write(`${lines.join('\n')}\n`)
  }

  #elapsed (): string {
    return `${((performance.now() - this.#started) / 1000).toFixed(1)} s`
  }

  #progress (): void {
    if (!this.#tty) return
    const running = [...this.#running]
    const shown = running.length === 0 ? '' : ` · running ${running.slice(0, 3).join(', ')}${running.length > 3 ? ` and ${running.length - 3} more` : ''}`
    const line = `[${this.#done}/${this.#total}]${shown} · ${this.#elapsed()}`
    const columns = (this.#out as { columns?: number }).columns ?? 0
    const width = columns >= 40 ? columns : 100
    this.#out.write(`\r\u001b[2K${this.paint('dim', line.length > width - 1 ? `${line.slice(0, width - 2)}…` : line)}`)
    this.#lineShown = true
  }

  #clear (): void {
    if (this.#lineShown) this.#out.write('\r\u001b[2K')
    this.#lineShown = false
  }

  #write (text: string): void {
    this.#clear()
    this.#out.write(text)
  }
}
