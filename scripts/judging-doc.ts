// Writes the generated tables of the client suites' docs from the checks: `npx tsx scripts/judging-doc.ts`.
// test/judging-doc.test.ts fails whenever a page and the checks differ.
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { begin, end, generatedParts } from '../test/helpers/judging-doc.js'

for (const { page, what, text } of generatedParts()) {
  const file = join(import.meta.dirname, '..', 'docs', page)
  const body = readFileSync(file, 'utf8')
  const start = body.indexOf(begin(what))
  const stop = body.indexOf(end(what))
  if (start < 0 || stop < start) throw new Error(`docs/${page} has no ${begin(what)} … ${end(what)} markers`)
  writeFileSync(file, `${body.slice(0, start + begin(what).length)}\n\n${text}\n\n${body.slice(stop)}`)
}
