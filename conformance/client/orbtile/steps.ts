import type { OrbtileMock, UserChange } from '../../../src/orbtile-mock/index.js'
import { ControlError } from '../../../src/shared/control-error.js'
import { isObject, view } from './model.js'
import type { Observer } from './observer.js'
import type { Step } from './scenario.js'
import type { Wire } from './wire.js'

/** What a scenario's steps are played on: the fake, the observer that journals them, the wire they arm. */
export interface Stage {
  mock: OrbtileMock
  obs: Observer
  wire: Wire
  /** The path of a fresh socket, for the app's move. */
  nextSocket: () => string
}

/** One step being played. */
interface StepPlay extends Stage {
  /** The adapters that hold a lease, as the model knows them when the step comes. */
  ids: string[]
  /** Journals what the step did, in words, as its actor's. */
  say: (text: string, data?: Record<string, unknown>) => void
}

// An intersection, not Extract: a step type that names several steps (the app's) is kept, narrowed to the one.
type Named<N extends Step['name']> = Step & { name: N }
type StepHandler<S extends Step> = (step: S, play: StepPlay) => void | Promise<void>

/** Plays one step of a scenario; one the fake refuses is journaled as refused, and the scenario goes on. */
export async function playStep (step: Step, stage: Stage): Promise<void> {
  const play: StepPlay = {
    ...stage,
    ids: [...stage.obs.model.leases.keys()],
    say: (text, data) => { stage.obs.action(step.actor, step.name, text, data) }
  }
  // The table gives each name its own step's type; the union of them takes the step as a plain Step.
  const handler = STEPS[step.name] as StepHandler<Step>
  try {
    await handler(step, play)
  } catch (err) {
    stage.obs.action('harness', 'step-refused', `${step.actor} ${step.name} could not be played: ${(err as Error).message}`)
  }
}

/** The user changes the settings of every adapter that holds a lease (OT-A26). */
function userChange<S extends Step> (change: (step: S) => UserChange): StepHandler<S> {
  return (step, play) => {
    const changed = change(step)
    for (const id of play.ids) play.mock.control.setUser(id, changed)
    play.say(`the user changes ${play.ids.join(', ') || 'no adapter yet'}: ${JSON.stringify(changed)}`)
  }
}

/** The user taps the key of the session shown last. */
function tap (_step: Step, play: StepPlay): void {
  const session = lastSession(play.obs)
  if (session === undefined) return play.say('the user would tap a key, but no session is shown')
  const result = play.mock.control.tap(session.adapterId, session.sessionId)
  play.say(`the user taps ${session.sessionId}${isObject(result) && result.event !== undefined ? '' : ' (no tap event for this adapter)'}`)
}

function regenerate (_step: Step, play: StepPlay): void {
  play.mock.control.regenerateToken()
  play.say('the app makes a new discovery token: every lease ends, the file is rewritten', { token: play.mock.token, leasesEnd: true })
}

/** The app quits and comes back with a new token; a move comes back on a new socket. */
async function restart (step: Named<'restart' | 'move'>, play: StepPlay): Promise<void> {
  const socketPath = step.name === 'move' ? play.nextSocket() : undefined
  play.obs.action('app', 'away', 'the app quits', { away: true })
  await play.mock.control.restart(socketPath === undefined ? {} : { socketPath })
  play.say(`the app restarts${socketPath === undefined ? '' : ' on a new socket'}: a new token, every lease gone`, {
    token: play.mock.token, leasesEnd: true, away: false, ...(socketPath === undefined ? {} : { socketPath })
  })
}

/** Every lease ends as if its adapter had been silent (OT-A08). */
function endLeases (_step: Step, play: StepPlay): void {
  for (const id of play.ids) {
    try {
      play.mock.control.endLease(id)
    } catch (err) {
      // The model learns of a lease's end from the wire, after the fake: a lease the fake has just ended is gone.
      if (!(err instanceof ControlError && err.code === 'conflict')) throw err
    }
    play.say(`the lease of ${id} ends as if it had been silent (OT-A08)`, { leaseEnds: id })
  }
}

/** The user turns the Adapter API off for a while: its socket answers 503, or is gone with its file. */
async function apiOff (step: Named<'api-off'>, play: StepPlay): Promise<void> {
  await play.mock.control.setApi({ enabled: false, listening: step.listening })
  play.say(`the user turns the Adapter API off${step.listening ? ' (503 api_disabled)' : ' (no socket, no file)'}`, { away: true })
  await new Promise((resolve) => setTimeout(resolve, step.forMs))
  await play.mock.control.setApi({ enabled: true })
  play.obs.action('user', 'api-on', 'the user turns the Adapter API on again', { away: false })
}

/** A fault of the wire, armed: it is spent on the next request it fits (Wire). */
function armWire (step: Extract<Step, { actor: 'wire' }>, play: StepPlay): void {
  play.wire.arm(step)
  play.say(`the wire: ${step.name}`)
}

/** How each step is played, by its name. */
const STEPS: { readonly [N in Step['name']]: StepHandler<Named<N>> } = {
  allow: userChange(() => ({ allowed: true })),
  disable: userChange(() => ({ allowed: false })),
  'keypad-on': userChange(() => ({ keypad: true })),
  'keypad-off': userChange(() => ({ keypad: false })),
  hue: userChange((step: Named<'hue'>) => ({ baseHue: step.hue })),
  tap,
  regenerate,
  restart,
  move: restart,
  'end-lease': endLeases,
  'api-off': apiOff,
  429: armWire,
  slow: armWire,
  'reset-poll': armWire,
  'late-decision': armWire,
  'bad-picks': armWire,
  'hold-decision': armWire,
  'poll-at-deadline': armWire
}

/** The session the journal showed last: made on its own, or first in a batch. */
function lastSession (obs: Observer): { adapterId: string, sessionId: string } | undefined {
  for (const entry of obs.journal.entries().reverse()) {
    if (entry.kind !== 'exchange') continue
    const v = view(entry)
    if (v.ok && v.route === 'session' && v.adapterId !== undefined) {
      return { adapterId: v.adapterId, sessionId: v.sessionId! }
    }
    if (
      v.ok &&
      v.route === 'batch' &&
      isObject(v.body) &&
      Array.isArray(v.body.sessions) &&
      isObject(v.body.sessions[0])
    ) {
      return { adapterId: v.adapterId!, sessionId: String(v.body.sessions[0].id) }
    }
  }
  return undefined
}
