import { html } from 'htm/preact'
import { useState } from 'preact/hooks'
import { act } from './api.js'
import { AppsPanel, ServicesPanel } from './orb-apps.js'
import type { Command, Community, OrbFrame } from './types.js'

/** The fake Orb as its communities live it: pick a community and a channel, read it, and speak as its members. */
export function OrbPanel ({ frame, now }: { frame: OrbFrame, now: number }) {
  const [serverId, setServer] = useState(frame.servers[0]?.id ?? '')
  const community = frame.servers.find((s) => s.id === serverId) ?? frame.servers[0]
  return html`
    <section aria-labelledby="orb-title" class="panel">
      <div class="bar">
        <h2 id="orb-title">Orb</h2>
        <label>Community
          <select value=${community?.id ?? ''}
            onChange=${(e: Event) => setServer((e.target as HTMLSelectElement).value)}>
            ${frame.servers.map((s) => html`<option value=${s.id}>${s.name}</option>`)}
          </select>
        </label>
        <label class="switch"><input type="checkbox" checked=${frame.chain.available}
          onChange=${(e: Event) =>
            act('PUT', '/control/orb/chain', { available: (e.target as HTMLInputElement).checked }, 'registry')} />
          Registry reachable</label>
        <span class="muted small">webhooks: ${frame.webhooks.inFlight} in flight, ${frame.webhooks.queued} queued,${' '}
          ${frame.webhooks.retriesScheduled} retries</span>
      </div>
      ${community === undefined
        ? html`<p class="empty">This world has no community.</p>`
        : html`
        <${CommunityView} key=${community.id} frame=${frame} community=${community} />`}
      <${AppsPanel} frame=${frame} now=${now} />
      <${ServicesPanel} frame=${frame} now=${now} />
    </section>`
}

function CommunityView ({ frame, community }: { frame: OrbFrame, community: Community }) {
  const text = community.channels.filter((c) => c.kind === 'text')
  const [channelId, setChannel] = useState(text[0]?.id ?? '')
  const channel = text.find((c) => c.id === channelId) ?? text[0]
  const [member, setMember] = useState(community.members[0]?.id ?? '')
  const names = new Map([...community.members.map((m) => [m.id, m.name] as const),
    ...frame.apps.map((a) => [a.id, a.name] as const)])
  const messages = channel === undefined ? [] : frame.messages[channel.id] ?? []
  return html`
    <div class="community">
      <nav aria-label=${`Channels of ${community.name}`} class="channels">
        <h3>${community.name}</h3>
        <ul>
          ${community.channels.map((c) => html`<li>${c.kind === 'text'
            ? html`<button type="button" class=${c.id === channel?.id ? 'current' : ''}
                aria-current=${c.id === channel?.id ? 'true' : undefined} onClick=${() => setChannel(c.id)}>
                #${c.name}${c.readOnly ? ' (read-only)' : ''}</button>`
            : html`<span class="muted">${c.name} <span class="tag">voice</span></span>`}</li>`)}
        </ul>
        <h4>Members</h4>
        <ul class="small">${community.members.map((m) => html`<li>${m.name} <span class="muted">${m.rights.length === 0
          ? 'no rights'
          : m.rights.join(', ')}</span></li>`)}</ul>
      </nav>
      ${channel === undefined
        ? html`<p class="empty">No text channel.</p>`
        : html`
        <div class="channel">
          <h3>#${channel.name}</h3>
          <ol class="messages" aria-label=${`Messages in #${channel.name}`} aria-live="polite">
            ${messages.length === 0
              ? html`<li class="muted">No message yet.</li>`
              : messages.map((m) => html`
              <li class=${m.author.bot ? 'bot' : ''} data-message=${m.id}>
                <strong>${m.author.name}</strong>${m.author.bot ? html` <span class="tag">app</span>` : ''}
                <span class="content">${m.encrypted ? html`<em>encrypted</em>` : render(m.body ?? '', names)}</span>
                ${m.replyTo === null ? null : html`<span class="muted small">reply to ${m.replyTo}</span>`}
                <button type="button" class="link small" aria-label=${`Remove message ${m.id}`}
                  onClick=${() => act('DELETE', `/control/orb/messages/${m.id}`, undefined, 'remove message')}>
                  remove</button>
              </li>`)}
          </ol>
          <label>Speak as
            <select value=${member} onChange=${(e: Event) => setMember((e.target as HTMLSelectElement).value)}>
              ${community.members.map((m) => html`<option value=${m.id}>${m.name}</option>`)}
            </select>
          </label>
          <${Composer} frame=${frame} community=${community} channel=${channel.id} member=${member} />
          <${CommandForm} frame=${frame} community=${community} channel=${channel.id} member=${member} />
        </div>`}
    </div>`
}

