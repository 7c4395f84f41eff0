// The documents a user reads, held to what they describe: the route tables to the spec documents, every link to a
// file and heading that exist, the id families of docs/testing.md to the tests' titles, the README's dependency
// table to package.json.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import t from 'tap'
import { ROOT } from './helpers/root.js'

const read = (...path: string[]): string => readFileSync(join(ROOT, ...path), 'utf8')

/** `METHOD /path` with every path parameter written `{}`, so that `{adapterId}` and `{id}` compare equal. */
const routeKey = (method: string, path: string): string => `${method.toUpperCase()} ${path.replace(/\{[^}]*\}/g, '{}')}`

/** The rows of the table under a page's `## Routes`: each first cell's `METHOD /path`, and the row itself. */
function routeRows (page: string): Array<{ route: string, row: string }> {
  const section = page.split(/^## Routes$/m)[1]?.split(/^## /m)[0] ?? ''
  const rows = [...section.matchAll(/^\| `([A-Z]+) (\/[^`]*)` \|.*$/gm)]
  return rows.map((m) => ({ route: routeKey(m[1]!, m[2]!), row: m[0] }))
}

t.test('DOCS-01 docs/orbtile.md\'s route table lists every route the Orbtile schema names, and the unregister route of OT-A07', async (t) => {
  const schema = JSON.parse(read('specs', 'orbtile-adapter-protocol-v1.2.schema.json'))
  // The schema is JSON Schema, not OpenAPI: a body's description starts with the route that takes it.
  const named = Object.values(schema.$defs as Record<string, { description?: string }>)
    .map((def) => def.description?.match(/^(GET|PUT|POST|DELETE|PATCH) (\/[^\s.:]*)/))
    .filter((m) => m !== null && m !== undefined)
    .map((m) => routeKey(m[1]!, m[2]!))
  const rows = routeRows(read('docs', 'orbtile.md'))
  t.same(rows.map((r) => r.route).sort(), [...named, routeKey('DELETE', '/adapters/{id}')].sort())
  const unregister = rows.find((r) => r.route === routeKey('DELETE', '/adapters/{id}'))
  t.match(unregister?.row, /OT-A07/, 'the route the spec does not name cites the decision that adds it')
})

t.test('DOCS-02 docs/orb.md\'s route table lists exactly the operations of the Orb bot API\'s OpenAPI document, each with its ledger ids', async (t) => {
  const spec = JSON.parse(read('specs', 'orb-bot-api.openapi.json'))
  const methods = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options']
  const operations = Object.entries(spec.paths as Record<string, Record<string, unknown>>)
    .flatMap(([path, item]) => Object.keys(item).filter((m) => methods.includes(m)).map((m) => routeKey(m, path)))
  const rows = routeRows(read('docs', 'orb.md'))
  t.same(rows.map((r) => r.route).sort(), operations.sort())
  for (const { route, row } of rows) t.match(row, /\| ORB-\d{3}[^|]*\|$/, `${route} names its ledger ids`)
})

/** Every Markdown file of the project that a reader may open: not the packages, the build or tap's own files. */
function markdownFiles (dir = ROOT): string[] {
  return readdirSync(dir).flatMap((name) => {
    if (['node_modules', 'dist', '.git', '.tap'].includes(name)) return []
    const path = join(dir, name)
    if (statSync(path).isDirectory()) return markdownFiles(path)
    return name.endsWith('.md') ? [path] : []
  })
}

/** The anchors GitHub gives a page's headings: lower case, punctuation dropped, spaces as hyphens, repeats numbered. */
function anchors (page: string): Set<string> {
  const seen = new Map<string, number>()
  const out = new Set<string>()
  for (const [, heading] of withoutCode(page).matchAll(/^#{1,6} (.+)$/gm)) {
    const slug = heading!.trim().toLowerCase().replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '').replace(/ /g, '-')
    const count = seen.get(slug) ?? 0
    seen.set(slug, count + 1)
    out.add(count === 0 ? slug : `${slug}-${count}`)
  }
  return out
}

/** A page without its fenced code blocks, whose `#` lines are comments and whose brackets are code. */
const withoutCode = (page: string): string => page.replace(/^```[\s\S]*?^```/gm, '')

t.test('DOCS-03 every relative link of the project\'s Markdown names a file that exists, and a heading of it that exists', async (t) => {
  for (const file of markdownFiles()) {
    const page = readFileSync(file, 'utf8')
    for (const [, target] of withoutCode(page).matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/i.test(target!)) continue // http:, https:, mailto:
      const [path, anchor] = target!.split('#') as [string, string | undefined]
      const linked = path === '' ? file : join(dirname(file), decodeURIComponent(path))
      const where = `${relative(ROOT, file)}: ${target}`
      if (!existsSync(linked)) {
        t.fail(`${where}: no such file`)
        continue
      }
      if (anchor === undefined) continue
      t.ok(anchors(readFileSync(linked, 'utf8')).has(anchor.toLowerCase()), `${where}: the heading`)
    }
  }
})

t.test('DOCS-04 docs/testing.md explains every id family that starts a test title', async (t) => {
  const families = new Set<string>()
  for (const name of readdirSync(join(ROOT, 'test')).filter((n) => n.endsWith('.test.ts'))) {
    for (const [, family] of read('test', name).matchAll(/\btest\(\s*['"`]([A-Z]+)-[A-Z]?\d/g)) families.add(family!)
  }
  const page = read('docs', 'testing.md')
  t.ok(families.size > 10, `${families.size} families found`)
  for (const family of families) t.match(page, `| \`${family}-\``, `${family}- has a row`)
})

t.test('DOCS-05 the README is a guide of at most 300 lines whose dependency table names every package of package.json', async (t) => {
  const readme = read('README.md')
  t.ok(readme.split('\n').length <= 300, 'at most 300 lines')
  const pkg = JSON.parse(read('package.json'))
  const table = readme.split(/^## Dependencies.*$/m)[1]?.split(/^## /m)[0] ?? ''
  for (const name of [...Object.keys(pkg.dependencies), ...Object.keys(pkg.devDependencies)]) {
    t.match(table, `\`${name}\``, `${name} is in the table`)
  }
  t.match(readme, 'npm install && npm start', 'the command that installs and starts')
  t.match(readme, 'npm test', 'the command that tests')
})
