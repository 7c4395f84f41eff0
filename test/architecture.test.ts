// The layering rules of ARCHITECTURE.md, held by reading every import in the tree (TypeScript's own pre-processor,
// type-only imports included: a cycle of types still ties two modules together).
import { execFileSync } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { basename, dirname, join, relative, resolve } from 'node:path'
import t from 'tap'
import ts from 'typescript'
import { CLI } from './helpers/cli.js'
import { ROOT } from './helpers/root.js'
import { untracked } from './helpers/untracked-children.js'

const root = ROOT

/** Every .ts file below `dir`, as a path relative to the root. */
function sources (dir: string): string[] {
  const out: string[] = []
  for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) out.push(...sources(path))
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) out.push(path)
  }
  return out
}

interface Edge { to: string, typeOnly: boolean }

/** The project files a file imports (relative specifiers only), `.js` mapped back to `.ts`. */
function importsOf (file: string): Edge[] {
  const text = readFileSync(join(root, file), 'utf8')
  const edges: Edge[] = []
  for (const ref of ts.preProcessFile(text, true, true).importedFiles) {
    if (!ref.fileName.startsWith('.')) continue
    const target = relative(root, resolve(root, dirname(file), ref.fileName)).replace(/\.js$/, '.ts')
    if (!target.endsWith('.ts')) continue
    // A type-only import says so at its start: `import type {…}` or `export type {…}`.
    const line = text.slice(text.lastIndexOf('\n', ref.pos) + 1, ref.pos)
    edges.push({ to: target, typeOnly: /^\s*(?:import|export)\s+type\b/.test(line) })
  }
  return edges
}

const files = ['src', 'conformance', 'test', 'bench'].flatMap(sources)
/** The modules of a suite or of a fake, which the conformance core must not reach. */
const SUITE_OR_FAKE = /^(conformance\/(server|client)\/(orbtile|orb)|src\/(orbtile-mock|orb-mock|control))\//
const graph = new Map(files.map((f) => [f, importsOf(f)]))

/** The conformance core: what every suite, server or client, plugs into. */
const CORE = [
  ...['report', 'run', 'summary', 'human'].map((name) => `conformance/${name}.ts`),
  ...files.filter((f) => f.startsWith('conformance/server/core/')),
  // The client core: journal, checks' base, process runner, scenario engine, reports.
  ...files.filter((f) => f.startsWith('conformance/client/core/'))
]

t.test(
  'ARCH-01 the conformance core imports nothing of a suite, nor of a fake, directly or through another file',
  async (t) => {
    const reached: string[] = []
    for (const file of CORE) {
      t.ok(graph.has(file), `${file} exists`)
      const seen = new Set<string>()
      const stack = [file]
      while (stack.length > 0) {
        const at = stack.pop()!
        if (seen.has(at)) continue
        seen.add(at)
        for (const { to } of graph.get(at) ?? []) {
          if (SUITE_OR_FAKE.test(to)) {
            reached.push(`${file} -> ${at} -> ${to}`)
          }
          stack.push(to)
        }
      }
    }
    t.same(reached, [], 'suite or fake modules the core reaches')
  }
)

t.test(
  'ARCH-02 a conformance suite judges by the spec, not by the fake: it imports a fake only for the names of its faults (a client suite starts its fake through the fake\'s entry point alone)',
  async (t) => {
    const found: string[] = []
    for (const file of files.filter((f) => f.startsWith('conformance/'))) {
      for (const { to, typeOnly } of graph.get(file)!) {
        // A client suite runs the fake its client talks to: through the fake's entry point alone.
        if (file.startsWith('conformance/client/orbtile/') && to === 'src/orbtile-mock/index.ts') continue
        if (file.startsWith('conformance/client/orb/') && to === 'src/orb-mock/index.ts') continue
        if (/^src\/(orbtile-mock|orb-mock)\//.test(to) && !(typeOnly && /\/faults\.ts$/.test(to))) {
          found.push(`${file} -> ${to}`)
        }
      }
    }
    t.same(found, [], 'imports of a fake')
  }
)

t.test('ARCH-03 no import cycle in src/, conformance/, test/ or bench/', async (t) => {
  // Tarjan's strongly connected components: any component of more than one file (or a file importing itself) is a
  // cycle.
  let index = 0
  const order = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const cycles: string[][] = []
  const visit = (v: string): void => {
    order.set(v, index)
    low.set(v, index++)
    stack.push(v)
    onStack.add(v)
    for (const { to: w } of graph.get(v) ?? []) {
      if (!graph.has(w)) continue
      if (!order.has(w)) {
        visit(w)
        low.set(v, Math.min(low.get(v)!, low.get(w)!))
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, order.get(w)!))
      }
    }
    if (low.get(v) === order.get(v)) {
      const component: string[] = []
      let w: string
      do {
        w = stack.pop()!
        onStack.delete(w)
        component.push(w)
      } while (w !== v)
      if (component.length > 1 || (graph.get(v) ?? []).some((e) => e.to === v)) cycles.push(component.sort())
    }
  }
  for (const file of graph.keys()) if (!order.has(file)) visit(file)
  t.same(cycles, [], 'import cycles')
  t.ok(graph.size > 150, `${graph.size} files read`)
})

