import { useEffect, useState } from 'preact/hooks'
import type { ClockState } from './types.js'

/** What the last action answered, for the page's status line (read by screen readers: aria-live). */
export interface Outcome { ok: boolean, text: string, at: number }

type Listener = (outcome: Outcome) => void
const listeners = new Set<Listener>()

/**
 * Calls the control API as the page: always `Content-Type: application/json`, which with the browser's own Origin
 * is what the control server asks of a page (DASH-D04). A refusal's `error.message` is reported, not thrown.
 */
export async function act (
  method: 'POST' | 'PUT' | 'DELETE', path: string, body?: unknown, label = `${method} ${path}`
): Promise<unknown> {
  let outcome: Outcome
  let answer: unknown
  try {
    const response = await fetch(path, {
      method,
      headers: { 'content-type': 'application/json' },
      body: body === undefined ? '' : JSON.stringify(body)
    })
    answer = await response.json().catch(() => undefined)
    const error = (answer as { error?: { code: string, message: string } } | undefined)?.error
    outcome = response.ok
      ? { ok: true, text: `${label}: done`, at: Date.now() }
      : { ok: false, text: `${label}: ${error?.code ?? response.status}: ${error?.message ?? ''}`, at: Date.now() }
  } catch (err) {
    outcome = { ok: false, text: `${label}: ${(err as Error).message}`, at: Date.now() }
  }
  for (const listener of listeners) listener(outcome)
  return outcome.ok ? answer : undefined
}

/** The last outcome of `act`, as state. */
export function useOutcome (): Outcome | undefined {
  const [outcome, setOutcome] = useState<Outcome | undefined>(undefined)
  useEffect(() => {
    listeners.add(setOutcome)
    return () => { listeners.delete(setOutcome) }
  }, [])
  return outcome
}

/**
 * The fake's time now, as the page sees it: a real clock keeps moving between frames (from the frame's reading and
 * the time since it came), a virtual one stands where the frame left it. Re-renders every second on a real clock.
 */
export function useFakeNow (clock: ClockState, receivedAt: number): number {
  const [, tick] = useState(0)
  useEffect(() => {
    if (clock.mode !== 'real') return
    const timer = setInterval(() => tick((n) => n + 1), 1000)
    return () => { clearInterval(timer) }
  }, [clock.mode])
  return clock.mode === 'real' ? clock.now + (Date.now() - receivedAt) : clock.now
}

/** "in 42 s", "3 min ago": a deadline or instant against the fake's now. */
export function relative (target: number, now: number): string {
  const seconds = Math.round((target - now) / 1000)
  const size = Math.abs(seconds)
  if (size === 0) return 'now'
  const text = size < 120 ? `${size} s` : size < 7200 ? `${Math.round(size / 60)} min` : `${Math.round(size / 3600)} h`
  return seconds >= 0 ? `in ${text}` : `${text} ago`
}

/** Path segment escaping for ids in control routes. */
export const seg = (id: string | number): string => encodeURIComponent(String(id))
