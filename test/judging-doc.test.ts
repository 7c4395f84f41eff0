import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { begin, end, generatedParts } from './helpers/judging-doc.js'
import { ROOT } from './helpers/root.js'

t.test('CLIENT-15 the windows table and the tables of checks in the docs are the checks\' own (rewrite them with scripts/judging-doc.ts)', async (t) => {
  for (const { page, what, text } of generatedParts()) {
    const body = readFileSync(join(ROOT, 'docs', page), 'utf8')
    const start = body.indexOf(begin(what))
    const stop = body.indexOf(end(what))
    t.ok(start >= 0 && stop > start, `docs/${page} has its ${what} markers`)
    t.equal(body.slice(start + begin(what).length, stop).trim(), text.trim(),
      `docs/${page}: run npx tsx scripts/judging-doc.ts`)
  }
})
