import { html } from 'htm/preact'
import { useEffect, useState } from 'preact/hooks'
import { act, relative, seg } from './api.js'
import { RequestPanel } from './requests.js'
import type { Adapter, OrbtileFrame, Session } from './types.js'
import { HueControl } from './wheel.js'

/** Words for each activity, so that colour and motion are never the only signal. */
const ACTIVITY: Record<string, string> = {
  starting: 'starting',
  idle: 'idle',
  thinking: 'thinking',
  tool: 'running a tool',
  streaming: 'streaming',
  waitingPermission: 'waiting for approval',
  waitingQuestion: 'waiting for an answer',
  done: 'done',
  error: 'error',
  compacting: 'compacting',
  offline: 'offline'
}

/** The fake Orbtile as its user sees it: the app's switches, then each adapter's keypad. */
export function OrbtilePanel ({ frame, now }: { frame: OrbtileFrame, now: number }) {
  const { api } = frame
  return html`
    <section aria-labelledby="orbtile-title" class="panel">
      <div class="bar">
        <h2 id="orbtile-title">Orbtile</h2>
        <label class="switch">
          <input type="checkbox" checked=${api.enabled}
            onChange=${(e: Event) =>
              act('PUT', '/control/orbtile/api', { enabled: (e.target as HTMLInputElement).checked }, 'API switch')} />
          Adapter API ${api.enabled ? 'on' : 'off'}${api.listening ? '' : ' (not listening)'}
        </label>
        <button type="button" disabled=${!api.listening}
          onClick=${() => act('PUT', '/control/orbtile/api', { enabled: false, listening: false }, 'close the socket')}>
          Close the socket</button>
        <button type="button" onClick=${() => act('POST', '/control/orbtile/token/regenerate', undefined, 'new token')}>
          Regenerate token</button>
        <button type="button" onClick=${() => act('POST', '/control/orbtile/restart', undefined, 'restart')}>
          Restart app</button>
        <span class="muted">restarts ${frame.restarts} · new tokens ${frame.tokenRegenerations}</span>
      </div>
      <p class="muted small">socket <code>${frame.discovery.socketPath}</code> · discovery${' '}
        <code>${frame.discovery.discoveryPath}</code></p>
      ${frame.adapters.length === 0
        ? html`<p class="empty">No adapter has registered yet. Point one at the discovery file above
            (<code>ORBTILE_DISCOVERY</code>).</p>`
        : html`<div class="adapters">${frame.adapters.map((adapter) => html`<${AdapterCard} key=${adapter.id}
            adapter=${adapter} frame=${frame} now=${now} />`)}</div>`}
    </section>`
}

function AdapterCard ({ adapter, frame, now }: { adapter: Adapter, frame: OrbtileFrame, now: number }) {
  const path = `/control/orbtile/adapters/${seg(adapter.id)}`
  const user = (change: Record<string, unknown>, label: string) => act('PUT', `${path}/user`, change, label)
  const name = adapter.registration?.name ?? adapter.id
  const status = adapter.enabled
    ? 'enabled'
    : adapter.reason === 'disabled_by_user' ? 'disabled by you' : 'awaiting you'
  const groups = new Map<string, Session[]>()
  for (const session of adapter.sessions) {
    const key = session.project ?? ''
    groups.set(key, [...(groups.get(key) ?? []), session])
  }
  const iconVersion = adapter.lease?.startedAt ?? ''
  return html`
    <article class="card adapter" aria-label=${`Adapter ${name}`} data-adapter=${adapter.id}>
      <header class="adapter-head">
        ${adapter.icon === null
          ? html`<span class="icon icon-none" aria-hidden="true">${(adapter.badge ?? name).slice(0, 1)}</span>`
          : html`<img class="icon" src=${`${adapter.icon[56]}?v=${encodeURIComponent(iconVersion)}`} width="28"
              height="28" alt=${`${name} icon`} />`}
        <div>
          <h3>${name}</h3>
          <p class="muted small"><code>${adapter.id}</code>
            ${adapter.badge === null ? '' : ` · badge ${adapter.badge}`}</p>
        </div>
        <span class=${`status status-${adapter.enabled ? 'on' : 'off'}`}>${status}</span>
      </header>
      <div class="controls">
        ${adapter.enabled
          ? html`<button type="button" onClick=${() => user({ allowed: false }, `disable ${adapter.id}`)}>
              Disable</button>`
          : html`<button type="button" class="primary" onClick=${() => user({ allowed: true }, `allow ${adapter.id}`)}>
              Allow</button>`}
        <label><input type="checkbox" checked=${adapter.user.keypad}
          onChange=${(e: Event) => user({ keypad: (e.target as HTMLInputElement).checked }, 'keypad switch')} />
          Approve from the keypad</label>
        <label><input type="checkbox" checked=${adapter.user.anchorAttention}
          onChange=${(e: Event) =>
            user({ anchorAttention: (e.target as HTMLInputElement).checked }, 'anchorAttention')} />
          Anchor attention</label>
        ${adapter.lease === null && adapter.sessions.length === 0
          ? html`<button type="button" onClick=${() => act('DELETE', path, undefined, `forget ${adapter.id}`)}>
              Forget</button>`
          : null}
      </div>
      <p class="small">${adapter.lease === null
        ? 'No lease: the adapter is not registered now.'
        : html`Lease ends ${relative(Date.parse(adapter.lease.silenceDeadline), now)} without a request
            (last request ${relative(Date.parse(adapter.lease.lastActivity), now)}).`}
        ${adapter.keypadDecisions ? ' Keypad decisions on.' : ''}</p>
      <${HueControl} adapter=${adapter} wheel=${frame.wheel} />
      ${adapter.warnings.length + adapter.paletteNotes.length === 0
        ? null
        : html`<ul class="notes" aria-label="Warnings and palette notes">
            ${adapter.warnings.map((w) => html`<li class="warning"><strong>warning</strong> ${w}</li>`)}
            ${adapter.paletteNotes.filter((n) => !adapter.warnings.includes(n))
              .map((n) => html`<li><strong>note</strong> ${n}</li>`)}
          </ul>`}
      ${[...groups].map(([project, sessions]) => html`
        <section class="group" aria-label=${project === '' ? 'Sessions without a project' : `Project ${project}`}>
          <h4>${project === '' ? 'No project' : project}</h4>
          <ul class="orbs">
            ${sessions.map((s) => html`<${SessionOrb} key=${s.id} adapter=${adapter} session=${s} />`)}</ul>
        </section>`)}
      ${adapter.sessions.map((s) => html`<${RequestPanel} key=${s.id} adapter=${adapter} session=${s} />`)}
      <${EventQueue} adapter=${adapter} />
    </article>`
}

