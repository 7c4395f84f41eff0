import { html } from 'htm/preact'
import { useState } from 'preact/hooks'
import { act, relative, seg } from './api.js'
import type { Attempt, OrbApp, OrbFrame } from './types.js'

/** The developer console and the admins' hands: every app, where it is installed, its token, endpoint and log. */
export function AppsPanel ({ frame, now }: { frame: OrbFrame, now: number }) {
  return html`
    <section aria-labelledby="apps-title" class="apps">
      <h3 id="apps-title">Apps</h3>
      <div class="cards">
        ${frame.apps.map((app) => html`<${AppCard} key=${app.id} app=${app} frame=${frame} now=${now} />`)}
      </div>
    </section>`
}

function AppCard ({ app, frame, now }: { app: OrbApp, frame: OrbFrame, now: number }) {
  const path = `/control/orb/apps/${seg(app.id)}`
  const [endpoint, setEndpoint] = useState(app.endpoint ?? '')
  const queue = frame.events[app.id]
  const log = frame.deliveries[app.id]
  return html`
    <article class="card" aria-label=${`App ${app.name}`} data-app=${app.id}>
      <header><h4>${app.name}</h4> <code class="small">${app.id}</code>
        ${app.listed ? '' : html` <span class="tag">unlisted</span>`}</header>
      <p class="small">token <code class="token">${app.token}</code>
        <button type="button" class="link"
          onClick=${() => act('POST', `${path}/rotate-token`, undefined, `rotate ${app.id}'s token`)}>
          Rotate</button></p>
      <p class="small muted">${app.scopes.join(' · ')}</p>
      <ul class="small installs">
        ${frame.servers.map((s) => {
          const installed = frame.installs.some((i) => i.server === s.id && i.app === app.id)
          const where = `/control/orb/servers/${seg(s.id)}/apps/${seg(app.id)}`
          return html`<li>${s.name}: ${installed ? 'installed' : 'not installed'}
            ${installed
              ? html`<button type="button" class="link"
                  onClick=${() => act('DELETE', where, undefined, `uninstall ${app.id}`)}>
                  Uninstall</button>`
              : html`<button type="button" class="link"
                  onClick=${() => act('PUT', where, {}, `install ${app.id}`)}>Install</button>`}
          </li>`
        })}
      </ul>
      <form class="endpoint" onSubmit=${(e: Event) => {
        e.preventDefault()
        act('PUT', `${path}/endpoint`, { url: endpoint === '' ? null : endpoint }, `${app.id}'s endpoint`)
      }}>
        <label>Webhook endpoint
          <input type="url" value=${endpoint} placeholder="none: events by cursor"
            onInput=${(e: Event) => setEndpoint((e.target as HTMLInputElement).value)} /></label>
        <button type="submit">Set</button>
        <button type="button" onClick=${() => act('POST', `${path}/test-event`, undefined, `test event to ${app.id}`)}>
          Send test event</button>
      </form>
      <p class="small">${app.endpoint === null
        ? queue === undefined
          ? 'events: none yet'
          : `events: ${queue.queued} queued, cursor ${queue.lastCursor}, ${queue.polls} polls held`
        : `webhooks to ${app.endpoint}`}</p>
      ${log === undefined ? null : html`<${DeliveryLog} app=${app.id} log=${log} now=${now} />`}
    </article>`
}

/**
 * An app's webhook deliveries: the newest attempts live from the frame, and every attempt the log keeps on demand
 * (one read of GET /control/orb/apps/{app}/deliveries, again when asked).
 */
function DeliveryLog ({ app, log, now }: { app: string, log: { total: number, newest: Attempt[] }, now: number }) {
  const [all, setAll] = useState<Attempt[] | undefined>(undefined)
  const load = async (): Promise<void> => {
    const response = await fetch(`/control/orb/apps/${seg(app)}/deliveries`)
    if (response.ok) setAll(((await response.json()) as { deliveries: Attempt[] }).deliveries)
  }
  const shown = all ?? log.newest
  return html`
    <details>
      <summary>Delivery log: ${log.total} attempts</summary>
      ${shown.length === 0
        ? html`<p class="muted small">No attempt yet.</p>`
        : html`
        <table class="small" aria-label=${`Delivery attempts of ${app}`}>
          <thead><tr><th scope="col">event</th><th scope="col">try</th><th scope="col">outcome</th>
            <th scope="col">status</th><th scope="col">ms</th><th scope="col">when</th></tr></thead>
          <tbody>${shown.map((a) => html`<tr class=${`outcome-${a.outcome}`}>
            <td><code>${a.type}</code></td><td>${a.attempt}</td>
            <td>${a.outcome}${a.error === null ? '' : `: ${a.error}`}</td>
            <td>${a.status ?? '–'}</td><td>${a.durationMs}</td><td>${relative(a.at, now)}</td></tr>`)}</tbody>
        </table>`}
      <button type="button" class="link small" onClick=${load}>
        ${all === undefined ? `Show all ${log.total} attempts` : 'Read the whole log again'}</button>
      ${all === undefined
        ? null
        : html`<button type="button" class="link small" onClick=${() => setAll(undefined)}>
        Back to the newest, live</button>`}
    </details>`
}

/** What the members saw of their commands, the voice channels' seats, the room players and the throttles. */
export function ServicesPanel ({ frame, now }: { frame: OrbFrame, now: number }) {
  const channels = new Map(frame.servers.flatMap((s) =>
    s.channels.map((c) => [c.id, `${s.name} › ${c.name}`] as const)))
  const people = new Map([...frame.servers.flatMap((s) => s.members.map((m) => [m.id, m.name] as const)),
    ...frame.apps.map((a) => [a.id, a.name] as const)])
  return html`
    <div class="cards services">
      <section class="card" aria-labelledby="interactions-title">
        <h3 id="interactions-title">Commands, as members saw them</h3>
        ${frame.interactions.length === 0
          ? html`<p class="muted small">No command typed yet.</p>`
          : html`
          <ol class="small">${frame.interactions.map((i) => html`<li>
            <code>/${i.command?.name ?? '?'}</code> to ${String(i.app ?? '?')}:${' '}
            ${i.answer === null
              ? (i.expired === true ? html`<em>no answer (the member stopped waiting)</em>` : html`<em>waiting…</em>`)
              : html`“${i.answer.content ?? ''}” <span class="muted">(${i.answer.via ?? 'answered'})</span>`}
          </li>`)}</ol>`}
      </section>
      <section class="card" aria-labelledby="voice-title">
        <h3 id="voice-title">Voice ${frame.voice.server ? '' : html`<span class="tag">no voice server</span>`}</h3>
        <ul class="small">${frame.voice.channels.map((c) => html`<li>
          ${channels.get(c.channel) ?? c.channel}: ${c.participants.length} of ${c.capacity} seats
          ${c.call === null ? '' : ` (call ${c.call})`}
          ${c.participants.length === 0
            ? null
            : html`<ul>${c.participants.map((p) => html`<li>${people.get(p.id) ?? p.id}${p.bot ? ' (app)' : ''}
            ${p.speaking ? html` <strong>speaking</strong>` : ''}
            ${p.deadline === null ? '' : ` · heartbeat due ${relative(p.deadline, now)}`}</li>`)}</ul>`}
        </li>`)}</ul>
      </section>
      <section class="card" aria-labelledby="music-title">
        <h3 id="music-title">Music players</h3>
        ${frame.music.players.length === 0
          ? html`<p class="muted small">No player.</p>`
          : html`<ul class="small">
              ${frame.music.players.map((p) => html`<li><code>${JSON.stringify(p)}</code></li>`)}</ul>`}
      </section>
      <section class="card" aria-labelledby="throttle-title">
        <h3 id="throttle-title">Throttle windows</h3>
        ${frame.throttles.length === 0
          ? html`<p class="muted small">Every window is empty.</p>`
          : html`
          <table class="small">
            <thead><tr><th scope="col">window</th><th scope="col">used</th><th scope="col">length</th>
              <th scope="col">next slot</th></tr></thead>
            <tbody>${frame.throttles.map((w) => html`<tr class=${w.used >= w.limit ? 'full' : ''}>
              <td><code>${w.key}</code></td><td>${w.used} of ${w.limit}${w.used >= w.limit ? ' (full)' : ''}</td>
              <td>${w.windowMs / 1000} s</td><td>${relative(w.freesAt, now)}</td></tr>`)}</tbody>
          </table>`}
      </section>
    </div>`
}
