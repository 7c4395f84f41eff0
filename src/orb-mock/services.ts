import { Changes } from '../shared/changes.js'
import type { Clock } from '../shared/clock.js'
import { Events } from './events.js'
import type { OrbFaults } from './faults.js'
import { Interactions } from './interactions.js'
import { Music } from './music.js'
import { OrbStore } from './store.js'
import { Voice } from './voice.js'
import { Webhooks } from './webhooks.js'
import type { World } from './world.js'

/** Everything one fake Orb holds and runs, made once by `createOrbServices` and handed to routes and control. */
export interface OrbServices {
  /** The world as it stands: apps, communities, installs, messages, throttles. */
  readonly store: OrbStore
  /** Interactions typed commands open, and every event's app and type (ORB-066..072). */
  readonly interactions: Interactions
  /** Every app's event log and long polls (ORB-043..054). */
  readonly events: Events
  /** Signed deliveries to apps with an endpoint URL (ORB-090..098, ORB-A11). */
  readonly webhooks: Webhooks
  /** Voice calls and seats (ORB-073..080, ORB-A16). */
  readonly voice: Voice
  /** The room players (ORB-081..084, ORB-A17). */
  readonly music: Music
}

/**
 * Builds one fake Orb's services, each given what it uses. Events of apps with an endpoint URL go to the webhooks
 * instead of the log (ORB-051, ORB-090). Each service clears itself when the store is reset or the fake closes.
 */
export function createOrbServices (world: World, clock: Clock, faults: OrbFaults, changes = new Changes()):
OrbServices {
  const store = new OrbStore(world, clock, faults)
  const interactions = new Interactions(store)
  const events = new Events(store, interactions)
  const webhooks = new Webhooks(store, interactions, changes)
  events.setDispatcher((app, event) => webhooks.dispatch(app, event))
  const voice = new Voice(store)
  const music = new Music(store)
  return { store, interactions, events, webhooks, voice, music }
}
