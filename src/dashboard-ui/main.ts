import { html, render } from 'htm/preact'
import { useEffect, useErrorBoundary, useState } from 'preact/hooks'
import { act, useFakeNow, useOutcome } from './api.js'
import { JudgePanel } from './judge.js'
import { OrbPanel } from './orb.js'
import { OrbtilePanel } from './orbtile.js'
import type { ClockState, Frame } from './types.js'

type Tab = 'orbtile' | 'orb' | 'judge'

/**
 * The dashboard: one EventSource on /control/dashboard/stream, whose `state` events each carry the whole frame;
 * the page keeps the newest and draws it. No polling: the server sends a frame when a fake changes.
 */
function App () {
  const [frame, setFrame] = useState<Frame | undefined>(undefined)
  const [receivedAt, setReceivedAt] = useState(0)
  const [live, setLive] = useState(false)
  const [tab, setTab] = useState<Tab>(((location.hash.slice(1) || 'orbtile') as Tab))
  useEffect(() => {
    const source = new EventSource('/control/dashboard/stream')
    source.addEventListener('state', (e) => {
      // The first frame's arrival is marked for the bench (bench/dashboard.ts), and for anyone timing the page.
      if (performance.getEntriesByName('orbtest:first-frame').length === 0) performance.mark('orbtest:first-frame')
      setFrame(JSON.parse((e as MessageEvent<string>).data) as Frame)
      setReceivedAt(Date.now())
      setLive(true)
      document.body.dataset.frames = String(Number(document.body.dataset.frames ?? '0') + 1)
    })
    source.addEventListener('error', () => { setLive(false) })
    return () => { source.close() }
  }, [])
  useEffect(() => { history.replaceState(null, '', `#${tab}`) }, [tab])
  if (frame === undefined) return html`<p class="empty">Connecting to the fakes…</p>`
  const tabs: Array<[Tab, string]> = []
  if (frame.orbtile !== null) tabs.push(['orbtile', 'Orbtile'])
  if (frame.orb !== null) tabs.push(['orb', 'Orb'])
  if (frame.judge !== null) tabs.push(['judge', 'Client rules'])
  const current = tabs.some(([t]) => t === tab) ? tab : tabs[0]?.[0]
  return html`
    <header class="top">
      <h1>orbtest</h1>
      <span class=${`live ${live ? 'live-on' : 'live-off'}`} role="status">${live ? 'live' : 'reconnecting…'}</span>
      <nav role="tablist" aria-label="Fakes">
        ${tabs.map(([t, label]) => html`<button type="button" role="tab" id=${`tab-${t}`} aria-selected=${t === current}
          aria-controls="view" onClick=${() => setTab(t)}>${label}</button>`)}
      </nav>
      <${ClockBar} clock=${frame.clock} receivedAt=${receivedAt} />
    </header>
    <${Status} />
    <main id="view" role="tabpanel" aria-labelledby=${`tab-${current ?? ''}`}>
      ${current === 'orbtile' || current === 'orb'
        ? html`<${View} frame=${frame} receivedAt=${receivedAt} which=${current} />`
        : null}
      ${current === 'judge' && frame.judge !== null ? html`<${JudgePanel} judge=${frame.judge} />` : null}
    </main>`
}

function View ({ frame, receivedAt, which }: { frame: Frame, receivedAt: number, which: 'orbtile' | 'orb' }) {
  const now = useFakeNow(frame.clock, receivedAt)
  // A frame this page cannot draw (a newer server, a bug) leaves the rest of the page working, and says why.
  const [error, retry] = useErrorBoundary()
  useEffect(() => { if (error !== undefined) retry() }, [frame])
  if (error !== undefined) {
    return html`<p class="outcome refused" role="alert">This view could not be drawn: ${String(error)}</p>`
  }
  return which === 'orbtile'
    ? html`<${OrbtilePanel} frame=${frame.orbtile} now=${now} />`
    : html`<${OrbPanel} frame=${frame.orb} now=${now} />`
}

const STEPS: Array<[number, string]> = [
  [1000, '+1 s'], [10_000, '+10 s'], [60_000, '+1 min'], [600_000, '+10 min'], [3_600_000, '+1 h']
]

/** The clock every fake shares; a virtual one moves only by these buttons (or POST /control/clock/advance). */
function ClockBar ({ clock, receivedAt }: { clock: ClockState, receivedAt: number }) {
  const now = useFakeNow(clock, receivedAt)
  return html`
    <div class="clock" aria-label="Clock">
      <span><strong>${clock.mode}</strong> clock${' '}
        <time datetime=${new Date(now).toISOString()}>${new Date(now).toISOString().slice(11, 19)}</time></span>
      ${clock.mode === 'virtual'
        ? STEPS.map(([ms, label]) => html`<button type="button" aria-label=${`Advance the clock ${label.slice(1)}`}
        onClick=${() => act('POST', '/control/clock/advance', { ms }, `clock ${label}`)}>${label}</button>`)
          : null}
      <button type="button" onClick=${() => act('POST', '/control/reset', undefined, 'reset')}>Reset all</button>
    </div>`
}

function Status () {
  const outcome = useOutcome()
  const kind = outcome === undefined ? '' : outcome.ok ? 'ok' : 'refused'
  return html`<p class=${`outcome ${kind}`} role="status" aria-live="polite">
    ${outcome === undefined ? '' : outcome.text}</p>`
}

render(html`<${App} />`, document.getElementById('app')!)
