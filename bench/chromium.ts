// Where the machine's Chromium is, for the dashboard's tests, its screenshots and its bench rows: the one
// ORBTEST_CHROMIUM names, else chromium, chromium-browser or google-chrome on the PATH (Debian's package, or the Chrome
// GitHub's runners carry). playwright-core drives it and downloads no browser.
import { execFileSync } from 'node:child_process'

/** The browser's path, or undefined when the machine has none. */
export function findChromium (): string | undefined {
  if (process.env.ORBTEST_CHROMIUM !== undefined) return process.env.ORBTEST_CHROMIUM
  for (const name of ['chromium', 'chromium-browser', 'google-chrome']) {
    try {
      return execFileSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).trim()
    } catch (err) {
      // `command -v` exits 1 for a name it does not find: the next name is tried. Anything else (no shell) is thrown.
      if ((err as { status?: number | null }).status !== 1) throw err
    }
  }
  return undefined
}

/** The browser's path; a machine without one is told how to get one. */
export function chromiumPath (): string {
  const found = findChromium()
  if (found === undefined) {
    throw new Error('no Chromium or Chrome on the PATH: apt-get install -y chromium, or set ORBTEST_CHROMIUM')
  }
  return found
}