t.test('ARCH-05 the control server and the CLI load a fake only when it runs: their imports of a fake are type-only', async (t) => {
  // `orbtest orbtile` must not load the fake Orb, nor `orbtest orb` the fake Orbtile; src/orbtest.ts starts each
  // fake it runs (the Orb by a dynamic import, which the pre-processor lists too, so it is named here).
  // The CLI's clean-up after a crash removes a discovery file with the fake's own helper, a leaf of node:fs (loaded
  // with the fakes, once the flags have parsed: ARCH-07).
  const allowed = new Set(['src/orbtest.ts -> src/orbtile-mock/index.ts', 'src/orbtest.ts -> src/orb-mock/index.ts',
    'src/cli/serve.ts -> src/orbtile-mock/discovery.ts'])
  const loads = files.filter((f) => /^src\/(control|cli)\//.test(f) || f === 'src/orbtest.ts')
    .flatMap((f) => graph.get(f)!.filter((e) => !e.typeOnly && /^src\/(orbtile-mock|orb-mock)\//.test(e.to))
      .map((e) => `${f} -> ${e.to}`))
    .filter((edge) => !allowed.has(edge))
  t.same(loads, [], 'value imports of a fake from the control server or the CLI')
})

t.test('ARCH-06 the dashboard\'s page imports nothing of the rest: it knows the fakes by their frames alone', async (t) => {
  const page = files.filter((f) => f.startsWith('src/dashboard-ui/'))
  t.ok(page.length > 5, `${page.length} files of the page`)
  const out = page.flatMap((f) => graph.get(f)!.filter((e) => !e.to.startsWith('src/dashboard-ui/'))
    .map((e) => `${f} -> ${e.to}`))
  t.same(out, [], 'imports from the page to the rest of the tree')
})

t.test('ARCH-07 the built CLI reaches fastify only through a dynamic import: --help and a flag mistake load no fake', async (t) => {
  const dir = dirname(CLI)
  /** The modules a built file imports statically: `import … from "x"` and `import "x"` at the start of a line. */
  const statics = (file: string): string[] => [...readFileSync(join(dir, file), 'utf8')
    .matchAll(/^import\s+(?:[^'"]*?\s+from\s+)?"([^"]+)";?$/gm)].map((m) => m[1]!)
  const seen = new Set<string>()
  const packages = new Set<string>()
  const walk = (file: string): void => {
    if (seen.has(file)) return
    seen.add(file)
    for (const spec of statics(file)) {
      if (spec.startsWith('./')) walk(spec.slice(2))
      else if (!spec.startsWith('node:')) packages.add(spec)
    }
  }
  walk(basename(CLI))
  t.ok(seen.size >= 2, `${seen.size} files of the bundle load with the entry`)
  t.same([...packages].filter((p) => /^(fastify|ajv|@fastify\/)/.test(p)), [], 'fastify, its plugins and ajv wait')
  const bundle = readFileSync(CLI, 'utf8')
  t.match(bundle, /await import\("\.\/[^"]+"\)/, 'the serve commands load their fakes by a dynamic import')
})

/**
 * The layers, lowest first: what each may not import. The CLI (src/cli/) is the top layer and may import everything;
 * the suites know nothing of how a command line reads them; the fakes, the control server, the specs and the shared
 * code know nothing of the suites that judge them.
 */
const LAYERS = [
  { files: /^src\/(?!cli\/)/, above: /^(conformance|src\/cli)\//, name: 'src/ (but the CLI)' },
  { files: /^conformance\//, above: /^src\/cli\//, name: 'conformance/' }
]

t.test(
  'ARCH-08 imports go down the layers only: src/ but the CLI imports nothing of conformance/ or src/cli/, and conformance/ nothing of src/cli/',
  async (t) => {
    for (const layer of LAYERS) {
      const layerFiles = files.filter((f) => layer.files.test(f))
      t.ok(layerFiles.length > 10, `${layerFiles.length} files of ${layer.name}`)
      const up = layerFiles.flatMap((f) => graph.get(f)!
        .filter((e) => layer.above.test(e.to))
        .map((e) => `${f} -> ${e.to}`))
      t.same(up, [], `imports from ${layer.name} to a layer above it`)
    }
  }
)

t.test('ARCH-09 a process a test starts runs as a user runs it: without tap\'s process tracker in its NODE_OPTIONS', async (t) => {
  const tracker = '--import=file:///x/node_modules/@tapjs/processinfo/dist/esm/import.mjs'
  t.equal(untracked(`--enable-source-maps ${tracker}`), '--enable-source-maps', 'the tracker goes, the rest stays')
  t.equal(untracked(tracker), undefined, 'nothing left: no NODE_OPTIONS at all')
  t.equal(untracked(`"${tracker}" --trace-warnings`), '--trace-warnings', 'quoted, as tap writes it')
  t.equal(untracked('--max-old-space-size=512'), '--max-old-space-size=512', 'options of its own are kept')
  t.match(process.env.NODE_OPTIONS ?? '', /@tapjs[\\/]processinfo/, 'this test process itself is tracked by tap')
  const child = execFileSync(process.execPath, ['-e', 'process.stdout.write(JSON.stringify({ o: process.env.NODE_OPTIONS ?? "", a: process.execArgv, k: Object.keys(process.env).filter((k) => k.startsWith("_TAPJS_PROCESSINFO_")) }))'], { encoding: 'utf8' })
  const seen = JSON.parse(child) as { o: string, a: string[], k: string[] }
  t.notMatch(seen.o, /processinfo/, 'a child\'s NODE_OPTIONS has no tracker')
  t.same(seen.a.filter((a) => a.includes('processinfo')), [], 'nor its arguments')
  t.same(seen.k, [], 'nor tap\'s variables for it')
})
