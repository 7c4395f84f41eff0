import { createHash } from 'node:crypto'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { packageRoot } from '../../shared/paths.js'
import { ControlError } from '../errors.js'

/** One file the dashboard serves, read once. */
export interface Asset {
  body: Buffer
  type: string
  etag: string
}

/** The page, its files and the library, as the control server serves them. */
export interface DashboardAssets {
  page: Asset
  /** `/dashboard/<name>`: the page's own scripts and style sheet. */
  files: ReadonlyMap<string, Asset>
  /** `/dashboard/vendor/<name>`: Preact and htm, from the package's dependencies. */
  vendor: ReadonlyMap<string, Asset>
  /** The page's Content-Security-Policy: nothing from another origin, no inline script but the import map. */
  csp: string
}

/** Where the build puts the page (`src/dashboard-ui/`, compiled by its own tsconfig; the HTML and CSS copied). */
export const DASHBOARD_BUILD = ['dist', 'src', 'dashboard-ui'] as const

/** The bare specifiers the page's modules import, each served under /dashboard/vendor/ as one file. */
const VENDOR = {
  preact: 'preact.mjs',
  'preact/hooks': 'preact-hooks.mjs',
  htm: 'htm.mjs',
  'htm/preact': 'htm-preact.mjs'
} as const

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8'
}

let loaded: DashboardAssets | undefined

/**
 * Reads the dashboard's files on first use (never at import: a start-up that serves no page pays nothing). The
 * libraries are the installed packages' own ES modules, found by Node's resolution from here, so the page runs what
 * `npm install` verified; their source-map comments are dropped, as the maps are not served.
 */
export function dashboardAssets (): DashboardAssets {
  if (loaded !== undefined) return loaded
  const dir = join(packageRoot(), ...DASHBOARD_BUILD)
  if (!existsSync(join(dir, 'main.js'))) {
    throw new ControlError('internal', `the dashboard is not built (no ${DASHBOARD_BUILD.join('/')}/main.js); run npm run build`)
  }
  const files = new Map<string, Asset>()
  for (const name of readdirSync(dir)) {
    const type = TYPES[name.slice(name.lastIndexOf('.'))]
    if (type !== undefined) files.set(name, asset(readFileSync(join(dir, name)), type))
  }
  const vendor = new Map<string, Asset>()
  const imports: Record<string, string> = {}
  for (const [specifier, name] of Object.entries(VENDOR)) {
    const source = readFileSync(fileURLToPath(import.meta.resolve(specifier)), 'utf8')
    vendor.set(name, asset(Buffer.from(source.replace(/\n?\/\/# sourceMappingURL=\S+\s*$/, '\n')), TYPES['.mjs']!))
    imports[specifier] = `/dashboard/vendor/${name}`
  }
  const importMap = JSON.stringify({ imports })
  const html = readFileSync(join(dir, 'index.html'), 'utf8')
    .replace('<!--importmap-->', `<script type="importmap">${importMap}</script>`)
    .replace('<!--preload-->', [...Object.values(imports), '/dashboard/main.js']
      .map((href) => `<link rel="modulepreload" href="${href}">`).join('\n    '))
  const mapHash = createHash('sha256').update(importMap).digest('base64')
  loaded = {
    page: asset(Buffer.from(html), 'text/html; charset=utf-8'),
    files,
    vendor,
    csp: [
      "default-src 'none'",
      `script-src 'self' 'sha256-${mapHash}'`,
      "style-src 'self'",
      "img-src 'self' data:",
      "connect-src 'self'",
      "base-uri 'none'",
      "form-action 'none'",
      "frame-ancestors 'none'"
    ].join('; ')
  }
  return loaded
}

function asset (body: Buffer, type: string): Asset {
  return { body, type, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"` }
}