/** One session's key: the orb in its colour for the activity, moving as the activity does, and its words. */
function SessionOrb ({ adapter, session }: { adapter: Adapter, session: Session }) {
  const state = session.offline ? 'offline' : session.activity
  const colour = adapter.palette?.colours[state] ?? '#777777'
  const source = adapter.palette?.sources[state] ?? 'none'
  const tool = session.activity === 'tool'
    ? [session.toolKind, session.toolLabel].filter((x) => x != null).join(': ')
    : ''
  const doing = `${ACTIVITY[state] ?? state}${tool === '' ? '' : ` (${tool})`}`
  return html`
    <li class="session" data-session=${session.id}>
      <button type="button" class="orb" data-activity=${state} data-tool=${session.toolKind ?? ''}
        aria-label=${`Tap ${session.title}: ${doing}`}
        onClick=${() => act('POST', `/control/orbtile/adapters/${seg(adapter.id)}/sessions/${seg(session.id)}/tap`,
          undefined, `tap ${session.title}`)}>
        <span class="ball" style=${{ backgroundColor: colour }}></span>
      </button>
      <div class="session-text">
        <strong>${session.title}</strong>
        <span class="activity">${doing}</span>
        ${session.activity === 'streaming' && session.message?.text !== undefined
          ? html`<${Typing} text=${session.message.text} />`
          : session.message?.text === undefined ? null : html`<span class="message">${session.message.text}</span>`}
        ${session.statusDetail === null ? null : html`<span class="muted small">${session.statusDetail}</span>`}
        <span class="muted small">${session.host}
          ${session.subagentCount > 0 ? ` · ${session.subagentCount} subagents` : ''}
          ${session.background ? ' · background' : ''} · <code>${colour}</code> ${source}</span>
      </div>
    </li>`
}

/** A streamed message typing out; the whole text at once for those who asked for less motion. */
function Typing ({ text }: { text: string }) {
  const [shown, setShown] = useState(text.length)
  useEffect(() => {
    if (matchMedia('(prefers-reduced-motion: reduce)').matches) {
      setShown(text.length)
      return
    }
    // A longer text goes on from what is shown; another, shorter one starts over.
    setShown((n) => (n <= text.length ? n : 0))
    const timer = setInterval(() => {
      setShown((n) => {
        if (n >= text.length) clearInterval(timer)
        return Math.min(text.length, n + 2)
      })
    }, 16)
    return () => { clearInterval(timer) }
  }, [text])
  return html`<span class="message typing" aria-label=${text}>${text.slice(0, shown)}<span class="caret"
    aria-hidden="true"></span></span>`
}

function EventQueue ({ adapter }: { adapter: Adapter }) {
  const { events } = adapter
  if (events === null) return html`<p class="muted small">Event queue: none yet (no poll, nothing queued).</p>`
  return html`
    <details class="queue">
      <summary>Event queue: last sequence ${events.lastSequence}, acknowledged ${events.acknowledged},${' '}
        ${events.queued.length} queued${events.pollHeld ? ', a poll is waiting' : ''}</summary>
      ${events.queued.length === 0
        ? html`<p class="muted small">Nothing queued.</p>`
        : html`<ol class="small">${events.queued.map((e) => html`<li><code>${e.sequence}</code> ${e.type}</li>`)}</ol>`}
    </details>`
}
