import { html } from 'htm/preact'
import { useState } from 'preact/hooks'
import { act, seg } from './api.js'
import type { Adapter, QuestionItem, Session } from './types.js'

/**
 * A session's pending approval (Allow, Deny) or question (its options, single or multiple choice), decided on the
 * keypad as the user would. The control server refuses a decision while the keypad switch is off; the panel says so.
 */
export function RequestPanel ({ adapter, session }: { adapter: Adapter, session: Session }) {
  const pending = adapter.requests.find((r) => r.sessionId === session.id && !r.decided)
  if (pending === undefined) return null
  const path = `/control/orbtile/adapters/${seg(adapter.id)}/requests/${seg(pending.id)}/decide`
  const hint = adapter.keypadDecisions
    ? null
    : html`<p class="muted small">Keypad decisions are off for this adapter: switch "Approve from the keypad" on,
        then the adapter registers again.</p>`
  if (pending.kind === 'approval' && session.approval !== null) {
    const { toolName, commandSummary, detail } = session.approval
    return html`
      <section class="request" aria-label=${`Approval for ${session.title}`}>
        <h4>${session.title} asks to run ${toolName ?? 'a tool'}</h4>
        ${commandSummary === undefined ? null : html`<pre class="command">${commandSummary}</pre>`}
        ${detail === undefined ? null : html`<p class="small">${detail}</p>`}
        <div class="controls">
          <button type="button" class="primary" onClick=${() => act('POST', path, { decision: 'allow' }, 'Allow')}>
            Allow</button>
          <button type="button" class="danger" onClick=${() => act('POST', path, { decision: 'deny' }, 'Deny')}>
            Deny</button>
        </div>
        ${hint}
      </section>`
  }
  if (pending.kind === 'question' && session.question !== null) {
    return html`<${QuestionForm} title=${session.title} questions=${session.question.questions} path=${path}
      hint=${hint} />`
  }
  return null
}

function QuestionForm ({ title, questions, path, hint }: {
  title: string,
  questions: QuestionItem[],
  path: string,
  hint: unknown
}) {
  const [picks, setPicks] = useState<number[][]>(questions.map(() => []))
  const toggle = (q: number, option: number, multi: boolean): void => {
    setPicks((all) => all.map((chosen, i) => {
      if (i !== q) return chosen
      if (!multi) return [option]
      return chosen.includes(option) ? chosen.filter((o) => o !== option) : [...chosen, option].sort((a, b) => a - b)
    }))
  }
  const submit = (e: Event): void => {
    e.preventDefault()
    act('POST', path, { picks }, 'Answer')
  }
  return html`
    <form class="request" aria-label=${`Question for ${title}`} onSubmit=${submit}>
      <h4>${title} asks</h4>
      ${questions.map((question, q) => html`
        <fieldset>
          <legend>${question.header === undefined ? '' : html`<strong>${question.header}</strong> `}${question.text}
            ${' '}<span class="muted small">${question.multiSelect ? '(any number)' : '(one)'}</span></legend>
          ${question.options.map((option, o) => html`
            <label class="option">
              <input type=${question.multiSelect ? 'checkbox' : 'radio'} name=${`${path}-${q}`}
                checked=${picks[q]?.includes(o) ?? false} onChange=${() => toggle(q, o, question.multiSelect)} />
              ${option.label}
              ${option.description === undefined ? '' : html` <span class="muted small">${option.description}</span>`}
            </label>`)}
        </fieldset>`)}
      <button type="submit" class="primary">Send answer</button>
      ${hint}
    </form>`
}
