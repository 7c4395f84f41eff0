import { readFileSync } from 'node:fs'
import { UsageError } from '../src/cli/args.js'

/**
 * Reads an --expect-failures file: one id per line with the reason it fails (`OT-072 reason`), `#` starting a
 * comment. Ledger ids (with a case suffix such as `.b`) and orbtest's own client decisions (`OTC-03`) are taken.
 */
export function readExpectations (file: string): Map<string, string> {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (err) {
    throw new UsageError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`)
  }
  const map = new Map<string, string>()
  for (const [n, raw] of text.split('\n').entries()) {
    const line = raw.replace(/#.*$/, '').trim()
    if (line === '') continue
    const match = /^((?:OTC?|ORB)-A?\d{2,3}(?:\.[a-z0-9]+)?)\s+(\S.*)$/.exec(line)
    if (match === null) throw new UsageError(`${file}:${n + 1}: write "OT-072 the reason it fails" (or an ORB- id)`)
    map.set(match[1]!, match[2]!)
  }
  return map
}

/** An integer flag within its bounds, or the usage error that says what it takes. */
export function integer (raw: string, name: string, min: number, max: number): number {
  if (!/^-?\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new UsageError(`--${name} must be an integer from ${min} to ${max}, not ${JSON.stringify(raw)}`)
  }
  return Number(raw)
}
