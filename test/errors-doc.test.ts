import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { ORB_ERRORS } from '../src/orb-mock/errors.js'
import { ORBTILE_ERRORS } from '../src/orbtile-mock/errors.js'
import { CONTROL_ERRORS } from '../src/shared/control-error.js'
import { ERROR_CODES, ERROR_STATUS } from '../src/spec/orbtile.js'
import { ORB_ERROR_STATUSES } from '../src/spec/orb.js'
import { BEGIN, END, errorTables } from './helpers/errors-doc.js'
import { ROOT } from './helpers/root.js'

const root = ROOT

t.test('ERR-01 docs/errors.md lists exactly what the three error registries hold (rewrite it with scripts/errors-doc.ts)', async (t) => {
  const page = readFileSync(join(root, 'docs', 'errors.md'), 'utf8')
  const start = page.indexOf(BEGIN)
  const end = page.indexOf(END)
  t.ok(start >= 0 && end > start, 'the page has its markers')
  t.equal(page.slice(start + BEGIN.length, end).trim(), errorTables().trim(), 'run: npx tsx scripts/errors-doc.ts')
})

t.test('ERR-02 OT-150 OT-A01 the Orbtile registry builds every code of the spec, each with OT-A01\'s status', async (t) => {
  t.same([...new Set(ORBTILE_ERRORS.map((e) => e.code))].sort(), [...ERROR_CODES].sort())
  for (const e of ORBTILE_ERRORS) {
    if (e.status !== 405) t.equal(e.status, ERROR_STATUS[e.code], `${e.code}: ${e.status}`)
    t.ok(e.when.length > 10, `${e.code} says when it fires`)
  }
})

t.test('ERR-03 ORB-102 every status the Orb spec lists for an error has an entry in the fake Orb\'s registry', async (t) => {
  const statuses = new Set<number>(Object.values(ORB_ERRORS).map((e) => e.status))
  for (const status of ORB_ERROR_STATUSES) t.ok(statuses.has(status), `${status} is in ORB_ERRORS`)
  for (const [name, e] of Object.entries(ORB_ERRORS)) t.ok(e.when.length > 10, `${name} says when it fires`)
})

t.test('ERR-04 the control registry and the control OpenAPI document\'s Error enum hold the same codes', async (t) => {
  const doc = JSON.parse(readFileSync(join(root, 'src', 'control', 'openapi.json'), 'utf8'))
  const documented: string[] = doc.components.schemas.Error.properties.error.properties.code.enum
  t.same([...documented].sort(), Object.keys(CONTROL_ERRORS).sort())
})
