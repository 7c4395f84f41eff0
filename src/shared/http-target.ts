// Where a webhook delivery may go: the fake Orb's sender and orbtest's attack kit both check a URL this way.

/** An http or https URL a delivery can go to, or why not. */
export function httpTarget (url: string): URL | string {
  try {
    const target = new URL(url)
    if (target.protocol === 'http:' || target.protocol === 'https:') return target
    return `unsupported protocol ${target.protocol}`
  } catch (err) {
    return (err as Error).message
  }
}