/** `<@id>` mentions shown as names. */
function render (content: string, names: Map<string, string>): string {
  return content.replace(/<@([\w-]+)>/g, (whole, id: string) => (names.has(id) ? `@${names.get(id)!}` : whole))
}

/** The apps a member can reach in a channel: installed in the community, allowed there, and not hidden from it. */
function appsIn (frame: OrbFrame, community: string, channel: string): string[] {
  return frame.installs
    .filter((i) => i.server === community && i.channels.includes(channel) && !i.hidden.includes(channel))
    .map((i) => i.app)
}

function Composer ({ frame, community, channel, member }: {
  frame: OrbFrame,
  community: Community,
  channel: string,
  member: string
}) {
  const [content, setContent] = useState('')
  const apps = frame.apps.filter((a) => frame.installs.some((i) => i.server === community.id && i.app === a.id))
  const send = async (e: Event): Promise<void> => {
    e.preventDefault()
    const sent = await act('POST', '/control/orb/messages', { server: community.id, channel, member, content }, 'post')
    if (sent !== undefined) setContent('')
  }
  return html`
    <form class="composer" onSubmit=${send}>
      <label for="composer-text">Message</label>
      <textarea id="composer-text" rows="2" value=${content} required
        onInput=${(e: Event) => setContent((e.target as HTMLTextAreaElement).value)}></textarea>
      <div class="controls">
        ${apps.map((a) => html`<button type="button" onClick=${() => setContent((c) => mention(c, a.id))}>
          Mention ${a.name}</button>`)}
        <button type="submit" class="primary">Send</button>
      </div>
    </form>`
}

/** The draft with a mention of `id` added, a space before it if needed. */
function mention (draft: string, id: string): string {
  return `${draft}${draft === '' || draft.endsWith(' ') ? '' : ' '}<@${id}> `
}

function CommandForm ({ frame, community, channel, member }: {
  frame: OrbFrame,
  community: Community,
  channel: string,
  member: string
}) {
  const reachable = appsIn(frame, community.id, channel)
  const offered: Array<{ app: string, command: Command }> = []
  for (const app of reachable) {
    for (const command of frame.commands[app] ?? []) {
      if (command.community === null || command.community === community.id) offered.push({ app, command })
    }
  }
  const [choice, setChoice] = useState(0)
  const [options, setOptions] = useState<Record<string, string>>({})
  if (offered.length === 0) return html`<p class="muted small">No app offers a command in this channel.</p>`
  const picked = offered[Math.min(choice, offered.length - 1)]!
  const invoke = (e: Event): void => {
    e.preventDefault()
    const typed = Object.fromEntries(Object.entries(options).filter(([name, value]) => value !== '' &&
      picked.command.args.some((a) => a.name === name)))
    act('POST', '/control/orb/commands/invoke', {
      server: community.id, channel, member, name: picked.command.name, app: picked.app, options: typed
    }, `/${picked.command.name}`)
  }
  return html`
    <form class="command" onSubmit=${invoke}>
      <label>Command
        <select value=${String(choice)} onChange=${(e: Event) => {
          setChoice(Number((e.target as HTMLSelectElement).value))
          setOptions({})
        }}>
          ${offered.map((o, i) => html`<option value=${String(i)}>/${o.command.name} (${o.app})</option>`)}
        </select>
      </label>
      ${picked.command.args.map((arg) => html`
        <label>${arg.name}${arg.optional === true ? ' (optional)' : ''}
          <input type="text" value=${options[arg.name ?? ''] ?? ''} required=${arg.optional !== true}
            onInput=${(e: Event) => {
              const value = (e.target as HTMLInputElement).value
              setOptions((o) => ({ ...o, [arg.name ?? '']: value }))
            }} />
        </label>`)}
      <button type="submit">Type /${picked.command.name}</button>
      <span class="muted small">${picked.command.description}</span>
    </form>`
}
